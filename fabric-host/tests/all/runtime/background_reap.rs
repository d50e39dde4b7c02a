//! `run()` returns once the host acknowledged `stop`; the reactor reaps it (escalating if
//! it lingers) and removes its temporary FABRIC_HOME afterwards, in the background.

use std::path::Path;
use std::time::{Duration, Instant};

use fabric_config::RunRequest;
use fabric_config::agent::RunStatus;
use fabric_host::Fabric;
use serde_json::json;

use super::fixtures::options;
use crate::support::{assert_group_gone, scripted_config, wait_until};

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.starts_with(" Z"))
    })
}

#[test]
fn run_returns_at_the_stop_answer_and_the_lingering_host_is_ended_in_the_background() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The host answers `stop`, then keeps running for a minute: only the stop policy's
    // escalation (SIGTERM after the 2 s grace) ends it.
    let config = scripted_config("lingers", json!({"exit_delay_ms": 60000}), json!({}));
    let began = Instant::now();
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    let took = began.elapsed();
    assert!(took < Duration::from_millis(1800), "run took {took:?}");
    assert_eq!(result.status, RunStatus::Succeeded);
    assert!(result.error.is_none());
    assert!(!result.metadata.contains_key("stop_error"), "{result:?}");
    let stop = result
        .events
        .iter()
        .find(|e| e.kind == "runtime_stop")
        .expect("runtime_stop");
    assert_eq!(stop.metadata["host_reaped"], false);
    assert!(stop.metadata["host_exit"].is_null());
    assert_eq!(stop.metadata["escalation"], "none");
    let pid = result.metadata["host_pid"].as_u64().expect("pid") as u32;
    let home = result.metadata["fabric_home"]
        .as_str()
        .expect("home")
        .to_owned();
    assert!(alive(pid), "the host still runs its exit delay");
    assert!(Path::new(&home).is_dir(), "kept until the host exited");
    // Ended by the background escalation within its bound, then its home removed.
    assert_group_gone(pid);
    assert!(
        began.elapsed() < Duration::from_secs(6),
        "{:?}",
        began.elapsed()
    );
    wait_until("the temporary FABRIC_HOME's removal", || {
        !Path::new(&home).exists()
    });
}

#[test]
fn a_host_that_exits_at_once_is_reaped_and_its_home_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("prompt", json!({}), json!({}));
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    assert_eq!(result.status, RunStatus::Succeeded);
    let pid = result.metadata["host_pid"].as_u64().expect("pid") as u32;
    let home = result.metadata["fabric_home"].as_str().expect("home");
    assert_group_gone(pid);
    wait_until("the temporary FABRIC_HOME's removal", || {
        !Path::new(home).exists()
    });
}

#[test]
fn with_relay_in_the_host_run_waits_for_the_exit() {
    // Relay writes its final batch when the host shuts down: the caller must find the files
    // complete when `run()` returns, so the stop waits for the exit (and reports it).
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "relay-waits",
        json!({"exit_delay_ms": 300}),
        json!({"telemetry": {"providers": {"relay": {}}}}),
    );
    let began = Instant::now();
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    assert!(began.elapsed() >= Duration::from_millis(300));
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    let stop = result
        .events
        .iter()
        .find(|e| e.kind == "runtime_stop")
        .expect("runtime_stop");
    assert_eq!(stop.metadata["host_reaped"], true);
    assert_eq!(stop.metadata["host_exit"], "exit code 0");
    let pid = result.metadata["host_pid"].as_u64().expect("pid") as u32;
    assert!(!alive(pid));
}
