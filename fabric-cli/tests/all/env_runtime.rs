//! Runtimes in a provider environment (the real `subprocess` provider): driven through the
//! runtime server inside it with `fabric_host`'s public API and the `fabric` CLI: a
//! two-turn conversation, several runtimes by id, streams refused, artifacts copied into
//! the host's `runtime.artifacts/<runtime_id>/<invocation_id>/`, uncertain outcomes.

use crate::support;

use std::path::Path;
use std::sync::Arc;

use crate::support::provider::{code, config_with, prepared, subprocess_descriptor, typed};
use fabric_config::{FabricConfig, RunRequest};
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

/// A scripted config whose environment is the `subprocess` provider (its descriptor in
/// `dir/providers`), environments under `dir/environments`, host artifacts in
/// `dir/host-artifacts`.
fn provider_config(dir: &Path, name: &str, settings: Value) -> (FabricConfig, RunOptions) {
    let descriptor = subprocess_descriptor(dir);
    let root = dir.join("environments");
    std::fs::create_dir_all(&root).expect("mkdir");
    let environment = json!({"settings": {"root": root}});
    let mut config = config_with(dir, name, settings, "subprocess", &descriptor, environment);
    config["runtime"]["artifacts"] = json!("host-artifacts");
    std::fs::write(dir.join("fabric.json"), config.to_string()).expect("write config");
    typed(dir, config)
}

fn conversation() -> Value {
    json!({"replies": [
        {"response": "Hello! You said: {input}"},
        {"response": "Turn {turn}. Just before this you said: \"{previous_input}\""}
    ]})
}

fn response(result: &fabric_config::result::RunResult) -> String {
    result.output["response"]
        .as_str()
        .expect("response")
        .to_owned()
}

#[test]
fn runtimes_in_a_provider_environment_run_through_its_runtime_server() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let (config, options) = provider_config(dir.path(), "remote", conversation());
    let fabric = Fabric::new();
    let (environment, directory) = prepared(&fabric, &config, &options);

    // Two runtimes by id in one environment.
    let first = Arc::new(
        fabric
            .start_runtime_in(&config, &environment, &options)
            .expect("start first"),
    );
    let second = fabric
        .start_runtime_in(&config, &environment, &options)
        .expect("start second");
    assert_ne!(first.runtime_id(), second.runtime_id());
    assert_eq!(first.info().environment.provider, "subprocess");

    // A two-turn conversation: the second turn sees the first.
    let turn1 = first
        .invoke(RunRequest::new("Hi, I am Ada."))
        .expect("turn 1");
    assert_eq!(response(&turn1), "Hello! You said: Hi, I am Ada.");
    assert_eq!(turn1.runtime_id, first.runtime_id());
    assert_eq!(turn1.metadata["environment_provider"], "subprocess");
    assert_eq!(turn1.metadata["adapter_runner"], "runtime_server");
    assert_eq!(turn1.events[0].kind, "runtime_start");
    let turn2 = first
        .invoke(RunRequest::new("What did I say?"))
        .expect("turn 2");
    assert_eq!(
        response(&turn2),
        "Turn 2. Just before this you said: \"Hi, I am Ada.\""
    );
    // The other runtime has its own conversation.
    let other = second.invoke(RunRequest::new("Bonjour")).expect("other");
    assert_eq!(response(&other), "Hello! You said: Bonjour");

    // Streams are refused with a code naming why; the runtime stays usable.
    let error = first
        .invoke_openai_stream(RunRequest::new("stream?"))
        .expect_err("openai stream");
    assert_eq!(code(error), "environment_stream_unsupported");
    let error = first
        .invoke_stream(RunRequest::new("stream?"))
        .expect_err("atof stream");
    assert_eq!(code(error), "environment_stream_unsupported");

    // Declared artifacts land in runtime.artifacts/<runtime_id>/<invocation_id>/.
    let mut request = RunRequest::new("with artifact");
    request.context.insert(
        "scripted".into(),
        json!({"artifact": {"name": "notes.txt", "kind": "text", "content": "made inside"}}),
    );
    let result = first.invoke(request).expect("artifact turn");
    let host_root = dir.path().join("host-artifacts");
    assert_eq!(
        result.artifacts.root.as_deref(),
        Some(host_root.to_str().expect("utf-8"))
    );
    let notes = result
        .artifacts
        .artifacts
        .iter()
        .find(|a| a.name == "notes.txt")
        .unwrap_or_else(|| panic!("notes artifact: {result:?}"));
    let expected = format!("{}/{}/notes.txt", first.runtime_id(), result.invocation_id);
    assert_eq!(notes.path, expected);
    assert_eq!(
        std::fs::read_to_string(host_root.join(&expected)).expect("copied artifact"),
        "made inside"
    );
    assert!(directory.join("artifacts/notes.txt").is_file());
    // The environment's own `.fabric/<runtime_id>/<invocation_id>/` files land flat in the
    // same directory, as a local runtime's: no nested `.fabric`.
    let invocation_dir = format!("{}/{}", first.runtime_id(), result.invocation_id);
    let stdout = result
        .artifacts
        .artifacts
        .iter()
        .find(|a| a.name == "stdout")
        .unwrap_or_else(|| panic!("stdout artifact: {result:?}"));
    assert_eq!(stdout.path, format!("{invocation_dir}/stdout.txt"));
    let inside = directory
        .join("artifacts/.fabric")
        .join(&invocation_dir)
        .join("stdout.txt");
    assert_eq!(
        std::fs::read(host_root.join(&stdout.path)).expect("copied stdout.txt"),
        std::fs::read(inside).expect("the environment keeps its own layout")
    );
    assert!(!host_root.join(&invocation_dir).join(".fabric").exists());

    // Stopping one runtime leaves the other running.
    let stopped = first.stop();
    assert!(stopped.error.is_none(), "{stopped:?}");
    let error = first.invoke(RunRequest::new("again")).expect_err("stopped");
    assert_eq!(code(error), "runtime_stopped");
    let still = second
        .invoke(RunRequest::new("Still there?"))
        .expect("second");
    assert_eq!(
        response(&still),
        "Turn 2. Just before this you said: \"Bonjour\""
    );
    assert!(second.stop().error.is_none());
    fabric.release_environment(&environment).expect("release");
    assert!(!directory.exists());
}

#[test]
fn uncertain_outcomes_are_never_replayed() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let (config, options) = provider_config(dir.path(), "remote", conversation());
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(&config, &options)
        .expect("prepare");

    // An invoke whose host crashed inside: effects unknown, the runtime is terminal.
    let runtime = fabric
        .start_runtime_in(&config, &environment, &options)
        .expect("start");
    let mut request = RunRequest::new("crash");
    request
        .context
        .insert("scripted".into(), json!({"crash": true}));
    let error = runtime.invoke(request).expect_err("crash");
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.code, "invoke_failed");
    assert_eq!(info.metadata["effects"], "unknown");
    assert!(info.message.contains("terminal"), "{}", info.message);
    let error = runtime
        .invoke(RunRequest::new("again"))
        .expect_err("terminal");
    assert_eq!(code(error), "runtime_failed");
    runtime.stop();

    // A start whose outcome is uncertain blocks further starts in that environment.
    let (failing, _) = provider_config(
        dir.path(),
        "remote",
        json!({"start_fail": {"code": "boom", "message": "scripted start failure"}}),
    );
    let error = fabric
        .start_runtime_in(&failing, &environment, &options)
        .expect_err("uncertain start");
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(
        (info.code.as_str(), info.metadata["effects"].as_str()),
        ("start_failed", Some("unknown"))
    );
    let error = fabric
        .start_runtime_in(&config, &environment, &options)
        .expect_err("blocked");
    assert_eq!(code(error), "cleanup_unconfirmed");
    fabric.release_environment(&environment).expect("release");
}

#[test]
fn fabric_run_with_a_provider_environment_releases_it_afterwards() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    provider_config(dir.path(), "remote", conversation());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["run", "fabric.json", "--input", "Hi from the CLI"])
        .current_dir(dir.path())
        .output()
        .expect("fabric run");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Hello! You said: Hi from the CLI"),
        "{stdout}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path().join("environments"))
        .expect("environments")
        .collect();
    assert!(left.is_empty(), "the environment is released: {left:?}");

    // the released environment's observation rides on the result, and the Gym export of that
    // result lists it with no `sandboxes` passed
    let result = support::stdout_json(&output);
    let carried = &result["metadata"]["sandbox_observation"];
    assert_eq!(
        (&carried["provider"], &carried["role"]),
        (&json!("subprocess"), &json!("agent")),
        "{result}"
    );
    let results = dir.path().join("results.jsonl");
    std::fs::write(&results, format!("{result}\n")).expect("results");
    let exported = support::fabric(&[
        "export",
        "gym",
        results.to_str().expect("utf-8"),
        "--task-id",
        "t",
        "--rollout-id",
        "r",
    ]);
    assert!(exported.status.success(), "{exported:?}");
    let bundle = &support::stdout_json(&exported)["ng_agent_observations"];
    let sandboxes: Vec<&Value> = bundle["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter(|record| record["kind"] == "sandbox" && record["provider"] == "subprocess")
        .collect();
    assert_eq!(sandboxes.len(), 1, "{bundle}");
    for member in [
        "sandbox_id",
        "resource_usage_source",
        "outcome",
        "wall_time_s",
    ] {
        assert_eq!(sandboxes[0][member], carried[member], "{member}: {bundle}");
    }
}
