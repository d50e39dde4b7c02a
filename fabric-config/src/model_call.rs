//! `ModelCallRecord`: one model call a harness made through the capture gateway, one JSON
//! line of `model-calls.jsonl` in the invocation's `.fabric/<runtime>/<invocation>/`
//! directory (calls made outside an invocation go to the runtime's `.fabric/<runtime>/`).
//!
//! Credentials (`authorization`, `x-api-key`, every header) are never part of a record.
//! Bodies over the capture's cap are stored truncated (as text) with `truncated: true`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gym::ModelServerRef;

/// One captured model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCallRecord {
    /// The call's id (`model-call-…`): what Gym's `ModelCallRef.model_call_id` joins on.
    pub model_call_id: String,
    /// The runtime whose harness made the call.
    pub runtime_id: String,
    /// The invocation in progress when the call arrived (`None`: outside an invocation).
    #[serde(default)]
    pub invocation_id: Option<String>,
    /// The model role of the config (`models.<role>`).
    pub model_role: String,
    /// The model: the request's `model` field, else the role's configured model.
    pub model: String,
    /// The API by its path: `chat_completions`, `responses`, `messages`, or `other`.
    pub api: String,
    /// The HTTP method.
    pub method: String,
    /// The path after the role's `base_url` (no gateway token, no query).
    pub path: String,
    /// The model server in Gym's terms (`ModelCallRef.model_ref`): a
    /// `responses_api_models` server named by the model role.
    pub model_ref: ModelServerRef,
    /// The role's real `base_url` the call was forwarded to.
    pub base_url: String,
    /// When the call arrived, RFC 3339 UTC.
    pub started_at: String,
    /// The request body (JSON when it parsed, else text).
    pub request: Value,
    /// `request` was cut at the cap (then it is text).
    #[serde(default)]
    pub request_truncated: bool,
    /// The HTTP status the harness got (`None`: no answer from the endpoint).
    #[serde(default)]
    pub status: Option<u16>,
    /// The response body: JSON when it parsed; for a streamed answer, the array of the
    /// SSE events' `data` (JSON when it parsed).
    pub response: Value,
    /// `response` was cut at the cap (then it is text).
    #[serde(default)]
    pub response_truncated: bool,
    /// The answer was an SSE stream.
    pub streamed: bool,
    /// Body reads forwarded to the harness (each forwarded as it arrived).
    pub chunks: u64,
    /// Why the call failed in the gateway (unreachable endpoint, over budget), if it did.
    #[serde(default)]
    pub error: Option<String>,
    /// Milliseconds from the request to the endpoint's response head.
    #[serde(default)]
    pub time_to_first_byte_ms: Option<f64>,
    /// Milliseconds from the request to the first body bytes (the first token of a stream).
    #[serde(default)]
    pub time_to_first_token_ms: Option<f64>,
    /// Milliseconds from the request to the end of the response.
    pub latency_ms: f64,
    /// `usage` as the endpoint reported it (the last one of a stream).
    #[serde(default)]
    pub usage: Option<Value>,
    /// Total tokens of `usage` (counted against `max_total_tokens`).
    #[serde(default)]
    pub total_tokens: Option<u64>,
    /// The response's id: Gym's `ModelCallRef.response_id`.
    #[serde(default)]
    pub response_id: Option<String>,
    /// Prompt token ids, when the server returned them (`prompt_token_ids`).
    #[serde(default)]
    pub prompt_token_ids: Option<Vec<Value>>,
    /// Generated token ids, when the server returned them (`token_ids` of the first
    /// choice; concatenated over a stream).
    #[serde(default)]
    pub token_ids: Option<Vec<Value>>,
    /// Per-token log-probabilities, when the server returned them (`logprobs.content` of
    /// the first choice; concatenated over a stream).
    #[serde(default)]
    pub logprobs: Option<Vec<Value>>,
}

/// `RunResult.model_calls`: where an invocation's captured calls are (the records
/// themselves are read from the file, one [`ModelCallRecord`] per line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCallsSummary {
    /// Calls recorded for the invocation.
    pub count: u64,
    /// The absolute path of the invocation's `model-calls.jsonl` (`None` when no call was
    /// recorded).
    #[serde(default)]
    pub path: Option<String>,
}
