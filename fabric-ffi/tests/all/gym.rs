//! `fabric_gym_observations` through the Rust view of the ABI: a mapped rollout, the
//! error statuses and codes.

use std::ffi::CString;

use crate::support::call;
use fabric_ffi::{FabricStatus, fabric_gym_observations};
use serde_json::{Value, json};

fn observe(request: &str) -> (i32, Value) {
    let request = CString::new(request).expect("cstring");
    // SAFETY: a valid string and slot.
    call(|out| unsafe { fabric_gym_observations(request.as_ptr(), out) })
}

fn result(invocation: &str) -> Value {
    json!({"agent_name": "a", "harness": "h", "adapter_kind": "process",
           "runtime_id": "runtime-1", "invocation_id": invocation,
           "request_id": format!("request-{invocation}"), "status": "succeeded",
           "output": {"response": "ok"}})
}

#[test]
fn maps_results_and_atof() {
    let atof = json!([
        {"kind": "scope", "scope_category": "start", "uuid": "root", "parent_uuid": null,
         "category": "agent", "name": "r", "timestamp": "2026-01-01T00:00:00Z",
         "metadata": {"nemo_fabric_request_id": "request-i1"}},
        {"kind": "scope", "scope_category": "start", "uuid": "t", "parent_uuid": "root",
         "category": "tool", "name": "grep", "timestamp": "2026-01-01T00:00:01Z",
         "category_profile": {"tool_call_id": "call_1"}},
        {"kind": "scope", "scope_category": "end", "uuid": "t", "parent_uuid": "root",
         "category": "tool", "name": "grep", "timestamp": "2026-01-01T00:00:02Z"}
    ]);
    let request = json!({"task_id": "t1", "rollout_id": "r1",
                         "results": [result("i1"), result("i2")], "atof": atof});
    let (status, out) = observe(&request.to_string());
    assert_eq!(status, FabricStatus::Ok as i32, "{out}");
    let bundle = &out["ng_agent_observations"];
    assert_eq!(bundle["source"], "nemo-fabric");
    let kinds: Vec<&str> = bundle["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["agent_invocation", "agent_invocation", "tool_call"]);
    assert_eq!(bundle["records"][2]["duration_ms"], 1000.0);
    assert_eq!(out["trajectory"]["schema_version"], "1.0");
    assert_eq!(out["trajectory"]["turns"].as_array().unwrap().len(), 2);
    // i2 has no ATOF root scope: its tool and model calls are gaps.
    let unobserved: Vec<&Value> = bundle["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["code"] == "tool_calls_unobserved")
        .collect();
    assert_eq!(unobserved.len(), 1);
    assert_eq!(unobserved[0]["invocation_id"], "i2");
}

#[test]
fn an_environments_sandbox_observation_is_a_sandbox_record_as_given() {
    let observation = json!({"role": "verifier", "provider": "container", "sandbox_id": "fabric-env-1",
                             "outcome": "oom", "wall_time_s": 2.5, "cpu_time_s": 0.75,
                             "peak_memory_mib": 63.9, "resource_usage_source": "cgroup_v1:cpuacct.usage"});
    let request = json!({"task_id": "t1", "rollout_id": "r1", "results": [result("i1")],
                         "sandboxes": [observation]});
    let (status, out) = observe(&request.to_string());
    assert_eq!(status, FabricStatus::Ok as i32, "{out}");
    let sandboxes: Vec<&Value> = out["ng_agent_observations"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "sandbox")
        .collect();
    let mut expected = observation.clone();
    expected["kind"] = json!("sandbox");
    assert_eq!(sandboxes, [&expected]);
}

#[test]
fn bad_requests_are_config_errors_with_paths() {
    let duplicate =
        json!({"task_id": "t", "rollout_id": "r", "results": [result("i"), result("i")]});
    let (status, error) = observe(&duplicate.to_string());
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["code"], "gym_invocation_id_duplicate");
    assert_eq!(error["metadata"]["path"], "results[1].invocation_id");

    let blank = json!({"task_id": "", "rollout_id": "r", "results": []});
    let (status, error) = observe(&blank.to_string());
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(
        (error["code"].as_str(), error["metadata"]["path"].as_str()),
        (Some("gym_id_blank"), Some("task_id"))
    );

    let unknown = json!({"task_id": "t", "rollout_id": "r", "results": [], "turns": []});
    let (_, error) = observe(&unknown.to_string());
    assert_eq!(error["code"], "unknown_field");

    let (status, error) = observe("{not json");
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["code"], "invalid_json");
    assert_eq!(error["metadata"]["argument"], "request_json");
}

#[test]
fn null_arguments_are_invalid() {
    // SAFETY: NULL input is reported; the slot is valid.
    let (status, error) = call(|out| unsafe { fabric_gym_observations(std::ptr::null(), out) });
    assert_eq!(status, FabricStatus::InvalidArgument as i32);
    assert_eq!(error["code"], "null_argument");
    // SAFETY: a NULL `out` is reported by status only.
    let status = unsafe { fabric_gym_observations(std::ptr::null(), std::ptr::null_mut()) };
    assert_eq!(status, FabricStatus::InvalidArgument as i32);
}
