//! The CLI as people use it (issue 12): readable output on a terminal, JSON when piped or with
//! `--json`, `--inputs` errors that say what a line must be, a host that dies at start named
//! with its cause. Terminal runs go through a pseudo-terminal made by `script` (util-linux).

use std::path::Path;
use std::process::Command;

use crate::support::{fabric, on_terminal, repo_root, stdout_json};
use serde_json::{Value, json};

fn hello() -> String {
    repo_root()
        .join("examples/hello/fabric.json")
        .to_string_lossy()
        .into_owned()
}

fn showcase(dir: &Path) -> String {
    // A copy, so that its artifacts land in the temporary directory.
    let config = dir.join("fabric.json");
    std::fs::copy(repo_root().join("examples/showcase/fabric.json"), &config).expect("copy");
    config.to_string_lossy().into_owned()
}

#[test]
fn run_on_a_terminal_prints_a_readable_result_and_json_when_asked_or_piped() {
    let (code, shown) = on_terminal(&["run", &hello(), "--input", "Hello, Fabric"], &[]);
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.starts_with("✓ succeeded · hello (fabric.scripted) · "),
        "{shown}"
    );
    assert!(shown.contains(" ms\n"), "time: {shown}");
    assert!(
        shown.contains("  response:   Hello! You said: Hello, Fabric\n"),
        "{shown}"
    );
    assert!(
        shown.contains("  usage:      12 input, 6 output, 18 total tokens\n"),
        "{shown}"
    );
    assert!(shown.contains("  invocation: invocation-"), "{shown}");
    // A one-line software evidence summary (docs/provenance.md).
    let software = format!(
        "  software:   fabric-core {} · 3 contexts, 3 entries · complete\n",
        env!("CARGO_PKG_VERSION")
    );
    assert!(shown.contains(&software), "{shown}");
    assert!(!shown.contains('{'), "no JSON on a terminal: {shown}");

    let (code, shown) = on_terminal(&["run", &hello(), "--input", "x", "--json"], &[]);
    assert_eq!(code, Some(0), "{shown}");
    let result: Value = serde_json::from_str(&shown).expect("--json prints the RunResult");
    assert_eq!(result["status"], "succeeded");
    assert!(result["execution"]["inventories"].is_array(), "{result}");
    assert!(!shown.contains("software:"), "no summary in --json output");
    assert!(result["events"].is_array(), "the full RunResult");

    let piped = fabric(&["run", &hello(), "--input", "x"]);
    assert_eq!(stdout_json(&piped)["status"], "succeeded");
}

#[test]
fn a_terminal_shows_artifact_paths_and_errors_with_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = showcase(dir.path());
    let request = repo_root().join("examples/showcase/request-artifact.json");
    let (code, shown) = on_terminal(
        &["run", &config, "--request", &request.to_string_lossy()],
        &[],
    );
    assert_eq!(code, Some(0), "{shown}");
    let artifact = dir.path().join("out/notes/meeting.txt");
    assert!(artifact.is_file(), "{shown}");
    assert!(
        shown.contains(&artifact.display().to_string()),
        "artifact path shown: {shown}"
    );

    let request = repo_root().join("examples/showcase/request-fail.json");
    let (code, shown) = on_terminal(
        &["run", &config, "--request", &request.to_string_lossy()],
        &[],
    );
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.starts_with("✗ failed · showcase"), "{shown}");
    assert!(
        shown.contains("  error:      invoke [tool_unavailable]: the calendar tool is offline\n"),
        "{shown}"
    );
    assert!(
        shown.contains("  hint:       the adapter marked this failure retryable"),
        "{shown}"
    );
}

#[test]
fn inputs_print_jsonl_when_piped_and_summary_lines_with_progress_on_a_terminal() {
    let inputs = repo_root().join("examples/hello/inputs.jsonl");
    let inputs = inputs.to_string_lossy();
    let piped = fabric(&["run", &hello(), "--inputs", &inputs]);
    assert_eq!(piped.status.code(), Some(0), "{piped:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&piped.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one RunResult per line"))
        .collect();
    assert_eq!(lines.len(), 3);

    let (code, shown) = on_terminal(&["run", &hello(), "--inputs", &inputs], &[]);
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("✓ #1 succeeded · ") && shown.contains("Hello! You said: Hi, I'm Ada."),
        "{shown}"
    );
    assert!(
        shown.contains("✓ #2 succeeded") && shown.contains("✓ #3 succeeded"),
        "{shown}"
    );
    assert!(shown.contains("3/3 inputs"), "progress bar: {shown}");
    assert!(
        !shown.contains("\"status\""),
        "no JSON on a terminal: {shown}"
    );
}

#[test]
fn inputs_files_without_requests_or_with_bad_lines_say_what_a_line_must_be() {
    let dir = tempfile::tempdir().expect("tempdir");
    let must_be = "each non-empty line must be one JSON value: a RunRequest object, or any other value (such as a string) used as the input";

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n  \n").expect("write");
    let output = fabric(&["run", &hello(), "--inputs", &empty.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], "invalid_request");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("holds no request"), "{message}");
    assert!(message.contains(must_be), "{message}");

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "\"fine\"\n{\"input\": \"x\",}\n").expect("write");
    let output = fabric(&["run", &hello(), "--inputs", &bad.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = &stdout_json(&output)["error"];
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains(
            "line 2: not JSON: trailing comma: JSON allows no `,` before `]` or `}` (column 15)"
        ),
        "{message}"
    );
    assert!(message.contains(must_be), "{message}");
    assert_eq!(error["metadata"]["line"], 2);
    assert_eq!(error["metadata"]["column"], 15);

    let shape = dir.path().join("shape.jsonl");
    std::fs::write(&shape, json!({"input": "x", "context": 5}).to_string()).expect("write");
    let output = fabric(&["run", &hello(), "--inputs", &shape.to_string_lossy()]);
    let error = &stdout_json(&output)["error"];
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("line 1: "), "{message}");
    assert!(message.contains(must_be), "{message}");
    assert_eq!(error["path"], "request.context");
}

/// A python adapter whose module the interpreter cannot import: the error names the cause
/// from the host's stderr and says how to fix it, as JSON and on a terminal.
#[test]
fn a_host_that_dies_at_start_shows_its_cause_and_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptor = json!({
        "contract_version": "fabric.adapter/v1alpha2",
        "adapter_id": "test.missing-module",
        "adapter_kind": "python",
        "runner": {"module": "fabric_test_module_that_does_not_exist"}
    });
    std::fs::write(
        dir.path().join("missing.fabric-adapter.json"),
        descriptor.to_string(),
    )
    .expect("descriptor");
    let config = dir.path().join("fabric.json");
    let body = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "missing"},
        "harness": {"adapter_id": "test.missing-module"},
        "discovery": {"local_paths": ["missing.fabric-adapter.json"]}
    });
    std::fs::write(&config, body.to_string()).expect("config");
    let config = config.to_string_lossy().into_owned();
    let python = std::env::var("FABRIC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());

    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["run", &config, "--input", "x"])
        .env("ADAPTER_PYTHON", &python)
        .output()
        .expect("run fabric");
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], "host_crashed", "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.starts_with("adapter host exited during start: ")
            && message.contains("No module named fabric_test_module_that_does_not_exist"),
        "{message}"
    );
    assert!(message.contains("set ADAPTER_PYTHON"), "{message}");

    let (code, shown) = on_terminal(
        &["run", &config, "--input", "x"],
        &[("ADAPTER_PYTHON", &python)],
    );
    assert_eq!(code, Some(3), "{shown}");
    assert!(
        shown.starts_with("✗ error: start [host_crashed]"),
        "{shown}"
    );
    assert!(
        shown.contains("  hint:       the adapter's Python package is not importable"),
        "{shown}"
    );
}

/// `validate --config-only` (no adapter consulted) still warns about an extension key that
/// nearly spells a field; with planning, every command rejects it (`agree.rs`).
#[test]
fn validate_suggests_the_field_an_extension_key_nearly_spells() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("fabric.json");
    let body = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "typo"},
        "harness": {"adapter_id": "fabric.scripted"},
        "runtime": {"max_turn": 3}
    });
    std::fs::write(&config, body.to_string()).expect("config");
    let output = fabric(&["validate", &config.to_string_lossy(), "--config-only"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: `runtime.max_turn` is not a field Fabric defines; it is passed to the adapter as an extension (did you mean `max_turns`?)"),
        "{stderr}"
    );
}

#[test]
fn help_texts_say_what_the_commands_do() {
    let help = fabric(&["help"]);
    assert_eq!(help.status.code(), Some(0), "{help:?}");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Exit codes: 0 ok; 1 a failed outcome"),
        "{text}"
    );

    let doctor = String::from_utf8_lossy(&fabric(&["help", "doctor"]).stdout).into_owned();
    assert!(
        doctor.contains("exit 0 when no check failed (warnings allowed), 1 when one did, 2 when"),
        "{doctor}"
    );
    assert!(
        doctor.contains("--base-dir") && doctor.contains("Default: the config file's directory"),
        "{doctor}"
    );
    let validate = String::from_utf8_lossy(&fabric(&["validate", "--help"]).stdout).into_owned();
    assert!(
        validate.contains("Default: print them as written"),
        "{validate}"
    );
    let run = String::from_utf8_lossy(&fabric(&["run", "--help"]).stdout).into_owned();
    assert!(
        run.contains("--json") && run.contains("readable on a terminal"),
        "{run}"
    );
    let inspect = String::from_utf8_lossy(&fabric(&["inspect", "--help"]).stdout).into_owned();
    assert!(
        inspect.contains("the descriptor discovery finds"),
        "{inspect}"
    );
}

/// `doctor` asks the interpreter that would run a python adapter whether it can import the
/// adapter's module (a bounded child process, only under doctor).
#[test]
fn doctor_flags_a_python_adapter_module_the_interpreter_cannot_import() {
    let dir = tempfile::tempdir().expect("tempdir");
    let python = std::env::var("FABRIC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let write = |name: &str, module: &str| {
        let descriptor = json!({
            "contract_version": "fabric.adapter/v1alpha2",
            "adapter_id": format!("test.{name}"),
            "adapter_kind": "python",
            "runner": {"module": module}
        });
        std::fs::write(
            dir.path().join(format!("{name}.fabric-adapter.json")),
            descriptor.to_string(),
        )
        .expect("descriptor");
        let config = dir.path().join(format!("{name}.json"));
        let body = json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": name},
            "harness": {"adapter_id": format!("test.{name}")},
            "discovery": {"local_paths": [format!("{name}.fabric-adapter.json")]}
        });
        std::fs::write(&config, body.to_string()).expect("config");
        config.to_string_lossy().into_owned()
    };
    let doctor = |config: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["doctor", config])
            .env("ADAPTER_PYTHON", &python)
            .env("PYTHONPATH", repo_root().join("adapters/python-echo/src"))
            .output()
            .expect("run fabric");
        let report = stdout_json(&output);
        let check = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|check| check["name"] == "requirement.python_module")
            .cloned()
            .unwrap_or_else(|| panic!("{report}"));
        (output.status.code(), check)
    };

    let (code, check) = doctor(&write("missing", "fabric_test_module_that_does_not_exist"));
    assert_eq!(code, Some(1), "{check}");
    assert_eq!(check["status"], "fail");
    assert_eq!(check["code"], "python_module_missing");
    assert_eq!(check["path"], "runner.module");
    let message = check["message"].as_str().expect("message");
    assert!(
        message.contains("cannot import module `fabric_test_module_that_does_not_exist`")
            && message.contains("No module named fabric_test_module_that_does_not_exist")
            && message.contains("set ADAPTER_PYTHON"),
        "{message}"
    );

    let (code, check) = doctor(&write("echo", "fabric_python_echo"));
    assert_eq!(check["status"], "pass", "{check}");
    assert_eq!(code, Some(0), "{check}");
}
