//! Response lines in the exact text form of upstream's host library.
//!
//! Upstream writes `json.dumps(response, sort_keys=True)`: keys sorted by code point,
//! `", "` and `": "` separators, non-ASCII characters escaped as `\uXXXX` (surrogate pairs
//! above the BMP), floats in Python `repr` form
//! ([`JsonStyle::PYTHON_DEFAULT`](fabric_config::canonical::JsonStyle::PYTHON_DEFAULT)). This
//! module produces the same bytes so a consumer that compares lines byte for byte sees no
//! difference.

use fabric_config::canonical::{JsonStyle, write_json};
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
    write_value(&mut line, &Value::from(operation));
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
    write_json(out, value, JsonStyle::PYTHON_DEFAULT);
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
