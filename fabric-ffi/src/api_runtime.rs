//! Lifecycle entry points: run, runtimes, environments.

use std::ffi::c_char;
use std::sync::Arc;

use fabric_config::Stage;
use fabric_config::plan::RunPlan;
use fabric_host::{Fabric, HostError, RunOptions, Runtime};

use crate::boundary::{ffi_boundary, opt_str_arg, str_arg, to_json, write_handle};
use crate::error::FfiError;
use crate::objects::{
    EnvironmentObject, RuntimeObject, options_arg, plan_args, plan_config, request_arg,
    request_or_default,
};
use crate::registry::{self, Kind};
use crate::{fabric_environment, fabric_runtime};

/// Registers a started runtime and writes its id; on failure the runtime is dropped
/// (which terminates its host).
pub(crate) fn register_runtime(
    stage: Stage,
    runtime: Runtime,
    runtime_out: *mut fabric_runtime,
) -> Result<String, FfiError> {
    let mut info = runtime.info();
    // SAFETY: `runtime_out` was checked non-NULL by the caller of this helper and is
    // valid for one write per the entry point's contract.
    unsafe {
        register(
            stage,
            RuntimeObject {
                runtime: Arc::new(runtime),
            },
            runtime_out,
            |id| {
                info.handle = Some(id);
                to_json(stage, &info)
            },
        )
    }
}

/// Registers a prepared or attached environment and writes its id (as
/// [`register_runtime`]).
pub(crate) fn register_environment(
    stage: Stage,
    environment: Arc<fabric_host::Environment>,
    environment_out: *mut fabric_environment,
) -> Result<String, FfiError> {
    let mut info = environment.info();
    // SAFETY: `environment_out` was checked non-NULL by the caller of this helper and is
    // valid for one write per the entry point's contract.
    unsafe {
        register(
            stage,
            EnvironmentObject { environment },
            environment_out,
            |id| {
                info.handle = Some(id);
                to_json(stage, &info)
            },
        )
    }
}

/// The body of the calls that start a runtime in or on a parent object (an environment, a
/// service): `runtime_out` checked, the parent (argument name, handle) looked up, the
/// config planned, the runtime started by `start` and registered.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `runtime_out` must be NULL or valid for writing one
/// `fabric_runtime`.
pub(crate) unsafe fn start_runtime_in<T: Kind>(
    param: &'static str,
    parent: u64,
    config_json: *const c_char,
    options_json: *const c_char,
    runtime_out: *mut fabric_runtime,
    start: impl FnOnce(&RunPlan, &T, &RunOptions) -> Result<Runtime, HostError>,
) -> Result<String, FfiError> {
    let stage = Stage::Start;
    if runtime_out.is_null() {
        return Err(FfiError::null_argument(stage, "runtime_out"));
    }
    let object = registry::get::<T>(stage, param, parent)?;
    // SAFETY: per this function's contract.
    let (plan, options) = unsafe { plan_args(config_json, options_json) }?;
    let runtime = start(&plan, &object, &options)?;
    register_runtime(stage, runtime, runtime_out)
}

/// Registers `object`, writes its id to `handle_out` and returns `describe(id)` (the
/// object's info document, which names its handle). On failure `object` is dropped and
/// `handle_out` is left unchanged.
///
/// # Safety
/// `handle_out` must be non-NULL and valid for writing one `u64`.
pub(crate) unsafe fn register<T: Kind>(
    stage: Stage,
    object: T,
    handle_out: *mut u64,
    describe: impl FnOnce(u64) -> Result<String, FfiError>,
) -> Result<String, FfiError> {
    let id = registry::insert(stage, Arc::new(object))?;
    // SAFETY: per this function's contract.
    unsafe { write_handle(handle_out, id) };
    describe(id)
}

/// Plans a config, starts a runtime, invokes it once with `request_json`, stops it, and
/// returns the RunResult.
///
/// `request_json`: a RunRequest (`{"input": ...}`; `request_id`, `context`, `overrides`
/// optional; other keys are dropped); NULL means an empty input. `overrides` reach the
/// adapter as `request.extensions` after the check against the descriptor's
/// `extension_schemas.run_request` (`request_extensions_unsupported` /
/// `request_extension_invalid`, `FABRIC_STATUS_RUNTIME`, `metadata.path`). `options_json`: NULL or a CallOptions object
/// (`base_dir`, default the current directory; `expected_descriptor_sha256`, checked before
/// anything starts: a mismatch is `descriptor_mismatch`, stage `plan`). The runtime is
/// stopped even when the invocation fails; a stop that cannot end the host
/// turns a succeeded result into a failed one with `error.stage == "stop"`. A harness
/// failure is a result with `"status": "failed"` and status `FABRIC_STATUS_OK`.
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (config, options, plan or request),
/// `FABRIC_STATUS_CAPABILITY`, `FABRIC_STATUS_RUNTIME` (start/invoke failed without a
/// result, e.g. `host_crashed`, `timeout`), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL
/// `config_json`/`out`, invalid UTF-8). A JSON argument that is not JSON is
/// `FABRIC_STATUS_CONFIG` (`invalid_json`, `metadata.argument`).
/// Blocking: yes — for the adapter host's start, the invocation and stop (bounded by the
/// config's `runtime.timeout_seconds` and the core's host timeouts). Thread-safe; calls on
/// different threads run concurrently.
///
/// # Safety
/// `config_json`, `request_json` and `options_json` must be NULL or NUL-terminated strings
/// valid for the duration of the call; `out` must be NULL or valid for writing one
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_run(
    config_json: *const c_char,
    request_json: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { str_arg(Stage::Config, "config_json", config_json) }?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { opt_str_arg(Stage::Config, "request_json", request_json) }?;
        // SAFETY: forwarded from this function's contract.
        let options = unsafe { options_arg(options_json) }?;
        let request = request_or_default(request)?;
        let (plan, options) = plan_config(Stage::Plan, config, &options)?;
        let result = Fabric::new().run_plan(&plan, request, &options.runtime)?;
        to_json(stage, &result)
    })
}

/// Plans a config and starts a runtime for ordered invocations.
///
/// `options_json`: NULL or a CallOptions object (`base_dir`, `expected_descriptor_sha256`;
/// see `fabric_plan`).
///
/// On success `*runtime_out` receives a nonzero runtime handle and `*out` the runtime's
/// identity (`runtime_id`, `agent_name`, `adapter_id`, `adapter_kind`, `environment`,
/// `host_pid`, `fabric_home`, `handle`). On error `*runtime_out` is left unchanged.
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the handle is owned by the caller and released with
/// `fabric_runtime_free` (after `fabric_runtime_stop`; freeing a running runtime terminates
/// its host).
/// Errors: `FABRIC_STATUS_CONFIG` (config, options, plan, `descriptor_mismatch`),
/// `FABRIC_STATUS_CAPABILITY`, `FABRIC_STATUS_RUNTIME` (launch or adapter start failed),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json`/`runtime_out`/`out`, invalid UTF-8).
/// A JSON argument that is not JSON is `FABRIC_STATUS_CONFIG` (`invalid_json`).
/// Blocking: yes — until the adapter host answered `start` (bounded by the host timeout).
/// Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `runtime_out` must be NULL or valid for writing one
/// `fabric_runtime`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_start(
    config_json: *const c_char,
    options_json: *const c_char,
    runtime_out: *mut fabric_runtime,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Start;
    ffi_boundary!(stage, out, {
        if runtime_out.is_null() {
            return Err(FfiError::null_argument(stage, "runtime_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let (plan, options) = unsafe { plan_args(config_json, options_json) }?;
        let runtime = Fabric::new().start_runtime_plan(&plan, &options.runtime)?;
        register_runtime(stage, runtime, runtime_out)
    })
}

/// Runs one invocation on a started runtime and returns its RunResult.
///
/// `request_json`: a RunRequest; NULL means an empty input. One invocation at a time per
/// runtime: a concurrent call on the same runtime fails with `FABRIC_STATUS_STATE`
/// (`runtime_busy`). A harness failure is a result with `"status": "failed"` and status
/// `FABRIC_STATUS_OK`.
///
/// Ownership: `request_json` is borrowed for the call only; `*out` is owned by the caller
/// and released with `fabric_string_free`. The runtime stays owned by the caller; freeing
/// it from another thread during this call is safe (the call keeps it alive).
/// Errors: `FABRIC_STATUS_STATE` (busy, stopped or failed runtime),
/// `FABRIC_STATUS_CONFIG` (invalid request or not JSON, `request_too_large`: refused before
/// sending, runtime untouched; `env_name_changed`), `FABRIC_STATUS_RUNTIME`
/// (`host_crashed`, `protocol_error`, `timeout`, ...: the runtime is then terminal;
/// `request_extensions_unsupported` / `request_extension_invalid` for `overrides` the
/// adapter does not declare or that violate its schema: not terminal; an adapter's failed
/// outcome keeps its code, with its stderr cause appended to the message),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`, invalid UTF-8, handle 0, stale, unknown
/// or of another kind).
/// Blocking: yes — until the adapter answered (bounded by `runtime.timeout_seconds` plus a
/// margin). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_invoke(
    runtime: fabric_runtime,
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, out, {
        let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { request_arg(request_json) }?;
        let result = object.runtime.invoke(request)?;
        to_json(stage, &result)
    })
}

/// Stops a runtime (once; later calls return the same result) and returns the
/// RuntimeStopResult (`artifacts`, `events`, optional `error` describing a stop problem).
///
/// Stop asks the adapter host to stop, then escalates to SIGTERM and SIGKILL of its
/// process group after the grace periods, and always reaps it. A stop problem is reported
/// inside the result, not as an error status. The handle stays valid (for
/// `fabric_runtime_status`) until `fabric_runtime_free`.
///
/// Ownership: `*out` is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of
/// another kind).
/// Blocking: yes — until the host exited or was killed (bounded by the stop policy).
/// Thread-safe; a stop racing an invocation waits for the host to end.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_stop(
    runtime: fabric_runtime,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Stop;
    ffi_boundary!(stage, out, {
        let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
        let result = object.runtime.stop();
        to_json(stage, &result)
    })
}

/// Returns a snapshot of a runtime's state: `runtime_id`, `state` (`idle`, `busy`,
/// `failed`, `stopping`, `stopped`), `invocations`, `host_pid`, `started_at_millis`,
/// `fabric_home`, `failure` (the terminal error code, if any).
///
/// Ownership: `*out` is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of
/// another kind).
/// Blocking: no (does not wait for a running invocation). Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_status(
    runtime: fabric_runtime,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, out, {
        let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
        to_json(stage, &object.runtime.status())
    })
}

/// Releases a runtime handle. A runtime that was not stopped is terminated (its host
/// process group is killed and reaped in the background). The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale (already
/// freed), unknown or wrong-kind handle; `fabric_runtime_free(0)` is a no-op returning
/// `FABRIC_STATUS_OK`.
///
/// Ownership: consumes the handle. A call running on another thread keeps the runtime
/// alive until it returns.
/// Errors: see above (no `out`).
/// Blocking: no. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_runtime_free(runtime: fabric_runtime) -> i32 {
    registry::free::<RuntimeObject>(Stage::Stop, "runtime", runtime)
}

/// Prepares the config's environment (workspace, artifacts, forwarded variables) without
/// starting an agent. `options_json`: NULL or a CallOptions object (see `fabric_plan`).
///
/// On success `*environment_out` receives a nonzero environment handle and `*out` the
/// environment (`environment_id`, `provider`, `workspace`, `artifacts`, `env_names` — the
/// names only, never values —, `handle`).
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the handle is owned by the caller: release it with
/// `fabric_environment_release`, then `fabric_environment_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (config, options, plan, unset `env_names`, no descriptor
/// for a non-local `environment.provider`: `environment_provider_not_found`,
/// `invalid_provider_descriptor`), `FABRIC_STATUS_RUNTIME` (file system; `provider_*`: the
/// provider process failed or answered `failed`, docs/sandbox.md),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json`/`environment_out`/`out`, invalid
/// UTF-8). A JSON argument that is not JSON is `FABRIC_STATUS_CONFIG` (`invalid_json`).
/// Blocking: yes — file system work, or until a provider answered `prepare` (60 s at
/// most). Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `environment_out` must be NULL or valid for writing one
/// `fabric_environment`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_prepare(
    config_json: *const c_char,
    options_json: *const c_char,
    environment_out: *mut fabric_environment,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Prepare;
    ffi_boundary!(stage, out, {
        if environment_out.is_null() {
            return Err(FfiError::null_argument(stage, "environment_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let (plan, _options) = unsafe { plan_args(config_json, options_json) }?;
        let environment = Fabric::new().prepare_environment_plan(&plan)?;
        register_environment(stage, environment, environment_out)
    })
}

/// Plans a config and starts a runtime inside a prepared environment (several runtimes may
/// share one environment). Same options, results and ownership as `fabric_runtime_start`.
///
/// Errors: as `fabric_runtime_start`, plus `FABRIC_STATUS_STATE` (`environment_released`)
/// and `FABRIC_STATUS_INVALID_ARGUMENT` for an environment handle that is 0, stale, unknown
/// or of another kind.
/// Blocking: yes — until the adapter host answered `start`. Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `runtime_out` must be NULL or valid for writing one
/// `fabric_runtime`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_start_runtime(
    environment: fabric_environment,
    config_json: *const c_char,
    options_json: *const c_char,
    runtime_out: *mut fabric_runtime,
    out: *mut *mut c_char,
) -> i32 {
    let start = |plan: &RunPlan, object: &EnvironmentObject, options: &RunOptions| {
        Fabric::new().start_runtime_in_plan(plan, &object.environment, &options.runtime)
    };
    ffi_boundary!(Stage::Start, out, {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            start_runtime_in(
                "environment",
                environment,
                config_json,
                options_json,
                runtime_out,
                start,
            )
        }
    })
}

/// Releases a prepared environment: local release keeps caller-owned files; a provider
/// environment is sent `release` (deleted when Fabric prepared it, detached when attached)
/// and its provider process closed; runtimes already started in it keep running until
/// stopped; new starts in it fail with
/// `FABRIC_STATUS_STATE` (`environment_released`). Idempotent. `*out` is the environment
/// JSON with `"released": true`. The handle stays valid until `fabric_environment_free`.
///
/// Ownership: `*out` is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_RUNTIME` (file system; `provider_*` from a provider's `release`),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of another
/// kind).
/// Blocking: yes — file system work, or until a provider answered `release` (60 s at most).
/// Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_release(
    environment: fabric_environment,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Release;
    ffi_boundary!(stage, out, {
        let object = registry::get::<EnvironmentObject>(stage, "environment", environment)?;
        Fabric::new().release_environment(&object.environment)?;
        to_json(stage, &object.environment.info())
    })
}

/// Releases an environment handle (without releasing the environment: call
/// `fabric_environment_release` first). Runtimes started in it keep it alive until they
/// are freed. The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale, unknown or
/// wrong-kind handle; `fabric_environment_free(0)` is a no-op returning `FABRIC_STATUS_OK`.
///
/// Ownership: consumes the handle.
/// Errors: see above (no `out`).
/// Blocking: no. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_environment_free(environment: fabric_environment) -> i32 {
    registry::free::<EnvironmentObject>(Stage::Release, "environment", environment)
}
