//! `fabric run` with NeMo Relay enabled: the printed RunResult lists the Relay config the
//! core wrote (`relay_config`, kind `telemetry_config`) and the Relay files the adapter
//! reported (`relay_atif`), and carries the Relay telemetry reference.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{fabric, repo_root, stdout_json};
use serde_json::{Value, json};

/// The scripted adapter's descriptor, declaring Relay telemetry, in `dir`.
pub(crate) fn relay_scripted_descriptor(dir: &Path) -> String {
    let scripted = repo_root().join("adapters/scripted");
    let text =
        std::fs::read_to_string(scripted.join("scripted.fabric-adapter.json")).expect("descriptor");
    let mut descriptor: Value = serde_json::from_str(&text).expect("json");
    descriptor["runner"]["script"] = json!(scripted.join("launch.sh"));
    descriptor["telemetry"] = json!({"providers": {"relay": {"outputs": ["atif", "atof"], "integration_modes": ["hooks"]}}});
    let path = dir.join("relay-scripted.fabric-adapter.json");
    std::fs::write(&path, descriptor.to_string()).expect("write descriptor");
    path.to_string_lossy().into_owned()
}

#[test]
fn run_lists_relay_artifacts_and_the_telemetry_reference() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path();
    let relay_dir = base.join("relay");
    std::fs::create_dir_all(&relay_dir).expect("relay dir");
    let trajectory = relay_dir.join("trajectory-s1.atif.json");
    std::fs::write(&trajectory, "{}").expect("atif");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "relay-cli"},
        "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": [
            {"output": {"response": "ok", "relay_artifacts": [
                {"kind": "atif", "path": trajectory},
                {"kind": "otlp", "path": trajectory}
            ]}}
        ]}},
        "discovery": {"local_paths": [relay_scripted_descriptor(base)]},
        "environment": {"artifacts": base.join("artifacts")},
        "telemetry": {"providers": {"relay": {}}},
        "relay": {"project": "cli", "observability": {"atif": {"enabled": true}}}
    });
    let config_path = base.join("fabric.json");
    std::fs::write(&config_path, config.to_string()).expect("config");

    let output = fabric(&["run", config_path.to_str().expect("utf-8"), "--input", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    let root = Path::new(result["artifacts"]["root"].as_str().expect("root"));
    let artifacts = result["artifacts"]["artifacts"].as_array().expect("list");
    let relay: Vec<(&str, &str)> = artifacts
        .iter()
        .filter(|a| a["name"].as_str().is_some_and(|n| n.starts_with("relay_")))
        .map(|a| {
            (
                a["name"].as_str().expect("name"),
                a["kind"].as_str().expect("kind"),
            )
        })
        .collect();
    assert_eq!(
        relay,
        [("relay_config", "telemetry_config"), ("relay_atif", "atif")]
    );
    assert_eq!(artifacts[0]["name"], "relay_config");
    let atif = artifacts
        .iter()
        .find(|a| a["name"] == "relay_atif")
        .expect("atif");
    assert_eq!(atif["path"], json!(trajectory));
    assert_eq!(atif["media_type"], "application/json");

    let config_file = root.join(artifacts[0]["path"].as_str().expect("path"));
    let mode = std::fs::metadata(&config_file)
        .expect("relay config")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let written: Value =
        serde_json::from_slice(&std::fs::read(&config_file).expect("read")).expect("json");
    assert_eq!(written["schema_version"], "fabric.relay/v1alpha1");
    assert_eq!(written["relay"]["project"], "cli");
    assert_eq!(written["fabric"]["runtime_id"], result["runtime_id"]);

    let telemetry = result["telemetry"].as_array().expect("telemetry");
    assert_eq!(telemetry.len(), 1);
    assert_eq!(telemetry[0]["provider"], "relay");
    assert_eq!(telemetry[0]["kind"], "trace");
    let metadata = &telemetry[0]["metadata"];
    assert_eq!(metadata["relay_enabled"], true);
    assert_eq!(metadata["relay_config_path"], json!(config_file));
    assert_eq!(
        metadata["relay_config"]["components"][0]["config"]["atif"]["enabled"],
        true
    );
}

/// The example of docs/telemetry.md (`examples/relay/`) lists what the document shows.
#[test]
fn the_documented_example_lists_relay_artifacts() {
    let example = repo_root().join("examples/relay");
    let out = example.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let output = fabric(&[
        "run",
        example.join("fabric.json").to_str().expect("utf-8"),
        "--request",
        example.join("request.json").to_str().expect("utf-8"),
    ]);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["output"]["response"], "Traced.");
    let names: Vec<&str> = result["artifacts"]["artifacts"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .filter(|name| name.starts_with("relay_"))
        .collect();
    assert_eq!(names, ["relay_config", "relay_atif"]);
    assert_eq!(
        result["telemetry"][0]["metadata"]["relay_project"],
        "relay-example"
    );
}
