//! Adapter-owned `extensions` on the invocation boundary, checked against the descriptor's
//! `extension_schemas` (`run_request` on the way in; `run_result`, `run_error`, `usage`,
//! `artifact` on the way out). Extensions at a point without a declared schema are
//! rejected, as upstream does for `run_request`.

use fabric_config::Stage;
use fabric_config::agent::{AgentRunResult, STOP_REASON_EXTENSION};
use fabric_config::config::Extensions;
use fabric_config::descriptor::{AdapterDescriptor, ExtensionPoint};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, Weak};

use crate::error::HostError;

/// Compiled extension schemas of one adapter. The validators are shared by every runtime
/// of an adapter whose schemas are equal (compiled validators are several KiB each).
#[derive(Debug, Default)]
pub(crate) struct ExtensionSchemas {
    adapter_id: String,
    compiled: Arc<Compiled>,
}

/// The validators of one set of extension schemas.
#[derive(Debug, Default)]
struct Compiled {
    run_request: Option<Validator>,
    run_result: Option<Validator>,
    run_error: Option<Validator>,
    usage: Option<Validator>,
    artifact: Option<Validator>,
}

const POINTS: [ExtensionPoint; 5] = [
    ExtensionPoint::RunRequest,
    ExtensionPoint::RunResult,
    ExtensionPoint::RunError,
    ExtensionPoint::Usage,
    ExtensionPoint::Artifact,
];

/// Compiled schema sets in use, by their schemas' JSON text: an entry lives as long as a
/// runtime holds it (dead entries are dropped on the next insertion).
static COMPILED: Mutex<Vec<(String, Weak<Compiled>)>> = Mutex::new(Vec::new());

/// The validators of `descriptor`'s extension schemas, shared with every live runtime whose
/// descriptor declares the same schemas.
fn shared(descriptor: &AdapterDescriptor) -> Arc<Compiled> {
    let key = POINTS
        .iter()
        .map(|point| {
            descriptor
                .extension_schema(*point)
                .map(|schema| Value::Object(schema.clone()).to_string())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut cache = COMPILED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(compiled) = cache
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, weak)| weak.upgrade())
    {
        return compiled;
    }
    let compiled = Arc::new(Compiled {
        run_request: compile(descriptor, ExtensionPoint::RunRequest),
        run_result: compile(descriptor, ExtensionPoint::RunResult),
        run_error: compile(descriptor, ExtensionPoint::RunError),
        usage: compile(descriptor, ExtensionPoint::Usage),
        artifact: compile(descriptor, ExtensionPoint::Artifact),
    });
    cache.retain(|(k, weak)| weak.strong_count() > 0 && *k != key);
    cache.push((key, Arc::downgrade(&compiled)));
    compiled
}

fn compile(descriptor: &AdapterDescriptor, point: ExtensionPoint) -> Option<Validator> {
    let schema = descriptor.extension_schema(point)?;
    // Planning already checked these schemas (2020-12, local references only).
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(&Value::Object(schema.clone()))
        .ok()
}

/// Where a value failed its schema: a dotted path under `prefix` and a value-free reason.
/// An undeclared key (`additionalProperties: false`) is named in the path, as upstream does.
fn check(
    validator: Option<&Validator>,
    extensions: &Extensions,
    prefix: &str,
) -> Result<(), (String, String)> {
    if extensions.is_empty() {
        return Ok(());
    }
    let Some(validator) = validator else {
        return Err((
            prefix.to_owned(),
            "the adapter descriptor declares no extension schema here".to_owned(),
        ));
    };
    let instance = Value::Object(
        extensions
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Map<String, Value>>(),
    );
    match validator.validate(&instance) {
        Ok(()) => Ok(()),
        Err(error) => {
            let pointer = error.instance_path().as_str().to_owned();
            let mut dotted = pointer
                .split('/')
                .filter(|segment| !segment.is_empty())
                .fold(prefix.to_owned(), |mut path, segment| {
                    path.push('.');
                    path.push_str(&segment.replace("~1", "/").replace("~0", "~"));
                    path
                });
            if let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind()
                && let Some(key) = unexpected.first()
            {
                dotted.push('.');
                dotted.push_str(key);
                return Err((
                    dotted,
                    "is not declared by the adapter extension schema".to_owned(),
                ));
            }
            Err((dotted, error.masked().to_string()))
        }
    }
}

impl ExtensionSchemas {
    pub(crate) fn new(descriptor: Option<&AdapterDescriptor>) -> ExtensionSchemas {
        let Some(descriptor) = descriptor else {
            return ExtensionSchemas::default();
        };
        ExtensionSchemas {
            adapter_id: descriptor.adapter_id.clone(),
            compiled: shared(descriptor),
        }
    }

    /// Request extensions (a request's `overrides`), as upstream 0.5.0 checks them: without
    /// a declared `run_request` schema `request_extensions_unsupported`, a schema violation
    /// `request_extension_invalid` naming `request.extensions.<key>` (both runtime errors at
    /// stage invoke, like upstream's `FabricRuntimeError`). Never the value.
    pub(crate) fn check_request(&self, extensions: &Extensions) -> Result<(), HostError> {
        match check(
            self.compiled.run_request.as_ref(),
            extensions,
            "request.extensions",
        ) {
            Ok(()) => Ok(()),
            Err(_) if self.compiled.run_request.is_none() => {
                Err(HostError::RequestExtensionsUndeclared {
                    stage: Stage::Invoke,
                    adapter_id: self.adapter_id.clone(),
                })
            }
            Err((path, reason)) => Err(HostError::RequestExtensionInvalid {
                stage: Stage::Invoke,
                adapter_id: self.adapter_id.clone(),
                path,
                reason,
            }),
        }
    }

    /// Removes the core-owned [`STOP_REASON_EXTENSION`] from a result's extensions and
    /// returns it (it needs no declared schema): a non-empty string, else the result is
    /// invalid.
    pub(crate) fn take_stop_reason(
        result: &mut AgentRunResult,
    ) -> Result<Option<String>, HostError> {
        let Some(value) = result.extensions.remove(STOP_REASON_EXTENSION) else {
            return Ok(None);
        };
        match value {
            Value::String(reason) if !reason.trim().is_empty() => Ok(Some(reason)),
            _ => Err(HostError::InvalidAgentRunResult {
                stage: Stage::Invoke,
                reason: format!("`extensions.{STOP_REASON_EXTENSION}`: must be a non-empty string"),
            }),
        }
    }

    /// Result extensions (result, error, usage, artifacts) must match declared schemas.
    pub(crate) fn check_result(&self, result: &AgentRunResult) -> Result<(), HostError> {
        let invalid = |(path, reason): (String, String)| HostError::InvalidAgentRunResult {
            stage: Stage::Invoke,
            reason: format!("`{path}`: {reason}"),
        };
        check(
            self.compiled.run_result.as_ref(),
            &result.extensions,
            "extensions",
        )
        .map_err(invalid)?;
        if let Some(error) = &result.error {
            check(
                self.compiled.run_error.as_ref(),
                &error.extensions,
                "error.extensions",
            )
            .map_err(invalid)?;
        }
        if let Some(usage) = &result.usage {
            check(
                self.compiled.usage.as_ref(),
                &usage.extensions,
                "usage.extensions",
            )
            .map_err(invalid)?;
        }
        for (index, artifact) in result.artifacts.iter().enumerate() {
            check(
                self.compiled.artifact.as_ref(),
                &artifact.extensions,
                &format!("artifacts[{index}].extensions"),
            )
            .map_err(invalid)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn descriptor(schemas: Value) -> AdapterDescriptor {
        serde_json::from_value(json!({
            "contract_version": "fabric.adapter/v1alpha2",
            "adapter_id": "test.ext",
            "adapter_kind": "process",
            "runner": {"command": "x"},
            "extension_schemas": schemas
        }))
        .expect("descriptor")
    }

    fn extensions(value: Value) -> Extensions {
        serde_json::from_value(value).expect("extensions")
    }

    #[test]
    fn undeclared_request_extensions_are_a_runtime_error() {
        let schemas = ExtensionSchemas::new(Some(&descriptor(json!({}))));
        assert!(schemas.check_request(&Extensions::new()).is_ok());
        let error = schemas
            .check_request(&extensions(json!({"priority": 1})))
            .expect_err("undeclared");
        assert_eq!(error.code(), "request_extensions_unsupported");
        // Upstream raises FabricRuntimeError at stage invoke.
        assert_eq!(error.class(), crate::ErrorClass::Runtime);
        assert_eq!(error.stage(), Stage::Invoke);
        let info = fabric_config::ErrorInfo::from(error);
        assert_eq!(info.metadata["path"], "request.extensions");
        assert!(
            info.message
                .contains("cannot implement configuration at `request.extensions`"),
            "{}",
            info.message
        );
    }

    #[test]
    fn declared_request_extensions_are_validated_without_values_in_errors() {
        let schemas = ExtensionSchemas::new(Some(&descriptor(json!({
            "run_request": {"type": "object", "properties": {"priority": {"type": "integer"}},
                            "additionalProperties": false}
        }))));
        assert!(
            schemas
                .check_request(&extensions(json!({"priority": 1})))
                .is_ok()
        );
        let error = schemas
            .check_request(&extensions(json!({"priority": "s3cret-value"})))
            .expect_err("wrong type");
        assert_eq!(error.code(), "request_extension_invalid");
        assert_eq!(error.class(), crate::ErrorClass::Runtime);
        let info = fabric_config::ErrorInfo::from(error);
        assert_eq!(info.metadata["path"], "request.extensions.priority");
        assert!(info.message.starts_with("invalid adapter extension"));
        assert!(
            !serde_json::to_string(&info)
                .expect("json")
                .contains("s3cret-value")
        );
        // An undeclared key is named in the path.
        let error = schemas
            .check_request(&extensions(json!({"s3cret-key-ok": 1})))
            .expect_err("undeclared key");
        let info = fabric_config::ErrorInfo::from(error);
        assert_eq!(info.metadata["path"], "request.extensions.s3cret-key-ok");
    }

    #[test]
    fn result_extensions_need_a_declared_schema() {
        let schemas = ExtensionSchemas::new(Some(&descriptor(json!({
            "usage": {"type": "object"}
        }))));
        let ok: AgentRunResult = serde_json::from_value(json!({
            "status": "succeeded", "output": null,
            "usage": {"output_tokens": 1, "extensions": {"nemo_fabric.detailed_token_usage.v1": {}}}
        }))
        .expect("result");
        assert!(schemas.check_result(&ok).is_ok());
        let undeclared: AgentRunResult = serde_json::from_value(json!({
            "status": "succeeded", "output": null, "extensions": {"x": 1}
        }))
        .expect("result");
        let error = schemas.check_result(&undeclared).expect_err("undeclared");
        assert_eq!(error.code(), "invalid_agent_run_result");
    }

    #[test]
    fn equal_schemas_share_their_validators_while_in_use() {
        let usage = json!({"usage": {"type": "object"}});
        let first = ExtensionSchemas::new(Some(&descriptor(usage.clone())));
        let second = ExtensionSchemas::new(Some(&descriptor(usage)));
        assert!(Arc::ptr_eq(&first.compiled, &second.compiled));
        let other = ExtensionSchemas::new(Some(&descriptor(json!({"usage": {"type": "array"}}))));
        assert!(!Arc::ptr_eq(&first.compiled, &other.compiled));
        // Each keeps its own rules.
        let result: AgentRunResult = serde_json::from_value(json!({
            "status": "succeeded", "output": null,
            "usage": {"output_tokens": 1, "extensions": {"k": 1}}
        }))
        .expect("result");
        assert!(first.check_result(&result).is_ok());
        assert!(other.check_result(&result).is_err());
    }

    #[test]
    fn the_stop_reason_extension_needs_no_schema_and_must_be_text() {
        let result = |reason: Value| -> AgentRunResult {
            serde_json::from_value(json!({"status": "succeeded", "output": null,
                "extensions": {STOP_REASON_EXTENSION: reason, "other": 1}}))
            .expect("result")
        };
        let mut ok = result(json!("max_iterations"));
        let reason = ExtensionSchemas::take_stop_reason(&mut ok).expect("taken");
        assert_eq!(reason.as_deref(), Some("max_iterations"));
        // Only the core-owned key is taken; the rest is still checked against schemas.
        assert_eq!(ok.extensions.keys().collect::<Vec<_>>(), ["other"]);
        for bad in [json!(""), json!(3), json!(null)] {
            let error = ExtensionSchemas::take_stop_reason(&mut result(bad)).expect_err("invalid");
            assert_eq!(error.code(), "invalid_agent_run_result");
        }
    }
}
