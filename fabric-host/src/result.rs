//! Turning an adapter's AgentRunResult into the consumer-facing RunResult pieces: events,
//! usage normalization, artifact validation, error mapping.

use std::path::{Component, Path};

use fabric_config::agent::{
    AgentArtifact, AgentRunError, AgentRunResult, AgentUsage, RunStatus, RuntimeContext,
};
use fabric_config::config::JsonObject;
use fabric_config::result::{ArtifactRef, FabricEvent, RunUsage};
use fabric_config::{ErrorInfo, Stage};
use serde_json::Value;

use crate::error::HostError;
use crate::ids;

/// One event stamped now.
pub(crate) fn event(kind: &str, message: String, metadata: JsonObject) -> FabricEvent {
    FabricEvent {
        event_id: ids::new_id("event"),
        timestamp_millis: ids::now_millis(),
        kind: kind.to_owned(),
        message,
        metadata,
    }
}

/// Builds a metadata object from pairs.
pub(crate) fn meta<const N: usize>(pairs: [(&str, Value); N]) -> JsonObject {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Decodes and checks the invoke output (closed decoding; `error` iff `failed`).
pub(crate) fn decode_agent_result(output: Value) -> Result<AgentRunResult, HostError> {
    let invalid = |reason: String| HostError::InvalidAgentRunResult {
        stage: Stage::Invoke,
        reason,
    };
    let result: AgentRunResult =
        serde_json::from_value(output).map_err(|e| invalid(e.to_string()))?;
    match (result.status, &result.error) {
        (RunStatus::Failed, None) => {
            return Err(invalid("a failed result must carry `error`".into()));
        }
        (RunStatus::Succeeded, Some(_)) => {
            return Err(invalid("a succeeded result must not carry `error`".into()));
        }
        _ => {}
    }
    if let Some(error) = &result.error
        && (error.code.trim().is_empty() || error.message.trim().is_empty())
    {
        return Err(invalid(
            "`error.code` and `error.message` must not be blank".into(),
        ));
    }
    Ok(result)
}

/// The adapter's failure as an `ErrorInfo` (stage `invoke`, the adapter's code kept).
pub(crate) fn adapter_error(error: AgentRunError) -> ErrorInfo {
    let mut info = ErrorInfo::new(Stage::Invoke, error.code, error.message);
    info.retryable = error.retryable;
    info.metadata.extend(error.extensions);
    info
}

/// Normalizes usage: unknown counters stay absent (never zero); a negative or non-finite
/// cost is dropped; `input_tokens_include_cache = true` with more cached than input tokens
/// is contradictory, so the flag becomes unknown; usage extensions (for example
/// `nemo_fabric.detailed_token_usage.v1`) are preserved in `metadata`. No usage at all is
/// `None`.
pub(crate) fn normalize_usage(usage: Option<AgentUsage>) -> Option<RunUsage> {
    let usage = usage?;
    let mut include_cache = usage.input_tokens_include_cache;
    if include_cache == Some(true)
        && let (Some(input), Some(cached)) = (usage.input_tokens, usage.cached_input_tokens)
        && cached > input
    {
        include_cache = None;
    }
    let normalized = RunUsage {
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        input_tokens_include_cache: include_cache,
        output_tokens: usage.output_tokens,
        total_tokens: usage.total_tokens,
        cost_usd: usage.cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
        metadata: usage.extensions,
    };
    let empty = normalized.input_tokens.is_none()
        && normalized.cached_input_tokens.is_none()
        && normalized.input_tokens_include_cache.is_none()
        && normalized.output_tokens.is_none()
        && normalized.total_tokens.is_none()
        && normalized.cost_usd.is_none()
        && normalized.metadata.is_empty();
    (!empty).then_some(normalized)
}

/// A rejected adapter artifact reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArtifactRejection {
    pub name: String,
    pub reason: &'static str,
}

/// Validates adapter artifact references: relative, no `..`, no root or drive, inside the
/// configured artifact root (which must exist when any artifact is returned).
pub(crate) fn artifact_refs(
    artifacts: Vec<AgentArtifact>,
    root: Option<&Path>,
) -> Result<Vec<ArtifactRef>, ArtifactRejection> {
    let mut out = Vec::with_capacity(artifacts.len());
    for artifact in artifacts {
        let reject = |reason| ArtifactRejection {
            name: artifact.name.clone(),
            reason,
        };
        if root.is_none() {
            return Err(reject(
                "the adapter returned artifacts but no artifact root is configured",
            ));
        }
        check_relative(&artifact.path).map_err(reject)?;
        out.push(ArtifactRef {
            name: artifact.name,
            kind: artifact.kind,
            path: artifact.path,
            media_type: artifact.media_type,
            metadata: artifact.extensions,
        });
    }
    Ok(out)
}

fn check_relative(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("artifact path is empty");
    }
    if path.contains('\0') {
        return Err("artifact path contains NUL");
    }
    if path.contains('\\') {
        return Err("artifact path contains a backslash");
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err("artifact path has a drive prefix");
    }
    for component in Path::new(path).components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err("artifact path contains `..`"),
            Component::RootDir | Component::Prefix(_) => return Err("artifact path is absolute"),
        }
    }
    Ok(())
}

/// Replaces every environment value of a context (environment and telemetry overlays)
/// with `[REDACTED]`, for saved records.
pub(crate) fn redact_context(context: &mut RuntimeContext) {
    for value in context.environment.env.values_mut() {
        *value = "[REDACTED]".into();
    }
    if let Some(telemetry) = &mut context.telemetry {
        for value in telemetry.env.values_mut() {
            *value = "[REDACTED]".into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn artifact(path: &str) -> AgentArtifact {
        serde_json::from_value(json!({"name": "a", "kind": "log", "path": path})).expect("artifact")
    }

    #[test]
    fn artifact_paths_must_stay_inside_the_root() {
        let root = Path::new("/tmp/root");
        assert!(artifact_refs(vec![artifact("out/log.txt")], Some(root)).is_ok());
        assert!(artifact_refs(vec![artifact("./x")], Some(root)).is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            "C:/x",
            "a\\b",
            "a\0b",
        ] {
            let error = artifact_refs(vec![artifact(bad)], Some(root)).expect_err(bad);
            assert_eq!(error.name, "a");
        }
        let error = artifact_refs(vec![artifact("x")], None).expect_err("no root");
        assert!(error.reason.contains("no artifact root"));
        assert_eq!(artifact_refs(Vec::new(), None), Ok(Vec::new()));
    }

    #[test]
    fn usage_missing_is_not_zero() {
        assert_eq!(normalize_usage(None), None);
        assert_eq!(normalize_usage(Some(AgentUsage::default())), None);
        let usage: AgentUsage = serde_json::from_value(json!({"output_tokens": 5})).expect("usage");
        let normalized = normalize_usage(Some(usage)).expect("some");
        assert_eq!(normalized.output_tokens, Some(5));
        assert_eq!(normalized.input_tokens, None);
        let rendered = serde_json::to_value(&normalized).expect("json");
        // Unknown counters stay absent; `metadata` is always present, as upstream.
        assert_eq!(rendered, json!({"output_tokens": 5, "metadata": {}}));
    }

    #[test]
    fn usage_cache_rules_and_extensions() {
        let usage: AgentUsage = serde_json::from_value(json!({
            "input_tokens": 10, "cached_input_tokens": 40, "input_tokens_include_cache": true,
            "cost_usd": -1.0,
            "extensions": {"nemo_fabric.detailed_token_usage.v1": {"input": {"cache_write": 3}}}
        }))
        .expect("usage");
        let normalized = normalize_usage(Some(usage)).expect("some");
        assert_eq!(normalized.input_tokens_include_cache, None);
        assert_eq!(normalized.cached_input_tokens, Some(40));
        assert_eq!(normalized.cost_usd, None);
        assert_eq!(
            normalized.metadata["nemo_fabric.detailed_token_usage.v1"]["input"]["cache_write"],
            3
        );
        let consistent: AgentUsage = serde_json::from_value(json!({
            "input_tokens": 50, "cached_input_tokens": 40, "input_tokens_include_cache": true
        }))
        .expect("usage");
        assert_eq!(
            normalize_usage(Some(consistent))
                .expect("some")
                .input_tokens_include_cache,
            Some(true)
        );
    }

    #[test]
    fn decode_checks_status_error_pairing() {
        assert!(decode_agent_result(json!({"status": "succeeded", "output": null})).is_ok());
        let failed_without_error = decode_agent_result(json!({"status": "failed", "output": null}));
        assert_eq!(
            failed_without_error.expect_err("x").code(),
            "invalid_agent_run_result"
        );
        let ok_with_error = decode_agent_result(json!({"status": "succeeded", "output": 1,
            "error": {"code": "x", "message": "y"}}));
        assert!(ok_with_error.is_err());
        assert!(
            decode_agent_result(json!({"status": "succeeded"})).is_err(),
            "output is required"
        );
        assert!(
            decode_agent_result(json!({"status": "succeeded", "output": 1, "bogus": 1})).is_err()
        );
    }

    #[test]
    fn saved_records_redact_env_values() {
        let mut context: RuntimeContext = serde_json::from_value(json!({
            "runtime_id": "runtime-1", "invocation_id": "invocation-1", "request_id": "r",
            "environment": {"environment_id": "e", "provider": "local",
                "control_location": "in_env_control", "ownership": "caller_owned",
                "env": {"TOKEN": "s3cret"}},
            "artifacts": {},
            "telemetry": {"relay_enabled": false, "env": {"K": "v"}}
        }))
        .expect("context");
        redact_context(&mut context);
        let text = serde_json::to_string(&context).expect("json");
        assert!(!text.contains("s3cret") && text.contains("[REDACTED]"));
        assert_eq!(context.telemetry.expect("telemetry").env["K"], "[REDACTED]");
    }
}
