//! Codes of the Gym observations: the `GymError` codes of the Gym document checks and the
//! gap reasons of the ATOF → Gym mapping.

use super::{Origin as O, code, declare, reason};
use crate::error::Stage as S;

declare! {
    /// The Gym error and gap codes.
    pub(super) GYM = [
        GYM_ID_BLANK = "gym_id_blank" => code(
            Some(S::Config),
            O::Config,
            "a Gym task_id or rollout_id is blank",
        ),
        GYM_INVOCATION_ID_DUPLICATE = "gym_invocation_id_duplicate" => code(
            Some(S::Config),
            O::Config,
            "two invocations of a Gym bundle or trajectory share an invocation_id",
        ),
        GYM_PARENT_CYCLE = "gym_parent_cycle" => code(
            Some(S::Config),
            O::Config,
            "the parent_invocation_id links of a Gym bundle form a cycle",
        ),
        GYM_TURN_INVALID = "gym_turn_invalid" => code(
            Some(S::Config),
            O::Config,
            "a Gym turn_no is 0 or repeats within its invocation",
        ),
        GYM_TURN_IDENTITY_MISMATCH = "gym_turn_identity_mismatch" => code(
            Some(S::Config),
            O::Config,
            "a Gym turn names another task or rollout than its trajectory",
        ),
        GYM_MODEL_CALL_ID_DUPLICATE = "gym_model_call_id_duplicate" => code(
            Some(S::Config),
            O::Config,
            "two model calls of a Gym trajectory share a model_call_id",
        ),
        GYM_MODEL_CALL_REF_INVALID = "gym_model_call_ref_invalid" => code(
            Some(S::Config),
            O::Config,
            "a Gym model call reference has neither model_call_id nor model_ref with response_id",
        ),
        GYM_TOOL_CALL_TIMING_INVALID = "gym_tool_call_timing_invalid" => code(
            Some(S::Config),
            O::Config,
            "a Gym tool call ends before it starts",
        ),
        CONVERSATION_UNAVAILABLE = "conversation_unavailable" => reason(
            O::Config,
            "Gym gap: the invocation's conversation items are not observed",
        ),
        TOOL_CALLS_UNOBSERVED = "tool_calls_unobserved" => reason(
            O::Config,
            "Gym gap: no ATOF records of the invocation, so its tool calls are unknown",
        ),
        MODEL_CALLS_UNOBSERVED = "model_calls_unobserved" => reason(
            O::Config,
            "Gym gap: no ATOF records of the invocation, so its model calls are unknown",
        ),
        MODEL_CALL_IDS_UNREPORTED = "model_call_ids_unreported" => reason(
            O::Config,
            "Gym gap: an LLM scope carries no model_call_id nor model_ref with response_id",
        ),
        MODEL_CALL_ID_DUPLICATE = "model_call_id_duplicate" => reason(
            O::Config,
            "Gym gap: an LLM scope repeats a reported model_call_id and was left out",
        ),
        TOOL_CALL_TIMING_INVALID = "tool_call_timing_invalid" => reason(
            O::Config,
            "Gym gap: a tool scope ends before it starts; its end time was left out",
        ),
        STEP_COUNT_UNAVAILABLE = "step_count_unavailable" => reason(
            O::Config,
            "Gym gap: the turn's step count is not observed (reported as 0)",
        ),
        TURN_TIMESTAMP_UNAVAILABLE = "turn_timestamp_unavailable" => reason(
            O::Config,
            "Gym gap: the turn's start time is not observed (reported as 0)",
        ),
        SANDBOX_USAGE_UNAVAILABLE = "sandbox_usage_unavailable" => reason(
            O::Config,
            "Gym gap: the runtime reported no system_stats",
        ),
        ATOF_RECORDS_UNCORRELATED = "atof_records_uncorrelated" => reason(
            O::Config,
            "Gym gap: ATOF records that belong to none of the results",
        ),
        MODEL_CALL_REFERENCE_AMBIGUOUS = "model_call_reference_ambiguous" => reason(
            O::Config,
            "Gym gap: a model call reference matches several captured calls; it was kept as reported",
        ),
        MODEL_CALL_REFERENCE_UNMATCHED = "model_call_reference_unmatched" => reason(
            O::Config,
            "Gym gap: a model call reference matches no captured call; it was kept as reported",
        ),
        MODEL_CALL_REFERENCE_CONFLICT = "model_call_reference_conflict" => reason(
            O::Config,
            "Gym gap: a captured call is already owned by another invocation; the reference was kept as reported",
        ),
        MODEL_CALL_OWNERSHIP_UNAVAILABLE = "model_call_ownership_unavailable" => reason(
            O::Config,
            "Gym gap: a captured call (or a compaction's call) is owned by no invocation",
        ),
        MESSAGE_MODEL_REF_MISMATCH = "message_model_ref_mismatch" => reason(
            O::Config,
            "Gym gap: a captured call of a declared message was served by another model server than the declared source_model_ref; it was not joined",
        ),
        ASSISTANT_MESSAGE_UNDECLARED = "assistant_message_undeclared" => reason(
            O::Config,
            "Gym gap: a captured call names an assistant message no turn or compaction declares; it stays with its invocation",
        ),
    ];
}
