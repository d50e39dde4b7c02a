//! Non-blocking calls: begin an operation, watch its readiness descriptor from an event
//! loop, take the outcome. No worker thread of the caller's, no spinning: an invocation
//! completes on the reactor (the host's answer marks it ready), a run, start or stop on the
//! core's completion pool. Every blocking call stays.

use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use fabric_config::plan::RunPlan;
use fabric_config::{CallOptions, Stage};
use fabric_host::{Fabric, RunOptions};

use crate::boundary::{run_with_fd, run_with_status, to_json, write_handle};
use crate::error::FfiError;
use crate::objects::{RuntimeObject, config_args, plan_config, request_arg};
use crate::operation::queue::CompletionQueue;
use crate::operation::{Operation, OperationObject, Outcome, QueueObject, Taken, pool};
use crate::registry;
use crate::status::FabricStatus;
use crate::{fabric_completion_queue, fabric_operation, fabric_runtime};

/// The completion queue a `_begin` call names (`0`: none).
fn queue_arg(
    stage: Stage,
    queue: fabric_completion_queue,
) -> Result<Option<Arc<QueueObject>>, FfiError> {
    if queue == 0 {
        return Ok(None);
    }
    registry::get::<QueueObject>(stage, "queue", queue).map(Some)
}

/// Registers `operation`, writes its id (checked non-NULL by the caller) and attaches it
/// to `queue`.
///
/// # Safety
/// `operation_out` must be non-NULL and valid for writing one `u64`.
unsafe fn register(
    stage: Stage,
    operation: Arc<Operation>,
    queue: Option<Arc<QueueObject>>,
    operation_out: *mut fabric_operation,
) -> Result<(FabricStatus, Option<String>), FfiError> {
    let object = OperationObject {
        operation: Arc::clone(&operation),
    };
    let id = registry::insert(stage, Arc::new(object))?;
    if let Some(queue) = queue {
        operation.watch(Arc::clone(&queue.queue), id);
    }
    // SAFETY: per this function's contract.
    unsafe { write_handle(operation_out, id) };
    Ok((FabricStatus::Ok, None))
}

/// Begins `work` on the completion pool under a new operation handle.
///
/// # Safety
/// `operation_out` must be NULL or valid for writing one `u64`.
unsafe fn begin_pooled(
    stage: Stage,
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    work: impl FnOnce() -> Outcome + Send + 'static,
) -> Result<(FabricStatus, Option<String>), FfiError> {
    if operation_out.is_null() {
        return Err(FfiError::null_argument(stage, "operation_out"));
    }
    let queue = queue_arg(stage, queue)?;
    let operation = Operation::new();
    // SAFETY: checked non-NULL above; valid per this function's contract.
    let registered = unsafe { register(stage, Arc::clone(&operation), queue, operation_out) }?;
    pool::spawn(Box::new(move || {
        let outcome = catch_unwind(AssertUnwindSafe(work))
            .unwrap_or_else(|_| Outcome::Json(Err(FfiError::internal_panic(stage))));
        operation.complete(outcome);
    }));
    Ok(registered)
}

/// A config planned on the completion pool, or why it could not be.
type Planned = Result<(RunPlan, RunOptions), FfiError>;

/// Begins `work` on the completion pool with `config` planned there first (a planning
/// error is the outcome's: `work` reports it).
///
/// # Safety
/// `operation_out` must be NULL or valid for writing one `u64`.
unsafe fn begin_planned(
    stage: Stage,
    config: &str,
    options: CallOptions,
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    work: impl FnOnce(Planned) -> Outcome + Send + 'static,
) -> Result<(FabricStatus, Option<String>), FfiError> {
    let config = config.to_owned();
    let work = move || work(plan_config(Stage::Plan, &config, &options));
    // SAFETY: per this function's contract.
    unsafe { begin_pooled(stage, queue, operation_out, work) }
}

/// Begins one invocation on a started runtime without waiting for it: the non-blocking
/// twin of `fabric_runtime_invoke`.
///
/// `queue`: `0`, or a completion queue the operation's handle is queued on when it
/// finishes (see `fabric_completion_queue_new`; the other `_begin` calls take it too).
/// On success `*operation_out` receives a nonzero operation handle and `*out` is NULL;
/// watch `fabric_operation_ready_fd` (or the queue), then `fabric_operation_take` returns exactly what
/// `fabric_runtime_invoke` would have (status and RunResult or ErrorInfo). The invocation
/// completes on the core's reactor: no thread waits for it and nothing spins.
///
/// Ownership: `request_json` is borrowed for the call only; the operation handle is owned by
/// the caller and released with `fabric_operation_free`. The runtime is busy until the
/// outcome is taken or the operation is cancelled/freed and the host answered.
/// Errors (reported at once; no operation is created): as `fabric_runtime_invoke` before
/// anything is sent — `FABRIC_STATUS_STATE` (`runtime_busy`, `runtime_stopped`,
/// `runtime_failed`), `FABRIC_STATUS_CONFIG` (invalid request, `request_too_large`),
/// `FABRIC_STATUS_RUNTIME` (a host that already failed, `engine_unavailable`: no socket
/// pair), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `operation_out`/`out`, invalid UTF-8, bad
/// runtime or queue handle). Failures of the invocation itself are the outcome's.
/// Blocking: no (writes the invocation record file). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `operation_out` must be NULL or valid for writing one `fabric_operation`; `out`
/// must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_invoke_begin(
    runtime: fabric_runtime,
    request_json: *const c_char,
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        if operation_out.is_null() {
            return Err(FfiError::null_argument(stage, "operation_out"));
        }
        let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { request_arg(request_json) }?;
        let queue = queue_arg(stage, queue)?;
        let operation = Operation::new();
        let pending = object
            .runtime
            .begin_invoke(request, operation.invoke_hook())?;
        operation.set_invoking(Arc::clone(&object.runtime), pending);
        // SAFETY: checked non-NULL above; valid per this function's contract.
        unsafe { register(stage, operation, queue, operation_out) }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Begins a whole run (plan, start, one invocation, stop) without waiting: the
/// non-blocking twin of `fabric_run` (same arguments; the config is planned on the core's
/// completion pool, so config errors are the outcome's). `fabric_operation_take` returns
/// exactly what `fabric_run` would have.
///
/// Ownership: inputs are borrowed for the call only (copied); the operation handle is
/// owned by the caller (`fabric_operation_free`).
/// Errors (at once): `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json`/
/// `operation_out`/`out`, invalid UTF-8), `FABRIC_STATUS_CONFIG` (`request_json` or
/// `options_json` invalid), `FABRIC_STATUS_RUNTIME` (`engine_unavailable`). `*out` is NULL
/// on success.
/// Blocking: no. Thread-safe.
///
/// # Safety
/// As `fabric_run`; `operation_out` must be NULL or valid for writing one
/// `fabric_operation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_run_begin(
    config_json: *const c_char,
    request_json: *const c_char,
    options_json: *const c_char,
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        // SAFETY: forwarded from this function's contract.
        let (config, options) = unsafe { config_args(Stage::Config, config_json, options_json) }?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { request_arg(request_json) }?;
        let work = move |planned: Planned| {
            Outcome::Json(planned.and_then(|(plan, options)| {
                let result = Fabric::new().run_plan(&plan, request, &options.runtime)?;
                to_json(stage, &result)
            }))
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { begin_planned(stage, config, options, queue, operation_out, work) }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Begins planning a config and starting a runtime without waiting: the non-blocking twin
/// of `fabric_runtime_start`. `fabric_operation_take` returns what `fabric_runtime_start`
/// would have written to `*out`: the runtime's identity, whose `handle` is the new runtime
/// handle (issued by the take; a start that is cancelled or freed before it is taken
/// terminates its host and issues no handle).
///
/// Ownership, errors and blocking: as `fabric_run_begin`.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `operation_out` must be NULL or valid for writing one
/// `fabric_operation`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_start_begin(
    config_json: *const c_char,
    options_json: *const c_char,
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Start;
    let body = || {
        // SAFETY: forwarded from this function's contract.
        let (config, options) = unsafe { config_args(Stage::Config, config_json, options_json) }?;
        let work = |planned: Planned| {
            Outcome::Runtime(planned.and_then(|(plan, options)| {
                Ok(Box::new(
                    Fabric::new().start_runtime_plan(&plan, &options.runtime)?,
                ))
            }))
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { begin_planned(stage, config, options, queue, operation_out, work) }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Begins stopping a runtime without waiting: the non-blocking twin of
/// `fabric_runtime_stop`; `fabric_operation_take` returns its RuntimeStopResult. The
/// operation keeps the runtime alive (freeing the runtime handle meanwhile is allowed).
///
/// Errors (at once): `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `operation_out`/`out`; bad
/// runtime handle), `FABRIC_STATUS_RUNTIME` (`engine_unavailable`). `*out` is NULL on
/// success. Blocking: no. Thread-safe.
///
/// # Safety
/// `operation_out` must be NULL or valid for writing one `fabric_operation`; `out` must be
/// NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_stop_begin(
    runtime: fabric_runtime,
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Stop;
    let body = || {
        let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
        let work = move || Outcome::Json(to_json(stage, &object.runtime.stop()));
        // SAFETY: forwarded from this function's contract.
        unsafe { begin_pooled(stage, queue, operation_out, work) }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// The descriptor that becomes readable when the operation finished (or was cancelled), so
/// an event loop waits without a thread: asyncio `add_reader`, a libuv handle, Go's
/// poller. It stays readable until the operation is freed; reading (draining) it is
/// allowed and changes nothing. Repeated calls return the same descriptor.
///
/// Ownership: the descriptor belongs to the operation and is closed by
/// `fabric_operation_free`, exactly once; the caller only polls or reads it (or a `dup` of
/// it), never closes it, and stops watching it before the free. `*out` is NULL on success.
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `fd_out`/`out`; bad handle).
/// Blocking: no. Thread-safe.
///
/// # Safety
/// `fd_out` must be NULL or valid for writing one `int32_t`; `out` must be NULL or valid for
/// writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_operation_ready_fd(
    operation: fabric_operation,
    fd_out: *mut i32,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let fd = || {
        let object = registry::get::<OperationObject>(stage, "operation", operation)?;
        object.operation.ready_fd(stage)
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_fd(stage, fd_out, out, fd) }
}

/// Takes a finished operation's outcome. Never waits for the operation.
///
/// Returns `FABRIC_STATUS_TIMEOUT` (`*out` NULL) while it is not finished;
/// `FABRIC_STATUS_END` (`*out` NULL) when the outcome was already taken or the operation
/// was cancelled; otherwise exactly the status and `*out` document of the blocking twin
/// (for an invocation the RunResult is built here — its files written — once the host's
/// answer is in). One take per operation hands the outcome out.
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: the outcome's; `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; bad handle).
/// Blocking: no. Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_operation_take(
    operation: fabric_operation,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        let object = registry::get::<OperationObject>(stage, "operation", operation)?;
        match object.operation.take() {
            Taken::NotReady => Ok((FabricStatus::Timeout, None)),
            Taken::Over => Ok((FabricStatus::End, None)),
            Taken::Outcome(Outcome::Json(result)) => {
                result.map(|json| (FabricStatus::Ok, Some(json)))
            }
            Taken::Outcome(Outcome::Runtime(result)) => {
                let runtime = result?;
                let mut info = runtime.info();
                let object = RuntimeObject {
                    runtime: Arc::new(*runtime),
                };
                let id = registry::insert(Stage::Start, Arc::new(object))?;
                info.handle = Some(id);
                to_json(Stage::Start, &info).map(|json| (FabricStatus::Ok, Some(json)))
            }
        }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Abandons an operation: its outcome is dropped when it arrives and later takes return
/// `FABRIC_STATUS_END`; the readiness descriptor becomes readable. Nothing running is
/// interrupted: an invocation runs to its end (the runtime stays busy until the host
/// answered, then is free again), a run finishes and stops its runtime, a started runtime
/// is terminated. Idempotent; also after the outcome was taken.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a handle that is 0,
/// freed, unknown or of another kind.
/// Blocking: no. Thread-safe. Safety: safe to call with any value.
#[unsafe(no_mangle)]
pub extern "C" fn fabric_operation_cancel(operation: fabric_operation) -> i32 {
    let stage = Stage::Invoke;
    crate::boundary::ffi_boundary!(stage, {
        let object = registry::get::<OperationObject>(stage, "operation", operation)?;
        object.operation.cancel();
        Ok(())
    })
}

/// Releases an operation handle, cancelling it first when its outcome was not taken (see
/// `fabric_operation_cancel`). Its readiness descriptor is closed once the work that is
/// still running has finished (never before the handle is released); stop watching it
/// first. The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale, unknown or
/// wrong-kind handle; `fabric_operation_free(0)` is a no-op returning `FABRIC_STATUS_OK`.
/// Blocking: no. Thread-safe. Safety: safe to call with any value.
#[unsafe(no_mangle)]
pub extern "C" fn fabric_operation_free(operation: fabric_operation) -> i32 {
    registry::free::<OperationObject>(Stage::Invoke, "operation", operation)
}

/// Creates a completion queue: one descriptor for many operations. Pass its handle to the
/// `_begin` calls (`queue`); each such operation queues its own handle when it finishes
/// (or is cancelled). An event loop watches `fabric_completion_queue_fd` once and, when it
/// is readable, calls `fabric_completion_queue_next` until `FABRIC_STATUS_TIMEOUT`, taking
/// each operation it returns.
///
/// On success `*queue_out` receives a nonzero handle and `*out` is NULL.
/// Ownership: the handle is owned by the caller (`fabric_completion_queue_free`).
/// Errors: `FABRIC_STATUS_RUNTIME` (`engine_unavailable`: no socket pair),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `queue_out`/`out`).
/// Blocking: no. Thread-safe.
///
/// # Safety
/// `queue_out` must be NULL or valid for writing one `fabric_completion_queue`; `out` must be
/// NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_completion_queue_new(
    queue_out: *mut fabric_completion_queue,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        if queue_out.is_null() {
            return Err(FfiError::null_argument(stage, "queue_out"));
        }
        let queue = QueueObject {
            queue: Arc::new(CompletionQueue::new(stage)?),
        };
        let id = registry::insert(stage, Arc::new(queue))?;
        // SAFETY: checked non-NULL above; valid per this function's contract.
        unsafe { write_handle(queue_out, id) };
        Ok((FabricStatus::Ok, None))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// The queue's descriptor: readable while finished operations are queued (and until the
/// next `fabric_completion_queue_next` that empties the queue). Owned by the queue, closed
/// once the queue is freed and every operation begun with it is gone; never close it.
///
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `fd_out`/`out`; bad handle). `*out` is
/// NULL on success. Blocking: no. Thread-safe.
///
/// # Safety
/// `fd_out` must be NULL or valid for writing one `int32_t`; `out` must be NULL or valid for
/// writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_completion_queue_fd(
    queue: fabric_completion_queue,
    fd_out: *mut i32,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let fd = || {
        let object = registry::get::<QueueObject>(stage, "queue", queue)?;
        Ok(object.queue.fd())
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_fd(stage, fd_out, out, fd) }
}

/// Pops the next finished operation: `FABRIC_STATUS_OK` with its handle in
/// `*operation_out`, or `FABRIC_STATUS_TIMEOUT` when none is queued (never waits). Each
/// operation is queued once; take it with `fabric_operation_take` (a cancelled one takes
/// as `FABRIC_STATUS_END`). A handle freed meanwhile may still come out: ignore handles you
/// no longer track.
///
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `operation_out`/`out`; bad handle).
/// `*out` is NULL unless an error is reported. Blocking: no. Thread-safe.
///
/// # Safety
/// `operation_out` must be NULL or valid for writing one `fabric_operation`; `out` must be
/// NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_completion_queue_next(
    queue: fabric_completion_queue,
    operation_out: *mut fabric_operation,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        if operation_out.is_null() {
            return Err(FfiError::null_argument(stage, "operation_out"));
        }
        let object = registry::get::<QueueObject>(stage, "queue", queue)?;
        Ok(match object.queue.next() {
            Some(id) => {
                // SAFETY: checked non-NULL above; valid per this function's contract.
                unsafe { write_handle(operation_out, id) };
                (FabricStatus::Ok, None)
            }
            None => (FabricStatus::Timeout, None),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Releases a completion queue handle. Operations begun with it keep reporting to it
/// until they are gone; its descriptor is closed after that. The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale, unknown or
/// wrong-kind handle; `fabric_completion_queue_free(0)` is a no-op returning OK.
/// Blocking: no. Thread-safe. Safety: safe to call with any value.
#[unsafe(no_mangle)]
pub extern "C" fn fabric_completion_queue_free(queue: fabric_completion_queue) -> i32 {
    registry::free::<QueueObject>(Stage::Invoke, "queue", queue)
}
