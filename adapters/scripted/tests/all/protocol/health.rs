//! The health listener's three levels and its failure settings.

use std::path::Path;
use std::time::{Duration, Instant};

use fabric_health::{CheckOutcome, CheckReport, CheckRequest, HealthLevel};
use serde_json::{Value, json};

use super::adapter::{
    Adapter, invoke_msg, lifecycle_code, scratch_dir, start_msg, stop_msg, succeeded_output,
};

fn health_check(home: &Path, level: HealthLevel, timeout_s: f64) -> CheckReport {
    let request = CheckRequest::runtime("R1")
        .with_level(level)
        .with_timeout_seconds(timeout_s);
    fabric_health::client::Check::new(&request).run(&home.join("health.endpoint.json"))
}

fn reasons(report: &CheckReport) -> Vec<(String, String, Option<String>)> {
    report
        .checks
        .iter()
        .map(|c| {
            (
                c.level.as_str().to_owned(),
                c.outcome.as_str().to_owned(),
                c.reason.clone(),
            )
        })
        .collect()
}

#[test]
fn health_listener_reports_all_three_levels() {
    let home = scratch_dir("health");
    let mut a = Adapter::spawn_with_env(&[("FABRIC_HOME", home.path())]);
    // The listener is up before the first request is read: any answer proves it.
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_not_started");
    let endpoint = home.path().join("health.endpoint.json");
    assert!(endpoint.exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&endpoint).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let before = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(before.outcome, CheckOutcome::Failed);
    assert_eq!(before.reason.as_deref(), Some("runtime_not_started"));

    assert_eq!(
        *succeeded_output(&a.request(start_msg("R1", json!({})))),
        Value::Null
    );
    let ready = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(ready.outcome, CheckOutcome::Passed, "{:?}", reasons(&ready));
    assert_eq!(ready.checks.len(), 3);

    // A check during a long invocation still passes.
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"sleep_ms": 400}}),
    ));
    let busy = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(busy.outcome, CheckOutcome::Passed);
    assert_eq!(succeeded_output(&a.recv())["status"], "succeeded");

    // A latched runtime is no longer ready.
    a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"raise": {"code": "broken", "message": "m"}}}),
    ));
    let latched = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(latched.outcome, CheckOutcome::Failed);
    assert_eq!(latched.reason.as_deref(), Some("runtime_failed"));

    // The endpoint file is gone once stop is answered.
    a.request(stop_msg("R1"));
    assert!(!endpoint.exists());
    assert!(a.wait_exit().success());
}

#[test]
fn health_settings_fail_or_stall_a_level() {
    let home = scratch_dir("health-fail");
    let mut a = Adapter::spawn_with_env(&[("FABRIC_HOME", home.path())]);
    a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"health": {"fail": "active"}}}}),
    ));
    let report = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(report.outcome, CheckOutcome::Failed);
    assert_eq!(report.reason.as_deref(), Some("scripted_failure"));
    assert_eq!(report.checks.len(), 2, "stops at the first non-pass");

    let home = scratch_dir("health-stall");
    let mut a = Adapter::spawn_with_env(&[("FABRIC_HOME", home.path())]);
    a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"health": {"stall": "ready"}}}}),
    ));
    let started = Instant::now();
    let report = health_check(home.path(), HealthLevel::Ready, 0.3);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the deadline bounds a stalled probe"
    );
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some("probe_timeout"));
    let live = health_check(home.path(), HealthLevel::Live, 3.0);
    assert_eq!(live.outcome, CheckOutcome::Passed);
}
