//! `fabric run` end to end with the scripted adapter (and, with the upstream venv located by
//! `support::upstream`, the upstream-style python-echo adapter).

use crate::support;

use std::path::Path;
use std::process::Command;

use crate::support::{ensure_scripted_adapter, fabric, repo_root, stdout_json};
use serde_json::{Value, json};

/// A scripted config in `dir` (found through discovery.local_paths).
fn scripted_config(dir: &Path, settings: Value) -> String {
    support::scripted_config(dir, "cli-test", settings)
}

fn hello() -> String {
    repo_root()
        .join("examples/hello/fabric.json")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn readme_main_job_runs_without_credentials() {
    let output = fabric(&["run", &hello(), "--input", "Hi, I'm Ada."]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["status"], "succeeded");
    assert_eq!(
        result["output"]["response"],
        "Hello! You said: Hi, I'm Ada."
    );
    assert!(
        result["runtime_id"]
            .as_str()
            .expect("id")
            .starts_with("runtime-")
    );
    assert_eq!(result["usage"]["total_tokens"], 18);
    // One result shape on every surface, as upstream 0.5.0 maps it: without an artifact
    // root the manifest is `{"artifacts": [], "root": null}`, telemetry a (here empty)
    // list, usage and error metadata objects always present.
    assert_eq!(result["artifacts"], json!({"artifacts": [], "root": null}));
    assert_eq!(result["telemetry"], json!([]));
    assert_eq!(result["usage"]["metadata"], json!({}));
    let kinds: Vec<&str> = result["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(
        kinds,
        [
            "runtime_start",
            "invocation_start",
            "invocation_end",
            "runtime_stop"
        ]
    );
}

#[test]
fn inputs_run_one_runtime_in_order() {
    let output = fabric(&[
        "run",
        &hello(),
        "--inputs",
        &repo_root()
            .join("examples/hello/inputs.jsonl")
            .to_string_lossy(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("utf8");
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("one compact JSON per line"))
        .collect();
    assert_eq!(lines.len(), 3);
    let runtime = &lines[0]["runtime_id"];
    assert!(
        lines.iter().all(|r| &r["runtime_id"] == runtime),
        "one runtime"
    );
    let turns: Vec<u64> = lines
        .iter()
        .map(|r| r["output"]["turn"].as_u64().expect("turn"))
        .collect();
    assert_eq!(turns, [1, 2, 3]);
    assert_eq!(
        lines[1]["output"]["response"],
        "Turn 2. Just before this you said: \"Hi, I'm Ada.\""
    );
}

#[test]
fn request_file_and_failed_result_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    let request = dir.path().join("request.json");
    std::fs::write(
        &request,
        json!({"input": "x", "request_id": "req-cli-1",
               "context": {"scripted": {"fail": {"code": "tool_failed", "message": "a tool failed"}}}})
        .to_string(),
    )
    .expect("request");
    let output = fabric(&["run", &config, "--request", &request.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["status"], "failed");
    assert!(result["error"]["metadata"].is_object(), "{result}");
    assert_eq!(result["request_id"], "req-cli-1");
    assert_eq!(result["error"]["code"], "tool_failed");
    assert_eq!(result["error"]["stage"], "invoke");
}

#[test]
fn request_overrides_reach_the_adapter_as_extensions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({"replies": ["zero", "one"]}));
    let write = |name: &str, request: Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, request.to_string()).expect("request");
        path.to_string_lossy().into_owned()
    };
    let ok = write(
        "ok.json",
        json!({"input": "x", "overrides": {"temperature": 0.5, "reply_index": 1}, "ignored_key": 1}),
    );
    let output = fabric(&["run", &config, "--request", &ok]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["output"]["response"], "one");
    assert_eq!(result["output"]["metadata"]["temperature"], 0.5);

    let bad = write(
        "bad.json",
        json!({"input": "x", "overrides": {"temperature": "s3cret-sentinel"}}),
    );
    let output = fabric(&["run", &config, "--request", &bad]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "request_extension_invalid");
    assert_eq!(error["error"]["stage"], "invoke");
    assert_eq!(
        error["error"]["metadata"]["path"],
        "request.extensions.temperature"
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("s3cret-sentinel"));

    let shape = write("shape.json", json!({"input": "x", "overrides": [1]}));
    let output = fabric(&["run", &config, "--request", &shape]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "invalid_request");
    assert_eq!(error["error"]["metadata"]["path"], "request.overrides");
}

#[test]
fn config_errors_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").expect("write");
    let output = fabric(&["run", &bad.to_string_lossy(), "--input", "x"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(stdout_json(&output)["error"]["code"].is_string());

    let missing = dir.path().join("missing-adapter.json");
    std::fs::write(
        &missing,
        json!({"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "m"},
               "harness": {"adapter_id": "no.such.adapter"}})
        .to_string(),
    )
    .expect("write");
    let output = fabric(&["run", &missing.to_string_lossy(), "--input", "x"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(stdout_json(&output)["error"]["code"], "adapter_not_found");

    let config = scripted_config(dir.path(), json!({}));
    let inputs = dir.path().join("inputs.jsonl");
    std::fs::write(&inputs, "\"ok\"\n{broken\n").expect("write");
    let output = fabric(&["run", &config, "--inputs", &inputs.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "invalid_request");
    assert_eq!(error["error"]["metadata"]["line"], 2);

    // A request file is held to the same rules as a request through the C ABI.
    let blank_id = dir.path().join("blank-id.json");
    std::fs::write(
        &blank_id,
        json!({"input": "x", "request_id": "  "}).to_string(),
    )
    .expect("write");
    let output = fabric(&["run", &config, "--request", &blank_id.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(stdout_json(&output)["error"]["path"], "request.request_id");

    let output = fabric(&["run", &config]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn host_crash_exits_3_with_structured_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    let request = dir.path().join("request.json");
    std::fs::write(
        &request,
        json!({"input": "x", "context": {"scripted": {"crash": true}}}).to_string(),
    )
    .expect("request");
    let output = fabric(&["run", &config, "--request", &request.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "host_crashed");
    assert_eq!(error["error"]["stage"], "invoke");
}

#[test]
fn start_failure_exits_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(
        dir.path(),
        json!({"start_fail": {"code": "harness_unavailable", "message": "no harness"}}),
    );
    let output = fabric(&["run", &config, "--input", "x"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "harness_unavailable");
    assert_eq!(error["error"]["stage"], "start");
}

/// Issue 21 item 8: `--start-timeout` bounds the host's answer to `start`, and the error
/// reports the timeout that applied.
#[test]
fn start_timeout_is_configurable_and_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({"start_delay_ms": 20_000}));
    let began = std::time::Instant::now();
    let output = fabric(&["run", &config, "--input", "x", "--start-timeout", "0.5"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert!(
        began.elapsed() < std::time::Duration::from_secs(15),
        "bounded by the option"
    );
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], "timeout", "{error}");
    assert_eq!(error["stage"], "start");
    assert_eq!(error["metadata"]["timeout_ms"], 500);
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("500 ms"),
        "{error}"
    );

    for bad in ["0", "-1", "NaN", "inf"] {
        let output = fabric(&["run", &config, "--input", "x", "--start-timeout", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}: {output:?}");
        let error = &stdout_json(&output)["error"];
        assert_eq!(error["code"], "invalid_timeout_seconds", "{bad}");
        assert_eq!(error["path"], "--start-timeout", "{bad}");
    }
}

pub(crate) fn python_path() -> std::ffi::OsString {
    let src = repo_root().join("adapters/python-echo/src");
    let mut paths = vec![src];
    if let Some(existing) = std::env::var_os("PYTHONPATH") {
        paths.extend(std::env::split_paths(&existing));
    }
    std::env::join_paths(paths).expect("PYTHONPATH")
}

#[test]
fn upstream_style_python_adapter_runs_unchanged() {
    // An interpreter with nemo-fabric-adapters-common 0.5.0 (a failure without it, tests/dependency.rs).
    let Some(upstream) = support::upstream::require() else {
        return;
    };
    let python = upstream.python();
    let config = repo_root().join("examples/python-echo/fabric.json");
    if !config.exists() || !repo_root().join("adapters/python-echo").exists() {
        panic!("examples/python-echo or adapters/python-echo is missing");
    }
    ensure_scripted_adapter();
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["run", &config.to_string_lossy(), "--inputs"])
        .arg(repo_root().join("examples/python-echo/inputs.jsonl"))
        .env("ADAPTER_PYTHON", python)
        // Importable without `pip install -e adapters/python-echo` too.
        .env("PYTHONPATH", python_path())
        .output()
        .expect("run fabric");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("utf8");
    let results: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|r| r["status"] == "succeeded"),
        "{results:?}"
    );
    assert_eq!(results[0]["adapter_kind"], "python");
    assert_eq!(results[0]["runtime_id"], results[1]["runtime_id"]);
}

/// `fabric … | head -1`: the reader closes the pipe after one line. The command neither
/// panics nor prints to stderr, and `--inputs` stops invoking and stops its runtime.
#[test]
fn closed_stdout_pipe_is_quiet() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config(dir.path(), json!({}));
    let inputs = dir.path().join("inputs.jsonl");
    let lines: Vec<String> = (0..200)
        .map(|i| json!(format!("input {i}")).to_string())
        .collect();
    std::fs::write(&inputs, lines.join("\n")).expect("inputs");
    let commands = [
        vec!["run", hello().leak(), "--input", "Hello"],
        vec!["schema", "sdk/run-result"],
        vec![
            "run",
            config.clone().leak(),
            "--inputs",
            inputs.to_str().expect("utf8"),
        ],
    ];
    for (index, args) in commands.iter().enumerate() {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fabric");
        let stdout = child.stdout.take().expect("stdout");
        if index == 2 {
            // Read one JSONL result, then close the pipe while results keep coming.
            let mut first = String::new();
            BufReader::new(stdout)
                .read_line(&mut first)
                .expect("first line");
            assert!(first.starts_with('{'), "{args:?}: {first}");
        } else {
            // Closed before the command writes anything: its first write fails (EPIPE).
            drop(stdout);
        }
        let output = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            output.status.code().is_some(),
            "{args:?}: killed by a signal"
        );
        assert!(output.status.code() != Some(101), "{args:?}: {stderr}");
    }
}

/// Issue 21 item 10: hosts run with umask 077, whatever the caller's umask, so directories
/// and files the adapter creates are not world-listable or world-readable.
#[test]
fn adapter_created_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let config_path = scripted_config(dir.path(), json!({}));
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).expect("config"))
            .expect("json");
    config["environment"] = json!({"workspace": "ws"});
    std::fs::write(&config_path, config.to_string()).expect("config");
    std::fs::create_dir(dir.path().join("ws")).expect("ws");
    let request = dir.path().join("request.json");
    std::fs::write(
        &request,
        json!({"input": "x", "context": {"scripted": {"write_files": {"made/file.txt": "x"}}}})
            .to_string(),
    )
    .expect("request");
    // A permissive caller umask must not reach the adapter host.
    let output = Command::new("sh")
        .arg("-c")
        .arg("umask 022; exec \"$0\" run \"$1\" --request \"$2\"")
        .arg(env!("CARGO_BIN_EXE_fabric"))
        .arg(&config_path)
        .arg(&request)
        .output()
        .expect("run fabric");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    let made = dir.path().join("ws/made");
    assert_eq!(mode(&made), 0o700, "adapter-created directory");
    assert_eq!(mode(&made.join("file.txt")), 0o600, "adapter-created file");
}
