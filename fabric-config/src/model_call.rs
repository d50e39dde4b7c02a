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

/// One captured model call. The members Gym's `ModelCallRecord` has (`call_index`,
/// `client_session_id`, `dialect`, `status_code`, `started_at`/`completed_at` as UTC Unix
/// seconds, `tokens_*`, `request`/`response` objects or `*_raw` text, `latency_*_ms`) carry
/// its names and types, so nemo-gym validates a record as it is; the others are ours (Gym's
/// model ignores members it does not know).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCallRecord {
    /// The call's id (`model-call-…`): what Gym's `ModelCallRef.model_call_id` joins on.
    pub model_call_id: String,
    /// The record's position in its `model-calls.jsonl` (from 0): append order, not a causal
    /// order of concurrent calls.
    pub call_index: u64,
    /// The runtime whose harness made the call.
    pub runtime_id: String,
    /// The invocation in progress when the call arrived (`None`: outside an invocation).
    #[serde(default)]
    pub invocation_id: Option<String>,
    /// Gym's correlation id for the client's session: the invocation id.
    #[serde(default)]
    pub client_session_id: Option<String>,
    /// The model role of the config (`models.<role>`).
    pub model_role: String,
    /// The model: the request's `model` field, else the role's configured model.
    pub model: String,
    /// The API by its path, in Gym's terms: `chat` (Chat Completions), `responses`,
    /// `messages` (Anthropic), or `other`.
    pub dialect: String,
    /// The HTTP method.
    pub method: String,
    /// The path after the role's `base_url` (no gateway token, no query).
    pub path: String,
    /// The model server in Gym's terms (`ModelCallRef.model_ref`): a
    /// `responses_api_models` server named by the model role.
    pub model_ref: ModelServerRef,
    /// The role's real `base_url` the call was forwarded to.
    pub base_url: String,
    /// When the call arrived: UTC Unix time in seconds.
    pub started_at: f64,
    /// When its answer ended (or the call failed): UTC Unix time in seconds.
    pub completed_at: f64,
    /// The request body when it is a JSON object (else `request_raw`).
    #[serde(default)]
    pub request: Option<Value>,
    /// The request body as text when it is not a JSON object, or was cut at the cap.
    #[serde(default)]
    pub request_raw: Option<String>,
    /// The request body was cut at the cap (it is then `request_raw`).
    #[serde(default)]
    pub request_truncated: bool,
    /// The HTTP status the harness got (`None`: no answer from the endpoint).
    #[serde(default)]
    pub status_code: Option<u16>,
    /// The response body when it is a JSON object (a streamed answer is in
    /// `response_events`; anything else in `response_raw`).
    #[serde(default)]
    pub response: Option<Value>,
    /// A streamed answer: the SSE events' `data`, in order (JSON when it parsed).
    #[serde(default)]
    pub response_events: Option<Vec<Value>>,
    /// The response body as text when it is neither a JSON object nor a stream, or was cut
    /// at the cap.
    #[serde(default)]
    pub response_raw: Option<String>,
    /// The response body was cut at the cap (it is then `response_raw`).
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
    pub latency_ttft_ms: Option<f64>,
    /// Milliseconds from the request to the end of the response.
    pub latency_total_ms: f64,
    /// `usage` as the endpoint reported it (the last one of a stream).
    #[serde(default)]
    pub usage: Option<Value>,
    /// Input tokens of `usage` (`prompt_tokens` or `input_tokens`).
    #[serde(default)]
    pub tokens_in: Option<u64>,
    /// Output tokens of `usage` (`completion_tokens` or `output_tokens`).
    #[serde(default)]
    pub tokens_out: Option<u64>,
    /// Total tokens of `usage` (`total_tokens`, else in plus out): counted against
    /// `max_total_tokens`.
    #[serde(default)]
    pub tokens_total: Option<u64>,
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
