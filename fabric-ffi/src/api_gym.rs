//! NeMo Gym rollout observations.

use std::ffi::c_char;

use fabric_config::gym::{
    GymError, GymJoinAssistantMessagesRequest, GymJoinModelCallsRequest, GymObservationsRequest,
};
use fabric_config::{ConfigError, ErrorInfo, Stage};
use fabric_relay::gym;

use crate::boundary::{ffi_boundary, str_arg, to_json};
use crate::error::FfiError;
use crate::status::FabricStatus;

/// Maps one rollout's RunResults (and the Relay ATOF records of their invocations) to NeMo
/// Gym's observation contract: `*out` is `{"ng_agent_observations": AgentObservationBundle,
/// "trajectory": TrajectoryRecord}` (`schemas/sdk/gym-observations.schema.json`).
///
/// `request_json`: `{"task_id", "rollout_id", "results": [RunResult, ...], "atof": [record,
/// ...]?, "source"?}` (`schemas/sdk/gym-observations-request.schema.json`). The mapping
/// rules are in `docs/gym.md`; what is not observed is an `ObservationGap`, never a guess.
///
/// Ownership: the input is borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (the request is not JSON (`invalid_json`), has the wrong
/// shape or an unknown member (`metadata.path`), a blank `task_id`/`rollout_id`
/// (`gym_id_blank`), two results with one invocation id (`gym_invocation_id_duplicate`)),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `request_json` or `out`, invalid UTF-8).
/// Blocking: reads the Relay ATIF trajectory file each result lists (no other I/O).
/// Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_gym_observations(
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        entry(
            request_json,
            out,
            GymObservationsRequest::from_json_str,
            gym::observations,
        )
    }
}

/// The body every Gym entry point shares: reads `request_json`, decodes it with `decode`,
/// maps it with `map` (both failures are config errors) and writes the JSON answer to `out`.
///
/// # Safety
/// As the entry points: `request_json` NULL or NUL-terminated and valid for the call, `out`
/// NULL or valid for writing one `char *`.
unsafe fn entry<R, O: serde::Serialize>(
    request_json: *const c_char,
    out: *mut *mut c_char,
    decode: fn(&str) -> Result<R, ConfigError>,
    map: fn(&R) -> Result<O, GymError>,
) -> i32 {
    let stage = Stage::Config;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { str_arg(stage, "request_json", request_json) }?;
        let request = decode(text).map_err(request_error)?;
        let answer = map(&request)
            .map_err(|error| FfiError::new(FabricStatus::Config, ErrorInfo::from(error)))?;
        to_json(stage, &answer)
    })
}

fn request_error(error: ConfigError) -> FfiError {
    let not_json = matches!(error, ConfigError::InvalidJson { .. });
    let mut info = ErrorInfo::from(error);
    if not_json {
        info = info.with_metadata("argument", "request_json");
    }
    FfiError::new(FabricStatus::Config, info)
}

/// Resolves the model-call references of a NeMo Gym bundle against the calls a model
/// server captured for the same rollout (Gym's `join_model_call_observations`): `*out` is
/// the joined `AgentObservationBundle` (`schemas/sdk/gym-observation-bundle.schema.json`).
///
/// `request_json`: `{"bundle": AgentObservationBundle, "calls": [ModelCallKeys, ...]}`
/// (`schemas/sdk/gym-join-model-calls-request.schema.json`). Ownership is never guessed
/// and nothing is matched by content or timing; what cannot be joined exactly is a gap
/// (`docs/gym.md`).
///
/// Ownership: the input is borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (the request is not JSON (`invalid_json`), has the wrong
/// shape or an unknown member (`metadata.path`), a bundle that breaks Gym's identity rules
/// (`gym_invocation_id_duplicate`, `gym_parent_cycle`, `gym_model_call_ref_invalid`,
/// `gym_tool_call_timing_invalid`, with `metadata.path` under `bundle`)),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `request_json` or `out`, invalid UTF-8).
/// Blocking: no (pure computation). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_gym_join_model_calls(
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        entry(
            request_json,
            out,
            GymJoinModelCallsRequest::from_json_str,
            gym::join_model_call_observations,
        )
    }
}

/// Joins the persisted assistant messages a NeMo Gym bundle and trajectory declare (a
/// turn's `source_message_id`, a compaction's `source_message_ids`) to the model calls a
/// model server captured for them (Gym's `join_assistant_message_calls`): `*out` is
/// `{"bundle": AgentObservationBundle, "trajectory": TrajectoryRecord?}`
/// (`schemas/sdk/gym-joined-assistant-messages.schema.json`).
///
/// `request_json`: `{"bundle", "trajectory"?, "calls": [ModelCallKeys, ...]}`
/// (`schemas/sdk/gym-join-assistant-messages-request.schema.json`). Invocation ownership is
/// resolved first (as `fabric_gym_join_model_calls`); the join uses session, message and
/// model-server ids only, and what cannot be joined exactly is a gap (`docs/gym.md`).
///
/// Ownership: the input is borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (the request is not JSON (`invalid_json`), has the wrong
/// shape or an unknown member (`metadata.path`), a bundle or trajectory that breaks Gym's
/// identity rules (`gym_invocation_id_duplicate`, `gym_parent_cycle`, `gym_turn_invalid`,
/// `gym_model_call_ref_invalid`, ..., with `metadata.path` under `bundle` or
/// `trajectory`)), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `request_json` or `out`, invalid
/// UTF-8).
/// Blocking: no (pure computation). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_gym_join_assistant_messages(
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        entry(
            request_json,
            out,
            GymJoinAssistantMessagesRequest::from_json_str,
            gym::join_assistant_message_calls,
        )
    }
}
