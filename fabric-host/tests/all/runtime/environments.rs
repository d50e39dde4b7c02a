//! Prepared environments, request extensions and the upstream-style Python adapter.

use fabric_config::{ErrorInfo, RunRequest, Stage};
use fabric_host::Fabric;
use serde_json::{Value, json};

use super::fixtures::options;
use crate::support::{self, scripted_config};

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
/// (an interpreter with the upstream packages; a failure without it, tests/dependency.rs).
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
