//! Software evidence (`RunResult.execution`) through the Rust API with the scripted adapter:
//! composition, the `guest_sdk` gap, the bounds and `provenance.enabled: false` (issue 18).

use std::path::Path;

use crate::support::scripted_config;
use fabric_config::RunRequest;
use fabric_config::agent::RunStatus;
use fabric_config::options::BindingIdentity;
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

fn binding(name: &str) -> BindingIdentity {
    BindingIdentity {
        name: name.into(),
        version: "1.2.3".into(),
        runtime_name: Some("test-runtime".into()),
        runtime_version: Some("4.5.6".into()),
    }
}

fn run(dir: &Path, settings: Value, extra: Value, binding_name: &str) -> Value {
    let config = scripted_config("provenance", settings, extra);
    let mut options = RunOptions::with_base_dir(dir);
    options.runtime.binding = Some(binding(binding_name));
    let result = Fabric::new()
        .run(&config, RunRequest::new("hi"), &options)
        .expect("run");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    serde_json::to_value(&result).expect("json")
}

fn gaps(execution: &Value) -> Vec<(String, String)> {
    execution["coverage"]["gaps"]
        .as_array()
        .map(|gaps| {
            gaps.iter()
                .map(|g| {
                    let text = |k: &str| g[k].as_str().unwrap_or_default().to_owned();
                    (text("participant"), text("reason"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn core_binding_executable_and_adapter_reports_are_composed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run(dir.path(), json!({}), json!({}), "test-binding");
    let execution = &result["execution"];
    let inventories = execution["inventories"].as_array().expect("inventories");
    assert_eq!(inventories.len(), 3, "{execution}");
    let refs: Vec<&str> = inventories
        .iter()
        .map(|i| i["context_ref"].as_str().expect("ref"))
        .collect();
    assert_eq!(refs, ["ctx-1", "ctx-2", "ctx-3"]);
    // The core's own inventory: core version, the binding and its runtime.
    let core = &inventories[0];
    assert_eq!(core["participants"], json!(["core", "sdk"]));
    assert_eq!(core["entries"][0]["name"], "fabric-core");
    assert_eq!(
        core["entries"][0]["version"]["value"],
        fabric_provenance::CORE_VERSION
    );
    assert_eq!(core["entries"][1]["name"], "test-binding");
    assert_eq!(core["entries"][1]["version"]["value"], "1.2.3");
    assert_eq!(core["entries"][2]["version"]["value"], "4.5.6");
    // The process adapter's executable: the descriptor declares no version command.
    let executable = &inventories[1]["entries"][0];
    assert_eq!(executable["name"], "sh");
    assert_eq!(executable["version"]["status"], "unavailable");
    assert_eq!(
        executable["version"]["reason"],
        "version_command_not_declared"
    );
    // The adapter host's own report, from its start output.
    let guest = &inventories[2];
    assert_eq!(guest["participants"], json!(["guest_sdk", "adapter"]));
    assert_eq!(guest["entries"][0]["name"], "fabric-adapter-scripted");
    assert_eq!(guest["entries"][0]["version"]["origin"], "adapter");
    assert_eq!(execution["coverage"]["status"], "complete", "{execution}");
}

#[test]
fn a_host_without_a_report_is_a_guest_sdk_gap_and_keeps_the_outcome() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = json!({"evidence": {"omit": true}});
    let result = run(dir.path(), settings, json!({}), "test-binding");
    let execution = &result["execution"];
    assert_eq!(execution["coverage"]["status"], "incomplete");
    assert_eq!(
        gaps(execution),
        [("guest_sdk".to_owned(), "guest_report_missing".to_owned())]
    );
    assert_eq!(result["output"]["response"], "hi", "{result}");
}

#[test]
fn disabled_evidence_skips_collection_and_omits_execution() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "disabled-binding-never-snapshotted";
    let result = run(
        dir.path(),
        json!({}),
        json!({"provenance": {"enabled": false}}),
        name,
    );
    assert!(result.get("execution").is_none(), "{result}");
    assert!(
        !fabric_provenance::has_snapshot(Some(&binding(name))),
        "the core took no snapshot"
    );
}

#[test]
fn caller_reports_are_carried_with_their_observations_and_renumbered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let observed = json!({"value": "27.1.1", "source": "caller:docker_version",
                          "origin": "caller", "observed_at": "2025-03-04T05:06:07Z"});
    let reports = json!({
        "inventories": [{"context_ref": "app", "participants": ["caller"],
                         "availability": "available",
                         "entries": [{"role": "harness", "kind": "package", "name": "my-app",
                                      "version": observed}]}],
        "infrastructure": [{"name": "infrastructure.container.engine_version",
                            "context_ref": "app", "version": observed}]
    });
    let extra = json!({"provenance": {"enabled": true, "reports": reports}});
    let result = run(dir.path(), json!({}), extra, "test-binding");
    let execution = &result["execution"];
    assert_eq!(execution["inventories"][1]["context_ref"], "ctx-2");
    assert_eq!(
        execution["inventories"][1]["entries"][0]["version"],
        observed
    );
    assert_eq!(
        execution["infrastructure"],
        json!([{"name": "infrastructure.container.engine_version", "context_ref": "ctx-2",
                "version": observed}])
    );
    assert_eq!(execution["coverage"]["status"], "complete", "{execution}");
}

#[test]
fn reports_over_each_bound_are_incomplete_evidence_not_failures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (json!({"inventories": 20}), "evidence_contexts_dropped"),
        (json!({"entries": 200}), "evidence_entries_dropped"),
        (
            json!({"entries": 10, "value_bytes": 20000}),
            "evidence_too_large",
        ),
    ];
    for (evidence, reason) in cases {
        let result = run(
            dir.path(),
            json!({"evidence": evidence}),
            json!({}),
            "test-binding",
        );
        let execution = &result["execution"];
        let parsed: fabric_config::evidence::ExecutionEvidence =
            serde_json::from_value(execution.clone()).expect("typed");
        assert!(parsed.inventories.len() <= 16, "{reason}");
        assert!(parsed.entry_count() <= 128, "{reason}");
        assert!(parsed.compact_len() <= 64 * 1024, "{reason}");
        assert_eq!(execution["coverage"]["status"], "incomplete", "{reason}");
        assert!(
            gaps(execution).iter().any(|(_, r)| r == reason),
            "{reason}: {:?}",
            gaps(execution)
        );
    }
}
