//! Embedded JSON Schemas: 2020-12 meta-validation, local-refs-only, compiled validators, and
//! value validation with path-naming, value-free messages.

use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A compiled descriptor-owned schema.
#[derive(Clone)]
pub(crate) struct CompiledSchema(Arc<Validator>);

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

/// One schema violation: dotted path below the validated value and a value-free reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// Dotted path relative to the validated value (`""` for the value itself).
    pub path: String,
    /// Value-free description.
    pub reason: String,
}

/// Checks that `schema` is a JSON Schema 2020-12 document whose references are all local and
/// compiles it. Errors are `(relative dotted path, reason)`.
pub(crate) fn compile(schema: &Map<String, Value>) -> Result<CompiledSchema, (String, String)> {
    if let Some(declared) = schema.get("$schema") {
        let declared = declared.as_str().unwrap_or_default();
        if declared.trim_end_matches('#') != DRAFT_2020_12 {
            return Err((
                "$schema".to_owned(),
                format!("only JSON Schema 2020-12 (`{DRAFT_2020_12}`) is supported"),
            ));
        }
    }
    let value = Value::Object(schema.clone());
    check_local_refs(&value, &mut String::new())?;
    if let Err(error) = jsonschema::draft202012::meta::validate(&value) {
        return Err((
            pointer_to_dotted(error.instance_path().as_str()),
            error.masked().to_string(),
        ));
    }
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(&value)
        .map(|validator| CompiledSchema(Arc::new(validator)))
        .map_err(|error| (String::new(), error.masked().to_string()))
}

fn check_local_refs(value: &Value, path: &mut String) -> Result<(), (String, String)> {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let length = path.len();
                push_key(path, key);
                if (key == "$ref" || key == "$dynamicRef")
                    && child
                        .as_str()
                        .is_some_and(|reference| !reference.starts_with('#'))
                {
                    return Err((
                        path.clone(),
                        "only local references (starting with `#`) are allowed".to_owned(),
                    ));
                }
                check_local_refs(child, path)?;
                path.truncate(length);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let length = path.len();
                path.push_str(&format!("[{index}]"));
                check_local_refs(child, path)?;
                path.truncate(length);
            }
        }
        _ => {}
    }
    Ok(())
}

impl CompiledSchema {
    /// Every violation, in the validator's order. Reasons never contain instance values.
    pub(crate) fn violations(&self, instance: &Value) -> Vec<Violation> {
        if self.0.is_valid(instance) {
            return Vec::new();
        }
        self.0
            .iter_errors(instance)
            .map(|error| {
                let mut path = pointer_to_dotted(error.instance_path().as_str());
                let reason = match error.kind() {
                    ValidationErrorKind::Required { property } => {
                        if let Some(name) = property.as_str() {
                            push_key(&mut path, name);
                        }
                        "is required by the schema".to_owned()
                    }
                    ValidationErrorKind::AdditionalProperties { unexpected } => {
                        if let Some(name) = unexpected.first() {
                            push_key(&mut path, name);
                        }
                        "is not allowed by the schema".to_owned()
                    }
                    ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                        if let Some(name) = unexpected.first() {
                            push_key(&mut path, name);
                        }
                        "is not allowed by the schema".to_owned()
                    }
                    _ => error.masked().to_string(),
                };
                Violation { path, reason }
            })
            .collect()
    }
}

/// Appends `key` to a dotted path.
pub(crate) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// Joins a dotted prefix and a dotted relative path.
pub(crate) fn join(prefix: &str, relative: &str) -> String {
    match (prefix.is_empty(), relative.is_empty()) {
        (_, true) => prefix.to_owned(),
        (true, false) => relative.to_owned(),
        (false, false) if relative.starts_with('[') => format!("{prefix}{relative}"),
        (false, false) => format!("{prefix}.{relative}"),
    }
}

/// `/a/0/b~1c` → `a[0].b/c`.
pub(crate) fn pointer_to_dotted(pointer: &str) -> String {
    let mut path = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            path.push_str(&format!("[{segment}]"));
        } else {
            push_key(&mut path, &segment);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn rejects_remote_and_file_refs() {
        for reference in [
            "https://example.com/s.json",
            "other.json#/a",
            "file:///etc/x",
        ] {
            let error = compile(&object(json!({"properties": {"a": {"$ref": reference}}})))
                .expect_err(reference);
            assert_eq!(error.0, "properties.a.$ref");
        }
        compile(&object(json!({
            "$defs": {"n": {"type": "integer"}},
            "properties": {"a": {"$ref": "#/$defs/n"}}
        })))
        .expect("local ref");
    }

    #[test]
    fn rejects_invalid_schema_and_other_drafts() {
        assert!(compile(&object(json!({"type": "strang"}))).is_err());
        assert!(compile(&object(json!({"minLength": -1}))).is_err());
        let error = compile(&object(
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        ))
        .expect_err("draft-07");
        assert_eq!(error.0, "$schema");
        compile(&object(json!({"$schema": DRAFT_2020_12, "type": "object"}))).expect("2020-12");
    }

    #[test]
    fn violations_name_paths_without_values() {
        let schema = compile(&object(json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["api_key_env"],
            "properties": {"api_key_env": {"type": "string"}, "n": {"type": "integer"}}
        })))
        .expect("schema");
        let violations = schema.violations(&json!({"n": "SECRET-VALUE", "extra": 1}));
        let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
        assert!(paths.contains(&"api_key_env"), "{paths:?}");
        assert!(paths.contains(&"extra"), "{paths:?}");
        assert!(paths.contains(&"n"), "{paths:?}");
        for violation in &violations {
            assert!(!violation.reason.contains("SECRET-VALUE"), "{violation:?}");
        }
    }

    #[test]
    fn pointer_conversion() {
        assert_eq!(pointer_to_dotted(""), "");
        assert_eq!(pointer_to_dotted("/a/0/b~1c"), "a[0].b/c");
        assert_eq!(
            join("models.default", "settings.x"),
            "models.default.settings.x"
        );
        assert_eq!(join("a", "[0]"), "a[0]");
        assert_eq!(join("", "x"), "x");
    }
}
