//! Input of the model-call join (`fabric_gym_join_model_calls`): a bundle and the model
//! calls a model server captured for the same rollout (Gym's `ModelCallRecord`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AgentObservationBundle, ModelServerRef};

/// The identity of one captured model-server exchange (the join keys of Gym's
/// `ModelCallRecord`). A capture record carries many more members (tokens, latency, the
/// request and response); they play no part in the join, so they are accepted and
/// ignored, as Gym's own model does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCallKeys {
    /// The server-generated id of the persisted call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_call_id: Option<String>,
    /// The response id the model server returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The client-declared session (an invocation id); evidence, not a security boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_session_id: Option<String>,
    /// The client-declared persisted assistant message the call produced (absent for calls
    /// without a saved message, such as title generation); not in nemo-gym 0.7.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_assistant_message_id: Option<String>,
    /// Durable append order of the capture.
    pub call_index: u64,
    /// The model server that served the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<ModelServerRef>,
}

/// Input of `join_model_call_observations`: a bundle and the captured calls of its rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GymJoinModelCallsRequest {
    /// The bundle whose references are resolved (it must pass Gym's identity rules).
    pub bundle: AgentObservationBundle,
    /// The captured model calls, in capture order.
    #[serde(default)]
    pub calls: Vec<ModelCallKeys>,
}

impl GymJoinModelCallsRequest {
    /// Decodes a request; errors name the offending field's path.
    pub fn from_json_str(text: &str) -> Result<Self, crate::ConfigError> {
        crate::validate::decode_json_str(text)
    }
}
