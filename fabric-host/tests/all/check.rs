//! `Fabric::check` through the Rust API with the scripted adapter (issue 8).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{
    mode, python_echo_config, repo_root, scripted_config, test_python, wait_until,
};
use fabric_config::RunRequest;
use fabric_config::health::{
    Activity, CheckOutcome, CheckReport, CheckRequest, HealthLevel, reason,
};
use fabric_host::{Fabric, RunOptions, Runtime, RuntimeState};
use serde_json::{Value, json};

fn start(dir: &Path, settings: Value, extra: Value) -> Runtime {
    let config = scripted_config("check", settings, extra);
    Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir))
        .expect("start")
}

fn check(runtime: &Runtime, level: HealthLevel) -> CheckReport {
    let request = CheckRequest::runtime(runtime.runtime_id()).with_level(level);
    Fabric::new().check(None, &request).expect("check")
}

fn assert_outcome(report: &CheckReport, outcome: CheckOutcome, why: Option<&str>) {
    assert_eq!(report.outcome, outcome, "{report:?}");
    assert_eq!(report.reason.as_deref(), why, "{report:?}");
}

#[test]
fn ready_passes_on_an_idle_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = start(dir.path(), json!({}), json!({}));
    let report = check(&runtime, HealthLevel::Ready);
    assert_outcome(&report, CheckOutcome::Passed, None);
    let levels: Vec<HealthLevel> = report.checks.iter().map(|c| c.level).collect();
    assert_eq!(levels, HealthLevel::ALL);
    assert_eq!(report.activity, Some(Activity::Idle));
    assert_eq!(
        report.target.runtime_id.as_deref(),
        Some(runtime.runtime_id())
    );
    assert!(report.passed());
    runtime.stop();
}

#[test]
fn a_failing_level_stops_the_evaluation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = start(dir.path(), json!({"health": {"fail": "active"}}), json!({}));
    let report = check(&runtime, HealthLevel::Ready);
    assert_outcome(&report, CheckOutcome::Failed, Some("scripted_failure"));
    assert_eq!(report.checks.len(), 2, "{report:?}");
    // `live` alone still passes.
    assert_outcome(
        &check(&runtime, HealthLevel::Live),
        CheckOutcome::Passed,
        None,
    );
    runtime.stop();
}

#[test]
fn unknown_and_stopped_runtimes_are_unavailable() {
    let request = CheckRequest::runtime("runtime-does-not-exist");
    let report = Fabric::new().check(None, &request).expect("check");
    assert_outcome(
        &report,
        CheckOutcome::Unknown,
        Some(reason::RUNTIME_UNAVAILABLE),
    );
    assert!(report.checks.is_empty());

    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = start(dir.path(), json!({}), json!({}));
    runtime.stop();
    assert_outcome(
        &check(&runtime, HealthLevel::Live),
        CheckOutcome::Unknown,
        Some(reason::RUNTIME_UNAVAILABLE),
    );
}

#[test]
fn the_environment_restricts_routing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("check", json!({}), json!({}));
    let options = RunOptions::with_base_dir(dir.path());
    let fabric = Fabric::new();
    let home = fabric.prepare_environment(&config, &options).expect("env");
    let other = fabric.prepare_environment(&config, &options).expect("env");
    let runtime = fabric
        .start_runtime_in(&config, &home, &options)
        .expect("start");
    let request = CheckRequest::runtime(runtime.runtime_id());
    let report = fabric.check(Some(&other), &request).expect("check");
    assert_outcome(
        &report,
        CheckOutcome::Unknown,
        Some(reason::RUNTIME_UNAVAILABLE),
    );
    let report = fabric.check(Some(&home), &request).expect("check");
    assert_outcome(&report, CheckOutcome::Passed, None);
    runtime.stop();
}

#[test]
fn scopes_and_invalid_requests() {
    let fabric = Fabric::new();
    let report = fabric.check(None, &CheckRequest::server()).expect("check");
    assert_outcome(
        &report,
        CheckOutcome::Unsupported,
        Some(reason::UNSUPPORTED_SCOPE),
    );
    assert_eq!(report.level, None);
    let report = fabric
        .check(None, &CheckRequest::service("svc-1"))
        .expect("check");
    assert_outcome(
        &report,
        CheckOutcome::Unknown,
        Some(reason::SERVICE_UNAVAILABLE),
    );
    let bad = CheckRequest::runtime("runtime-1").with_timeout_seconds(-1.0);
    let error = fabric.check(None, &bad).expect_err("invalid");
    assert_eq!(error.code(), "invalid_check_request");
    assert_eq!(error.class(), fabric_host::ErrorClass::Config);
}

#[test]
fn a_check_during_a_long_invocation_passes_and_reports_busy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = Arc::new(start(dir.path(), json!({}), json!({})));
    let invoking = Arc::clone(&runtime);
    let worker = std::thread::spawn(move || {
        let mut request = RunRequest::new("slow");
        request
            .context
            .insert("scripted".into(), json!({"sleep_ms": 2000}));
        invoking.invoke(request)
    });
    wait_until("busy", || runtime.status().state == RuntimeState::Busy);
    let report = check(&runtime, HealthLevel::Ready);
    assert_outcome(&report, CheckOutcome::Passed, None);
    assert_eq!(report.activity, Some(Activity::Busy));
    assert_eq!(
        runtime.status().state,
        RuntimeState::Busy,
        "invoke still pending"
    );
    worker.join().expect("join").expect("invoke");
    runtime.stop();
}

#[test]
fn a_stalled_probe_times_out_inside_the_deadline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = start(dir.path(), json!({"health": {"stall": "ready"}}), json!({}));
    let request = CheckRequest::runtime(runtime.runtime_id())
        .with_level(HealthLevel::Ready)
        .with_timeout_seconds(0.5);
    let started = Instant::now();
    let report = Fabric::new().check(None, &request).expect("check");
    let took = started.elapsed();
    assert_outcome(&report, CheckOutcome::Unknown, Some(reason::PROBE_TIMEOUT));
    assert!(took >= Duration::from_millis(450), "took {took:?}");
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    runtime.stop();
}

fn threads(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_stop_during_the_probe_is_observation_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = Arc::new(start(
        dir.path(),
        json!({"health": {"stall": "ready"}}),
        json!({}),
    ));
    let pid = runtime.host_pid();
    let before = threads(pid);
    let checking = Arc::clone(&runtime);
    let worker = std::thread::spawn(move || {
        let request = CheckRequest::runtime(checking.runtime_id())
            .with_level(HealthLevel::Ready)
            .with_timeout_seconds(10.0);
        Fabric::new().check(None, &request).expect("check")
    });
    // The listener serves each connection on its own thread: once it exists, the check
    // has routed and is waiting on the stalled probe.
    wait_until("the probe connection", || threads(pid) > before);
    runtime.stop();
    let report = worker.join().expect("join");
    assert_outcome(
        &report,
        CheckOutcome::Unknown,
        Some(reason::OBSERVATION_CHANGED),
    );
}

#[test]
fn adapters_without_health_levels_are_unsupported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let mut descriptor: Value =
        serde_json::from_str(&std::fs::read_to_string(source).expect("read")).expect("json");
    descriptor["capabilities"]
        .as_object_mut()
        .expect("capabilities")
        .remove("metadata");
    descriptor["runner"]["script"] = json!(
        repo_root()
            .join("adapters/scripted/launch.sh")
            .to_str()
            .expect("utf8")
    );
    let path = dir.path().join("plain.fabric-adapter.json");
    std::fs::write(&path, descriptor.to_string()).expect("write");
    let config = scripted_config(
        "check",
        json!({}),
        json!({"discovery": {"local_paths": [path.to_str().expect("utf8")]}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let report = check(&runtime, HealthLevel::Live);
    assert_outcome(
        &report,
        CheckOutcome::Unsupported,
        Some(reason::UNSUPPORTED_ADAPTER),
    );
    assert!(report.checks.is_empty());
    runtime.stop();
}

#[test]
fn the_endpoint_file_is_private_and_removed_at_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("artifacts");
    let runtime = start(
        dir.path(),
        json!({}),
        json!({"runtime": {"artifacts": root.to_str().expect("utf8")}}),
    );
    let endpoint = runtime.fabric_home().join("health.endpoint.json");
    assert_eq!(mode(&endpoint), 0o600);
    assert_outcome(
        &check(&runtime, HealthLevel::Live),
        CheckOutcome::Passed,
        None,
    );
    runtime.stop();
    assert!(runtime.fabric_home().is_dir(), "caller-owned home is kept");
    assert!(!endpoint.exists(), "endpoint file removed at stop");
}

/// The upstream-style python-echo adapter declares no health levels: unsupported, without
/// contacting the host. Needs the upstream venv (`support::test_python`; a failure without it).
#[test]
fn python_echo_is_an_unsupported_adapter() {
    let Some(python) = test_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let config = python_echo_config(json!({"adapter_id": "fabric.python-echo"}));
    let mut options = RunOptions::with_base_dir(dir.path());
    options.runtime.python_interpreter = Some(python.into());
    let runtime = Fabric::new()
        .start_runtime(&config, &options)
        .expect("start");
    let report = check(&runtime, HealthLevel::Ready);
    assert_outcome(
        &report,
        CheckOutcome::Unsupported,
        Some(reason::UNSUPPORTED_ADAPTER),
    );
    assert_eq!(report.activity, Some(Activity::Idle));
    runtime.stop();
}
