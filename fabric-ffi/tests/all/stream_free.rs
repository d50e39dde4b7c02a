//! `fabric_stream_free` never waits for the invocation (issue 21): a stream freed while its
//! invocation runs is closed in the background, so a finalizer or an event loop calling
//! free is not blocked for the adapter's turn.

use std::ffi::CString;

use crate::support::{call, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_runtime_free, fabric_runtime_invoke, fabric_runtime_invoke_openai_stream,
    fabric_runtime_start, fabric_runtime_stop, fabric_stream_free,
};
use serde_json::json;

#[test]
fn freeing_a_running_stream_returns_before_the_invocation_ends() {
    let config = scripted_config("stream-free", json!({}));
    let mut runtime = 0u64;
    // SAFETY: valid C strings and out slots.
    let (status, info) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), std::ptr::null(), &mut runtime, out)
    });
    assert_eq!(status, FabricStatus::Ok as i32, "{info}");

    // The adapter sleeps 2 s before it streams its reply.
    let request = CString::new(
        json!({"input": "hello", "context": {"scripted": {"sleep_ms": 2000}}}).to_string(),
    )
    .expect("cstring");
    let mut stream = 0u64;
    // SAFETY: a live runtime, a valid request and out slots.
    let (status, stream_info) = call(|out| unsafe {
        fabric_runtime_invoke_openai_stream(runtime, request.as_ptr(), &mut stream, out)
    });
    assert_eq!(status, FabricStatus::Ok as i32, "{stream_info}");

    assert_eq!(fabric_stream_free(stream), FabricStatus::Ok as i32);
    // Had free waited for the invocation, the runtime would be idle again by now.
    // SAFETY: a live runtime and a valid out slot.
    let (status, error) =
        call(|out| unsafe { fabric_runtime_invoke(runtime, std::ptr::null(), out) });
    assert_eq!(status, FabricStatus::State as i32, "{error}");
    assert_eq!(error["code"], "runtime_busy");
    // The handle is gone at once; the id stays stale.
    assert_eq!(
        fabric_stream_free(stream),
        FabricStatus::InvalidArgument as i32
    );

    // Stop waits for the host; the background close ends with the invocation.
    // SAFETY: a live runtime and a valid out slot.
    let (status, stopped) = call(|out| unsafe { fabric_runtime_stop(runtime, out) });
    assert_eq!(status, FabricStatus::Ok as i32, "{stopped}");
    assert_eq!(fabric_runtime_free(runtime), FabricStatus::Ok as i32);
}
