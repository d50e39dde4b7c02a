//! The southbound adapter contract: `AgentConfig`, runtime context, run request/result and
//! the persistent local-host lifecycle envelopes (`fabric.adapter/v1alpha2` era).
//!
//! Decoding is closed (unknown key = error), as upstream's contract models do. Every
//! `Agent*` block carries a literal `extensions` object (not flattened) for
//! descriptor-declared extension data.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{
    ControlLocation, EnvironmentOwnership, Extensions, InstructionMode, JsonObject,
    McpAuthentication,
};
use crate::error::ErrorInfo;

/// The resolved, adapter-facing agent configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Harness settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<AgentHarnessConfig>,
    /// Model roles.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, AgentModelConfig>,
    /// Instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<AgentInstructionsConfig>,
    /// Runtime limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<AgentRuntimeConfig>,
    /// Skills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<AgentSkillConfig>,
    /// MCP servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<AgentMcpConfig>,
    /// Tool policy and definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<AgentToolsConfig>,
    /// Workflow target entry point and settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<AgentWorkflowConfig>,
    /// Adapter-owned extension data (`extension_schemas.agent_config`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Harness block of `AgentConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentHarnessConfig {
    /// Adapter-owned settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Extension data (`extension_schemas.harness`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// One model role of `AgentConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentModelConfig {
    /// Provider (lowercase, trimmed).
    pub provider: String,
    /// Model identifier.
    pub model: String,
    /// Environment variable name holding the API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling probability in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Maximum response tokens (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Provider endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Provider-specific settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Extension data (`extension_schemas.model`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Instructions block of `AgentConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInstructionsConfig {
    /// System instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<AgentInstructionConfig>,
    /// Extension data (`extension_schemas.instructions`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// One instruction of `AgentConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInstructionConfig {
    /// Instruction text (non-blank).
    pub content: String,
    /// `replace` or `append`.
    #[serde(default)]
    pub mode: InstructionMode,
    /// Extension data (`extension_schemas.instruction`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Runtime block of `AgentConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRuntimeConfig {
    /// Maximum harness turns (1..=2^32-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_turns: Option<u32>,
    /// Extension data (`extension_schemas.runtime`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Skills block of `AgentConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSkillConfig {
    /// Resolved skill paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Extension data (`extension_schemas.skills`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// MCP block of `AgentConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentMcpConfig {
    /// Named servers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, AgentMcpServerConfig>,
    /// Extension data (`extension_schemas.mcp`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// One MCP server of `AgentConfig`.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentMcpServerConfig {
    /// Transport spelling (`stdio`, `sse`, `streamable-http`).
    pub transport: String,
    /// URL or stdio executable.
    pub url: String,
    /// stdio arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// HTTP authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<McpAuthentication>,
    /// HTTP headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub custom_headers: BTreeMap<String, String>,
    /// Allowlist (`None` = all discovered tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// Blocklist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_tools: Vec<String>,
    /// Extension data (`extension_schemas.mcp_server`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Tools block of `AgentConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentToolsConfig {
    /// Named definitions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub definitions: BTreeMap<String, AgentToolDefinition>,
    /// Allowlist (`None` = harness default, `[]` = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Blocklist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
    /// Extension data (`extension_schemas.tools`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// One tool definition of `AgentConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentToolDefinition {
    /// Portable category.
    pub kind: String,
    /// Adapter-resolved reference (wire name `ref`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Definition settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Extension data (`extension_schemas.tool_definition`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Workflow block of `AgentConfig` (projected from the target descriptor).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentWorkflowConfig {
    /// Target-native entry point.
    pub entrypoint: AgentWorkflowEntrypointConfig,
    /// Construction settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Extension data (`extension_schemas.workflow`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Workflow entry point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentWorkflowEntrypointConfig {
    /// Entry point kind.
    pub kind: String,
    /// Entry point reference (wire name `ref`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Extension data (`extension_schemas.workflow_entrypoint`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Prepared environment snapshot passed to adapters.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentHandle {
    /// Environment id.
    pub environment_id: String,
    /// Provider.
    pub provider: String,
    /// Control location.
    pub control_location: ControlLocation,
    /// Ownership.
    pub ownership: EnvironmentOwnership,
    /// Resolved workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Resolved artifact path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// Environment values (literal `env` plus resolved `env_names`); redact when persisting.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Connection data.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connection: JsonObject,
    /// Consumer metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: JsonObject,
}

/// Telemetry context for one runtime/invocation.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeTelemetryContext {
    /// Whether Relay is enabled.
    pub relay_enabled: bool,
    /// Relay config file path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
    /// Environment overlay applied during adapter invoke calls.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Telemetry metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: JsonObject,
}

/// One artifact reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
    /// Artifact name.
    pub name: String,
    /// Artifact kind (for example `otlp`, `system_stats`).
    pub kind: String,
    /// Path (relative to the manifest root, or absolute).
    pub path: String,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Artifact metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: JsonObject,
}

/// Artifact manifest: a root and references.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactManifest {
    /// Artifact root directory (always present, null without an artifact root, as
    /// upstream's `{"artifacts": [], "root": null}`).
    #[serde(default)]
    pub root: Option<String>,
    /// Artifact references (always present).
    #[serde(default)]
    pub artifacts: Vec<ArtifactRef>,
}

/// Per-call runtime context (no extensions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeContext {
    /// Runtime id (`runtime-…`).
    pub runtime_id: String,
    /// Invocation id (`invocation-…`; `runtime-start-…` at start).
    pub invocation_id: String,
    /// Request id.
    pub request_id: String,
    /// Prepared environment.
    pub environment: EnvironmentHandle,
    /// Artifact manifest.
    pub artifacts: ArtifactManifest,
    /// Telemetry context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<RuntimeTelemetryContext>,
    /// Invocation deadline (Unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_millis: Option<u64>,
}

/// Adapter-facing run request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRunRequest {
    /// Input (any JSON, required).
    pub input: Value,
    /// Relay session root UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_session_root: Option<String>,
    /// Request context.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context: JsonObject,
    /// Extension data (`extension_schemas.run_request`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Terminal status of an invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The invocation succeeded.
    Succeeded,
    /// The invocation failed.
    Failed,
    /// The invocation was cancelled.
    Cancelled,
}

impl RunStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// Adapter-reported run status (same spellings as [`RunStatus`]).
pub type AgentRunStatus = RunStatus;

/// Adapter-reported failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRunError {
    /// Error code (non-blank).
    pub code: String,
    /// Message (non-blank).
    pub message: String,
    /// Whether a retry is safe.
    #[serde(default)]
    pub retryable: bool,
    /// Extension data (`extension_schemas.run_error`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Adapter-reported usage; every counter optional (unknown is not zero).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentUsage {
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
    /// Cost in USD (>= 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Extension data (`extension_schemas.usage`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// Adapter-reported artifact (path relative, no `..`, no root or drive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentArtifact {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: String,
    /// Relative path inside the artifact root.
    pub path: String,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Extension data (`extension_schemas.artifact`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// The result extension, owned by the core, in which an adapter reports why its invocation
/// stopped (a non-empty string; `max_iterations` when the harness hit its iteration limit,
/// from the adapter-side `on_iteration_limit_reached` hook). It needs no extension schema
/// in the descriptor; the core moves it to `RunResult.metadata.stop_reason`.
pub const STOP_REASON_EXTENSION: &str = "nemo_fabric.stop_reason";

/// The stop reason of an invocation that hit its iteration limit.
pub const STOP_REASON_MAX_ITERATIONS: &str = "max_iterations";

/// Adapter-reported result of one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRunResult {
    /// Status.
    pub status: AgentRunStatus,
    /// Output (any JSON, required, may be `null`).
    pub output: Value,
    /// Failure (present iff `status` is `failed`; never with `succeeded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<AgentRunError>,
    /// Usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<AgentUsage>,
    /// Artifacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<AgentArtifact>,
    /// Extension data (`extension_schemas.run_result`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: Extensions,
}

/// A lifecycle request line: `{"operation", "payload"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LifecycleRequest {
    /// `start`, `invoke`, `invoke_openai_stream` or `stop`.
    pub operation: String,
    /// Operation payload ([`StartPayload`], [`InvokePayload`], [`StopPayload`]).
    pub payload: Value,
}

/// A lifecycle response line: `{"operation", "outcome"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LifecycleResponse {
    /// Echo of the request's operation.
    pub operation: String,
    /// Outcome.
    pub outcome: LifecycleOutcome,
}

/// Outcome of one lifecycle operation, tagged by `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LifecycleOutcome {
    /// The operation succeeded.
    Succeeded {
        /// Operation output (`start()` return or null; AgentRunResult for invoke).
        #[serde(default)]
        output: Value,
    },
    /// The operation failed; `error.stage` is the operation (`invoke` for stream invokes).
    Failed {
        /// Structured error (`metadata` only when non-empty).
        error: ErrorInfo,
    },
}

/// `start` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartPayload {
    /// Agent name.
    pub agent_name: String,
    /// Base directory anchoring relative paths.
    pub base_dir: String,
    /// Resolved agent config.
    pub config: AgentConfig,
    /// Start context (`runtime-start-…` invocation id, no deadline).
    pub runtime_context: RuntimeContext,
    /// Capability plan (shape owned by planning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability_plan: Option<Value>,
    /// Telemetry plan (shape owned by planning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry_plan: Option<Value>,
    /// Service operation of a service host or of a runtime connecting to a service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<crate::service::ServiceStartPayload>,
    /// Software evidence control for the adapter host. The core always sends it;
    /// `{"enabled": true}` asks the host for its report: hosts that know software evidence
    /// then answer `start` with an object output holding `execution` (an
    /// `ExecutionEvidence`). `{"enabled": false}` or an absent field (an older core, which
    /// would not read a report): collect nothing. Upstream-built hosts ignore this field
    /// and send no report (recorded as a `guest_sdk` gap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<StartProvenance>,
}

/// `start.provenance`: whether the adapter host collects software evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartProvenance {
    /// `false`: the host skips its collectors before any lookup work.
    pub enabled: bool,
}

/// `invoke` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokePayload {
    /// Invocation context.
    pub runtime_context: RuntimeContext,
    /// Request.
    pub request: AgentRunRequest,
}

/// `stop` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopPayload {
    /// The started runtime id.
    pub runtime_id: String,
}

impl std::fmt::Debug for AgentMcpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentMcpServerConfig")
            .field("transport", &self.transport)
            .field("url", &self.url)
            .field("args", &self.args)
            .field("env", &crate::config::RedactedValues(&self.env))
            .field("authentication", &self.authentication)
            .field(
                "custom_headers",
                &crate::config::RedactedValues(&self.custom_headers),
            )
            .field("allowed_tools", &self.allowed_tools)
            .field("blocked_tools", &self.blocked_tools)
            .field("extensions", &self.extensions)
            .finish()
    }
}

impl std::fmt::Debug for EnvironmentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvironmentHandle")
            .field("environment_id", &self.environment_id)
            .field("provider", &self.provider)
            .field("control_location", &self.control_location)
            .field("ownership", &self.ownership)
            .field("workspace", &self.workspace)
            .field("artifacts", &self.artifacts)
            .field("env", &crate::config::RedactedValues(&self.env))
            .field("connection", &self.connection)
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl std::fmt::Debug for RuntimeTelemetryContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeTelemetryContext")
            .field("relay_enabled", &self.relay_enabled)
            .field("config_path", &self.config_path)
            .field("env", &crate::config::RedactedValues(&self.env))
            .field("metadata", &self.metadata)
            .finish()
    }
}
