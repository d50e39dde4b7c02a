//! Prewarmed hosts through the C ABI: `fabric_prewarm_start` launches hosts that a matching
//! `fabric_run` / `fabric_runtime_start` claims, a replacement appears, a config or option
//! that shapes the spawn differently does not claim, a claimed run's result equals a cold
//! one's, and close ends the unclaimed hosts.

use std::ffi::CString;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{call, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_prewarm_close, fabric_prewarm_free, fabric_prewarm_start,
    fabric_prewarm_status, fabric_run, fabric_runtime_free, fabric_runtime_start,
    fabric_runtime_stop,
};
use serde_json::{Value, json};

const OK: i32 = FabricStatus::Ok as i32;

fn cstring(value: &Value) -> CString {
    CString::new(value.to_string()).expect("cstring")
}

/// Opens a pool of `hosts` hosts; returns the status, the handle and the document.
fn prewarm(config: &CString, options: Option<&Value>, hosts: u32) -> (i32, u64, Value) {
    let options = options.map(cstring);
    let options_ptr = options.as_ref().map_or(std::ptr::null(), |o| o.as_ptr());
    let mut handle = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call(|out| unsafe {
        fabric_prewarm_start(config.as_ptr(), options_ptr, hosts, &mut handle, out)
    });
    (status, handle, info)
}

fn status(handle: u64) -> Value {
    // SAFETY: valid slot.
    let (status, info) = call(|out| unsafe { fabric_prewarm_status(handle, out) });
    assert_eq!(status, OK, "{info}");
    info
}

fn close(handle: u64) -> Value {
    // SAFETY: valid slot.
    let (status, info) = call(|out| unsafe { fabric_prewarm_close(handle, out) });
    assert_eq!(status, OK, "{info}");
    assert_eq!(fabric_prewarm_free(handle), OK);
    info
}

fn run(config: &CString, options: Option<&Value>) -> Value {
    let options = options.map(cstring);
    let options_ptr = options.as_ref().map_or(std::ptr::null(), |o| o.as_ptr());
    let request = cstring(&json!({"input": "hello", "request_id": "request-prewarm"}));
    // SAFETY: valid strings and slot.
    let (status, result) =
        call(|out| unsafe { fabric_run(config.as_ptr(), request.as_ptr(), options_ptr, out) });
    assert_eq!(status, OK, "{result}");
    result
}

fn pids(info: &Value) -> Vec<u64> {
    info["ready_pids"]
        .as_array()
        .expect("ready_pids")
        .iter()
        .map(|pid| pid.as_u64().expect("pid"))
        .collect()
}

/// The pid of the host a run used (its `runtime_start` event).
fn host_pid(result: &Value) -> u64 {
    result["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|event| event["kind"] == "runtime_start")
        .and_then(|event| event["metadata"]["host_pid"].as_u64())
        .unwrap_or_else(|| panic!("no runtime_start event: {result}"))
}

fn alive(pid: u64) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (bounded) until `done` holds.
pub(crate) fn eventually(what: &str, bound: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + bound;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {bound:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_matching_run_claims_a_prewarmed_host_and_a_replacement_is_launched() {
    let config = scripted_config("ffi-prewarm-claim", json!({"when_exhausted": "echo"}));
    let (code, handle, info) = prewarm(&config, None, 2);
    assert_eq!(code, OK, "{info}");
    assert_eq!(info["handle"], handle);
    assert_eq!(
        (info["hosts"].as_u64(), info["claimed"].as_u64()),
        (Some(2), Some(0))
    );
    let ready = pids(&info);
    assert_eq!(ready.len(), 2);
    assert!(ready.iter().all(|pid| alive(*pid)));

    let result = run(&config, None);
    assert_eq!(result["status"], "succeeded", "{result}");
    let used = host_pid(&result);
    assert!(ready.contains(&used), "host {used} is one of {ready:?}");
    assert_eq!(status(handle)["claimed"], 1);
    eventually("a replacement host", Duration::from_secs(10), || {
        pids(&status(handle)).len() == 2
    });
    let now = pids(&status(handle));
    assert!(!now.contains(&used));

    // A runtime start claims too.
    let mut runtime = 0u64;
    // SAFETY: valid strings and slots.
    let (code, started) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), std::ptr::null(), &mut runtime, out)
    });
    assert_eq!(code, OK, "{started}");
    assert!(now.contains(&started["host_pid"].as_u64().expect("host_pid")));
    // SAFETY: valid slot.
    let (code, _) = call(|out| unsafe { fabric_runtime_stop(runtime, out) });
    assert_eq!(code, OK);
    assert_eq!(fabric_runtime_free(runtime), OK);
    assert_eq!(status(handle)["claimed"], 2);

    let waiting = pids(&status(handle));
    let closed = close(handle);
    assert_eq!(closed["closed"], true);
    assert!(pids(&closed).is_empty());
    eventually("the unclaimed hosts end", Duration::from_secs(5), || {
        waiting.iter().all(|pid| !alive(*pid))
    });
}

#[test]
fn a_start_that_shapes_the_spawn_differently_does_not_claim() {
    let config = scripted_config("ffi-prewarm-mismatch", json!({"when_exhausted": "echo"}));
    let (code, handle, info) = prewarm(&config, None, 1);
    assert_eq!(code, OK, "{info}");
    let ready = pids(&info);
    // Another config (settings differ): cold.
    let other = scripted_config("ffi-prewarm-mismatch", json!({"when_exhausted": "fail"}));
    let result = run(&other, None);
    assert!(!ready.contains(&host_pid(&result)), "{result}");
    // The same config with another stderr log size (a spawn limit): cold.
    let result = run(&config, Some(&json!({"stderr_log_bytes": 8192})));
    assert!(!ready.contains(&host_pid(&result)), "{result}");
    assert_eq!(status(handle)["claimed"], 0);
    assert_eq!(pids(&status(handle)), ready);
    // Options applied after the spawn (the start timeout) do not prevent a claim.
    let result = run(&config, Some(&json!({"start_timeout_seconds": 30})));
    assert!(ready.contains(&host_pid(&result)), "{result}");
    close(handle);
}

/// A result with what differs between any two runs blanked: ids, times, pids, paths that
/// name a runtime, and measured amounts (memory, CPU, pressure). Counts stay (the process
/// count, the adapter's turn counters).
fn normalized(mut result: Value) -> Value {
    const COUNTS: [&str; 4] = ["process_count", "turn", "history", "turns_used"];
    fn walk(key: &str, value: &mut Value) {
        let varies = key.ends_with("_id")
            || key.ends_with("_pid")
            || key.ends_with("_at")
            || key.starts_with("timestamp")
            || key == "message"
            || key == "fabric_home"
            || key == "path";
        match value {
            Value::Object(map) => map.iter_mut().for_each(|(key, item)| walk(key, item)),
            Value::Array(items) => items.iter_mut().for_each(|item| walk(key, item)),
            Value::Number(_) if !COUNTS.contains(&key) => *value = Value::Null,
            Value::String(text) if varies || text.contains("runtime-") => *value = Value::Null,
            _ if varies => *value = Value::Null,
            _ => {}
        }
    }
    walk("", &mut result);
    result
}

#[test]
fn a_claimed_run_returns_what_a_cold_run_returns() {
    let config = scripted_config("ffi-prewarm-equal", json!({"when_exhausted": "echo"}));
    let cold = run(&config, None);
    let (code, handle, info) = prewarm(&config, None, 1);
    assert_eq!(code, OK, "{info}");
    let warm = run(&config, None);
    assert!(pids(&info).contains(&host_pid(&warm)));
    close(handle);
    assert_eq!(normalized(warm), normalized(cold));
}

#[test]
fn a_host_that_died_while_waiting_is_not_claimed() {
    let config = scripted_config("ffi-prewarm-died", json!({"when_exhausted": "echo"}));
    let (code, handle, info) = prewarm(&config, None, 1);
    assert_eq!(code, OK, "{info}");
    let dead = pids(&info)[0];
    let pid = i32::try_from(dead).expect("pid");
    // SAFETY: signals one process of ours (the waiting host).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    eventually("the killed host is reaped", Duration::from_secs(5), || {
        !alive(dead)
    });
    // The run starts cold (the dead host is discarded, not sent `start`) and succeeds.
    let result = run(&config, None);
    assert_eq!(result["status"], "succeeded", "{result}");
    assert_ne!(host_pid(&result), dead);
    assert_eq!(status(handle)["claimed"], 0);
    eventually(
        "a replacement for the dead host",
        Duration::from_secs(10),
        || pids(&status(handle)).len() == 1,
    );
    close(handle);
}

#[test]
fn prewarm_refuses_what_it_cannot_keep() {
    let config = scripted_config("ffi-prewarm-refused", json!({"when_exhausted": "echo"}));
    for hosts in [0, 65] {
        let (code, handle, error) = prewarm(&config, None, hosts);
        assert_eq!(code, FabricStatus::Config as i32, "{error}");
        assert_eq!(error["metadata"]["path"], "hosts");
        assert_eq!(handle, 0);
    }
    let (code, handle, error) = prewarm(&config, Some(&json!({"streaming": true})), 1);
    assert_eq!(code, FabricStatus::Capability as i32, "{error}");
    assert_eq!(error["code"], fabric_config::codes::PREWARM_UNSUPPORTED);
    assert_eq!(handle, 0);
}
