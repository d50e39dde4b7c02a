//! Runtimes, run() and environments through the Rust facade, with the scripted adapter.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fabric_config::agent::RunStatus;
use fabric_config::{ErrorInfo, RunRequest, RunResult, Stage};
use fabric_host::{Fabric, HostError, RunOptions, Runtime, RuntimeState};
use serde_json::{Value, json};
use support::{assert_group_gone, mode, scripted_config};

fn options(dir: &Path) -> RunOptions {
    RunOptions::with_base_dir(dir)
}

fn request_with(input: &str, scripted: Value) -> RunRequest {
    let mut request = RunRequest::new(input);
    request.context.insert("scripted".into(), scripted);
    request
}

/// Starts a scripted runtime and an invocation sleeping `sleep_ms` on another thread, and
/// waits (at most 10 s) until the runtime reports it busy.
fn start_busy(
    dir: &Path,
    name: &str,
    sleep_ms: u64,
) -> (
    Arc<Runtime>,
    std::thread::JoinHandle<Result<RunResult, HostError>>,
) {
    let config = scripted_config(name, json!({}), json!({}));
    let runtime = Arc::new(
        Fabric::new()
            .start_runtime(&config, &options(dir))
            .expect("start"),
    );
    let worker = {
        let runtime = Arc::clone(&runtime);
        std::thread::spawn(move || {
            runtime.invoke(request_with("slow", json!({"sleep_ms": sleep_ms})))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while runtime.status().state != RuntimeState::Busy {
        assert!(Instant::now() < deadline, "never busy");
        std::thread::sleep(Duration::from_millis(2));
    }
    (runtime, worker)
}

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
    // No artifact root: the temporary FABRIC_HOME is gone after stop.
    let home = result.metadata["fabric_home"].as_str().expect("home");
    assert!(
        !Path::new(home).exists(),
        "temporary FABRIC_HOME must be removed"
    );
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

/// A config whose adapter is the fake host (tests/support/fake_host.py) in `mode`.
fn fake_config(dir: &Path, mode: &str, env: Value, runtime: Value) -> fabric_config::FabricConfig {
    let python = std::env::var("FABRIC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_host.py");
    let descriptor = dir.join("fake.fabric-adapter.json");
    std::fs::write(
        &descriptor,
        json!({
            "contract_version": "fabric.adapter/v1alpha2",
            "adapter_id": "test.fake",
            "adapter_kind": "process",
            "runner": {"command": python, "script": script.to_str().expect("utf8")}
        })
        .to_string(),
    )
    .expect("descriptor");
    let mut env_map = json!({"FAKE_MODE": mode});
    if let (Some(target), Value::Object(more)) = (env_map.as_object_mut(), env) {
        target.extend(more);
    }
    serde_json::from_value(json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "fake"},
        "harness": {"adapter_id": "test.fake"},
        "discovery": {"local_paths": [descriptor.to_str().expect("utf8")]},
        "environment": {"env": env_map},
        "runtime": runtime
    }))
    .expect("config")
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

#[test]
fn overlapping_invoke_is_a_state_error_and_invoke_after_stop_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (runtime, worker) = start_busy(dir.path(), "overlap", 1500);
    let busy = runtime.invoke(RunRequest::new("second")).expect_err("busy");
    assert_eq!(busy.code(), "runtime_busy");
    assert!(busy.is_state_error());
    let first = worker.join().expect("join").expect("first invoke");
    assert_eq!(first.output["response"], "slow");
    runtime.stop();
    assert_eq!(runtime.status().state, RuntimeState::Stopped);
    let stopped = runtime
        .invoke(RunRequest::new("late"))
        .expect_err("stopped");
    assert_eq!(stopped.code(), "runtime_stopped");
    assert!(stopped.is_state_error());
    // stop is idempotent
    let again = runtime.stop();
    assert!(
        again
            .events
            .iter()
            .any(|e| e.metadata.get("already_stopped") == Some(&json!(true)))
    );
}

#[test]
fn crash_makes_the_runtime_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("crash", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let error = runtime
        .invoke(request_with("x", json!({"crash": true})))
        .expect_err("crash");
    assert_eq!(error.code(), "host_crashed");
    assert_eq!(error.stage(), Stage::Invoke);
    assert_eq!(runtime.status().state, RuntimeState::Failed);
    let again = runtime.invoke(RunRequest::new("y")).expect_err("terminal");
    assert_eq!(again.code(), "runtime_failed");
    assert!(again.is_state_error());
    let stopped = runtime.stop();
    assert!(stopped.error.is_none(), "{stopped:?}");
    assert_group_gone(runtime.host_pid());
}

#[test]
fn host_ignoring_stop_keeps_a_succeeded_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("ignores-stop", json!({"ignore_stop": true}), json!({}));
    let began = Instant::now();
    let result = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect("run");
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(result.status, RunStatus::Succeeded);
    assert!(result.error.is_none());
    assert_eq!(result.metadata["stop_error"]["stage"], "stop");
    assert_eq!(result.metadata["stop_error"]["code"], "timeout");
    assert!(
        result
            .events
            .iter()
            .any(|e| e.kind == "runtime_stop_failed")
    );
    assert_group_gone(result.metadata["host_pid"].as_u64().expect("pid") as u32);
}

#[test]
fn failed_start_keeps_the_adapter_code_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "bad-start",
        json!({"start_fail": {"code": "harness_unavailable", "message": "no harness"}}),
        json!({}),
    );
    let error = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect_err("start fails");
    assert_eq!(error.code(), "harness_unavailable");
    assert_eq!(error.stage(), Stage::Start);
    assert!(!error.is_state_error());
}

#[test]
fn lifecycle_failures_keep_the_adapters_stderr_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "cause",
        json!({}),
        json!({"environment": {"env": {"CAUSE_TOKEN": "s3cret-cause-value"}}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    // Output from an earlier operation is not part of this failure's cause.
    runtime
        .invoke(request_with("x", json!({"stderr": "earlier noise"})))
        .expect("noise");
    let error = runtime
        .invoke(request_with(
            "x",
            json!({
                "stderr": "Traceback (most recent call last):\nRuntimeError: key s3cret-cause-value rejected",
                "raise": {"code": "lifecycle_adapter_invoke_failed", "message": "Adapter failed during lifecycle invoke"}
            }),
        ))
        .expect_err("raise");
    assert_eq!(error.code(), "lifecycle_adapter_invoke_failed");
    let info = ErrorInfo::from(error);
    assert_eq!(info.stage, Stage::Invoke);
    assert!(
        info.message.starts_with(
            "Adapter failed during lifecycle invoke; diagnostics: Traceback (most recent call last):"
        ),
        "{}",
        info.message
    );
    assert!(
        info.message.ends_with("RuntimeError: key *** rejected"),
        "{}",
        info.message
    );
    assert!(!info.message.contains("earlier noise"), "{}", info.message);
    let tail = info.metadata["stderr_tail"].as_str().expect("stderr_tail");
    assert!(tail.contains("RuntimeError: key *** rejected"), "{tail}");
    assert!(info.metadata["host_pid"].as_u64().is_some());
    assert!(
        !serde_json::to_string(&info)
            .unwrap()
            .contains("s3cret-cause-value")
    );
    runtime.stop();
    // A failed outcome without stderr keeps the adapter's message as is.
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let error = runtime
        .invoke(request_with(
            "x",
            json!({"raise": {"code": "scripted_boom", "message": "boom"}}),
        ))
        .expect_err("raise");
    assert_eq!(ErrorInfo::from(error).message, "boom");
    runtime.stop();
}

#[test]
fn plan_errors_are_config_class() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = scripted_config("bad", json!({}), json!({}));
    config.harness.as_mut().expect("harness").adapter_id = "no.such.adapter".into();
    let error = Fabric::new()
        .run(&config, RunRequest::new("x"), &options(dir.path()))
        .expect_err("no adapter");
    assert_eq!(error.code(), "adapter_not_found");
    assert_eq!(error.class(), fabric_host::ErrorClass::Config);
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.code, "adapter_not_found");
}

#[test]
fn prepared_environment_hosts_several_runtimes_and_release_keeps_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(workspace.join("caller.txt"), "mine").expect("caller file");
    let config = scripted_config(
        "envs",
        json!({}),
        json!({"environment": {"workspace": "ws"}}),
    );
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(&config, &options(dir.path()))
        .expect("prepare");
    assert!(environment.environment_id().starts_with("environment-"));
    assert_eq!(environment.workspace(), workspace.as_path());
    let a = fabric
        .start_runtime_in(&config, &environment, &options(dir.path()))
        .expect("a");
    let b = fabric
        .start_runtime_in(&config, &environment, &options(dir.path()))
        .expect("b");
    assert_ne!(a.runtime_id(), b.runtime_id());
    a.invoke(RunRequest::new("1")).expect("a1");
    b.invoke(RunRequest::new("2")).expect("b1");
    // The host runs in the workspace.
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", a.host_pid())).expect("cwd");
    assert_eq!(cwd, workspace);
    a.stop();
    b.stop();
    fabric.release_environment(&environment).expect("release");
    assert_eq!(
        std::fs::read_to_string(workspace.join("caller.txt")).expect("kept"),
        "mine"
    );
    let error = fabric
        .start_runtime_in(&config, &environment, &options(dir.path()))
        .expect_err("released");
    assert_eq!(error.code(), "environment_released");
    assert!(error.is_state_error());
}

#[test]
fn request_overrides_reach_the_adapter_as_validated_extensions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("overrides", json!({"replies": ["zero", "one"]}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let with = |overrides: Value| {
        let mut request = RunRequest::new("x");
        request.overrides = Some(serde_json::from_value(overrides).expect("object"));
        request
    };
    // Declared by the scripted adapter's `extension_schemas.run_request`.
    let result = runtime
        .invoke(with(json!({"temperature": 0.25, "reply_index": 1})))
        .expect("invoke");
    assert_eq!(result.output["response"], "one");
    assert_eq!(result.output["metadata"]["temperature"], 0.25);
    assert_eq!(result.output["metadata"]["reply_index"], 1);
    // An empty object sends nothing.
    let result = runtime.invoke(with(json!({}))).expect("empty");
    assert_eq!(result.output["response"], "zero");
    // A schema violation names the key, never the value, and is a runtime error.
    let error = runtime
        .invoke(with(json!({"temperature": "s3cret-sentinel"})))
        .expect_err("violation");
    assert_eq!(error.code(), "request_extension_invalid");
    assert_eq!(error.class(), fabric_host::ErrorClass::Runtime);
    let info = ErrorInfo::from(error);
    assert_eq!(info.stage, Stage::Invoke);
    assert_eq!(info.metadata["path"], "request.extensions.temperature");
    assert!(
        !serde_json::to_string(&info)
            .unwrap()
            .contains("s3cret-sentinel")
    );
    let error = runtime
        .invoke(with(json!({"priority": 1})))
        .expect_err("undeclared key");
    assert_eq!(
        ErrorInfo::from(error).metadata["path"],
        "request.extensions.priority"
    );
    // Unlike upstream (which latches the runtime failed), a rejected request leaves the
    // runtime usable: the adapter never saw it.
    runtime
        .invoke(RunRequest::new("fine"))
        .expect("still usable");
    runtime.stop();
}

/// The upstream-style python-echo adapter (nemo-fabric-adapters-common `lifecycle.serve`)
/// under our host: two turns of state, two isolated runtimes. Needs FABRIC_TEST_PYTHON
/// (an interpreter with the upstream packages); mandatory in CI.
#[test]
fn upstream_style_python_adapter_keeps_state_per_runtime() {
    let Some(python) = support::test_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let config = support::python_echo_config(
        json!({"adapter_id": "fabric.python-echo", "settings": {"prefix": "echo: "}}),
    );
    let fabric = Fabric::new();
    let mut options = options(dir.path());
    options.runtime.python_interpreter = Some(python.into());
    let a = fabric.start_runtime(&config, &options).expect("start a");
    let b = fabric.start_runtime(&config, &options).expect("start b");
    let a1 = a.invoke(RunRequest::new("one")).expect("a1");
    b.invoke(RunRequest::new("uno")).expect("b1");
    let a2 = a.invoke(RunRequest::new("two")).expect("a2");
    let b2 = b.invoke(RunRequest::new("dos")).expect("b2");
    assert_eq!(a1.adapter_kind.as_str(), "python");
    assert_eq!(a1.output["response"], "echo: one");
    assert_eq!(a2.output["previous_input"], "one");
    assert_eq!(b2.output["previous_input"], "uno");
    for runtime in [&a, &b] {
        let stopped = runtime.stop();
        assert!(stopped.error.is_none(), "{stopped:?}");
        support::assert_group_gone(runtime.host_pid());
    }
}

#[test]
fn invoke_timeout_fires_on_time_and_is_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "slow",
        json!({}),
        json!({"runtime": {"timeout_seconds": 1}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let began = Instant::now();
    let error = runtime
        .invoke(request_with("x", json!({"sleep_ms": 10000})))
        .expect_err("timeout");
    let elapsed = began.elapsed();
    assert!(elapsed >= Duration::from_millis(1000), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1800), "late: {elapsed:?}");
    assert_eq!(error.code(), "timeout");
    assert_eq!(error.stage(), Stage::Invoke);
    assert_eq!(runtime.status().state, RuntimeState::Failed);
    let began = Instant::now();
    let stopped = runtime.stop();
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert!(
        stopped.error.is_none(),
        "a terminal host is expected to need signals"
    );
    assert_group_gone(runtime.host_pid());
}

#[test]
fn stop_leaves_no_process_of_the_host_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("children", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let result = runtime
        .invoke(request_with("x", json!({"spawn_children": 3})))
        .expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded, "{:?}", result.error);
    let pgid = runtime.host_pid();
    let live = fabric_host::procfs::group_members(Path::new("/proc"), pgid)
        .into_iter()
        .filter(|s| s.state != b'Z')
        .count();
    assert!(live >= 4, "leader and 3 children expected, saw {live}");
    runtime.stop();
    assert_group_gone(pgid);
}

#[test]
fn stop_during_an_invocation_ends_it_with_a_state_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (runtime, worker) = start_busy(dir.path(), "stop-mid", 20000);
    let began = Instant::now();
    let stopped = runtime.stop();
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert!(
        stopped.error.is_none(),
        "signals were the plan: {stopped:?}"
    );
    let error = worker
        .join()
        .expect("join")
        .expect_err("stopped mid-invoke");
    assert_eq!(error.code(), "runtime_stopped");
    assert!(error.is_state_error());
    assert_group_gone(runtime.host_pid());
}

#[test]
fn dropping_an_unstopped_runtime_stops_its_host_gracefully() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("stopped.json");
    let config = fake_config(
        dir.path(),
        "ok",
        json!({"FAKE_STOP_MARKER": marker.to_str().expect("utf8")}),
        json!({}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &options(dir.path()))
        .expect("start");
    let runtime_id = runtime.runtime_id().to_owned();
    let pid = runtime.host_pid();
    drop(runtime);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the host never received stop");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_group_gone(pid);
    let payload: Value =
        serde_json::from_str(&std::fs::read_to_string(&marker).expect("marker")).expect("json");
    assert_eq!(payload["runtime_id"], runtime_id.as_str());
}

#[test]
fn two_hundred_runtimes_at_once() {
    const RUNTIMES: usize = 200;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        "many",
        json!({"replies": ["{runtime_id} turn {turn} after {previous_input}"]}),
        json!({}),
    );
    let fabric = Fabric::new();
    let options = options(dir.path());
    let runtimes: Vec<fabric_host::Runtime> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    (0..RUNTIMES / 8)
                        .map(|_| fabric.start_runtime(&config, &options).expect("start"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("join"))
            .collect()
    });
    assert_eq!(runtimes.len(), RUNTIMES);
    std::thread::scope(|scope| {
        for (index, runtime) in runtimes.iter().enumerate() {
            scope.spawn(move || {
                runtime
                    .invoke(RunRequest::new(format!("first-{index}")))
                    .expect("first");
                let second = runtime.invoke(RunRequest::new("second")).expect("second");
                assert_eq!(
                    second.output["response"],
                    format!("{} turn 2 after first-{index}", runtime.runtime_id()),
                    "each runtime sees only its own state"
                );
            });
        }
    });
    let stats = fabric_host::engine_stats().expect("stats");
    assert!(stats.hosts >= RUNTIMES, "{stats:?}");
    std::thread::scope(|scope| {
        for runtime in &runtimes {
            scope.spawn(move || {
                let stopped = runtime.stop();
                assert!(stopped.error.is_none(), "{stopped:?}");
            });
        }
    });
    for runtime in &runtimes {
        assert_group_gone(runtime.host_pid());
    }
}
