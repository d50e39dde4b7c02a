//! Response lines in the exact text form of upstream's host library.
//!
//! Upstream writes `json.dumps(response, sort_keys=True)`: keys sorted by code point,
//! `", "` and `": "` separators, non-ASCII characters escaped as `\uXXXX` (surrogate pairs
//! above the BMP), floats in Python `repr` form. This module produces the same bytes so a
//! consumer that compares lines byte for byte sees no difference.

use serde_json::{Map, Value};

/// A failure reported in a failed lifecycle outcome (`outcome.error`).
#[derive(Debug, Clone)]
pub struct LifecycleError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    pub metadata: Map<String, Value>,
}

impl LifecycleError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        LifecycleError {
            code: code.into(),
            message: message.into(),
            retryable: false,
            metadata: Map::new(),
        }
    }

    pub fn with_metadata(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }
}

/// The stage upstream reports for an operation: the operation itself, except that the
/// streaming invoke reports `invoke`.
fn stage_of(operation: &str) -> &str {
    if operation == "invoke_openai_stream" {
        "invoke"
    } else {
        operation
    }
}

/// `{"operation": op, "outcome": {"status": "succeeded", "output": output}}` as one line.
pub fn succeeded(operation: &str, output: &Value) -> String {
    let mut line = String::with_capacity(128);
    line.push_str("{\"operation\": ");
    write_string(&mut line, operation);
    line.push_str(", \"outcome\": {\"output\": ");
    write_value(&mut line, output);
    line.push_str(", \"status\": \"succeeded\"}}");
    line
}

/// `{"operation": op, "outcome": {"status": "failed", "error": {...}}}` as one line.
pub fn failed(operation: &str, error: &LifecycleError) -> String {
    let mut err = Map::new();
    err.insert("stage".into(), Value::from(stage_of(operation)));
    err.insert("code".into(), Value::from(error.code.as_str()));
    err.insert("message".into(), Value::from(error.message.as_str()));
    err.insert("retryable".into(), Value::Bool(error.retryable));
    if !error.metadata.is_empty() {
        err.insert("metadata".into(), Value::Object(error.metadata.clone()));
    }
    let mut outcome = Map::new();
    outcome.insert("status".into(), Value::from("failed"));
    outcome.insert("error".into(), Value::Object(err));
    let mut response = Map::new();
    response.insert("operation".into(), Value::from(operation));
    response.insert("outcome".into(), Value::Object(outcome));
    let mut line = String::with_capacity(192);
    write_value(&mut line, &Value::Object(response));
    line
}

/// Appends `value` in `json.dumps(sort_keys=True)` form.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let mut keys: Vec<&String> = map.keys().collect();
            // Code-point order; UTF-8 byte order is the same order.
            keys.sort_unstable();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, key);
                out.push_str(": ");
                write_value(out, &map[key]);
            }
            out.push('}');
        }
    }
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else if let Some(f) = n.as_f64() {
        write_float(out, f);
    } else {
        out.push_str(&n.to_string());
    }
}

/// Python `repr(float)`: shortest round-trip digits, positional for exponents in
/// `-4..16`, otherwise `d.ddde+XX` with at least two exponent digits.
fn write_float(out: &mut String, f: f64) {
    if !f.is_finite() {
        // serde_json never holds non-finite numbers; keep the output valid JSON anyway.
        out.push_str("null");
        return;
    }
    let sci = format!("{f:e}"); // e.g. "-1.25e-7", "1e16", "0e0"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let abs = exp.unsigned_abs();
        if abs < 10 {
            out.push('0');
        }
        out.push_str(&abs.to_string());
    }
}

/// A JSON string with Python's `ensure_ascii=True` escaping.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn enc(v: &Value) -> String {
        let mut s = String::new();
        write_value(&mut s, v);
        s
    }

    #[test]
    fn matches_python_dumps_sort_keys() {
        // Expected strings produced with `json.dumps(v, sort_keys=True)` (Python 3.11).
        assert_eq!(
            enc(&json!({"b": [1, 2.5, null], "a": {"z": true, "y": "x"}})),
            r#"{"a": {"y": "x", "z": true}, "b": [1, 2.5, null]}"#
        );
        assert_eq!(
            enc(&json!("é\u{1F600}\n\u{1}")),
            r#""\u00e9\ud83d\ude00\n\u0001""#
        );
        assert_eq!(enc(&json!([])), "[]");
        assert_eq!(enc(&json!({})), "{}");
    }

    #[test]
    fn floats_use_python_repr() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (1e100, "1e+100"),
            (0.0, "0.0"),
            (100.0, "100.0"),
        ];
        for (f, want) in cases {
            assert_eq!(enc(&json!(f)), want, "{f}");
        }
    }

    #[test]
    fn failed_outcome_shape() {
        let line = failed(
            "invoke_openai_stream",
            &LifecycleError::new("lifecycle_not_started", "m"),
        );
        assert_eq!(
            line,
            r#"{"operation": "invoke_openai_stream", "outcome": {"error": {"code": "lifecycle_not_started", "message": "m", "retryable": false, "stage": "invoke"}, "status": "failed"}}"#
        );
    }
}
