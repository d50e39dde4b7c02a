//! `fabric_run` returns once the host acknowledged `stop`: a prewarmed host that keeps
//! running after its answer is ended by the reactor's escalation in the background, and its
//! temporary FABRIC_HOME is removed after its exit.

use std::ffi::CString;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::prewarm::eventually;
use crate::support::{call, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_prewarm_close, fabric_prewarm_free, fabric_prewarm_start, fabric_run,
};
use serde_json::{Value, json};

const OK: i32 = FabricStatus::Ok as i32;

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.starts_with(" Z"))
    })
}

fn runtime_stop(result: &Value) -> &Value {
    result["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|event| event["kind"] == "runtime_stop")
        .unwrap_or_else(|| panic!("no runtime_stop event: {result}"))
}

#[test]
fn a_prewarmed_run_returns_at_the_stop_answer_and_the_lingering_host_is_ended_after() {
    // Answers `stop`, then keeps running for a minute: the 2 s grace and SIGTERM end it.
    let config = scripted_config("ffi-background-reap", json!({"exit_delay_ms": 60000}));
    let mut pool = 0u64;
    // SAFETY: valid strings and slots.
    let (code, info) = call(|out| unsafe {
        fabric_prewarm_start(config.as_ptr(), std::ptr::null(), 1, &mut pool, out)
    });
    assert_eq!(code, OK, "{info}");
    let request = CString::new(json!({"input": "hello"}).to_string()).expect("cstring");
    let began = Instant::now();
    // SAFETY: valid strings and slot.
    let (code, result) =
        call(|out| unsafe { fabric_run(config.as_ptr(), request.as_ptr(), std::ptr::null(), out) });
    let took = began.elapsed();
    assert_eq!(code, OK, "{result}");
    assert!(took < Duration::from_millis(1800), "run took {took:?}");
    assert_eq!(result["status"], "succeeded", "{result}");
    assert!(result["metadata"].get("stop_error").is_none(), "{result}");
    let stop = runtime_stop(&result);
    assert_eq!(stop["metadata"]["host_reaped"], false, "{stop}");
    assert!(stop["metadata"]["host_exit"].is_null(), "{stop}");
    let pid = result["metadata"]["host_pid"].as_u64().expect("host_pid");
    let home = result["metadata"]["fabric_home"]
        .as_str()
        .expect("fabric_home")
        .to_owned();
    assert!(alive(pid), "the host still runs its exit delay");
    assert!(Path::new(&home).is_dir(), "kept until the host exited");
    eventually(
        "the lingering host ended by the escalation",
        Duration::from_secs(5),
        || !alive(pid),
    );
    eventually(
        "the temporary FABRIC_HOME removed",
        Duration::from_secs(5),
        || !Path::new(&home).exists(),
    );
    // SAFETY: valid slot.
    let (code, closed) = call(|out| unsafe { fabric_prewarm_close(pool, out) });
    assert_eq!(code, OK, "{closed}");
    assert_eq!(fabric_prewarm_free(pool), OK);
}
