//! `fabric adapters check --model-stub`: the target checks (`lifecycle.target_failure`,
//! `lifecycle.malformed_target_output`) are caused through the stub model servers for an
//! adapter whose target calls a model, skipped with their reason when the kit cannot cause a
//! target failure (no stub; a target that never calls the model), and the stub is refused
//! for a config without models. (That upstream's harness adapters pass them with the stub is
//! `bindings/python/tests/test_check_model_stub.py`.)

use serde_json::{Value, json};

use crate::adapters_check::{check, fixture};
use crate::support::repo_root;

const TARGET_CHECKS: [&str; 2] = [
    "lifecycle.target_failure",
    "lifecycle.malformed_target_output",
];

/// `(id, status, reason)` of the target checks.
fn targets(report: &Value) -> Vec<(String, String, String)> {
    let text = |c: &Value, key: &str| c[key].as_str().unwrap_or_default().to_owned();
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| TARGET_CHECKS.contains(&c["id"].as_str().unwrap_or_default()))
        .map(|c| (text(c, "id"), text(c, "status"), text(c, "reason")))
        .collect()
}

/// A config selecting `adapter_id` from the fixtures, with a model (its base_url unreachable:
/// only the stub answers it) when `models`.
fn config(dir: &tempfile::TempDir, adapter_id: &str, models: bool) -> String {
    let mut config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "stub-check"},
        "harness": {"adapter_id": adapter_id},
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

/// `fabric adapters check --json --descriptor <mode> [--config ...] [--model-stub]
/// --only lifecycle`, with the fixture adapter's config (and models) when `models` is set.
fn check_lifecycle(mode: &str, models: Option<bool>, stub: bool) -> (Option<i32>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let descriptor = fixture(mode);
    let mut args = vec!["--descriptor", &descriptor, "--only", "lifecycle"];
    let config_path;
    if let Some(models) = models {
        let adapter_id = format!("test.conformance.{}", mode.replace('_', "-"));
        config_path = config(&dir, &adapter_id, models);
        args.extend(["--config", &config_path]);
    }
    if stub {
        args.push("--model-stub");
    }
    check(&args)
}

#[test]
fn without_the_stub_the_target_checks_are_skipped_saying_why() {
    let (code, report) = check_lifecycle("good", None, false);
    assert_eq!(code, Some(0), "{report:#}");
    let targets = targets(&report);
    assert_eq!(targets.len(), 2, "{report:#}");
    for (_, status, reason) in targets {
        assert_eq!(status, "skipped");
        assert!(reason.contains("stub model server"), "{reason}");
    }
}

#[test]
fn a_target_that_never_calls_the_stub_cannot_be_failed_and_is_skipped() {
    let (code, report) = check_lifecycle("no_model_calls", Some(true), true);
    assert_eq!(code, Some(0), "{report:#}");
    for (_, status, reason) in targets(&report) {
        assert_eq!(status, "skipped");
        assert!(reason.contains("never called the model"), "{reason}");
    }
}

#[test]
fn a_target_that_calls_the_model_is_failed_through_the_stub_and_reports_it() {
    let (code, report) = check_lifecycle("model_caller", Some(true), true);
    assert_eq!(code, Some(0), "{report:#}");
    for (id, status, reason) in targets(&report) {
        assert_eq!(status, "passed", "{id}: {reason}");
        assert!(reason.contains("reported `failed`"), "{id}: {reason}");
    }
}

#[test]
fn a_config_without_discovery_checks_the_named_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fabric.json");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "stub-check"},
        "harness": {"adapter_id": "test.conformance.model-caller"},
        "models": {"default": {"provider": "openai", "model": "m",
                               "base_url": "http://127.0.0.1:9/v1"}},
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let (code, report) = check(&[
        "--descriptor",
        &fixture("model_caller"),
        "--config",
        &path.to_string_lossy(),
        "--model-stub",
        "--only",
        "lifecycle",
    ]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
}

#[test]
fn the_stub_needs_a_config_with_models() {
    let (code, error) = check_lifecycle("no_model_calls", Some(false), true);
    assert_eq!(code, Some(2), "{error:#}");
    assert_eq!(error["error"]["code"], "invalid_argument");
    assert_eq!(error["error"]["metadata"]["field"], "models");
}
