//! Canonical JSON: the one writer of sorted-key JSON text in the workspace, and the canonical
//! form of a `FabricConfig`.
//!
//! # Text
//! [`write_json`] writes a [`Value`] byte for byte as Python's
//! `json.dumps(value, sort_keys=True, ...)` does, in one of three [`JsonStyle`]s:
//! object keys sorted by code point; strings escaped as JSON requires (`"`, `\\`, the short
//! forms `\b \f \n \r \t`, other control characters as `\u00xx`) and, with
//! `ensure_ascii`, every character outside printable ASCII as `\uXXXX` (surrogate pairs above
//! U+FFFF); integers as written; floats like Python's `repr` (`1e-05`, `1e+16`, `1.0`).
//! - [`JsonStyle::CANONICAL`] (`separators=(",", ":")`, `ensure_ascii=True`): what upstream
//!   NeMo Fabric 0.5.0 hashes for descriptor fingerprints ([`canonical_json`]).
//! - [`JsonStyle::CANONICAL_UTF8`] (`separators=(",", ":")`, `ensure_ascii=False`): what the
//!   health channel's MACs cover.
//! - [`JsonStyle::PYTHON_DEFAULT`] (`", "`/`": "` separators, `ensure_ascii=True`): the lines
//!   of upstream's adapter host library.
//!
//! # Config
//! The serde representation already omits `None` and empty maps/lists at every level
//! (except the meaningful empty allowlists `tools.enabled: []` and
//! `mcp.servers.<name>.allowed_tools: []`), writes Fabric-owned defaults, always writes
//! `schema_version` and `runtime`, and keeps an explicit `system_stats: null`. On top of that,
//! like upstream `to_mapping()`, top-level sections that serialize to `{}` or `[]` are
//! dropped (except `runtime`). Object keys are sorted.

use std::fmt::Write as _;

use serde_json::Value;

use crate::config::FabricConfig;

impl FabricConfig {
    /// The canonical JSON value (see the module docs). Its objects are
    /// `serde_json::Map`s, which keep keys sorted (the workspace does not enable serde_json's
    /// `preserve_order`).
    pub fn to_canonical_value(&self) -> Value {
        // Serializing these types cannot fail: every map has string keys.
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(key, item)| {
                        key == "runtime"
                            || !matches!(item, Value::Object(m) if m.is_empty())
                                && !matches!(item, Value::Array(a) if a.is_empty())
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    /// Compact canonical JSON (sorted keys, `,`/`:` separators, literal UTF-8).
    pub fn to_canonical_json(&self) -> String {
        to_json_string(&self.to_canonical_value(), JsonStyle::CANONICAL_UTF8)
    }

    /// Pretty-printed canonical JSON (sorted keys), as `fabric validate` prints it.
    pub fn to_canonical_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.to_canonical_value()).unwrap_or_default()
    }
}

/// The layout options of Python's `json.dumps(value, sort_keys=True, ...)` that
/// [`write_json`] supports (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonStyle {
    /// `separators=(",", ":")` when true; Python's default `(", ", ": ")` otherwise.
    pub compact: bool,
    /// `ensure_ascii=True`: every character outside printable ASCII written as `\uXXXX`.
    pub ensure_ascii: bool,
}

impl JsonStyle {
    /// `separators=(",", ":")`, `ensure_ascii=True`: descriptor fingerprints.
    pub const CANONICAL: JsonStyle = JsonStyle {
        compact: true,
        ensure_ascii: true,
    };
    /// `separators=(",", ":")`, `ensure_ascii=False`: health MACs, canonical config text.
    pub const CANONICAL_UTF8: JsonStyle = JsonStyle {
        compact: true,
        ensure_ascii: false,
    };
    /// `json.dumps(value, sort_keys=True)` defaults: `", "`/`": "`, `ensure_ascii=True`.
    pub const PYTHON_DEFAULT: JsonStyle = JsonStyle {
        compact: false,
        ensure_ascii: true,
    };
}

/// `value` as [`JsonStyle::CANONICAL`] text: byte-identical to Python's
/// `json.dumps(value, sort_keys=True, separators=(",", ":"))`.
pub fn canonical_json(value: &Value) -> String {
    to_json_string(value, JsonStyle::CANONICAL)
}

/// `value` as text in `style`.
pub fn to_json_string(value: &Value, style: JsonStyle) -> String {
    let mut out = String::with_capacity(256);
    write_json(&mut out, value, style);
    out
}

/// Appends `value` to `out` in `style`, keys sorted by code point.
pub fn write_json(out: &mut String, value: &Value, style: JsonStyle) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => {
            if let Some(n) = number.as_u64() {
                let _ = write!(out, "{n}");
            } else if let Some(n) = number.as_i64() {
                let _ = write!(out, "{n}");
            } else if let Some(f) = number.as_f64() {
                write_python_float(out, f);
            }
        }
        Value::String(text) => write_string(out, text, style),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(if style.compact { "," } else { ", " });
                }
                write_json(out, item, style);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Code-point order; UTF-8 byte order is the same order.
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push_str(if style.compact { "," } else { ", " });
                }
                write_string(out, key, style);
                out.push_str(if style.compact { ":" } else { ": " });
                write_json(out, &map[key], style);
            }
            out.push('}');
        }
    }
}

/// A JSON string with Python's escaping (`ensure_ascii` as in `style`).
fn write_string(out: &mut String, text: &str, style: JsonStyle) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(ch),
            _ if !style.ensure_ascii && u32::from(ch) >= 0x20 => out.push(ch),
            _ => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// Python `repr(float)`: shortest round-trip digits; fixed notation for decimal exponents in
/// `-4..16`, otherwise `d.ddde±XX`. Non-finite values (which `Value` never holds) are `null`.
fn write_python_float(out: &mut String, value: f64) {
    if !value.is_finite() {
        out.push_str("null");
        return;
    }
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let point = exponent as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exponent < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", exponent.unsigned_abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn float(value: f64) -> String {
        let mut out = String::new();
        write_python_float(&mut out, value);
        out
    }

    #[test]
    fn floats_match_python_repr() {
        // Expected strings are Python 3 `repr` outputs.
        let cases = [
            (1.0, "1.0"),
            (0.0, "0.0"),
            (100.0, "100.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (-0.0, "-0.0"),
            (1e22, "1e+22"),
            (1e100, "1e+100"),
            (1e300, "1e+300"),
            (5e-324, "5e-324"),
            (123.456, "123.456"),
            (-2.5e-7, "-2.5e-07"),
        ];
        for (value, expected) in cases {
            assert_eq!(float(value), expected, "{value:e}");
        }
    }

    #[test]
    fn canonical_is_ascii_escaped_like_python() {
        // `json.dumps(v, sort_keys=True, separators=(",", ":"))`.
        let value = json!({"b": "é😀\u{7f}\"\\\n\t\u{1}", "a": [1, -2, 1.0]});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":[1,-2,1.0],"b":"\u00e9\ud83d\ude00\u007f\"\\\n\t\u0001"}"#
        );
    }

    #[test]
    fn canonical_utf8_keeps_non_ascii_literal() {
        // `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
        let value = json!({"b": [1, {"z": null, "a": true}], "a": "x\"\\\n\u{1}é\u{7f}", "c": -3});
        assert_eq!(
            to_json_string(&value, JsonStyle::CANONICAL_UTF8),
            "{\"a\":\"x\\\"\\\\\\n\\u0001é\u{7f}\",\"b\":[1,{\"a\":true,\"z\":null}],\"c\":-3}"
        );
    }

    #[test]
    fn python_default_separators() {
        // `json.dumps(v, sort_keys=True)`.
        let value = json!({"b": [1, 2.5, null], "a": {"z": true, "y": "é"}});
        assert_eq!(
            to_json_string(&value, JsonStyle::PYTHON_DEFAULT),
            r#"{"a": {"y": "\u00e9", "z": true}, "b": [1, 2.5, null]}"#
        );
        assert_eq!(to_json_string(&json!([]), JsonStyle::PYTHON_DEFAULT), "[]");
        assert_eq!(to_json_string(&json!({}), JsonStyle::PYTHON_DEFAULT), "{}");
    }
}
