//! The shared config builders (base config, MCP server) and the accepted / rejected
//! assertions.

use fabric_config::FabricConfig;
use serde_json::{Value, json};

pub(crate) fn base() -> Value {
    json!({
        "metadata": {"name": "rules"},
        "harness": {"adapter_id": "nvidia.fabric.hermes"}
    })
}

/// Deep-merges `patch` into `target` (objects merge, everything else replaces).
pub(crate) fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                match target.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value)
                    }
                    _ => {
                        target.insert(key, value);
                    }
                }
            }
        }
        (target, patch) => *target = patch,
    }
}

pub(crate) fn with(patch: Value) -> Value {
    let mut value = base();
    merge(&mut value, patch);
    value
}

/// Every (code, path) found for a config value: the decode error, or all rule findings.
pub(crate) fn problems(value: Value) -> Vec<(String, String)> {
    match FabricConfig::from_value(value) {
        Err(error) => vec![(
            error.code().to_owned(),
            error.path().unwrap_or_default().to_owned(),
        )],
        Ok(config) => config
            .validate_all()
            .into_iter()
            .map(|finding| (finding.code().to_owned(), finding.path))
            .collect(),
    }
}

pub(crate) fn accepted(patch: Value) {
    let value = with(patch);
    let found = problems(value.clone());
    assert!(
        found.is_empty(),
        "expected {value} to be accepted, got {found:?}"
    );
}

pub(crate) fn rejected(patch: Value, code: &str, path: &str) {
    let value = with(patch);
    let found = problems(value.clone());
    assert!(
        found.iter().any(|(c, p)| c == code && p == path),
        "expected {value} to be rejected with {code} at {path}, got {found:?}"
    );
}

pub(crate) fn server(extra: Value) -> Value {
    let mut value = json!({"transport": "streamable-http", "url": "https://mcp.example.com/mcp"});
    merge(&mut value, extra);
    json!({"mcp": {"servers": {"github": value}}})
}
