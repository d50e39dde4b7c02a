//! `fabric check` and `fabric run --check-level` end to end with the scripted adapter.

use crate::support;

use std::path::Path;

use crate::support::{fabric, stdout_json};
use serde_json::{Value, json};

/// A scripted config in `dir` (found through discovery.local_paths).
fn scripted_config(dir: &Path, settings: Value) -> String {
    support::scripted_config(dir, "cli-check", settings)
}

#[test]
fn check_ready_passes_and_prints_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    let output = fabric(&["check", &config, "--level", "ready"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["schema_version"], "fabric.check/v1alpha1");
    assert_eq!(report["outcome"], "passed");
    assert_eq!(report["level"], "ready");
    assert_eq!(report["checks"].as_array().expect("checks").len(), 3);
    assert!(
        report["target"]["runtime_id"]
            .as_str()
            .expect("id")
            .starts_with("runtime-")
    );
}

#[test]
fn check_default_level_is_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({"health": {"fail": "ready"}}));
    let output = fabric(&["check", &config]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["level"], "live");
    assert_eq!(report["checks"].as_array().expect("checks").len(), 1);
}

#[test]
fn failed_and_timed_out_checks_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({"health": {"fail": "active"}}));
    let output = fabric(&["check", &config, "--level", "ready"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["outcome"], "failed");
    assert_eq!(report["reason"], "scripted_failure");

    let config = scripted_config(dir.path(), json!({"health": {"stall": "live"}}));
    let output = fabric(&["check", &config, "--timeout", "0.3"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["outcome"], "unknown");
    assert_eq!(report["reason"], "probe_timeout");
}

#[test]
fn bad_input_exits_2_and_start_failure_exits_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    let output = fabric(&["check", &config, "--timeout", "0"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "invalid_timeout_seconds");
    assert_eq!(error["error"]["path"], "--timeout");

    let output = fabric(&["check", &config, "--level", "extreme"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");

    let missing = dir.path().join("missing.json");
    let output = fabric(&["check", missing.to_str().expect("utf8")]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");

    let config = scripted_config(
        dir.path(),
        json!({"start_fail": {"code": "boom", "message": "no start"}}),
    );
    let output = fabric(&["check", &config]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(stdout_json(&output)["error"]["code"], "boom");
}

#[test]
fn run_with_check_level_includes_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    let output = fabric(&["run", &config, "--input", "hi", "--check-level", "ready"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["check"]["outcome"], "passed");
    assert_eq!(
        result["check"]["target"]["runtime_id"],
        result["runtime_id"]
    );
    assert_eq!(result["system_stats"]["before"]["status"], "available");
    assert_eq!(
        result["resource_snapshot"]["runtime_id"],
        result["runtime_id"]
    );

    let config = scripted_config(dir.path(), json!({"health": {"fail": "ready"}}));
    let output = fabric(&["run", &config, "--input", "hi", "--check-level", "ready"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let printed = stdout_json(&output);
    assert_eq!(printed["check"]["outcome"], "failed");
    assert!(printed.get("status").is_none(), "nothing was invoked");
}

#[test]
fn check_passes_over_the_unix_socket_and_over_tcp() {
    // The adapter host listens on a unix socket in its private FABRIC_HOME by default and on
    // loopback TCP with FABRIC_HEALTH_TRANSPORT=tcp (inherited from the caller); the core
    // reads either endpoint file.
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    support::ensure_scripted_adapter();
    for transport in ["unix", "tcp"] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["check", &config, "--level", "ready"])
            .env("FABRIC_HEALTH_TRANSPORT", transport)
            .output()
            .expect("run fabric");
        assert_eq!(output.status.code(), Some(0), "{transport}: {output:?}");
        assert_eq!(stdout_json(&output)["outcome"], "passed", "{transport}");
    }
}
