//! NeMo Gym rollout observations: Fabric results (and the Relay ATOF records of their
//! invocations) mapped to Gym's `nemo_gym.rollout_observability` contract. The documents
//! are `fabric_config::gym`'s; this is the mapping (`docs/gym.md`).
//!
//! [`observations`] is a function from a [`GymObservationsRequest`] (RunResults of one
//! rollout, optional ATOF records, task and rollout ids) to [`GymObservations`] (it reads
//! only the Relay ATIF trajectory files and the captured model calls' `model-calls.jsonl`
//! the results list): the bundle that goes under the key `ng_agent_observations` and the trajectory record of the
//! rollout. What could not be observed is an `ObservationGap`, never a guessed value.
//!
//! ```
//! use fabric_config::gym::GymObservationsRequest;
//! use serde_json::json;
//!
//! let request: GymObservationsRequest = serde_json::from_value(json!({
//!     "task_id": "task-1", "rollout_id": "rollout-1",
//!     "results": [{"agent_name": "a", "harness": "h", "adapter_kind": "process",
//!                  "runtime_id": "runtime-1", "invocation_id": "invocation-1",
//!                  "request_id": "request-1", "status": "failed", "output": null,
//!                  "error": {"stage": "invoke", "code": "timeout", "message": "late"}}]
//! })).unwrap();
//! let out = fabric_relay::gym::observations(&request)?;
//! let bundle = serde_json::to_value(&out.ng_agent_observations).unwrap();
//! assert_eq!(bundle["records"][0]["kind"], "agent_invocation");
//! assert_eq!(bundle["records"][0]["status"], "failed");
//! assert_eq!(bundle["records"][0]["error_type"], "timeout");
//! assert_eq!(out.trajectory.turns[0].turn_no, 1);
//! # Ok::<(), fabric_config::gym::GymError>(())
//! ```

mod annotated;
mod assistant;
mod atof;
mod captured;
mod conversation;
mod join;
mod map;
mod stated;

#[cfg(test)]
mod tests;

#[cfg(doc)]
use fabric_config::gym::{GymObservations, GymObservationsRequest};

pub use annotated::{CallFacts, MAX_DEPTH, StatedItem, Subagent};
pub use assistant::{MESSAGE_GAP_CODES, join_assistant_message_calls};
pub use join::{JOIN_GAP_CODES, join_model_call_observations};
pub use map::{GAP_CODES, observations};
pub use stated::{ConversationSource, result_conversation};
