//! `fabric adapters check --model-stub`: the target checks (`lifecycle.target_failure`,
//! `lifecycle.malformed_target_output`) are skipped with their reason when the kit cannot
//! cause a target failure (no stub; a target that never calls the model), and the stub is
//! refused for a config without models. (That upstream's harness adapters pass them with the
//! stub is `bindings/python/tests/test_check_model_stub.py`.)

use serde_json::{Value, json};

use crate::support::{fabric, repo_root, stdout_json};

const TARGET_CHECKS: [&str; 2] = [
    "lifecycle.target_failure",
    "lifecycle.malformed_target_output",
];

fn descriptor(name: &str) -> String {
    repo_root()
        .join(format!(
            "tests/fixtures/conformance/{name}.fabric-adapter.json"
        ))
        .to_string_lossy()
        .into_owned()
}

fn reasons(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| TARGET_CHECKS.contains(&c["id"].as_str().unwrap_or_default()))
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn config(dir: &tempfile::TempDir, models: bool) -> String {
    let mut config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "stub-check"},
        "harness": {"adapter_id": "test.conformance.no-model-calls"},
        "discovery": {"local_paths": [repo_root().join("tests/fixtures/conformance")]},
    });
    if models {
        config["models"] = json!({"default": {"provider": "openai", "model": "m",
                                              "base_url": "http://127.0.0.1:9/v1"}});
    }
    let path = dir.path().join("fabric.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn without_the_stub_the_target_checks_are_skipped_saying_why() {
    let output = fabric(&[
        "adapters",
        "check",
        "--json",
        "--descriptor",
        &descriptor("good"),
        "--only",
        "lifecycle",
    ]);
    let report = stdout_json(&output);
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    let reasons = reasons(&report);
    assert_eq!(reasons.len(), 2, "{report:#}");
    for (_, status, reason) in reasons {
        assert_eq!(status, "skipped");
        assert!(reason.contains("stub model server"), "{reason}");
    }
}

#[test]
fn a_target_that_never_calls_the_stub_cannot_be_failed_and_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, true);
    let output = fabric(&[
        "adapters",
        "check",
        "--json",
        "--descriptor",
        &descriptor("no_model_calls"),
        "--config",
        &config,
        "--model-stub",
        "--only",
        "lifecycle",
    ]);
    let report = stdout_json(&output);
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    for (_, status, reason) in reasons(&report) {
        assert_eq!(status, "skipped");
        assert!(reason.contains("never called the model"), "{reason}");
    }
}

#[test]
fn the_stub_needs_a_config_with_models() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, false);
    let output = fabric(&[
        "adapters",
        "check",
        "--json",
        "--descriptor",
        &descriptor("no_model_calls"),
        "--config",
        &config,
        "--model-stub",
    ]);
    let error = stdout_json(&output);
    assert_eq!(output.status.code(), Some(2), "{error:#}");
    assert_eq!(error["error"]["code"], "invalid_argument");
    assert_eq!(error["error"]["metadata"]["field"], "models");
}
