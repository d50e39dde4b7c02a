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
use crate::boundary::{
    ffi_boundary, json_arg, opt_str_arg, run_status, run_with_status, str_arg, to_json,
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
    let stage = Stage::Invoke;
    let body = || {
        let object = registry::get::<BatchObject>(stage, "batch", batch)?;
        // SAFETY: forwarded from this function's contract.
        let item = unsafe { str_arg(stage, "item_json", item_json) }?;
        Ok(
            match object.running.push(item.to_owned(), timeout(timeout_ms)) {
                Pushed::Queued => (FabricStatus::Ok, Some("{}".to_owned())),
                Pushed::Full => (FabricStatus::Timeout, None),
                Pushed::Closed => (FabricStatus::End, None),
            },
        )
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Ends the batch's input: it finishes once the queued items are done.
///
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (bad handle). Blocking: no. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_batch_close(batch: fabric_batch) -> i32 {
    run_status(Stage::Invoke, || {
        registry::get::<BatchObject>(Stage::Invoke, "batch", batch)?
            .running
            .close();
        Ok(())
    })
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
    run_status(Stage::Invoke, || {
        registry::get::<BatchObject>(Stage::Invoke, "batch", batch)?
            .running
            .cancel();
        Ok(())
    })
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
    let stage = Stage::Invoke;
    let body = || {
        let object = registry::get::<BatchObject>(stage, "batch", batch)?;
        Ok(match object.running.next(timeout(timeout_ms)) {
            Pulled::Value(line) => (FabricStatus::Ok, Some(to_json(stage, &line)?)),
            Pulled::End => (FabricStatus::End, None),
            Pulled::Timeout => (FabricStatus::Timeout, None),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
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
    let stage = Stage::Invoke;
    let body = || {
        let object = registry::get::<BatchObject>(stage, "batch", batch)?;
        Ok(match object.running.summary(timeout(timeout_ms)) {
            Pulled::Value(summary) => (FabricStatus::Ok, Some(to_json(stage, &summary)?)),
            Pulled::End | Pulled::Timeout => (FabricStatus::Timeout, None),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
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
