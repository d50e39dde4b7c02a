//! Input and output of the assistant-message join (`fabric_gym_join_assistant_messages`):
//! a bundle, the rollout's trajectory and the model calls a model server captured.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AgentObservationBundle, ModelCallKeys, TrajectoryRecord};

/// Input of `join_assistant_message_calls`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GymJoinAssistantMessagesRequest {
    /// The bundle (it must pass Gym's identity rules); its ownership is resolved first.
    pub bundle: AgentObservationBundle,
    /// The rollout's trajectory, whose turns declare `source_message_id` (absent: only the
    /// bundle's compactions are joined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<TrajectoryRecord>,
    /// The captured model calls, in capture order.
    #[serde(default)]
    pub calls: Vec<ModelCallKeys>,
}

impl GymJoinAssistantMessagesRequest {
    /// Decodes a request; errors name the offending field's path.
    pub fn from_json_str(text: &str) -> Result<Self, crate::ConfigError> {
        crate::validate::decode_json_str(text)
    }
}

/// Output of `join_assistant_message_calls`: the joined bundle and trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GymJoinedAssistantMessages {
    /// The bundle, ownership resolved and summary attempts on their compactions.
    pub bundle: AgentObservationBundle,
    /// The trajectory, each turn's `model_calls` the attempts of its message (absent when
    /// the request had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<TrajectoryRecord>,
}
