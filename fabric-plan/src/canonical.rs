//! Canonical JSON and descriptor fingerprints.
//!
//! The canonical form is byte-identical to Python's
//! `json.dumps(value, sort_keys=True, separators=(",", ":"))` with its defaults
//! (`ensure_ascii=True`): keys sorted by code point, no whitespace, every character outside
//! printable ASCII escaped as `\uXXXX` (surrogate pairs above U+FFFF), floats written like
//! Python's `repr` (`1e-05`, `1e+16`, `1.0`). This is what upstream NeMo Fabric 0.5.0 hashes,
//! so fingerprints agree across implementations.

use std::fmt::Write as _;

use fabric_config::descriptor::{AdapterDescriptor, TargetDescriptor};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes `value` in canonical form.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::with_capacity(1024);
    write_value(&mut out, value);
    out
}

/// Hex sha256 of the canonical form of `value`.
pub fn sha256_canonical(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

/// The fingerprint of a normalized adapter descriptor (equal to upstream
/// `inspect_adapter(...).descriptor_sha256`).
pub fn descriptor_sha256(descriptor: &AdapterDescriptor) -> String {
    sha256_canonical(&normalized_value(descriptor))
}

/// The fingerprint of a normalized target descriptor on its own.
pub fn target_sha256(target: &TargetDescriptor) -> String {
    sha256_canonical(&serde_json::to_value(target).unwrap_or(Value::Null))
}

/// The fingerprint of an adapter descriptor together with a registered target: sha256 of the
/// canonical `{"adapter": <normalized adapter>, "target": <normalized target>}`. Without a
/// target this is [`descriptor_sha256`] (standalone fingerprints are unchanged).
pub fn combined_sha256(
    descriptor: &AdapterDescriptor,
    target: Option<&TargetDescriptor>,
) -> String {
    match target {
        None => descriptor_sha256(descriptor),
        Some(target) => {
            let mut pair = serde_json::Map::new();
            pair.insert("adapter".to_owned(), normalized_value(descriptor));
            pair.insert(
                "target".to_owned(),
                serde_json::to_value(target).unwrap_or(Value::Null),
            );
            sha256_canonical(&Value::Object(pair))
        }
    }
}

/// The normalized descriptor as a JSON value (what the fingerprint covers).
pub fn normalized_value(descriptor: &AdapterDescriptor) -> Value {
    // Serializing plain data (maps with string keys, finite numbers) cannot fail.
    serde_json::to_value(descriptor).unwrap_or(Value::Null)
}

fn write_value(out: &mut String, value: &Value) {
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
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, &map[key]);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, text: &str) {
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
/// `-4..16`, otherwise `d.ddde±XX`.
fn write_python_float(out: &mut String, value: f64) {
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
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e16, "1.5e+16"),
            (-0.0, "-0.0"),
            (1e22, "1e+22"),
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
    fn strings_are_ascii_escaped_like_python() {
        let value = json!({"b": "é😀\u{7f}\"\\\n\t\u{1}", "a": [1, -2, 1.0]});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":[1,-2,1.0],"b":"\u00e9\ud83d\ude00\u007f\"\\\n\t\u0001"}"#
        );
    }
}
