//! Identity rules of Gym bundles and trajectories, with stable codes: unique invocation ids,
//! an acyclic parent graph (a parent outside the bundle is allowed), unique
//! `(invocation_id, turn_no ≥ 1)`, turns of the trajectory's task and rollout, unique model
//! call ids, model references with a join key, and tool calls that do not end before they
//! start.

use crate::codes;
use std::collections::{HashMap, HashSet};

use super::model::{AgentInvocation, AgentObservationBundle, AgentObservationRecord, ModelCallRef};
use super::trajectory::TrajectoryRecord;
use crate::error::{ErrorInfo, Stage};

/// A broken Gym identity rule or a bad [`super::GymObservationsRequest`]. Messages name
/// the path, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GymError {
    /// A required id is blank.
    #[error("`{path}`: must be a non-blank string")]
    IdBlank {
        /// JSON path.
        path: String,
    },
    /// Two invocations share an id.
    #[error("`{path}`: invocation_id must be unique within a bundle or trajectory")]
    InvocationIdDuplicate {
        /// JSON path of the second occurrence.
        path: String,
    },
    /// The parent links form a cycle.
    #[error("`{path}`: parent_invocation_id must not form a cycle")]
    ParentCycle {
        /// JSON path of an invocation on the cycle.
        path: String,
    },
    /// Two turns of one invocation share a number, or a number is 0.
    #[error("`{path}`: turn_no must be at least 1 and unique within an invocation")]
    TurnInvalid {
        /// JSON path.
        path: String,
    },
    /// A turn names another task or rollout than its trajectory.
    #[error("`{path}`: turn identity must match the trajectory's task_id and rollout_id")]
    TurnIdentityMismatch {
        /// JSON path.
        path: String,
    },
    /// Two model calls of a trajectory share a `model_call_id`.
    #[error("`{path}`: model_call_id must be unique within a trajectory")]
    ModelCallIdDuplicate {
        /// JSON path.
        path: String,
    },
    /// A model reference has neither `model_call_id` nor `model_ref` with `response_id`.
    #[error("`{path}`: model_call_id or both model_ref and response_id are required")]
    ModelCallRefInvalid {
        /// JSON path.
        path: String,
    },
    /// A tool call ends before it starts, or a duration is negative.
    #[error("`{path}`: completed_at must not precede started_at")]
    ToolCallTimingInvalid {
        /// JSON path.
        path: String,
    },
}

/// The `path` of any variant (every variant carries one).
macro_rules! each_path {
    ($error:expr) => {
        match $error {
            GymError::IdBlank { path }
            | GymError::InvocationIdDuplicate { path }
            | GymError::ParentCycle { path }
            | GymError::TurnInvalid { path }
            | GymError::TurnIdentityMismatch { path }
            | GymError::ModelCallIdDuplicate { path }
            | GymError::ModelCallRefInvalid { path }
            | GymError::ToolCallTimingInvalid { path } => path,
        }
    };
}

impl GymError {
    /// Every code [`GymError::code`] returns.
    pub const CODES: &'static [&'static str] = &[
        codes::GYM_ID_BLANK,
        codes::GYM_INVOCATION_ID_DUPLICATE,
        codes::GYM_PARENT_CYCLE,
        codes::GYM_TURN_INVALID,
        codes::GYM_TURN_IDENTITY_MISMATCH,
        codes::GYM_MODEL_CALL_ID_DUPLICATE,
        codes::GYM_MODEL_CALL_REF_INVALID,
        codes::GYM_TOOL_CALL_TIMING_INVALID,
    ];

    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            GymError::IdBlank { .. } => codes::GYM_ID_BLANK,
            GymError::InvocationIdDuplicate { .. } => codes::GYM_INVOCATION_ID_DUPLICATE,
            GymError::ParentCycle { .. } => codes::GYM_PARENT_CYCLE,
            GymError::TurnInvalid { .. } => codes::GYM_TURN_INVALID,
            GymError::TurnIdentityMismatch { .. } => codes::GYM_TURN_IDENTITY_MISMATCH,
            GymError::ModelCallIdDuplicate { .. } => codes::GYM_MODEL_CALL_ID_DUPLICATE,
            GymError::ModelCallRefInvalid { .. } => codes::GYM_MODEL_CALL_REF_INVALID,
            GymError::ToolCallTimingInvalid { .. } => codes::GYM_TOOL_CALL_TIMING_INVALID,
        }
    }

    /// The same error about a document nested under `member` (its path gains the prefix).
    pub fn under(mut self, member: &str) -> Self {
        let path = self.path_mut();
        *path = format!("{member}.{path}");
        self
    }

    fn path_mut(&mut self) -> &mut String {
        each_path!(self)
    }

    /// JSON path of the offending field.
    pub fn path(&self) -> &str {
        each_path!(self)
    }
}

impl From<GymError> for ErrorInfo {
    fn from(error: GymError) -> Self {
        ErrorInfo::new(Stage::Config, error.code(), error.to_string())
            .with_metadata("path", error.path())
    }
}

fn check_refs(refs: &[ModelCallRef], path: &str) -> Result<(), GymError> {
    match refs.iter().position(|r| !r.has_join_key()) {
        Some(index) => Err(GymError::ModelCallRefInvalid {
            path: format!("{path}[{index}]"),
        }),
        None => Ok(()),
    }
}

/// Unique ids and an acyclic parent graph over `invocations` (`(path, invocation)` pairs).
fn check_invocations(invocations: &[(String, &AgentInvocation)]) -> Result<(), GymError> {
    let mut by_id: HashMap<&str, &AgentInvocation> = HashMap::new();
    for (path, invocation) in invocations {
        if by_id
            .insert(invocation.invocation_id.as_str(), invocation)
            .is_some()
        {
            return Err(GymError::InvocationIdDuplicate {
                path: format!("{path}.invocation_id"),
            });
        }
        check_refs(&invocation.model_calls, &format!("{path}.model_calls"))?;
    }
    let mut acyclic: HashSet<&str> = HashSet::new();
    for (path, invocation) in invocations {
        let mut chain: HashSet<&str> = HashSet::new();
        let mut current = Some(invocation.invocation_id.as_str());
        while let Some(id) = current {
            if acyclic.contains(id) {
                break;
            }
            let Some(node) = by_id.get(id) else { break };
            if !chain.insert(id) {
                return Err(GymError::ParentCycle {
                    path: format!("{path}.parent_invocation_id"),
                });
            }
            current = node.parent_invocation_id.as_deref();
        }
        acyclic.extend(chain);
    }
    Ok(())
}

fn check_timing(
    started: Option<f64>,
    completed: Option<f64>,
    duration: Option<f64>,
    path: &str,
) -> Result<(), GymError> {
    let backwards = matches!((started, completed), (Some(s), Some(c)) if c < s);
    if backwards || duration.is_some_and(|d| d < 0.0) {
        return Err(GymError::ToolCallTimingInvalid {
            path: path.to_owned(),
        });
    }
    Ok(())
}

impl AgentObservationBundle {
    /// Gym's identity rules for a bundle (and the model-reference and timing rules of its
    /// records).
    pub fn validate_identity(&self) -> Result<(), GymError> {
        let mut invocations = Vec::new();
        for (index, record) in self.records.iter().enumerate() {
            let path = format!("records[{index}]");
            match record {
                AgentObservationRecord::AgentInvocation(invocation) => {
                    invocations.push((path, invocation));
                }
                AgentObservationRecord::ToolCall(call) => {
                    check_timing(call.started_at, call.completed_at, call.duration_ms, &path)?;
                }
                AgentObservationRecord::ContextCompaction(compaction) => {
                    check_refs(&compaction.model_calls, &format!("{path}.model_calls"))?;
                    let single = [&compaction.before_model_call, &compaction.after_model_call];
                    let refs: Vec<ModelCallRef> = single.into_iter().flatten().cloned().collect();
                    check_refs(&refs, &format!("{path}.before_model_call"))?;
                }
                AgentObservationRecord::Sandbox(_) => {}
            }
        }
        check_invocations(&invocations)
    }
}

impl TrajectoryRecord {
    /// Gym's identity rules for a trajectory.
    pub fn validate_identity(&self) -> Result<(), GymError> {
        for (path, value) in [("task_id", &self.task_id), ("rollout_id", &self.rollout_id)] {
            if value.trim().is_empty() {
                return Err(GymError::IdBlank { path: path.into() });
            }
        }
        let invocations: Vec<(String, &AgentInvocation)> = self
            .invocations
            .iter()
            .enumerate()
            .map(|(index, invocation)| (format!("invocations[{index}]"), invocation))
            .collect();
        check_invocations(&invocations)?;
        let mut call_ids = HashSet::new();
        for (index, call) in self.model_calls.iter().enumerate() {
            if let Some(id) = &call.model_call_id {
                if !call_ids.insert(id.as_str()) {
                    return Err(GymError::ModelCallIdDuplicate {
                        path: format!("model_calls[{index}].model_call_id"),
                    });
                }
            }
        }
        let mut keys = HashSet::new();
        for (index, turn) in self.turns.iter().enumerate() {
            let path = format!("turns[{index}]");
            if turn.task_id != self.task_id || turn.rollout_id != self.rollout_id {
                return Err(GymError::TurnIdentityMismatch { path });
            }
            if turn.turn_no == 0 || !keys.insert((turn.invocation_id.as_str(), turn.turn_no)) {
                return Err(GymError::TurnInvalid {
                    path: format!("{path}.turn_no"),
                });
            }
            check_refs(&turn.model_calls, &format!("{path}.model_calls"))?;
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            let path = format!("tool_calls[{index}]");
            check_timing(call.started_at, call.completed_at, call.duration_ms, &path)?;
        }
        Ok(())
    }
}
