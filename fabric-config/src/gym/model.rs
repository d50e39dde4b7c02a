//! NeMo Gym's rollout-observation records (`nemo_gym.rollout_observability`): what one Agent
//! Server reports for one rollout under the key [`super::NG_AGENT_OBSERVATIONS_KEY`].
//!
//! Every type denies unknown fields, as Gym's models forbid extra keys, and omits absent
//! optional members, so a value validates with Gym's released models (0.7.0) as long as
//! the members that release lacks (named on each field) stay unset.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A Gym model server (`ModelServerRef`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelServerRef {
    /// Always `responses_api_models`.
    #[serde(rename = "type")]
    pub kind: ModelServerKind,
    /// The model server's name.
    pub name: String,
}

/// The only server type a model reference names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelServerKind {
    /// A Responses-API model server.
    ResponsesApiModels,
}

/// Identifiers an integration observed for one model call: `model_call_id`, or both
/// `model_ref` and `response_id` (Gym rejects a reference with neither). Never guessed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelCallRef {
    /// The model call id reported by the adapter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_call_id: Option<String>,
    /// The model server the call went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<ModelServerRef>,
    /// The response id the model server returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

impl ModelCallRef {
    /// Whether the reference has a join key Gym accepts.
    pub fn has_join_key(&self) -> bool {
        self.model_call_id
            .as_deref()
            .is_some_and(|id| !id.is_empty())
            || (self.model_ref.is_some()
                && self.response_id.as_deref().is_some_and(|id| !id.is_empty()))
    }
}

/// Outcome of one agent conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvocationStatus {
    /// Finished (`succeeded`).
    Completed,
    /// Finished with an error (`failed`).
    Failed,
    /// Ended early (`cancelled`, or a subagent scope without an end).
    Incomplete,
    /// Not reported.
    Unknown,
}

/// One root agent or subagent conversation (`AgentInvocation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInvocation {
    /// Invocation id, unique within a bundle.
    pub invocation_id: String,
    /// The invocation that spawned this one (a missing parent is allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_invocation_id: Option<String>,
    /// The tool call that spawned this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawned_by_tool_call_id: Option<String>,
    /// Outcome.
    pub status: InvocationStatus,
    /// Duration in milliseconds (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The failure's error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Why the invocation stopped (`max_iterations`); not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Model calls with reported ids.
    #[serde(default)]
    pub model_calls: Vec<ModelCallRef>,
    /// Normalized Responses-API conversation items, from the invocation's Relay ATIF
    /// trajectory (empty without one: a gap says so).
    #[serde(default)]
    pub conversation: Vec<Value>,
}

/// Outcome of one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Ended normally.
    Completed,
    /// Ended with an error status.
    Failed,
    /// Ran out of time.
    Timeout,
    /// Cancelled.
    Cancelled,
    /// Started, never ended.
    Incomplete,
    /// Not reported.
    Unknown,
}

/// Where a tool call's timing came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimingSource {
    /// The executor that ran the tool.
    Executor,
    /// A persisted artifact.
    Artifact,
    /// The harness (Relay ATOF scopes).
    Harness,
}

/// Timing of one tool call at an agent-owned boundary (`ToolCallObservation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallObservation {
    /// The invocation that made the call.
    pub invocation_id: String,
    /// The provider's tool call id (else the ATOF scope uuid).
    pub tool_call_id: String,
    /// The enclosing sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_id: Option<String>,
    /// Tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Start, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<f64>,
    /// End, Unix seconds (never before `started_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<f64>,
    /// Duration in milliseconds (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Where the timing came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_source: Option<TimingSource>,
    /// Outcome.
    pub status: ToolCallStatus,
    /// Error type, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

/// Who owns a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxRole {
    /// The agent's own sandbox (a Fabric runtime's process tree).
    Agent,
    /// A verifier's.
    Verifier,
    /// An environment's.
    Environment,
}

/// Outcome of a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxOutcome {
    /// Completed.
    Completed,
    /// Failed.
    Failed,
    /// Timed out (the `timeout` error code).
    Timeout,
    /// Killed for memory (a cgroup OOM kill was counted).
    Oom,
    /// The sandbox itself failed.
    SandboxError,
    /// Cancelled.
    Cancelled,
    /// Not reported.
    Unknown,
}

/// Outcome and lifetime resource usage of a sandbox (`SandboxObservation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxObservation {
    /// Owner.
    pub role: SandboxRole,
    /// Provider (`local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Sandbox id (the Fabric runtime id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_id: Option<String>,
    /// Outcome.
    pub outcome: SandboxOutcome,
    /// Process exit code, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Wall time of the sandbox's life so far, in seconds (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_time_s: Option<f64>,
    /// Cumulative CPU time, in seconds (≥ 0); never an allocation or an estimate per tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time_s: Option<f64>,
    /// Measured high-water mark in MiB (≥ 0); never a configured limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_mib: Option<f64>,
    /// Where the usage numbers came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_usage_source: Option<String>,
    /// The failure's error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

/// Outcome of a context compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompactionOutcome {
    /// Completed.
    Completed,
    /// Failed.
    Failed,
    /// Aborted.
    Aborted,
    /// Not reported.
    Unknown,
}

/// A context compaction the harness reported (`ContextCompactionObservation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextCompactionObservation {
    /// The invocation whose context was compacted.
    pub invocation_id: String,
    /// When, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<f64>,
    /// What triggered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Tokens before (producer-reported, ≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    /// Tokens after (producer-reported, ≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<u64>,
    /// Outcome.
    pub outcome: CompactionOutcome,
    /// The summary text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// First conversation item kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_item_id: Option<String>,
    /// Last model call before the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_model_call: Option<ModelCallRef>,
    /// Model calls used for the compaction.
    #[serde(default)]
    pub model_calls: Vec<ModelCallRef>,
    /// First model call after the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_model_call: Option<ModelCallRef>,
    /// Messages the summary replaced; not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_message_ids: Option<Vec<String>>,
    /// The model server that wrote the summary; not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_model_ref: Option<ModelServerRef>,
}

/// A fact the integration could not observe or join exactly (`ObservationGap`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservationGap {
    /// Stable snake_case code (registered as a reason code).
    pub code: String,
    /// The invocation it concerns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    /// Secret-free detail (an id, a scope name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ObservationGap {
    /// A gap of `invocation_id`.
    pub fn new(code: &str, invocation_id: Option<&str>, detail: Option<String>) -> Self {
        ObservationGap {
            code: code.to_owned(),
            invocation_id: invocation_id.map(str::to_owned),
            detail,
        }
    }
}

/// One record of a bundle, discriminated by `kind` (Gym's `AgentObservationRecord`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentObservationRecord {
    /// `kind: "agent_invocation"`.
    AgentInvocation(AgentInvocation),
    /// `kind: "tool_call"`.
    ToolCall(ToolCallObservation),
    /// `kind: "context_compaction"`.
    ContextCompaction(ContextCompactionObservation),
    /// `kind: "sandbox"`.
    Sandbox(SandboxObservation),
}

/// Everything one Agent Server observed for one rollout (`AgentObservationBundle`): the
/// value of `ng_agent_observations`. Record order carries no meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentObservationBundle {
    /// The producer (`nemo-fabric`).
    pub source: String,
    /// Typed records.
    #[serde(default)]
    pub records: Vec<AgentObservationRecord>,
    /// What could not be observed.
    #[serde(default)]
    pub gaps: Vec<ObservationGap>,
}
