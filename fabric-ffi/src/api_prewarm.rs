//! Prewarmed hosts: `fabric_prewarm_start`, `_status`, `_close`, `_free`.

use std::ffi::c_char;

use fabric_config::Stage;
use fabric_host::{Fabric, PrewarmInfo};

use crate::api_runtime::register;
use crate::boundary::{ffi_boundary, to_json};
use crate::error::FfiError;
use crate::fabric_prewarm;
use crate::objects::plan_args;
use crate::registry;

/// A pool of prewarmed hosts behind a `fabric_prewarm` handle (`fabric_prewarm_start`).
#[derive(Debug)]
pub(crate) struct PrewarmObject {
    pub(crate) prewarm: fabric_host::Prewarm,
}

fn with_handle(mut info: PrewarmInfo, handle: u64) -> PrewarmInfo {
    info.handle = Some(handle);
    info
}

/// Plans a config and launches `hosts` adapter hosts (1 to 64) ahead of time, exactly as
/// `fabric_runtime_start` would launch them (same command, environment, working directory,
/// FABRIC_HOME and id allocation, limits), each waiting for `start`.
///
/// While the pool is open, `fabric_run`, `fabric_runtime_start` (and their `_begin`
/// forms) of a config whose plan equals this one, with options that launch the same host
/// (`python_interpreter`, `stderr_log_bytes`; no `streaming`) and an unchanged process
/// environment, claim a waiting host instead of launching one; the pool launches a
/// replacement in the background. Anything else starts cold. Results, evidence and stats
/// of a claimed runtime are those of a cold start.
///
/// On success `*prewarm_out` receives a nonzero handle and `*out` a PrewarmInfo
/// (`hosts`, `ready_pids`, `claimed`, `closed`, `handle`). On error `*prewarm_out` is left
/// unchanged and nothing stays running.
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the handle is owned by the caller: `fabric_prewarm_close`, then
/// `fabric_prewarm_free` (which also closes).
/// Errors: `FABRIC_STATUS_CONFIG` (config, options, plan; `invalid_request` with
/// `metadata.path == "hosts"` for 0 or more than 64), `FABRIC_STATUS_CAPABILITY`
/// (`prewarm_unsupported`: a non-local `environment.provider` or `streaming`; the runner
/// errors of a start), `FABRIC_STATUS_RUNTIME` (a launch failed),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json`/`prewarm_out`/`out`, invalid
/// UTF-8).
/// Blocking: yes — until the hosts are launched (not until their interpreters are up).
/// Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `prewarm_out` must be NULL or valid for writing one
/// `fabric_prewarm`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_prewarm_start(
    config_json: *const c_char,
    options_json: *const c_char,
    hosts: u32,
    prewarm_out: *mut fabric_prewarm,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Start;
    ffi_boundary!(stage, out, {
        if prewarm_out.is_null() {
            return Err(FfiError::null_argument(stage, "prewarm_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let (plan, options) = unsafe { plan_args(config_json, options_json) }?;
        let prewarm = Fabric::new().prewarm_plan(&plan, &options.runtime, hosts)?;
        let info = prewarm.info();
        // SAFETY: `prewarm_out` was checked non-NULL and is valid per the contract.
        unsafe {
            register(stage, PrewarmObject { prewarm }, prewarm_out, |id| {
                to_json(stage, &with_handle(info, id))
            })
        }
    })
}

/// The pool's PrewarmInfo now: `ready_pids` lists the hosts still waiting (a claimed
/// host's replacement appears once launched), `claimed` counts the claims so far.
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of
/// another kind).
/// Blocking: no. Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_prewarm_status(
    prewarm: fabric_prewarm,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Start;
    ffi_boundary!(stage, out, {
        let object = registry::get::<PrewarmObject>(stage, "prewarm", prewarm)?;
        to_json(stage, &with_handle(object.prewarm.info(), prewarm))
    })
}

/// Closes the pool: no start claims from it any more, its unclaimed hosts are terminated
/// (their process groups signalled, reaped by the reactor) and their temporary
/// FABRIC_HOMEs removed. Runtimes that claimed a host are not affected. Idempotent;
/// `*out` receives the final PrewarmInfo (`closed: true`, no `ready_pids`).
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`); the handle stays
/// valid until `fabric_prewarm_free`.
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of
/// another kind).
/// Blocking: briefly — while a replacement launch in progress finishes. Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_prewarm_close(
    prewarm: fabric_prewarm,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Stop;
    ffi_boundary!(stage, out, {
        let object = registry::get::<PrewarmObject>(stage, "prewarm", prewarm)?;
        to_json(stage, &with_handle(object.prewarm.close(), prewarm))
    })
}

/// Releases a prewarm handle, closing the pool first when it is still open (see
/// `fabric_prewarm_close`). The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale (already
/// freed), unknown or wrong-kind handle; `fabric_prewarm_free(0)` is a no-op returning
/// `FABRIC_STATUS_OK`.
///
/// Ownership: consumes the handle.
/// Errors: see above (no `out`).
/// Blocking: as `fabric_prewarm_close` when the pool is open. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_prewarm_free(prewarm: fabric_prewarm) -> i32 {
    registry::free::<PrewarmObject>(Stage::Stop, "prewarm", prewarm)
}
