//! `fabric check CONFIG --environment REF`: health checks through an existing provider
//! environment (the real `subprocess` provider) from a process that did not start its
//! runtimes: the runtime server itself, a runtime selected by id and the config's agent,
//! a failing level, a stopped runtime, and the flag rules.

use crate::support;

use std::path::Path;

use crate::support::provider::{config_with, prepared, subprocess_descriptor, typed};
use fabric_host::Fabric;
use serde_json::{Value, json};

/// `fabric check dir/fabric.json --environment dir/reference.json ARGS`: exit code and JSON.
fn check(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let config = dir.join("fabric.json");
    let reference = dir.join("reference.json");
    let mut all = vec![
        "check",
        config.to_str().expect("utf-8"),
        "--environment",
        reference.to_str().expect("utf-8"),
    ];
    all.extend_from_slice(args);
    let output = support::fabric(&all);
    (output.status.code(), support::stdout_json(&output))
}

#[test]
fn fabric_check_environment_checks_the_server_and_runtimes_another_process_started() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptor = subprocess_descriptor(dir.path());
    let root = dir.path().join("environments");
    std::fs::create_dir_all(&root).expect("mkdir");
    let environment = json!({"settings": {"root": root}});
    let settings = |health: Value| json!({"replies": ["ok: {input}"], "health": health});
    // The failing runtime's config is written first; the CLI's config (agent `probe`) last.
    let failing = config_with(
        dir.path(),
        "probe",
        settings(json!({"fail": "ready"})),
        "subprocess",
        &descriptor,
        environment.clone(),
    );
    let healthy = config_with(
        dir.path(),
        "probe",
        settings(json!({})),
        "subprocess",
        &descriptor,
        environment,
    );
    let (failing, _) = typed(dir.path(), failing);
    let (config, options) = typed(dir.path(), healthy);
    let fabric = Fabric::new();
    let (environment, directory) = prepared(&fabric, &config, &options);
    std::fs::write(
        dir.path().join("reference.json"),
        serde_json::to_string(&environment.reference()).expect("reference"),
    )
    .expect("write reference");

    // The runtime server: one observation, no level.
    let (code, report) = check(dir.path(), &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["scope"], "server");
    assert_eq!(report["level"], Value::Null);
    assert_eq!(report["checks"][0]["source_id"], "fabric:runtime_server");

    // A runtime this test process started, checked by the CLI process through the server.
    let runtime = fabric
        .start_runtime_in(&config, &environment, &options)
        .expect("start");
    let id = runtime.runtime_id().to_owned();
    let (code, report) = check(dir.path(), &["--runtime-id", &id, "--level", "ready"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["outcome"], "passed");
    assert_eq!(report["target"]["runtime_id"], id.as_str());
    let levels: Vec<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["level"].as_str().expect("level"))
        .collect();
    assert_eq!(levels, ["live", "active", "ready"]);
    assert_eq!(report["activity"], "idle");

    // A failing level: exit 1, the adapter's reason, the observations up to it.
    let failing = fabric
        .start_runtime_in(&failing, &environment, &options)
        .expect("start failing");
    let failing_id = failing.runtime_id().to_owned();
    let (code, report) = check(
        dir.path(),
        &["--runtime-id", &failing_id, "--level", "ready"],
    );
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["outcome"], "failed");
    assert_eq!(report["reason"], "scripted_failure");
    assert_eq!(report["checks"].as_array().expect("checks").len(), 3);
    // Below the failing level it passes.
    let (code, _) = check(
        dir.path(),
        &["--runtime-id", &failing_id, "--level", "active"],
    );
    assert_eq!(code, Some(0));

    // A stopped runtime, and one that never existed: unknown/runtime_unavailable.
    runtime.stop();
    for gone in [id.as_str(), "runtime-never-started"] {
        let (code, report) = check(dir.path(), &["--runtime-id", gone]);
        assert_eq!(code, Some(1), "{report}");
        assert_eq!(
            (report["outcome"].as_str(), report["reason"].as_str()),
            (Some("unknown"), Some("runtime_unavailable"))
        );
        assert_eq!(report["checks"], json!([]));
    }

    // A server check takes no level; --runtime-id needs --environment.
    let (code, report) = check(dir.path(), &["--level", "ready"]);
    assert_eq!(code, Some(2));
    assert_eq!(report["error"]["code"], "invalid_check_request");
    assert_eq!(report["error"]["metadata"]["path"], "--level");
    let config_path = dir.path().join("fabric.json");
    let output = support::fabric(&[
        "check",
        config_path.to_str().expect("utf-8"),
        "--runtime-id",
        "runtime-x",
    ]);
    assert_eq!(output.status.code(), Some(2));

    failing.stop();
    fabric.release_environment(&environment).expect("release");
    assert!(!directory.exists());
}
