//! Batches over the C ABI: one engine (`fabric-batch`) for every binding. Items are pushed
//! one line at a time into a queue as small as the concurrency (a push waits while it is
//! full: back-pressure), finished lines are pulled in completion order, then the summary.
//! No callback crosses the ABI.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use ::fabric_batch::{BatchOptions, Pulled, Pushed, Running};
use fabric_config::batch::BatchSettings;
use fabric_config::{ErrorInfo, Stage};
use fabric_host::RunOptions;
use serde_json::json;

use crate::api_runtime::register;
use crate::api_stream::json_array;
use crate::boundary::{
    ffi_boundary, json_arg, opt_str_arg, run_status, run_with_fd, run_with_status, str_arg, to_json,
};
use crate::error::FfiError;
use crate::fabric_batch;
use crate::objects::plan_config;
use crate::registry::{self, Kind, Object};
use crate::status::FabricStatus;

/// A running batch (registered under a `fabric_batch` id). Dropping the last reference
/// cancels it at once (its runtimes are stopped) and waits for its thread.
#[derive(Debug)]
pub(crate) struct BatchObject {
    running: Running,
}

impl Kind for BatchObject {
    const NAME: &'static str = "batch";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Batch(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Batch(value) => Some(value),
            _ => None,
        }
    }
}

fn timeout(timeout_ms: i64) -> Option<Duration> {
    u64::try_from(timeout_ms).ok().map(Duration::from_millis)
}

fn config_failure(info: ErrorInfo) -> FfiError {
    FfiError::new(FabricStatus::Config, info)
}

/// What a call with a status answer hands back: the status and, when OK, its text.
type Answer = Result<(FabricStatus, Option<String>), FfiError>;

/// The body of every batch call answering a status: inside the panic boundary, `*out`
/// cleared, the handle looked up, then `call` on it.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
unsafe fn with_batch(
    batch: fabric_batch,
    out: *mut *mut c_char,
    call: impl FnOnce(&Running) -> Answer,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || call(&registry::get::<BatchObject>(stage, "batch", batch)?.running);
    // SAFETY: forwarded from the caller's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// A pull's answer: OK with `text(value)`, else `none` (END or TIMEOUT) with no text.
fn pulled<T>(
    pulled: Pulled<T>,
    end: FabricStatus,
    text: impl FnOnce(T) -> Result<String, FfiError>,
) -> Answer {
    Ok(match pulled {
        Pulled::Value(value) => (FabricStatus::Ok, Some(text(value)?)),
        Pulled::End => (end, None),
        Pulled::Timeout => (FabricStatus::Timeout, None),
    })
}

/// A status-only call on a batch (close, cancel).
fn on_batch(batch: fabric_batch, call: impl FnOnce(&Running)) -> i32 {
    run_status(Stage::Invoke, || {
        call(&registry::get::<BatchObject>(Stage::Invoke, "batch", batch)?.running);
        Ok(())
    })
}

/// Plans a config and starts a batch over it.
///
/// `batch_json`: NULL or a BatchSettings object (`concurrency`, `isolation` = `fresh` |
/// `reuse`, `attempts`, `retry_failed`, `timeout_seconds`, `grace_seconds`, `output`: a
/// results file appended to and resumed from, `call`: CallOptions). On success
/// `*batch_out` receives a nonzero batch handle and `*out` `{"handle": id}`. Push item
/// lines with `fabric_batch_push`, end them with `fabric_batch_close`, pull finished
/// lines with `fabric_batch_next` and the summary with `fabric_batch_summary`.
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the handle is owned by the caller and released with
/// `fabric_batch_free` (which cancels a batch still running).
/// Errors: `FABRIC_STATUS_CONFIG` (config, settings: `batch_settings_invalid` naming the
/// field, the output file: `batch_output_failed`, plan), `FABRIC_STATUS_INVALID_ARGUMENT`
/// (NULL `config_json`/`batch_out`/`out`, invalid UTF-8).
/// Blocking: no (planning only; runtimes start on the batch's threads). Thread-safe.
///
/// # Safety
/// `config_json` and `batch_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `batch_out` must be NULL or valid for writing one `fabric_batch`;
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_batch_start(
    config_json: *const c_char,
    batch_json: *const c_char,
    batch_out: *mut fabric_batch,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Config;
    ffi_boundary!(stage, out, {
        if batch_out.is_null() {
            return Err(FfiError::null_argument(stage, "batch_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { str_arg(stage, "config_json", config_json) }?;
        // SAFETY: forwarded from this function's contract.
        let settings: BatchSettings = match unsafe { opt_str_arg(stage, "batch_json", batch_json) }?
        {
            Some(text) => json_arg(stage, "batch_json", text)?,
            None => BatchSettings::default(),
        };
        let options = BatchOptions::from_settings(&settings).map_err(config_failure)?;
        let call = settings.call.clone().unwrap_or_default();
        let (plan, run_options): (_, RunOptions) = plan_config(Stage::Plan, config, &call)?;
        let output = settings.output.as_deref().map(std::path::Path::new);
        let running =
            Running::start(plan, run_options.runtime, options, output).map_err(config_failure)?;
        // SAFETY: `batch_out` is non-NULL and valid for one write per this function's contract.
        unsafe {
            register(stage, BatchObject { running }, batch_out, |id| {
                to_json(stage, &json!({ "handle": id }))
            })
        }
    })
}

/// Queues one item: `item_json` is one JSON value (a RunRequest object, any other value as
/// the input, or `{"id": ..., "requests": [...]}`), checked when a worker takes it (a
/// malformed item or a duplicate id ends the batch's input; the summary's `input_error`
/// names its line, counted from 1 over the pushed items).
///
/// Returns `FABRIC_STATUS_OK` (queued), `FABRIC_STATUS_TIMEOUT` (the queue stayed full for
/// `timeout_ms`; negative: wait as long as it takes; `*out` NULL) or `FABRIC_STATUS_END`
/// (the input is closed or the batch cancelled or ended: the item is dropped; `*out` NULL).
///
/// Ownership: `item_json` is borrowed for the call only.
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `item_json`/`out`, invalid UTF-8, bad handle).
/// Blocking: while the queue is full, up to `timeout_ms`. Thread-safe.
///
/// # Safety
/// `item_json` must be NULL or a NUL-terminated string valid for the duration of the call;
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_batch_push(
    batch: fabric_batch,
    item_json: *const c_char,
    timeout_ms: i64,
    out: *mut *mut c_char,
) -> i32 {
    let push = |running: &Running| {
        // SAFETY: forwarded from this function's contract.
        let item = unsafe { str_arg(Stage::Invoke, "item_json", item_json) }?;
        Ok(match running.push(item.to_owned(), timeout(timeout_ms)) {
            Pushed::Queued => (FabricStatus::Ok, Some("{}".to_owned())),
            Pushed::Full => (FabricStatus::Timeout, None),
            Pushed::Closed => (FabricStatus::End, None),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { with_batch(batch, out, push) }
}

/// Ends the batch's input: it finishes once the queued items are done.
///
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (bad handle). Blocking: no. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_batch_close(batch: fabric_batch) -> i32 {
    on_batch(batch, Running::close)
}

/// Cancels a batch: the first call stops taking items and gives in-flight items the grace
/// period (`grace_seconds`), then stops their runtimes; a second call stops them now. An
/// item cut short writes no line (a resumed batch runs it again); the summary counts it as
/// cancelled.
///
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (bad handle). Blocking: no. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_batch_cancel(batch: fabric_batch) -> i32 {
    on_batch(batch, Running::cancel)
}

/// Pulls the next finished item, in completion order: a BatchLine (`id`, `attempts`,
/// `attempt_log`, `duration_ms`, and `result` — with `results` for a multi-turn item — or
/// `error`).
///
/// Returns `FABRIC_STATUS_OK` with the line in `*out`, `FABRIC_STATUS_END` when the batch
/// ended and every line was pulled, or `FABRIC_STATUS_TIMEOUT` after `timeout_ms`
/// (negative: wait as long as it takes) with `*out` NULL.
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`, bad handle).
/// Blocking: up to `timeout_ms`. Thread-safe; each line is handed out once.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_batch_next(
    batch: fabric_batch,
    timeout_ms: i64,
    out: *mut *mut c_char,
) -> i32 {
    let next = |running: &Running| pulled(running.next(timeout(timeout_ms)), FabricStatus::End, Ok);
    // SAFETY: forwarded from this function's contract.
    unsafe { with_batch(batch, out, next) }
}

/// Pulls every finished line ready now, in completion order: one call (and one wake-up)
/// for a burst.
///
/// Returns `FABRIC_STATUS_OK` with a JSON array of 1 to `max_lines` BatchLines (`0`: no
/// limit) in `*out`, each exactly as `fabric_batch_next` returns it (the text the output
/// file got); `FABRIC_STATUS_END` and `FABRIC_STATUS_TIMEOUT` (`*out` NULL) as
/// `fabric_batch_next`, after waiting up to `timeout_ms` (0: never blocks; negative: as
/// long as it takes) for the first line.
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`, bad handle).
/// Blocking: only when no line is ready, up to `timeout_ms`. Thread-safe; each line is
/// handed out once.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_batch_next_lines(
    batch: fabric_batch,
    timeout_ms: i64,
    max_lines: u32,
    out: *mut *mut c_char,
) -> i32 {
    let max = usize::try_from(max_lines).unwrap_or(usize::MAX);
    let next = |running: &Running| {
        let lines = running.next_lines(max, timeout(timeout_ms));
        pulled(lines, FabricStatus::End, |lines| Ok(json_array(&lines)))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { with_batch(batch, out, next) }
}

/// A file descriptor that becomes readable when pushing or pulling again is worth it, so an
/// event loop can drive a batch without a thread (POSIX only).
///
/// Protocol: drain the descriptor (read until `EAGAIN`), then push with a zero timeout
/// and pull with `fabric_batch_next_lines(batch, 0, ...)`; when the push answers
/// `FABRIC_STATUS_TIMEOUT` (queue full) or the pull does (nothing finished), wait until the
/// descriptor is readable, drain it and try again. It becomes readable after such an
/// answer when a line finishes, a queue slot frees, or the batch ends; it may also wake
/// with nothing new (try again). Repeated calls return the same descriptor.
///
/// Ownership: the descriptor belongs to the batch and stays open until `fabric_batch_free`;
/// the caller only polls and reads it — never closes it, and stops watching it before the
/// free. `*out` is NULL on success, else the ErrorInfo (caller frees it).
/// Errors: `FABRIC_STATUS_RUNTIME` (`engine_unavailable`: no socket pair),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `fd_out`/`out`; bad handle).
/// Blocking: no. Thread-safe.
///
/// # Safety
/// `fd_out` must be NULL or valid for writing one `int32_t`; `out` must be NULL or valid for
/// writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_batch_ready_fd(
    batch: fabric_batch,
    fd_out: *mut i32,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let fd = || {
        let object = registry::get::<BatchObject>(stage, "batch", batch)?;
        object
            .running
            .ready_fd()
            .map_err(|info| FfiError::new(FabricStatus::Runtime, info))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_fd(stage, fd_out, out, fd) }
}

/// The summary of an ended batch (BatchSummary: counts, wall time, items per second,
/// latency percentiles, usage totals, retries, `interrupted`, `input_error`).
///
/// Returns `FABRIC_STATUS_OK` with the summary, or `FABRIC_STATUS_TIMEOUT` when the batch
/// did not end within `timeout_ms` (negative: wait as long as it takes; `*out` NULL).
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`, bad handle).
/// Blocking: up to `timeout_ms`. Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_batch_summary(
    batch: fabric_batch,
    timeout_ms: i64,
    out: *mut *mut c_char,
) -> i32 {
    let summary = |running: &Running| {
        let summary = running.summary(timeout(timeout_ms));
        pulled(summary, FabricStatus::Timeout, |s| {
            to_json(Stage::Invoke, &s)
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { with_batch(batch, out, summary) }
}

/// Releases a batch handle; a batch still running is cancelled at once (its runtimes
/// stopped) once the last call using it returned. `fabric_batch_free(0)` is a no-op.
///
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (stale, unknown or wrong-kind handle).
/// Blocking: until a running batch's in-flight runtimes are stopped. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_batch_free(batch: fabric_batch) -> i32 {
    registry::free::<BatchObject>(Stage::Stop, "batch", batch)
}
