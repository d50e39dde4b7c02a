//! Shared run options, requests, a busy runtime and the fake-host config.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fabric_config::{RunRequest, RunResult};
use fabric_host::{Fabric, HostError, RunOptions, Runtime, RuntimeState};
use serde_json::{Value, json};

use crate::support::scripted_config;

pub(crate) fn options(dir: &Path) -> RunOptions {
    RunOptions::with_base_dir(dir)
}

pub(crate) fn request_with(input: &str, scripted: Value) -> RunRequest {
    let mut request = RunRequest::new(input);
    request.context.insert("scripted".into(), scripted);
    request
}

/// Starts a scripted runtime and an invocation sleeping `sleep_ms` on another thread, and
/// waits (at most 10 s) until the runtime reports it busy.
pub(crate) fn start_busy(
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

/// A config whose adapter is the fake host (tests/all/support/fake_host.py) in `mode`.
pub(crate) fn fake_config(
    dir: &Path,
    mode: &str,
    env: Value,
    runtime: Value,
) -> fabric_config::FabricConfig {
    let python = std::env::var("FABRIC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/support/fake_host.py");
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
