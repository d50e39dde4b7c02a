//! Timeouts, stop and drop of runtimes, and many runtimes at once.

use std::path::Path;
use std::time::{Duration, Instant};

use fabric_config::agent::RunStatus;
use fabric_config::{RunRequest, Stage};
use fabric_host::{Fabric, RuntimeState};
use serde_json::{Value, json};

use super::fixtures::{fake_config, options, request_with, start_busy};
use crate::support::{assert_group_gone, scripted_config};

#[test]
fn invoke_timeout_fires_on_time_and_is_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "slow",
        json!({}),
        json!({"runtime": {"timeout_seconds": 1}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let began = Instant::now();
    let error = runtime
        .invoke(request_with("x", json!({"sleep_ms": 10000})))
        .expect_err("timeout");
    let elapsed = began.elapsed();
    assert!(elapsed >= Duration::from_millis(1000), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1800), "late: {elapsed:?}");
    assert_eq!(error.code(), "timeout");
    assert_eq!(error.stage(), Stage::Invoke);
    assert_eq!(runtime.status().state, RuntimeState::Failed);
    let began = Instant::now();
    let stopped = runtime.stop();
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert!(
        stopped.error.is_none(),
        "a terminal host is expected to need signals"
    );
    assert_group_gone(runtime.host_pid());
}

#[test]
fn stop_leaves_no_process_of_the_host_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("children", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let result = runtime
        .invoke(request_with("x", json!({"spawn_children": 3})))
        .expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded, "{:?}", result.error);
    let pgid = runtime.host_pid();
    let live = fabric_stats::procs::group_members(Path::new("/proc"), pgid)
        .into_iter()
        .filter(|s| s.state != b'Z')
        .count();
    assert!(live >= 4, "leader and 3 children expected, saw {live}");
    runtime.stop();
    assert_group_gone(pgid);
}

#[test]
fn stop_during_an_invocation_ends_it_with_a_state_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (runtime, worker) = start_busy(dir.path(), "stop-mid", 20000);
    let began = Instant::now();
    let stopped = runtime.stop();
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert!(
        stopped.error.is_none(),
        "signals were the plan: {stopped:?}"
    );
    let error = worker
        .join()
        .expect("join")
        .expect_err("stopped mid-invoke");
    assert_eq!(error.code(), "runtime_stopped");
    assert!(error.is_state_error());
    assert_group_gone(runtime.host_pid());
}

#[test]
fn dropping_an_unstopped_runtime_stops_its_host_gracefully() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("stopped.json");
    let config = fake_config(
        dir.path(),
        "ok",
        json!({"FAKE_STOP_MARKER": marker.to_str().expect("utf8")}),
        json!({}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let runtime_id = runtime.runtime_id().to_owned();
    let pid = runtime.host_pid();
    drop(runtime);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the host never received stop");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_group_gone(pid);
    let payload: Value =
        serde_json::from_str(&std::fs::read_to_string(&marker).expect("marker")).expect("json");
    assert_eq!(payload["runtime_id"], runtime_id.as_str());
}

#[test]
fn two_hundred_runtimes_at_once() {
    const RUNTIMES: usize = 200;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "many",
        json!({"replies": ["{runtime_id} turn {turn} after {previous_input}"]}),
        json!({}),
    );
    let fabric = Fabric::new();
    let options = options(dir.path());
    let runtimes: Vec<fabric_host::Runtime> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    (0..RUNTIMES / 8)
                        .map(|_| fabric.start_runtime(&config, &options).expect("start"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("join"))
            .collect()
    });
    assert_eq!(runtimes.len(), RUNTIMES);
    std::thread::scope(|scope| {
        for (index, runtime) in runtimes.iter().enumerate() {
            scope.spawn(move || {
                runtime
                    .invoke(RunRequest::new(format!("first-{index}")))
                    .expect("first");
                let second = runtime.invoke(RunRequest::new("second")).expect("second");
                assert_eq!(
                    second.output["response"],
                    format!("{} turn 2 after first-{index}", runtime.runtime_id()),
                    "each runtime sees only its own state"
                );
            });
        }
    });
    let stats = fabric_host::engine_stats().expect("stats");
    assert!(stats.hosts >= RUNTIMES, "{stats:?}");
    std::thread::scope(|scope| {
        for runtime in &runtimes {
            scope.spawn(move || {
                let stopped = runtime.stop();
                assert!(stopped.error.is_none(), "{stopped:?}");
            });
        }
    });
    for runtime in &runtimes {
        assert_group_gone(runtime.host_pid());
    }
}
