//! Pull streams: a streaming invocation's items are pulled one at a time with
//! `fabric_stream_next`; its RunResult is read with `fabric_stream_result`. No callback
//! crosses the ABI. The stream handle is generic over the item kind (`StreamInfo.kind`):
//! the native OpenAI stream is one producer.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use fabric_config::{RunRequest, Stage};
use fabric_host::{HostError, PullStream, Runtime, StreamBatch, StreamNext};

use crate::api_runtime::register;
use crate::boundary::{ffi_boundary, run_with_fd, run_with_status, to_json};
use crate::error::FfiError;
use crate::objects::{RuntimeObject, StreamObject, request_arg};
use crate::registry;
use crate::status::FabricStatus;
use crate::{fabric_runtime, fabric_stream};

/// Starts one invocation that streams native OpenAI Chat Completions chunks.
///
/// `request_json`: a RunRequest, as for `fabric_runtime_invoke` (NULL: an empty input). On
/// success `*stream_out` receives a nonzero stream handle and `*out` the stream's identity
/// (`kind` = `"openai.chat_completions.chunk/v1"`, `runtime_id`, `invocation_id`,
/// `request_id`, `handle`). Pull the chunks with `fabric_stream_next`, then read the
/// RunResult with `fabric_stream_result`. The runtime is busy until the stream is read to
/// its end, its result is read, or it is closed: another invocation or stream on it is
/// `FABRIC_STATUS_STATE` (`runtime_busy`).
///
/// Ownership: `request_json` is borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the stream handle is owned by the caller and released with
/// `fabric_stream_free`. The stream keeps its runtime alive (freeing the runtime handle
/// first is allowed).
/// Errors: `FABRIC_STATUS_CAPABILITY` (`openai_streaming_unavailable`: the adapter does not
/// claim streaming; the runtime is untouched), `FABRIC_STATUS_STATE` (`runtime_busy`,
/// `runtime_stopped`, `runtime_failed`), `FABRIC_STATUS_CONFIG` (invalid request),
/// `FABRIC_STATUS_RUNTIME` (the invocation could not be sent),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `stream_out`/`out`, invalid UTF-8, bad runtime
/// handle). Failures of the invocation itself are reported by the stream.
/// Blocking: no (the invocation runs in the adapter host). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `stream_out` must be NULL or valid for writing one `fabric_stream`; `out` must be
/// NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_invoke_openai_stream(
    runtime: fabric_runtime,
    request_json: *const c_char,
    stream_out: *mut fabric_stream,
    out: *mut *mut c_char,
) -> i32 {
    ffi_boundary!(Stage::Invoke, out, {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            start_stream(runtime, request_json, stream_out, |runtime, request| {
                Ok(Box::new(runtime.invoke_openai_stream(request)?))
            })
        }
    })
}

/// Starts one invocation that streams its raw NeMo Relay ATOF records.
///
/// The runtime must have been started with the `streaming` option (CallOptions) and Relay
/// telemetry. `request_json`: a RunRequest, as for `fabric_runtime_invoke` (NULL: an empty
/// input). On success `*stream_out` receives a nonzero stream handle and `*out` the
/// stream's identity (`kind` = `"relay.atof.record"`, `runtime_id`, `invocation_id`,
/// `request_id`, `handle`). Pull the records (JSON objects, as the adapter's Relay published
/// them) with `fabric_stream_next`, then read the RunResult with `fabric_stream_result`.
/// The stream ends after the adapter host answered and every record routed to the
/// request id was delivered. The runtime is busy until the stream is read to its end, its
/// result is read, or it is closed.
///
/// Ownership: as `fabric_runtime_invoke_openai_stream`.
/// Errors: `FABRIC_STATUS_CAPABILITY` (`streaming_unavailable`: not started with
/// `streaming`; the runtime is untouched), `FABRIC_STATUS_STATE` (`runtime_busy`,
/// `runtime_stopped`, `runtime_failed`), `FABRIC_STATUS_CONFIG` (invalid request),
/// `FABRIC_STATUS_RUNTIME` (`collector_request_failed`: the collector refused the request
/// id or the stream; the invocation could not be sent), `FABRIC_STATUS_INVALID_ARGUMENT`
/// (NULL `stream_out`/`out`, invalid UTF-8, bad runtime handle).
/// Blocking: only for an external collector's registration (HTTP). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `stream_out` must be NULL or valid for writing one `fabric_stream`; `out` must be
/// NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_runtime_invoke_stream(
    runtime: fabric_runtime,
    request_json: *const c_char,
    stream_out: *mut fabric_stream,
    out: *mut *mut c_char,
) -> i32 {
    ffi_boundary!(Stage::Invoke, out, {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            start_stream(runtime, request_json, stream_out, |runtime, request| {
                Ok(Box::new(runtime.invoke_stream(request)?))
            })
        }
    })
}

/// The body of the calls that start a streaming invocation: `stream_out` checked, the
/// runtime looked up, the request read, `invoke` called, the stream registered under a new
/// handle; returns the stream's identity naming that handle.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `stream_out` must be NULL or valid for writing one `fabric_stream`.
unsafe fn start_stream(
    runtime: fabric_runtime,
    request_json: *const c_char,
    stream_out: *mut fabric_stream,
    invoke: impl FnOnce(&Arc<Runtime>, RunRequest) -> Result<Box<dyn PullStream>, HostError>,
) -> Result<String, FfiError> {
    let stage = Stage::Invoke;
    if stream_out.is_null() {
        return Err(FfiError::null_argument(stage, "stream_out"));
    }
    let object = registry::get::<RuntimeObject>(stage, "runtime", runtime)?;
    // SAFETY: per this function's contract.
    let request = unsafe { request_arg(request_json) }?;
    let stream = invoke(&object.runtime, request)?;
    let mut info = stream.info().clone();
    // SAFETY: `stream_out` was checked non-NULL above and is valid for one write per this
    // function's contract.
    unsafe {
        register(stage, StreamObject { stream }, stream_out, |id| {
            info.handle = Some(id);
            to_json(stage, &info)
        })
    }
}

/// Pulls the next item of a stream.
///
/// Returns `FABRIC_STATUS_OK` with the item's JSON in `*out` (for an OpenAI stream one
/// `chat.completion.chunk` object, exactly as the adapter emitted it);
/// `FABRIC_STATUS_END` when the stream has no more items (also after
/// `fabric_stream_close`); `FABRIC_STATUS_TIMEOUT` when no item arrived within
/// `timeout_ms` (`0` polls, a negative value waits without limit). `*out` is NULL for END
/// and TIMEOUT. An error ends the stream: `FABRIC_STATUS_RUNTIME` with
/// `openai_stream_protocol_error` (stage `invoke`; the adapter broke the transport and the
/// runtime is failed; `metadata.http_status` is the listener's answer) or, when the adapter
/// dropped its connection, the invocation's own error; later calls report it again.
/// Failures of the invocation are otherwise reported by `fabric_stream_result`.
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: as above, and `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, freed,
/// unknown or of another kind).
/// Blocking: yes — up to `timeout_ms`; `fabric_stream_close` from another thread wakes it.
/// Thread-safe; items are handed out once, in order, to whichever thread pulls.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_stream_next(
    stream: fabric_stream,
    timeout_ms: i64,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        let object = registry::get::<StreamObject>(stage, "stream", stream)?;
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        Ok(match object.stream.next(timeout)? {
            StreamNext::Item(json) => (FabricStatus::Ok, Some(json)),
            StreamNext::End => (FabricStatus::End, None),
            StreamNext::Timeout => (FabricStatus::Timeout, None),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// Pulls every ready item of a stream at once: one call (and one wake-up) for a burst.
///
/// Returns `FABRIC_STATUS_OK` with a JSON array of 1 to `max_items` items in `*out` (`0`:
/// no limit beyond the stream's queue bound of 1,024 items / 16 MiB) and at most 1 MiB of
/// item text (a larger first item comes alone), in order, each
/// exactly as `fabric_stream_next` returns it; `FABRIC_STATUS_END` and
/// `FABRIC_STATUS_TIMEOUT` (`*out` NULL) and errors as `fabric_stream_next`, after waiting
/// up to `timeout_ms` for the first item. A zero `timeout_ms` never blocks: with nothing
/// ready it returns `FABRIC_STATUS_TIMEOUT` until the stream has been finished (by a pull
/// with a nonzero timeout, `fabric_stream_result` or `fabric_stream_close`), so a
/// consumer that polls with 0 must wait with a nonzero timeout when the poll is empty.
/// This lets a caller drain ready items on its own thread and do only the waits elsewhere.
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: as `fabric_stream_next`.
/// Blocking: only when no item is ready — up to `timeout_ms`. Thread-safe; items are
/// handed out once, in order.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_stream_next_batch(
    stream: fabric_stream,
    timeout_ms: i64,
    max_items: u32,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let body = || {
        let object = registry::get::<StreamObject>(stage, "stream", stream)?;
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        let max = usize::try_from(max_items).unwrap_or(usize::MAX);
        Ok(match object.stream.next_batch(max, timeout)? {
            StreamBatch::Items(items) => (FabricStatus::Ok, Some(json_array(&items))),
            StreamBatch::End => (FabricStatus::End, None),
            StreamBatch::Timeout => (FabricStatus::Timeout, None),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// A file descriptor that becomes readable when pulling again is worth it, so an event loop
/// can wait for a stream without a thread (POSIX only).
///
/// Protocol: drain the descriptor (read until `EAGAIN`), then call
/// `fabric_stream_next_batch(stream, 0, ...)`; on `FABRIC_STATUS_TIMEOUT` wait until the
/// descriptor is readable, drain it and pull with a zero timeout again. The descriptor
/// becomes readable after a zero-timeout pull that timed out when an item arrives, the stream
/// ends, fails or is closed, or when only a waiting pull can finish it — so when a
/// zero-timeout pull right after a wake-up still returns `FABRIC_STATUS_TIMEOUT`, finish with
/// a waiting pull (`timeout_ms` nonzero) on a worker thread. Repeated calls return the same
/// descriptor.
///
/// Ownership: the descriptor belongs to the stream and stays open until `fabric_stream_free`;
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
pub unsafe extern "C" fn fabric_stream_ready_fd(
    stream: fabric_stream,
    fd_out: *mut i32,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Invoke;
    let fd = || {
        let object = registry::get::<StreamObject>(stage, "stream", stream)?;
        Ok(object.stream.ready_fd()?)
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { run_with_fd(stage, fd_out, out, fd) }
}

/// `[item,item,...]`: the items are JSON documents already, so they are joined, not
/// re-encoded.
pub(crate) fn json_array(items: &[String]) -> String {
    let bytes = items.iter().map(|item| item.len() + 1).sum::<usize>() + 2;
    let mut out = String::with_capacity(bytes);
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out.push(']');
    out
}

/// Waits for the stream's invocation and returns its RunResult. An OpenAI stream drops its
/// unread items first; an ATOF stream (`fabric_runtime_invoke_stream`) keeps them readable
/// with `fabric_stream_next` until read to the end, closed, or the runtime is stopped (the
/// runtime itself is free for another turn once this returns). May be called more than
/// once (same answer).
///
/// Ownership: `*out` is owned by the caller (`fabric_string_free`).
/// Errors: `FABRIC_STATUS_RUNTIME` (`openai_stream_protocol_error`, or the invocation's
/// failure: `lifecycle_openai_stream_unsupported` — the adapter claims streaming without
/// implementing it; the runtime is failed —, `lifecycle_stream_transport_failed`,
/// `host_crashed`, `timeout`, ...), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; bad
/// handle). A harness failure is a result with `"status": "failed"` and
/// `FABRIC_STATUS_OK`.
/// Blocking: yes — until the adapter answered (bounded by `runtime.timeout_seconds`) and
/// the stream's connection completed (at most 10 s more). Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_stream_result(stream: fabric_stream, out: *mut *mut c_char) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, out, {
        let object = registry::get::<StreamObject>(stage, "stream", stream)?;
        let result = object.stream.result()?;
        to_json(stage, &result)
    })
}

/// Closes a stream: unread items are dropped and the invocation is waited for — never
/// cancelled — so the runtime is free again when this returns. A `fabric_stream_next`
/// blocked on another thread returns `FABRIC_STATUS_END` at once (it does not wait for the
/// invocation; this call does); later ones too. Idempotent; the
/// result stays readable with `fabric_stream_result`.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a handle that is 0,
/// freed, unknown or of another kind.
/// Errors: see above (no `out`).
/// Blocking: yes — until the invocation answered and the connection completed.
/// Thread-safe. Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_stream_close(stream: fabric_stream) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, {
        let object = registry::get::<StreamObject>(stage, "stream", stream)?;
        object.stream.close();
        Ok(())
    })
}

/// Releases a stream handle without waiting. A stream whose invocation is still running
/// (not read to its end, no result read, not closed) is closed in the background: its
/// unread items are dropped and the invocation runs to its end, never cancelled; the
/// runtime stays busy (`runtime_busy`) until the adapter answered. Call
/// `fabric_stream_close` first to wait for that. The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale (already
/// freed), unknown or wrong-kind handle; `fabric_stream_free(0)` is a no-op returning
/// `FABRIC_STATUS_OK`.
///
/// Ownership: consumes the handle. A call running on another thread keeps the stream alive
/// until it returns (that call then finishes the close).
/// Errors: see above (no `out`).
/// Blocking: no (safe from finalizers and event loops). Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_stream_free(stream: fabric_stream) -> i32 {
    let stage = Stage::Invoke;
    ffi_boundary!(stage, {
        let removed: Option<Arc<StreamObject>> =
            registry::remove::<StreamObject>(stage, "stream", stream)?;
        if let Some(object) = removed {
            release_stream(object);
        }
        Ok(())
    })
}

/// Drops the registry's reference to a freed stream: at once when dropping cannot wait
/// (settled, or another call still holds it), else on a short-lived thread that closes it.
fn release_stream(object: Arc<StreamObject>) {
    let Ok(object) = Arc::try_unwrap(object) else {
        return; // a call in progress holds the last reference; its drop closes the stream
    };
    if object.stream.settled() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("fabric-stream-close".into())
        .spawn(move || drop(object));
    if let Err(error) = spawned {
        // No thread (resource exhaustion): the dropped closure owned the stream,
        // so it was closed here, synchronously, as before.
        drop(error);
    }
}

#[cfg(test)]
mod tests {
    use super::json_array;

    #[test]
    fn batches_are_json_arrays_of_the_items() {
        let items = vec![r#"{"a":1}"#.to_owned(), r#"{"b":[2]}"#.to_owned()];
        let text = json_array(&items);
        let parsed: Vec<serde_json::Value> = serde_json::from_str(&text).expect("array");
        assert_eq!(
            parsed,
            vec![serde_json::json!({"a":1}), serde_json::json!({"b":[2]})]
        );
        assert_eq!(json_array(&[]), "[]");
    }
}
