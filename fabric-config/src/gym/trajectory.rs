//! NeMo Gym's trajectory record (`TrajectoryRecord`, schema version `1.0`): the rollout's
//! invocations, turns, model calls and tool calls in one document.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{
    AgentInvocation, ModelCallRef, ModelServerRef, ObservationGap, TimingSource,
    ToolCallObservation, ToolCallStatus,
};

/// The only trajectory schema version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TrajectorySchemaVersion {
    /// `"1.0"`.
    #[default]
    #[serde(rename = "1.0")]
    V1,
}

/// Token counts of one model call (`TrajectoryTokenStats`); unknown counts are absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryTokenStats {
    /// Prompt tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Total tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Cached tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
}

/// Where a model response came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseSource {
    /// The upstream model.
    Upstream,
    /// Produced locally.
    Local,
}

/// Response details of one model call (`TrajectoryResponseMetadata`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryResponseMetadata {
    /// Response id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Model server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<ModelServerRef>,
    /// Model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// API dialect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<i64>,
    /// Response status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_status: Option<String>,
    /// Finish reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Whether the upstream was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_attempted: Option<bool>,
    /// Where the response came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_source: Option<ResponseSource>,
    /// Upstream HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_status_code: Option<i64>,
    /// Why a local response was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_response_reason: Option<String>,
    /// Error category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_category: Option<String>,
    /// Time to first token, ms (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ttft_ms: Option<f64>,
}

/// One model call of a trajectory (`TrajectoryModelCall`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryModelCall {
    /// Reported model call id (unique within a trajectory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_call_id: Option<String>,
    /// Client session id; not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_session_id: Option<String>,
    /// Client assistant message id; not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_assistant_message_id: Option<String>,
    /// Start, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<f64>,
    /// End, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<f64>,
    /// Duration, ms (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// The response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// Response details.
    #[serde(default)]
    pub response_metadata: TrajectoryResponseMetadata,
    /// Token counts.
    #[serde(default)]
    pub token_stats: TrajectoryTokenStats,
}

/// A tool call with its model-visible output (`TrajectoryToolCall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryToolCall {
    /// The invocation that made the call.
    pub invocation_id: String,
    /// Tool call id.
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
    /// End, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<f64>,
    /// Duration, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Where the timing came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_source: Option<TimingSource>,
    /// Outcome.
    pub status: ToolCallStatus,
    /// Error type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// What the tool returned (the ATOF scope end's `data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

impl TrajectoryToolCall {
    /// The observation with its output.
    pub fn new(call: ToolCallObservation, output: Option<Value>) -> Self {
        TrajectoryToolCall {
            invocation_id: call.invocation_id,
            tool_call_id: call.tool_call_id,
            sandbox_id: call.sandbox_id,
            tool_name: call.tool_name,
            started_at: call.started_at,
            completed_at: call.completed_at,
            duration_ms: call.duration_ms,
            timing_source: call.timing_source,
            status: call.status,
            error_type: call.error_type,
            output,
        }
    }
}

/// One question/answer turn of an invocation (`TrajectoryTurn`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryTurn {
    /// The invocation.
    pub invocation_id: String,
    /// The trajectory's task id.
    pub task_id: String,
    /// The trajectory's rollout id.
    pub rollout_id: String,
    /// Turn number within the invocation (≥ 1; `(invocation_id, turn_no)` is unique).
    pub turn_no: u64,
    /// When the turn started, Unix seconds.
    pub timestamp: f64,
    /// The question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Value>,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// Reasoning content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Value>,
    /// Whether the task was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<bool>,
    /// Cumulative step count within the invocation (≥ 0).
    pub step_count: u64,
    /// Model calls of the turn.
    #[serde(default)]
    pub model_calls: Vec<ModelCallRef>,
    /// Source message id; not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_message_id: Option<String>,
    /// Source model server; not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_model_ref: Option<ModelServerRef>,
}

/// One rollout's trajectory (`TrajectoryRecord`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryRecord {
    /// Always `"1.0"`.
    #[serde(default)]
    pub schema_version: TrajectorySchemaVersion,
    /// Task id.
    pub task_id: String,
    /// Rollout id.
    pub rollout_id: String,
    /// Invocations (unique ids).
    #[serde(default)]
    pub invocations: Vec<AgentInvocation>,
    /// Turns.
    #[serde(default)]
    pub turns: Vec<TrajectoryTurn>,
    /// Model calls (unique `model_call_id`s).
    #[serde(default)]
    pub model_calls: Vec<TrajectoryModelCall>,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: Vec<TrajectoryToolCall>,
    /// What could not be observed.
    #[serde(default)]
    pub gaps: Vec<ObservationGap>,
}
