//! The registered codes of the Gym mapping: the [`super::GymError`] codes and the gap
//! reason codes ([`super::GAP_CODES`]). [`crate::codes::all`] includes them.

use crate::codes::{ErrorCode, Origin as O, code, reason};
use crate::error::Stage as S;

/// The Gym error and gap codes.
pub const CODES: &[ErrorCode] = &[
    code(
        "gym_id_blank",
        Some(S::Config),
        O::Config,
        "a Gym task_id or rollout_id is blank",
    ),
    code(
        "gym_invocation_id_duplicate",
        Some(S::Config),
        O::Config,
        "two invocations of a Gym bundle or trajectory share an invocation_id",
    ),
    code(
        "gym_parent_cycle",
        Some(S::Config),
        O::Config,
        "the parent_invocation_id links of a Gym bundle form a cycle",
    ),
    code(
        "gym_turn_invalid",
        Some(S::Config),
        O::Config,
        "a Gym turn_no is 0 or repeats within its invocation",
    ),
    code(
        "gym_turn_identity_mismatch",
        Some(S::Config),
        O::Config,
        "a Gym turn names another task or rollout than its trajectory",
    ),
    code(
        "gym_model_call_id_duplicate",
        Some(S::Config),
        O::Config,
        "two model calls of a Gym trajectory share a model_call_id",
    ),
    code(
        "gym_model_call_ref_invalid",
        Some(S::Config),
        O::Config,
        "a Gym model call reference has neither model_call_id nor model_ref with response_id",
    ),
    code(
        "gym_tool_call_timing_invalid",
        Some(S::Config),
        O::Config,
        "a Gym tool call ends before it starts",
    ),
    reason(
        "conversation_unavailable",
        O::Config,
        "Gym gap: the invocation's conversation items are not observed",
    ),
    reason(
        "tool_calls_unobserved",
        O::Config,
        "Gym gap: no ATOF records of the invocation, so its tool calls are unknown",
    ),
    reason(
        "model_calls_unobserved",
        O::Config,
        "Gym gap: no ATOF records of the invocation, so its model calls are unknown",
    ),
    reason(
        "model_call_ids_unreported",
        O::Config,
        "Gym gap: an LLM scope carries no model_call_id nor model_ref with response_id",
    ),
    reason(
        "model_call_id_duplicate",
        O::Config,
        "Gym gap: an LLM scope repeats a reported model_call_id and was left out",
    ),
    reason(
        "tool_call_timing_invalid",
        O::Config,
        "Gym gap: a tool scope ends before it starts; its end time was left out",
    ),
    reason(
        "step_count_unavailable",
        O::Config,
        "Gym gap: the turn's step count is not observed (reported as 0)",
    ),
    reason(
        "turn_timestamp_unavailable",
        O::Config,
        "Gym gap: the turn's start time is not observed (reported as 0)",
    ),
    reason(
        "sandbox_usage_unavailable",
        O::Config,
        "Gym gap: the runtime reported no system_stats",
    ),
    reason(
        "atof_records_uncorrelated",
        O::Config,
        "Gym gap: ATOF records that belong to none of the results",
    ),
];
