//! `fabric plan|doctor|inspect|adapters` end to end over descriptors of upstream's installed
//! 0.5.0 adapter catalog, and the side-by-side comparison with upstream nemo-fabric 0.5.0.
//! The upstream venv is located by `support::upstream` (`FABRIC_TEST_PYTHON` or `.venv`);
//! without it these tests fail, unless `FABRIC_ALLOW_SKIPS=1` (tests/dependency.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::upstream;
use serde_json::{Value, json};
use tempfile::TempDir;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fabric(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(args)
        .current_dir(cwd)
        .env_remove("FABRIC_ADAPTER_PATH")
        .env_remove("FABRIC_TEST_REQUIRED")
        .env("FABRIC_BUNDLED_ADAPTERS", cwd.join("no-bundled-adapters"))
        .env("VIRTUAL_ENV", cwd.join("no-venv"))
        .output()
        .expect("run fabric")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// A directory with three catalog descriptors, a workflow target and config files; `None`
/// when the upstream venv is missing (the test was reported skipped; it returns).
fn world() -> Option<TempDir> {
    let catalog = upstream::require()?.catalog();
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptors = dir.path().join("descriptors");
    std::fs::create_dir_all(&descriptors).expect("mkdir");
    for id in [
        "nvidia.fabric.claude",
        "nvidia.fabric.codex",
        "nvidia.fabric.nooa",
    ] {
        std::fs::write(
            descriptors.join(format!("{id}.fabric-adapter.json")),
            catalog["adapters"][id]["descriptor"].to_string(),
        )
        .expect("write");
    }
    std::fs::write(
        descriptors.join("coding.fabric-target.json"),
        catalog["targets"]["nvidia.nooa.coding-agent"]["descriptor"].to_string(),
    )
    .expect("write");
    Some(dir)
}

fn write_config(dir: &Path, name: &str, partial: Value) -> PathBuf {
    let mut config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": name},
        "discovery": {"local_paths": ["descriptors"]}
    });
    for (key, value) in partial.as_object().expect("object") {
        config[key] = value.clone();
    }
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

#[test]
fn plan_prints_the_run_plan() {
    let Some(dir) = world() else {
        return;
    };
    let config = write_config(
        dir.path(),
        "ok",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "skills": {"paths": ["./skills"]},
               "models": {"default": {"provider": "anthropic", "model": "claude-x"}}}),
    );
    let output = fabric(&["plan", config.to_str().expect("utf8")], dir.path());
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let plan = stdout_json(&output);
    assert_eq!(plan["agent_name"], json!("ok"));
    assert_eq!(
        plan["adapter_descriptor"]["descriptor"]["adapter_id"],
        json!("nvidia.fabric.claude")
    );
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let skill = json!(base.join("skills").display().to_string());
    let got = &plan["agent_config"]["skills"]["paths"][0];
    // The base directory defaults to the config file's directory.
    assert!(
        got == &skill || got == &json!(dir.path().join("skills").display().to_string()),
        "{got}"
    );
    assert_eq!(
        plan["capability_plan"]["routes"][0]["target"],
        json!("harness_native")
    );
    assert_eq!(plan["descriptor_sha256"].as_str().map(str::len), Some(64));

    // --base-dir overrides it.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let output = fabric(
        &[
            "plan",
            config.to_str().expect("utf8"),
            "--base-dir",
            elsewhere.path().to_str().expect("utf8"),
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stdout_json(&output)["error"]["code"],
        json!("descriptor_read_failed")
    );
}

#[test]
fn plan_errors_exit_2_with_code_stage_message_and_path() {
    let Some(dir) = world() else {
        return;
    };
    let config = write_config(
        dir.path(),
        "turns",
        json!({"harness": {"adapter_id": "nvidia.fabric.codex"}, "runtime": {"max_turns": 3}}),
    );
    let output = fabric(&["plan", config.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], json!("config_incompatible"));
    assert_eq!(error["stage"], json!("plan"));
    assert_eq!(error["path"], json!("runtime.max_turns"));
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains("nvidia.fabric.codex") && message.contains("runtime.max_turns"),
        "{message}"
    );

    // Schema violations name the settings path, never the value.
    let config = write_config(
        dir.path(),
        "settings",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude", "settings": {"max_budget_usd": "SECRET-VALUE-123"}}}),
    );
    let output = fabric(&["plan", config.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains("SECRET-VALUE-123"), "{text}");
    assert_eq!(
        stdout_json(&output)["error"]["path"],
        json!("harness.settings.max_budget_usd")
    );

    // Undecodable config: exit 2, stage plan.
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "x"}, "harnes": {}}"#,
    )
    .expect("write");
    let output = fabric(&["plan", bad.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["error"]["stage"], json!("plan"));
    let output = fabric(&["plan", "does-not-exist.json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn doctor_exit_codes() {
    let Some(dir) = world() else {
        return;
    };
    std::fs::create_dir_all(dir.path().join("ws")).expect("ws");
    let passing = write_config(
        dir.path(),
        "pass",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude", "resolution": "preinstalled"}, "environment": {"workspace": "ws"}}),
    );
    // The catalog adapter's module is not installed here: doctor's import check fails (1)
    // unless the interpreter that would run it finds the module (a stand-in that does).
    let output = fabric(&["doctor", passing.to_str().expect("utf8")], dir.path());
    let report = stdout_json(&output);
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == "fail")
        .collect();
    assert!(
        failed
            .iter()
            .all(|check| check["code"] == "python_module_missing"),
        "{report}"
    );
    assert_eq!(
        output.status.code(),
        Some(if failed.is_empty() { 0 } else { 1 })
    );
    let python = dir.path().join("python-that-finds-everything");
    std::fs::write(&python, "#!/bin/sh\nexit 0\n").expect("write");
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["doctor", passing.to_str().expect("utf8")])
        .current_dir(dir.path())
        .env_remove("FABRIC_ADAPTER_PATH")
        .env(
            "FABRIC_BUNDLED_ADAPTERS",
            dir.path().join("no-bundled-adapters"),
        )
        .env("ADAPTER_PYTHON", &python)
        .output()
        .expect("run fabric");
    let report = stdout_json(&output);
    assert_eq!(output.status.code(), Some(0), "{report}");
    assert_ne!(report["status"], json!("fail"));

    // A config that plans but whose environment fails a check (an unset variable it
    // forwards): 1, not the invalid-config 2.
    let unready = write_config(
        dir.path(),
        "unready",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude", "resolution": "preinstalled"},
               "environment": {"workspace": "ws", "env_names": ["FABRIC_CLI_TEST_UNSET_KEY"]}}),
    );
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["doctor", unready.to_str().expect("utf8")])
        .current_dir(dir.path())
        .env_remove("FABRIC_ADAPTER_PATH")
        .env_remove("FABRIC_CLI_TEST_UNSET_KEY")
        .env(
            "FABRIC_BUNDLED_ADAPTERS",
            dir.path().join("no-bundled-adapters"),
        )
        .env("ADAPTER_PYTHON", &python)
        .output()
        .expect("run fabric");
    let report = stdout_json(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert_eq!(report["status"], json!("fail"), "{report}");

    let failing = write_config(
        dir.path(),
        "fail",
        json!({"harness": {"adapter_id": "nvidia.fabric.codex"}, "runtime": {"max_turns": 3},
               "skills": {"paths": ["./missing"]},
               "models": {"default": {"provider": "openai", "model": "m", "api_key_env": "FABRIC_CLI_TEST_UNSET_KEY"}}}),
    );
    // `runtime.max_turns` is a field codex cannot implement: the config is invalid (2, as
    // `plan` and `run` say), and the report still lists every finding.
    let output = fabric(&["doctor", failing.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let report = stdout_json(&output);
    assert_eq!(report["status"], json!("fail"));
    let failed: Vec<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == json!("fail"))
        .filter_map(|check| check["path"].as_str())
        .collect();
    for path in [
        "runtime.max_turns",
        "models.default.api_key_env",
        "skills.paths[0]",
    ] {
        assert!(failed.contains(&path), "{path} in {failed:?}");
    }

    // Rule violations are findings of the report (every one), not an early rejection; the
    // config is invalid (2).
    let invalid = write_config(
        dir.path(),
        "invalid",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude"},
               "models": {"default": {"provider": "openai", "model": "m", "top_p": 2.0}},
               "runtime": {"max_turns": 0}}),
    );
    let output = fabric(&["doctor", invalid.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let report = stdout_json(&output);
    let codes: Vec<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == json!("fail"))
        .filter_map(|check| check["code"].as_str())
        .collect();
    for code in ["top_p_out_of_range", "max_turns_out_of_range"] {
        assert!(codes.contains(&code), "{code} in {codes:?}");
    }

    let bad = dir.path().join("broken.json");
    std::fs::write(&bad, "{not json").expect("write");
    assert_eq!(
        fabric(&["doctor", bad.to_str().expect("utf8")], dir.path())
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn inspect_with_and_without_descriptor() {
    let Some(dir) = world() else {
        return;
    };
    let descriptor = dir
        .path()
        .join("descriptors/nvidia.fabric.claude.fabric-adapter.json");
    let config = write_config(
        dir.path(),
        "inspect",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude"}}),
    );
    let output = fabric(
        &[
            "inspect",
            config.to_str().expect("utf8"),
            "--descriptor",
            descriptor.to_str().expect("utf8"),
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let profile = stdout_json(&output);
    let upstream = upstream::require().expect("located by world()");
    assert_eq!(
        profile["descriptor_sha256"],
        json!(upstream.catalog_sha256("nvidia.fabric.claude"))
    );
    assert_eq!(
        (profile["skills"].as_bool(), profile["mcp"].as_bool()),
        (Some(true), Some(true))
    );

    // Without --descriptor: the descriptor discovery finds, never a guessed profile.
    let output = fabric(&["inspect", config.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(stdout_json(&output), profile);
    let nowhere = write_config(
        dir.path(),
        "nowhere",
        json!({"harness": {"adapter_id": "test.nowhere"}}),
    );
    let output = fabric(&["inspect", nowhere.to_str().expect("utf8")], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], "adapter_not_found");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("capabilities are unknown") && m.contains("--descriptor")),
        "{error}"
    );

    // Workflow: the target descriptor is required and changes the fingerprint.
    let target = dir.path().join("descriptors/coding.fabric-target.json");
    let nooa = dir
        .path()
        .join("descriptors/nvidia.fabric.nooa.fabric-adapter.json");
    let workflow = write_config(
        dir.path(),
        "workflow",
        json!({"workflow": {"target_id": "nvidia.nooa.coding-agent"}, "models": {"default": {"provider": "openai", "model": "m"}}}),
    );
    let output = fabric(
        &[
            "inspect",
            workflow.to_str().expect("utf8"),
            "--descriptor",
            nooa.to_str().expect("utf8"),
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    let output = fabric(
        &[
            "inspect",
            workflow.to_str().expect("utf8"),
            "--descriptor",
            nooa.to_str().expect("utf8"),
            "--target-descriptor",
            target.to_str().expect("utf8"),
        ],
        dir.path(),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let combined = stdout_json(&output)["descriptor_sha256"].clone();
    assert_ne!(
        combined,
        json!(upstream.catalog_sha256("nvidia.fabric.nooa"))
    );
    let output = fabric(&["plan", workflow.to_str().expect("utf8")], dir.path());
    assert_eq!(stdout_json(&output)["descriptor_sha256"], combined);

    // An invalid descriptor file is reported with its path.
    let invalid =
        repo().join("tests/fixtures/descriptors/invalid/legacy-harness.fabric-adapter.json");
    let output = fabric(
        &[
            "inspect",
            config.to_str().expect("utf8"),
            "--descriptor",
            invalid.to_str().expect("utf8"),
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["error"]["path"], json!("harness"));
}

/// `inspect` without `--descriptor` selects the adapter with the planner's rule: a workflow
/// target of another adapter than `harness.adapter_id` is the error `plan` gives, whether
/// discovery finds the target or `--target-descriptor` supplies it. Repository fixtures only
/// (no upstream venv).
#[test]
fn inspect_refuses_a_target_of_another_adapter_as_plan_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptors = dir.path().join("descriptors");
    std::fs::create_dir_all(&descriptors).expect("mkdir");
    for name in [
        "everything.fabric-adapter.json",
        "everything-react.fabric-target.json",
        "bare.fabric-adapter.json",
    ] {
        std::fs::copy(
            repo().join("tests/fixtures/descriptors").join(name),
            descriptors.join(name),
        )
        .expect("copy");
    }
    // The target belongs to `test.fabric.everything`; both adapters are discoverable.
    let config = write_config(
        dir.path(),
        "mismatch",
        json!({"harness": {"adapter_id": "test.fabric.bare"},
               "workflow": {"target_id": "test.fabric.everything.react"}}),
    );
    let config = config.to_str().expect("utf8");
    let planned = fabric(&["plan", config], dir.path());
    assert_eq!(planned.status.code(), Some(2));
    let error = stdout_json(&planned);
    assert_eq!(error["error"]["code"], json!("target_mismatch"), "{error}");
    assert_eq!(
        error["error"]["path"],
        json!("workflow.target_id"),
        "{error}"
    );

    let inspected = fabric(&["inspect", config], dir.path());
    assert_eq!(inspected.status.code(), Some(2));
    assert_eq!(stdout_json(&inspected), error);

    let target = descriptors.join("everything-react.fabric-target.json");
    let supplied = fabric(
        &[
            "inspect",
            config,
            "--target-descriptor",
            target.to_str().expect("utf8"),
        ],
        dir.path(),
    );
    assert_eq!(supplied.status.code(), Some(2));
    assert_eq!(stdout_json(&supplied), error);
}

#[test]
fn adapters_lists_discovered_descriptors() {
    let Some(dir) = world() else {
        return;
    };
    let config = write_config(
        dir.path(),
        "list",
        json!({"harness": {"adapter_id": "nvidia.fabric.claude"}}),
    );
    let output = fabric(
        &["adapters", "--config", config.to_str().expect("utf8")],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let listing = stdout_json(&output);
    let adapters = listing["adapters"].as_array().expect("adapters");
    assert_eq!(adapters.len(), 3);
    let claude = adapters
        .iter()
        .find(|a| a["adapter_id"] == json!("nvidia.fabric.claude"))
        .expect("claude");
    assert_eq!(claude["adapter_kind"], json!("python"));
    assert_eq!(claude["source"], json!("explicit_local"));
    assert!(
        claude["path"]
            .as_str()
            .expect("path")
            .ends_with("nvidia.fabric.claude.fabric-adapter.json")
    );
    assert_eq!(claude["descriptor_sha256"].as_str().map(str::len), Some(64));
    assert_eq!(
        listing["targets"][0]["id"],
        json!("nvidia.nooa.coding-agent")
    );

    // Without a config: only environment sources (here FABRIC_ADAPTER_PATH).
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .arg("adapters")
        .current_dir(dir.path())
        .env("FABRIC_ADAPTER_PATH", dir.path().join("descriptors"))
        .env("FABRIC_BUNDLED_ADAPTERS", dir.path().join("none"))
        .env("VIRTUAL_ENV", dir.path().join("none"))
        .output()
        .expect("run");
    let listing = stdout_json(&output);
    assert!(
        listing["adapters"]
            .as_array()
            .expect("a")
            .iter()
            .all(|a| a["source"] == json!("env_path"))
    );
}

#[test]
fn side_by_side_with_upstream() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    // compare_upstream.py reads the catalog from the installed package by default.
    let output = Command::new(upstream.python())
        .arg(repo().join("bench/plan/compare_upstream.py"))
        .arg("--fabric")
        .arg(env!("CARGO_BIN_EXE_fabric"))
        .arg("--json")
        .env_remove("FABRIC_ADAPTER_PATH")
        .output()
        .expect("run compare_upstream.py");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_str(&text).expect("summary");
    assert_eq!(summary["unexplained"], json!(0), "{text}");
    assert_eq!(summary["shape_differences"], json!(0), "{text}");
    assert!(summary["cases"].as_u64().expect("cases") > 700);
}
