//! The subprocess provider's sandbox observation at release: outcome, exit code, wall and
//! CPU time and peak memory of its runtime server's process tree, read with `wait4` when
//! the server is reaped (`resource_usage_source` names that reader).

use crate::support::provider::{config_with, subprocess_descriptor, typed};
use fabric_host::Fabric;
use serde_json::json;

#[test]
fn a_released_subprocess_environment_reports_its_server_tree_usage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("environments");
    std::fs::create_dir(&root).expect("mkdir");
    let descriptor = subprocess_descriptor(dir.path());
    let config = config_with(
        dir.path(),
        "observed",
        json!({}),
        "subprocess",
        &descriptor,
        json!({"settings": {"root": root}}),
    );
    let (config, options) = typed(dir.path(), config);
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(&config, &options)
        .expect("prepare");
    assert!(environment.info().sandbox_observation.is_none());
    fabric.release_environment(&environment).expect("release");
    let observation = json!(environment.info().sandbox_observation.expect("observation"));
    assert_eq!(observation["provider"], "subprocess", "{observation}");
    assert_eq!(observation["role"], "agent");
    // SIGTERM at release: the server shuts down in order and exits 0
    assert_eq!(observation["outcome"], "completed", "{observation}");
    assert_eq!(observation["exit_code"], 0, "{observation}");
    assert!(observation["wall_time_s"].as_f64().expect("wall") > 0.0);
    assert!(
        observation["cpu_time_s"].as_f64().expect("cpu") > 0.0,
        "{observation}"
    );
    // a Rust server's resident set is above 1 MiB and far below 1 GiB
    let peak = observation["peak_memory_mib"].as_f64().expect("peak");
    assert!((1.0..1024.0).contains(&peak), "{observation}");
    assert_eq!(
        observation["resource_usage_source"], "rusage:wait4(runtime server)",
        "{observation}"
    );
}
