//! NeMo Gym rollout observations: Fabric results (and the Relay ATOF records of their
//! invocations) mapped to Gym's `nemo_gym.rollout_observability` contract.
//!
//! The documents live here (they cross the C ABI: their schemas are generated); the mapping
//! itself, a function from a [`GymObservationsRequest`] (RunResults of one rollout,
//! optional ATOF records, task and rollout ids) to [`GymObservations`], is
//! `fabric_relay::gym::observations`. The mapping rules are in `docs/gym.md`.

mod assistant;
mod join;
mod model;
mod trajectory;
mod validate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use assistant::{GymJoinAssistantMessagesRequest, GymJoinedAssistantMessages};
pub use join::{GymJoinModelCallsRequest, ModelCallKeys};
pub use model::{
    AgentInvocation, AgentObservationBundle, AgentObservationRecord, CompactionOutcome,
    ContextCompactionObservation, InvocationStatus, ModelCallRef, ModelServerKind, ModelServerRef,
    ObservationGap, SandboxObservation, SandboxOutcome, SandboxRole, TimingSource,
    ToolCallObservation, ToolCallStatus,
};
pub use trajectory::{
    ResponseSource, TrajectoryModelCall, TrajectoryRecord, TrajectoryResponseMetadata,
    TrajectorySchemaVersion, TrajectoryTokenStats, TrajectoryToolCall, TrajectoryTurn,
};
pub use validate::GymError;

use crate::result::RunResult;

/// The key Gym reads an Agent Server's observation bundle from.
pub const NG_AGENT_OBSERVATIONS_KEY: &str = "ng_agent_observations";

/// The `RunResult.metadata` member holding the [`SandboxObservation`] of the provider
/// environment `run()` prepared for that result alone and released at its stop; the Gym
/// mapping adds it to the bundle's sandboxes.
pub const SANDBOX_OBSERVATION_METADATA_KEY: &str = "sandbox_observation";

/// The producer name of bundles, unless the request names another.
pub const DEFAULT_SOURCE: &str = "nemo-fabric";

/// Input of the Gym mapping (`fabric_gym_observations`, `fabric export gym`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GymObservationsRequest {
    /// Gym task id (non-blank).
    pub task_id: String,
    /// Gym rollout id (non-blank).
    pub rollout_id: String,
    /// The rollout's RunResults, in invocation order (unique invocation ids).
    pub results: Vec<RunResult>,
    /// Raw Relay ATOF records of those invocations (as `invoke_stream` yields them), in any
    /// order; joined to results through `metadata.nemo_fabric_request_id`.
    #[serde(default)]
    pub atof: Vec<Value>,
    /// The bundle's `source` (default `nemo-fabric`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Sandbox observations the caller adds, each kept as is: an environment's
    /// `sandbox_observation` from its release (`role: "verifier"` for the environment a
    /// verifier ran in). A result of `run()` in a provider environment carries its
    /// environment's own in `metadata.sandbox_observation`, added without being listed here
    /// (one given here with the same `sandbox_id` replaces it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandboxes: Vec<SandboxObservation>,
}

impl GymObservationsRequest {
    /// Decodes a request; errors name the offending field's path.
    pub fn from_json_str(text: &str) -> Result<Self, crate::ConfigError> {
        crate::validate::decode_json_str(text)
    }
}

/// Output of the Gym mapping: the Gym bundle and the rollout's trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GymObservations {
    /// The value for Gym's `ng_agent_observations` key.
    pub ng_agent_observations: AgentObservationBundle,
    /// The rollout's trajectory record.
    pub trajectory: TrajectoryRecord,
}
