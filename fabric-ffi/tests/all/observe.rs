//! `fabric_runtime_resource_snapshot` and `fabric_check` through the Rust view of the ABI,
//! with the scripted adapter.

use std::ffi::CString;

use crate::support::{call, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_check, fabric_environment_free, fabric_environment_prepare,
    fabric_environment_start_runtime, fabric_runtime_free, fabric_runtime_invoke,
    fabric_runtime_resource_snapshot, fabric_runtime_start, fabric_runtime_stop,
};
use serde_json::{Value, json};

fn config(settings: Value) -> CString {
    scripted_config("ffi-observe", settings)
}

fn start(settings: Value) -> (u64, String) {
    let config = config(settings);
    let mut rt = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), std::ptr::null(), &mut rt, out)
    });
    assert_eq!(status, 0, "{info}");
    (rt, info["runtime_id"].as_str().expect("id").to_owned())
}

fn check(environment: u64, request: &Value) -> (i32, Value) {
    let request = CString::new(request.to_string()).expect("cstring");
    // SAFETY: valid string and slot.
    call(|out| unsafe { fabric_check(environment, request.as_ptr(), out) })
}

#[test]
fn snapshot_lifecycle_and_statuses() {
    let (rt, runtime_id) = start(json!({}));
    // SAFETY: valid slot.
    let (status, snapshot) = call(|out| unsafe { fabric_runtime_resource_snapshot(rt, out) });
    assert_eq!(status, 0, "{snapshot}");
    assert_eq!(snapshot["runtime_id"], runtime_id.as_str());
    assert!(snapshot["process_count"].as_u64().expect("count") >= 1);
    assert!(snapshot["cpu_time_seconds"].as_f64().is_some());

    let request = CString::new(r#"{"input": "hi"}"#).expect("cstring");
    // SAFETY: valid string and slot.
    let (status, result) = call(|out| unsafe { fabric_runtime_invoke(rt, request.as_ptr(), out) });
    assert_eq!(status, 0, "{result}");
    assert_eq!(
        result["resource_snapshot"]["runtime_id"],
        runtime_id.as_str()
    );
    assert_eq!(result["system_stats"]["before"]["status"], "available");

    // SAFETY: valid slot.
    let (status, _) = call(|out| unsafe { fabric_runtime_stop(rt, out) });
    assert_eq!(status, 0);
    // SAFETY: valid slot.
    let (status, error) = call(|out| unsafe { fabric_runtime_resource_snapshot(rt, out) });
    assert_eq!(status, FabricStatus::ResourceUnavailable as i32, "{error}");
    assert_eq!(error["code"], "resource_observation_unavailable");
    assert_eq!(error["metadata"]["reason"], "runtime_stopped");
    assert_eq!(fabric_runtime_free(rt), 0);
    // SAFETY: valid slot.
    let (status, error) = call(|out| unsafe { fabric_runtime_resource_snapshot(rt, out) });
    assert_eq!(status, FabricStatus::InvalidArgument as i32);
    assert_eq!(error["code"], "stale_handle");
}

#[test]
fn check_reports_and_request_errors() {
    let (rt, runtime_id) = start(json!({"health": {"fail": "ready"}}));
    let (status, report) = check(
        0,
        &json!({"scope": "runtime", "runtime_id": runtime_id, "level": "active"}),
    );
    assert_eq!(status, 0, "{report}");
    assert_eq!(report["schema_version"], "fabric.check/v1alpha1");
    assert_eq!(report["outcome"], "passed", "{report}");
    assert_eq!(report["activity"], "idle");
    let (status, report) = check(
        0,
        &json!({"scope": "runtime", "runtime_id": runtime_id, "level": "ready"}),
    );
    assert_eq!(status, 0);
    assert_eq!(report["outcome"], "failed", "{report}");
    assert_eq!(report["reason"], "scripted_failure");

    let (status, error) = check(
        0,
        &json!({"scope": "runtime", "runtime_id": runtime_id, "timeout_seconds": 0}),
    );
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "invalid_check_request");
    assert_eq!(error["metadata"]["path"], "timeout_seconds");
    let (status, error) = check(
        0,
        &json!({"scope": "runtime", "level": "extreme", "runtime_id": "r"}),
    );
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["metadata"]["path"], "level");
    let bad = CString::new("[").expect("cstring");
    // SAFETY: valid string and slot.
    let (status, error) = call(|out| unsafe { fabric_check(0, bad.as_ptr(), out) });
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["code"], "invalid_json");
    // SAFETY: NULL request is reported.
    let (status, error) = call(|out| unsafe { fabric_check(0, std::ptr::null(), out) });
    assert_eq!(status, FabricStatus::InvalidArgument as i32);
    assert_eq!(error["code"], "null_argument");
    // A runtime handle is not an environment handle.
    let (status, error) = check(rt, &json!({"scope": "server"}));
    assert_eq!(status, FabricStatus::InvalidArgument as i32);
    assert_eq!(error["code"], "wrong_handle_kind");
    assert_eq!(fabric_runtime_free(rt), 0);
    // Freed (dropped) runtimes are gone from routing.
    let (status, report) = check(0, &json!({"scope": "runtime", "runtime_id": runtime_id}));
    assert_eq!(status, 0);
    assert_eq!(report["reason"], "runtime_unavailable");
}

#[test]
fn check_restricted_to_an_environment() {
    let config = config(json!({}));
    let mut env = 0u64;
    let mut other = 0u64;
    // SAFETY: valid strings and slots.
    let (status, _) = call(|out| unsafe {
        fabric_environment_prepare(config.as_ptr(), std::ptr::null(), &mut env, out)
    });
    assert_eq!(status, 0);
    // SAFETY: as above.
    let (status, _) = call(|out| unsafe {
        fabric_environment_prepare(config.as_ptr(), std::ptr::null(), &mut other, out)
    });
    assert_eq!(status, 0);
    let mut rt = 0u64;
    // SAFETY: as above.
    let (status, info) = call(|out| unsafe {
        fabric_environment_start_runtime(env, config.as_ptr(), std::ptr::null(), &mut rt, out)
    });
    assert_eq!(status, 0, "{info}");
    let request = json!({"scope": "runtime", "runtime_id": info["runtime_id"], "level": "ready"});
    assert_eq!(check(env, &request).1["outcome"], "passed");
    assert_eq!(check(0, &request).1["outcome"], "passed");
    assert_eq!(check(other, &request).1["reason"], "runtime_unavailable");
    assert_eq!(fabric_runtime_free(rt), 0);
    assert_eq!(fabric_environment_free(env), 0);
    assert_eq!(fabric_environment_free(other), 0);
}
