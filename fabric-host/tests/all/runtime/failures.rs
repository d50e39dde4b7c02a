//! State errors, crashes, hosts ignoring stop, start and lifecycle failures, plan errors.

use std::time::{Duration, Instant};

use fabric_config::agent::RunStatus;
use fabric_config::{ErrorInfo, RunRequest, Stage};
use fabric_host::{Fabric, RuntimeState};
use serde_json::json;

use super::fixtures::{options, request_with, start_busy};
use crate::support::{assert_group_gone, scripted_config};

#[test]
fn overlapping_invoke_is_a_state_error_and_invoke_after_stop_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (runtime, worker) = start_busy(dir.path(), "overlap", 1500);
    let busy = runtime.invoke(RunRequest::new("second")).expect_err("busy");
    assert_eq!(busy.code(), "runtime_busy");
    assert!(busy.is_state_error());
    let first = worker.join().expect("join").expect("first invoke");
    assert_eq!(first.output["response"], "slow");
    runtime.stop();
    assert_eq!(runtime.status().state, RuntimeState::Stopped);
    let stopped = runtime
        .invoke(RunRequest::new("late"))
        .expect_err("stopped");
    assert_eq!(stopped.code(), "runtime_stopped");
    assert!(stopped.is_state_error());
    // stop is idempotent
    let again = runtime.stop();
    assert!(
        again
            .events
            .iter()
            .any(|e| e.metadata.get("already_stopped") == Some(&json!(true)))
    );
}

#[test]
fn crash_makes_the_runtime_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("crash", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let error = runtime
        .invoke(request_with("x", json!({"crash": true})))
        .expect_err("crash");
    assert_eq!(error.code(), "host_crashed");
    assert_eq!(error.stage(), Stage::Invoke);
    assert_eq!(runtime.status().state, RuntimeState::Failed);
    let again = runtime.invoke(RunRequest::new("y")).expect_err("terminal");
    assert_eq!(again.code(), "runtime_failed");
    assert!(again.is_state_error());
    let stopped = runtime.stop();
    assert!(stopped.error.is_none(), "{stopped:?}");
    assert_group_gone(runtime.host_pid());
}

#[test]
fn host_ignoring_stop_keeps_a_succeeded_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("ignores-stop", json!({"ignore_stop": true}), json!({}));
    let began = Instant::now();
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(result.status, RunStatus::Succeeded);
    assert!(result.error.is_none());
    assert_eq!(result.metadata["stop_error"]["stage"], "stop");
    assert_eq!(result.metadata["stop_error"]["code"], "timeout");
    assert!(
        result
            .events
            .iter()
            .any(|e| e.kind == "runtime_stop_failed")
    );
    assert_group_gone(result.metadata["host_pid"].as_u64().expect("pid") as u32);
}

#[test]
fn failed_start_keeps_the_adapter_code_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "bad-start",
        json!({"start_fail": {"code": "harness_unavailable", "message": "no harness"}}),
        json!({}),
    );
    let error = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect_err("start fails");
    assert_eq!(error.code(), "harness_unavailable");
    assert_eq!(error.stage(), Stage::Start);
    assert!(!error.is_state_error());
}

#[test]
fn lifecycle_failures_keep_the_adapters_stderr_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "cause",
        json!({}),
        json!({"environment": {"env": {"CAUSE_TOKEN": "s3cret-cause-value"}}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    // Output from an earlier operation is not part of this failure's cause.
    runtime
        .invoke(request_with("x", json!({"stderr": "earlier noise"})))
        .expect("noise");
    let error = runtime
        .invoke(request_with(
            "x",
            json!({
                "stderr": "Traceback (most recent call last):\nRuntimeError: key s3cret-cause-value rejected",
                "raise": {"code": "lifecycle_adapter_invoke_failed", "message": "Adapter failed during lifecycle invoke"}
            }),
        ))
        .expect_err("raise");
    assert_eq!(error.code(), "lifecycle_adapter_invoke_failed");
    let info = ErrorInfo::from(error);
    assert_eq!(info.stage, Stage::Invoke);
    assert!(
        info.message.starts_with(
            "Adapter failed during lifecycle invoke; diagnostics: Traceback (most recent call last):"
        ),
        "{}",
        info.message
    );
    assert!(
        info.message.ends_with("RuntimeError: key *** rejected"),
        "{}",
        info.message
    );
    assert!(!info.message.contains("earlier noise"), "{}", info.message);
    let tail = info.metadata["stderr_tail"].as_str().expect("stderr_tail");
    assert!(tail.contains("RuntimeError: key *** rejected"), "{tail}");
    assert!(info.metadata["host_pid"].as_u64().is_some());
    assert!(
        !serde_json::to_string(&info)
            .unwrap()
            .contains("s3cret-cause-value")
    );
    runtime.stop();
    // A failed outcome without stderr keeps the adapter's message as is.
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let error = runtime
        .invoke(request_with(
            "x",
            json!({"raise": {"code": "scripted_boom", "message": "boom"}}),
        ))
        .expect_err("raise");
    assert_eq!(ErrorInfo::from(error).message, "boom");
    runtime.stop();
}

#[test]
fn plan_errors_are_config_class() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = scripted_config("bad", json!({}), json!({}));
    config.harness.as_mut().expect("harness").adapter_id = "no.such.adapter".into();
    let error = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect_err("no adapter");
    assert_eq!(error.code(), "adapter_not_found");
    assert_eq!(error.class(), fabric_host::ErrorClass::Config);
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.code, "adapter_not_found");
}
