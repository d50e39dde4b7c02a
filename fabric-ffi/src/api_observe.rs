//! Observation entry points: resource snapshots and health checks.

use fabric_config::codes;
use std::ffi::c_char;

use fabric_config::health::CheckRequest;
use fabric_config::{ErrorInfo, Stage};
use fabric_host::Fabric;

use crate::boundary::{ffi_boundary, str_arg, to_json};
use crate::error::FfiError;
use crate::objects::{EnvironmentObject, RuntimeObject};
use crate::registry;
use crate::status::FabricStatus;
use crate::{fabric_environment, fabric_runtime};

/// Reads the CPU time, resident memory and process count of a runtime's adapter host and
/// its descendants, and returns a RuntimeResourceSnapshot (`runtime_id`, `started_at`,
/// `observed_at`, `resident_memory_bytes`, `process_count`, `cpu_time_seconds`).
///
/// Does not wait for an invocation in progress on the runtime.
///
/// Ownership: `*out` is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_RESOURCE_UNAVAILABLE` (code `resource_observation_unavailable`:
/// stopped or stopping runtime, exited host, unreadable or changing process tree;
/// `metadata.reason` says which), `FABRIC_STATUS_RESOURCE_UNSUPPORTED` (code
/// `resource_observation_unsupported`: adapter kind without a local host, non-Linux),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of another
/// kind).
/// Blocking: no (a few `/proc` reads). Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_resource_snapshot(
    runtime: fabric_runtime,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, out, {
        let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
        let snapshot = object.runtime.resource_snapshot()?;
        to_json(stage, &snapshot)
    })
}

/// Checks the health of a runtime started in this process and returns a CheckReport
/// (`fabric.check/v1alpha1`) for every outcome: `passed`, `failed`, `unknown` (for
/// example `runtime_unavailable`, `probe_timeout`, `observation_changed`) and
/// `unsupported` (`unsupported_adapter`, `unsupported_scope`).
///
/// `environment`: 0 searches every runtime started in this process (with
/// `fabric_runtime_start` or in any environment); a nonzero environment handle restricts
/// the search to the runtimes started in it. In a provider environment the environment's
/// runtime server answers, on a provider process of its own (so also during an
/// invocation): a runtime check selects the runtime there (one another process started,
/// too), and `"scope": "server"` checks that server, which is `unsupported_scope`
/// without a provider environment. `request_json`: a CheckRequest
/// (`{"scope": "runtime", "runtime_id": "...", "level": "live|active|ready",
/// "timeout_seconds": 3}`). One deadline (`timeout_seconds`, default 3 s) covers the
/// whole call.
///
/// Ownership: `request_json` is borrowed for the call only; `*out` is owned by the caller
/// and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (a request that is not JSON: `invalid_json`; one that
/// breaks the CheckRequest rules: code `invalid_check_request`, `metadata.path`),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `request_json`/`out`, invalid UTF-8; a nonzero
/// environment handle that is stale, unknown or of another kind).
/// Blocking: yes — at most the request's timeout. Thread-safe; works while an invocation
/// of the runtime is in progress.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_check(
    environment: fabric_environment,
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Config;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { str_arg(stage, "request_json", request_json) }?;
        let request = parse_check_request(text)?;
        let environment = match environment {
            0 => None,
            id => Some(registry::get::<EnvironmentObject>(
                stage,
                "environment",
                id,
            )?),
        };
        let report = Fabric::new().check(
            environment.as_ref().map(|e| e.environment.as_ref()),
            &request,
        )?;
        to_json(stage, &report)
    })
}

/// Decodes a CheckRequest: not JSON → `invalid_json` (config); JSON that is not a CheckRequest
/// (unknown field, wrong type) → config error naming the field, never echoing values.
fn parse_check_request(text: &str) -> Result<CheckRequest, FfiError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| FfiError::invalid_json(Stage::Config, "request_json", &e))?;
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        let message = inner.to_string();
        // serde's message names fields and expected types; drop anything after a colon
        // that could quote the value.
        let what = message.split(':').next().unwrap_or("invalid").trim();
        FfiError::new(
            FabricStatus::Config,
            ErrorInfo::new(
                Stage::Config,
                codes::INVALID_CHECK_REQUEST,
                format!("request_json is not a CheckRequest at `{path}`: {what}"),
            )
            .with_metadata("path", path),
        )
    })
}
