//! Run results, request ids, state across turns, usage, artifacts and saved records.

use std::path::Path;

use fabric_config::agent::RunStatus;
use fabric_config::{RunRequest, Stage};
use fabric_host::Fabric;
use serde_json::{Value, json};

use super::fixtures::{fake_config, options, request_with};
use crate::support::{assert_group_gone, mode, scripted_config, wait_until};

#[test]
fn run_returns_a_complete_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("hello", json!({}), json!({}));
    let mut request = RunRequest::new("hi there");
    request.request_id = Some("caller-req-1".into());
    let result = Fabric::new()
        .run(&config, request, &options(dir.path()))
        .expect("run");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    assert_eq!(result.output["response"], "hi there");
    assert_eq!(result.agent_name, "hello");
    assert_eq!(result.harness, "fabric.scripted");
    assert_eq!(result.adapter_id.as_deref(), Some("fabric.scripted"));
    assert!(result.runtime_id.starts_with("runtime-"));
    assert!(result.invocation_id.starts_with("invocation-"));
    assert_eq!(result.request_id, "caller-req-1");
    let kinds: Vec<&str> = result.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "runtime_start",
            "invocation_start",
            "invocation_end",
            "runtime_stop"
        ]
    );
    let stamps: Vec<u64> = result.events.iter().map(|e| e.timestamp_millis).collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "events ordered");
    assert_eq!(result.metadata["adapter_runner"], "persistent_local_host");
    assert_eq!(result.metadata["environment_provider"], "local");
    assert!(result.metadata["host_pid"].as_u64().is_some());
    assert!(
        result.metadata["host_command"]
            .as_str()
            .expect("cmd")
            .contains("launch.sh")
    );
    assert!(result.error.is_none());
    assert!(
        result.usage.is_none(),
        "echo reports no usage: unknown, not zero"
    );
    // No artifact root: the temporary FABRIC_HOME is removed once the host has exited
    // (`run()` returns at the host's answer to `stop`; the reap finishes in the background).
    let home = result.metadata["fabric_home"].as_str().expect("home");
    wait_until("the temporary FABRIC_HOME's removal", || {
        !Path::new(home).exists()
    });
    let pid = result.metadata["host_pid"].as_u64().expect("pid") as u32;
    assert_group_gone(pid);
}

#[test]
fn generated_request_id_has_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("ids", json!({}), json!({}));
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    assert!(
        result.request_id.starts_with("request-"),
        "{}",
        result.request_id
    );
}

#[test]
fn two_turns_share_state_and_two_runtimes_are_isolated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "turns",
        json!({"replies": ["turn {turn} after {previous_input}"], "when_exhausted": "cycle"}),
        json!({}),
    );
    let fabric = Fabric::new();
    let first = fabric
        .start_runtime(&config, &options(dir.path()))
        .expect("start a");
    let second = fabric
        .start_runtime(&config, &options(dir.path()))
        .expect("start b");
    assert_ne!(first.runtime_id(), second.runtime_id());
    assert_ne!(first.host_pid(), second.host_pid());
    first.invoke(RunRequest::new("alpha")).expect("a1");
    second.invoke(RunRequest::new("beta")).expect("b1");
    let a2 = first.invoke(RunRequest::new("again")).expect("a2");
    let b2 = second.invoke(RunRequest::new("again")).expect("b2");
    assert_eq!(a2.output["response"], "turn 2 after alpha");
    assert_eq!(b2.output["response"], "turn 2 after beta");
    // runtime_start is reported once, with the first invocation.
    assert!(a2.events.iter().all(|e| e.kind != "runtime_start"));
    assert_eq!(first.status().invocations, 2);
    for runtime in [&first, &second] {
        let stopped = runtime.stop();
        assert!(stopped.error.is_none(), "{stopped:?}");
        assert_group_gone(runtime.host_pid());
    }
}

#[test]
fn failed_result_keeps_the_adapter_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("fails", json!({}), json!({}));
    let request = request_with(
        "x",
        json!({"fail": {"code": "model_refused", "message": "the model refused", "retryable": true}}),
    );
    let result = Fabric::new()
        .run(&config, request, &options(dir.path()))
        .expect("a failed result is still a result");
    assert_eq!(result.status, RunStatus::Failed);
    let error = result.error.expect("error");
    assert_eq!(error.code, "model_refused");
    assert_eq!(error.stage, Stage::Invoke);
    assert!(error.retryable);
    assert!(result.events.iter().any(|e| e.kind == "invocation_failed"));
}

#[test]
fn usage_is_normalized() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("usage", json!({}), json!({}));
    let request = request_with(
        "x",
        json!({"usage": {"input_tokens": 10, "cached_input_tokens": 4, "input_tokens_include_cache": true, "output_tokens": 3}}),
    );
    let result = Fabric::new()
        .run(&config, request, &options(dir.path()))
        .expect("run");
    let usage = result.usage.expect("usage");
    assert_eq!(usage.input_tokens, Some(10));
    assert_eq!(usage.cached_input_tokens, Some(4));
    assert_eq!(usage.input_tokens_include_cache, Some(true));
    assert_eq!(usage.output_tokens, Some(3));
    assert_eq!(usage.total_tokens, None, "never invented");
}

#[test]
fn artifacts_and_invocation_records_under_the_artifact_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "artifacts",
        json!({}),
        json!({"runtime": {"artifacts": "out", "timeout_seconds": 30}}),
    );
    let request = request_with(
        "x",
        json!({"artifact": {"name": "notes/answer.txt", "content": "42", "media_type": "text/plain"}}),
    );
    let result = Fabric::new()
        .run(&config, request, &options(dir.path()))
        .expect("run");
    assert_eq!(result.status, RunStatus::Succeeded, "{:?}", result.error);
    let root = dir.path().join("out");
    assert_eq!(result.artifacts.root.as_deref(), root.to_str());
    // The core's own `stdout` log comes first (docs/hosting.md, core-collected artifacts).
    assert_eq!(result.artifacts.artifacts.len(), 2);
    assert_eq!(result.artifacts.artifacts[0].name, "stdout");
    let artifact = &result.artifacts.artifacts[1];
    assert!(Path::new(&artifact.path).is_relative());
    let written = root.join(&artifact.path);
    assert_eq!(
        std::fs::read_to_string(&written).expect("artifact file"),
        "42"
    );
    let record = root
        .join(".fabric")
        .join(&result.runtime_id)
        .join(&result.invocation_id)
        .join("adapter-invocation.json");
    assert_eq!(
        result.metadata["fabric_invocation"],
        record.to_str().expect("utf8")
    );
    assert_eq!(mode(&record), 0o600);
    assert_eq!(mode(record.parent().expect("dir")), 0o700);
    assert_eq!(mode(&root.join(".fabric")), 0o700);
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&record).expect("record")).expect("json");
    assert_eq!(saved["request"]["input"], "x");
    assert_eq!(
        saved["runtime_context"]["runtime_id"],
        result.runtime_id.as_str()
    );
    assert!(
        saved["runtime_context"]["deadline_millis"]
            .as_u64()
            .is_some()
    );
    // The artifact root is caller-owned: kept after stop, with the host's stderr log.
    assert!(
        root.join(".fabric")
            .join(&result.runtime_id)
            .join("host.stderr.log")
            .exists()
    );
}

#[test]
fn artifact_references_outside_the_root_are_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, runtime) in [
        ("../escape.txt", json!({"artifacts": "out"})),
        ("/etc/passwd", json!({"artifacts": "out"})),
        ("fine.txt", json!({})),
    ] {
        let config = fake_config(
            dir.path(),
            "artifact",
            json!({"FAKE_ARTIFACT_PATH": path}),
            runtime,
        );
        let result = Fabric::new()
            .run(&config, RunRequest::new("x"), &options(dir.path()))
            .expect("run");
        assert_eq!(result.status, RunStatus::Failed, "{path}");
        let error = result.error.expect("error");
        assert_eq!(error.code, "artifact_rejected", "{path}");
        assert_eq!(error.stage, Stage::Artifact);
        // Only the core's own logs remain listed.
        assert!(
            result
                .artifacts
                .artifacts
                .iter()
                .all(|a| a.name == "stdout" || a.name == "stderr"),
            "{path}"
        );
        assert!(result.events.iter().any(|e| e.kind == "artifact_rejected"));
    }
    let config = fake_config(
        dir.path(),
        "artifact",
        json!({"FAKE_ARTIFACT_PATH": "sub/ok.txt"}),
        json!({"artifacts": "out"}),
    );
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    assert_eq!(result.status, RunStatus::Succeeded, "{:?}", result.error);
    assert_eq!(result.artifacts.artifacts[0].name, "stdout");
    assert_eq!(result.artifacts.artifacts[1].path, "sub/ok.txt");
}

#[test]
fn environment_values_are_redacted_in_saved_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "env",
        json!({}),
        json!({"environment": {"env": {"API_TOKEN": "lit-s3cr3t-value"}}, "runtime": {"artifacts": "out"}}),
    );
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    let record = std::fs::read_to_string(result.metadata["fabric_invocation"].as_str().expect("p"))
        .expect("record");
    assert!(!record.contains("lit-s3cr3t-value"), "{record}");
    assert!(record.contains("API_TOKEN"));
    let rendered = serde_json::to_string(&result).expect("json");
    assert!(!rendered.contains("lit-s3cr3t-value"));
}
