//! NeMo Gym rollout observations: Fabric results (and the Relay ATOF records of their
//! invocations) mapped to Gym's `nemo_gym.rollout_observability` contract.
//!
//! [`observations`] is a pure function from a [`GymObservationsRequest`] (RunResults of one
//! rollout, optional ATOF records, task and rollout ids) to [`GymObservations`]: the
//! [`AgentObservationBundle`] that goes under the key [`NG_AGENT_OBSERVATIONS_KEY`] and the
//! [`TrajectoryRecord`] of the rollout. What could not be observed is an
//! [`ObservationGap`], never a guessed value. The mapping rules are in `docs/gym.md`.
//!
//! ```
//! use fabric_config::gym::{self, GymObservationsRequest};
//! use serde_json::json;
//!
//! let request: GymObservationsRequest = serde_json::from_value(json!({
//!     "task_id": "task-1", "rollout_id": "rollout-1",
//!     "results": [{"agent_name": "a", "harness": "h", "adapter_kind": "process",
//!                  "runtime_id": "runtime-1", "invocation_id": "invocation-1",
//!                  "request_id": "request-1", "status": "failed", "output": null,
//!                  "error": {"stage": "invoke", "code": "timeout", "message": "late"}}]
//! })).unwrap();
//! let out = gym::observations(&request)?;
//! let bundle = serde_json::to_value(&out.ng_agent_observations).unwrap();
//! assert_eq!(bundle["records"][0]["kind"], "agent_invocation");
//! assert_eq!(bundle["records"][0]["status"], "failed");
//! assert_eq!(bundle["records"][0]["error_type"], "timeout");
//! assert_eq!(out.trajectory.turns[0].turn_no, 1);
//! # Ok::<(), fabric_config::gym::GymError>(())
//! ```

mod atof;
mod map;
mod model;
mod trajectory;
mod validate;

#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use map::{GAP_CODES, observations};
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

/// The producer name of bundles, unless the request names another.
pub const DEFAULT_SOURCE: &str = "nemo-fabric";

/// Input of [`observations`] (`fabric_gym_observations`, `fabric export gym`).
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
}

impl GymObservationsRequest {
    /// Decodes a request; errors name the offending field's path.
    pub fn from_json_str(text: &str) -> Result<Self, crate::ConfigError> {
        crate::validate::decode_json_str(text)
    }
}

/// Output of [`observations`]: the Gym bundle and the rollout's trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GymObservations {
    /// The value for Gym's `ng_agent_observations` key.
    pub ng_agent_observations: AgentObservationBundle,
    /// The rollout's trajectory record.
    pub trajectory: TrajectoryRecord,
}
