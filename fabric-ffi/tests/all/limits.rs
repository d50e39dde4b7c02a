//! Limits through the Rust view of the ABI, with the scripted adapter: an invoke request
//! whose encoded line exceeds the 16 MiB protocol line cap is refused before it is sent
//! (`request_too_large`) and the runtime stays usable (issue 21 item 7); the start timeout
//! is an option (`start_timeout_seconds`) and the error reports it (item 8).

use std::ffi::CString;

use crate::support::{call, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_runtime_free, fabric_runtime_invoke, fabric_runtime_start,
    fabric_runtime_stop,
};
use serde_json::{Value, json};

fn config() -> CString {
    config_with(json!({}))
}

fn config_with(settings: Value) -> CString {
    scripted_config("ffi-limits", settings)
}

fn invoke(rt: u64, request: &Value) -> (i32, Value) {
    let request = CString::new(request.to_string()).expect("cstring");
    // SAFETY: valid string and slot.
    call(|out| unsafe { fabric_runtime_invoke(rt, request.as_ptr(), out) })
}

#[test]
fn oversized_invoke_is_refused_before_sending_and_the_runtime_survives() {
    let config = config();
    let mut rt = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), std::ptr::null(), &mut rt, out)
    });
    assert_eq!(status, FabricStatus::Ok as i32, "{info}");

    // The scripted adapter echoes its input: sent, the echo would exceed the line cap and
    // make the runtime terminal.
    let big = "x".repeat(fabric_host::DEFAULT_MAX_LINE_BYTES + 1);
    let (status, error) = invoke(rt, &json!({"input": big}));
    drop(big);
    assert_eq!(status, FabricStatus::Config as i32, "{}", error["code"]);
    assert_eq!(error["code"], "request_too_large");
    assert_eq!(error["stage"], "invoke");
    assert_eq!(
        error["metadata"]["limit_bytes"],
        fabric_host::DEFAULT_MAX_LINE_BYTES
    );
    assert!(
        error["metadata"]["request_bytes"].as_u64().expect("size")
            > fabric_host::DEFAULT_MAX_LINE_BYTES as u64
    );
    let message = error["message"].as_str().expect("message");
    assert!(
        message.len() < 400 && !message.contains("xxxx"),
        "{message}"
    );

    // Untouched: the next invoke succeeds on the same runtime.
    let (status, result) = invoke(rt, &json!({"input": "small"}));
    assert_eq!(status, FabricStatus::Ok as i32, "{result}");
    assert_eq!(result["status"], "succeeded", "{result}");

    // SAFETY: valid handle and slot.
    let (status, stopped) = call(|out| unsafe { fabric_runtime_stop(rt, out) });
    assert_eq!(status, FabricStatus::Ok as i32, "{stopped}");
    fabric_runtime_free(rt);
}

#[test]
fn start_timeout_option_bounds_start_and_is_reported() {
    let config = config_with(json!({"start_delay_ms": 20_000}));
    let options = CString::new(json!({"start_timeout_seconds": 0.5}).to_string()).expect("cstring");
    let mut rt = 0u64;
    let began = std::time::Instant::now();
    // SAFETY: valid strings and slots.
    let (status, error) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), options.as_ptr(), &mut rt, out)
    });
    assert!(
        began.elapsed() < std::time::Duration::from_secs(15),
        "bounded by the option"
    );
    assert_eq!(status, FabricStatus::Runtime as i32, "{error}");
    assert_eq!(rt, 0, "no handle on failure");
    assert_eq!(error["code"], "timeout");
    assert_eq!(error["stage"], "start");
    assert_eq!(error["metadata"]["timeout_ms"], 500);

    let bad = CString::new(json!({"start_timeout_seconds": 0}).to_string()).expect("cstring");
    // SAFETY: valid strings and slots.
    let (status, error) =
        call(|out| unsafe { fabric_runtime_start(config.as_ptr(), bad.as_ptr(), &mut rt, out) });
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "invalid_timeout_seconds");
    assert_eq!(error["metadata"]["path"], "options.start_timeout_seconds");
}

#[test]
fn stderr_log_bytes_option_is_checked() {
    let config = config();
    let mut rt = 0u64;
    let bad = CString::new(json!({"stderr_log_bytes": 0}).to_string()).expect("cstring");
    // SAFETY: valid strings and slots.
    let (status, error) =
        call(|out| unsafe { fabric_runtime_start(config.as_ptr(), bad.as_ptr(), &mut rt, out) });
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["metadata"]["path"], "options.stderr_log_bytes");
    let small = CString::new(json!({"stderr_log_bytes": 512}).to_string()).expect("cstring");
    // SAFETY: valid strings and slots.
    let (status, info) =
        call(|out| unsafe { fabric_runtime_start(config.as_ptr(), small.as_ptr(), &mut rt, out) });
    assert_eq!(status, FabricStatus::Ok as i32, "{info}");
    // SAFETY: valid handle and slot.
    let (status, _) = call(|out| unsafe { fabric_runtime_stop(rt, out) });
    assert_eq!(status, FabricStatus::Ok as i32);
    fabric_runtime_free(rt);
}
