//! Northbound results: `RunResult`, `FabricEvent`, `RunUsage`, invocation handles, stop
//! results. Runtime and environment identities are in [`crate::handles`].
//!
//! Result types are produced by the core; consumers should tolerate unknown fields, so
//! these types do not deny unknown keys.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::agent::{ArtifactManifest, ArtifactRef, RunStatus};
use crate::config::JsonObject;
pub use crate::descriptor::AdapterKind;
use crate::error::ErrorInfo;
use crate::stats::{InvocationSystemStats, RuntimeResourceSnapshot};

/// Normalized usage of one invocation (unknown counters are absent, never zero).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunUsage {
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Cached input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Whether `input_tokens` includes cached tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens_include_cache: Option<bool>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Total tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Cost in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Descriptor-declared usage extensions (always present, `{}` when none, as upstream).
    #[serde(default)]
    pub metadata: JsonObject,
}

/// One ordered lifecycle or invocation event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FabricEvent {
    /// Event id.
    pub event_id: String,
    /// Unix time in milliseconds.
    pub timestamp_millis: u64,
    /// Kind: `runtime_start`, `invocation_start`, `invocation_end`, `runtime_stop`, ...
    pub kind: String,
    /// Human-readable, secret-free message.
    pub message: String,
    /// Structured details.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub metadata: JsonObject,
}

/// Reference to external or persisted telemetry of a result (upstream's `TelemetryRef`):
/// `RunResult.telemetry` is an ordered list of these, `[]` when telemetry is not configured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryRef {
    /// Telemetry provider (`relay`, `native`).
    pub provider: String,
    /// Reference kind (`trace`).
    pub kind: String,
    /// Location of persisted telemetry, when there is one (always present, may be null).
    #[serde(default)]
    pub uri: Option<String>,
    /// Provider trace id, when known (always present, may be null).
    #[serde(default)]
    pub trace_id: Option<String>,
    /// Provider-specific details. For Relay: `relay_enabled`, `telemetry_providers`,
    /// `adapter_outputs`, `relay_project`, `relay_output_dir`, `relay_config` (the plan's Relay
    /// plugin config) and `relay_config_path` (the written `relay-config.json`), each when
    /// known.
    #[serde(default)]
    pub metadata: JsonObject,
}

impl TelemetryRef {
    /// The reference for a runtime telemetry context, built as upstream's SDK builds it from
    /// its core's `{relay_enabled, metadata}`: provider = `metadata.telemetry_providers[0]`
    /// (else `relay`), kind `trace`, uri = `metadata.relay_output_dir`, trace id =
    /// `metadata.trace_id`, and `relay_enabled` kept in the metadata.
    pub fn from_relay(relay_enabled: bool, metadata: &JsonObject) -> TelemetryRef {
        let mut metadata = metadata.clone();
        let provider = metadata
            .get("telemetry_providers")
            .and_then(|p| p.get(0))
            .and_then(Value::as_str)
            .unwrap_or("relay")
            .to_owned();
        let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
        let (uri, trace_id) = (text("relay_output_dir"), text("trace_id"));
        metadata
            .entry("relay_enabled".to_owned())
            .or_insert(Value::Bool(relay_enabled));
        TelemetryRef {
            provider,
            kind: "trace".to_owned(),
            uri,
            trace_id,
            metadata,
        }
    }
}

/// Normalized terminal result of one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// Resolved agent name.
    pub agent_name: String,
    /// Stable harness identifier.
    pub harness: String,
    /// Adapter execution mechanism.
    pub adapter_kind: AdapterKind,
    /// Adapter id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Runtime id.
    pub runtime_id: String,
    /// Invocation id.
    pub invocation_id: String,
    /// Request id.
    pub request_id: String,
    /// Terminal status.
    pub status: RunStatus,
    /// Adapter output.
    #[serde(default)]
    pub output: Value,
    /// Structured failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Usage, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<RunUsage>,
    /// Artifact manifest.
    #[serde(default)]
    pub artifacts: ArtifactManifest,
    /// Ordered events.
    #[serde(default)]
    pub events: Vec<FabricEvent>,
    /// Ordered telemetry references (`[]` when none).
    #[serde(default)]
    pub telemetry: Vec<TelemetryRef>,
    /// Result-specific details; `stop_reason` is why the invocation stopped, when the
    /// adapter reported it (`max_iterations`: the harness hit its iteration limit).
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub metadata: JsonObject,
    /// Invocation system stats (`None` when disabled or not collected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_stats: Option<InvocationSystemStats>,
    /// Runtime resource snapshot taken after the invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_snapshot: Option<RuntimeResourceSnapshot>,
    /// Selected software evidence (`None` when `provenance.enabled` is false; old saved
    /// results omit it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<crate::evidence::ExecutionEvidence>,
    /// The invocation's captured model calls (runs started with `capture_model_calls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<crate::model_call::ModelCallsSummary>,
}

/// Identity of one invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InvocationHandle {
    /// Runtime id.
    pub runtime_id: String,
    /// Invocation id.
    pub invocation_id: String,
    /// Request id.
    pub request_id: String,
}

/// Result of stopping a runtime.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeStopResult {
    /// Artifacts collected at stop.
    #[serde(default)]
    pub artifacts: ArtifactManifest,
    /// Stop problem, reported separately from invocation outcomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Ordered events.
    #[serde(default)]
    pub events: Vec<FabricEvent>,
}
