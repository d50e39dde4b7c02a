//! `environment.env_names`: resolved at start, re-checked before every invoke.
//!
//! Alone in its own process (a run of the test binary with only this test): it changes this
//! process's environment, which must not race with other threads reading it.

use std::path::Path;

use crate::support::{self, scripted_config};
use fabric_config::agent::RunStatus;
use fabric_config::{RunRequest, Stage};
use fabric_host::{Fabric, RunOptions};
use serde_json::json;

const NAME: &str = "FABRIC_HOST_TEST_FORWARDED_TOKEN";

fn set(value: Option<&str>) {
    // SAFETY: this test runs alone in its process (`support::alone`) and sets variables only
    // while no other thread of this process reads the environment (no runtime is mid-launch
    // here).
    unsafe {
        match value {
            Some(value) => std::env::set_var(NAME, value),
            None => std::env::remove_var(NAME),
        }
    }
}

#[test]
fn env_names_are_resolved_at_start_and_rechecked_before_each_invoke() {
    if !support::alone::in_own_process(
        "env_forwarding::env_names_are_resolved_at_start_and_rechecked_before_each_invoke",
    ) {
        return; // it ran, and passed, in its own process
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let options = RunOptions::with_base_dir(dir.path());
    let config = scripted_config(
        "forward",
        json!({"replies": ["token seen by the host: {input}"]}),
        json!({"environment": {"env_names": [NAME]}, "runtime": {"artifacts": "out"}}),
    );
    let fabric = Fabric::new();

    // Unset at start: the start fails naming the variable, never a value.
    set(None);
    let error = fabric.start_runtime(&config, &options).expect_err("unset");
    assert_eq!(error.code(), "env_name_unset");
    assert_eq!(error.stage(), Stage::Start);
    assert!(error.to_string().contains(NAME));

    set(Some("first-s3cret-value"));
    let runtime = fabric.start_runtime(&config, &options).expect("start");
    let ok = runtime.invoke(RunRequest::new("x")).expect("invoke");
    assert_eq!(ok.status, RunStatus::Succeeded);
    // The host received the value in its process environment...
    let environ = std::fs::read(format!("/proc/{}/environ", runtime.host_pid())).expect("environ");
    let needle = format!("{NAME}=first-s3cret-value");
    assert!(
        environ
            .split(|&b| b == 0)
            .any(|entry| entry == needle.as_bytes())
    );
    // ...and the saved record has it redacted.
    let record = std::fs::read_to_string(ok.metadata["fabric_invocation"].as_str().expect("path"))
        .expect("record");
    assert!(record.contains(NAME) && !record.contains("first-s3cret-value"));

    // Changed value: the invoke fails naming the variable, without the value.
    set(Some("second-s3cret-value"));
    let error = runtime.invoke(RunRequest::new("y")).expect_err("changed");
    assert_eq!(error.code(), "env_name_changed");
    assert_eq!(error.stage(), Stage::Invoke);
    let info = fabric_config::ErrorInfo::from(error);
    let rendered = serde_json::to_string(&info).expect("json");
    assert!(rendered.contains(NAME));
    assert!(!rendered.contains("s3cret"), "{rendered}");

    // Restored: the runtime is usable again (the check is not terminal).
    set(Some("first-s3cret-value"));
    runtime
        .invoke(RunRequest::new("z"))
        .expect("invoke after restore");
    runtime.stop();
    let home = Path::new(dir.path())
        .join("out/.fabric")
        .join(runtime.runtime_id());
    let log = std::fs::read_to_string(home.join("host.stderr.log")).unwrap_or_default();
    assert!(!log.contains("s3cret"));
    set(None);
}
