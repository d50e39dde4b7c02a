//! Differential test against upstream's host library: the same request lines go to this
//! adapter and to `fabric.python-echo` served by `nemo_fabric_adapters.common.lifecycle`
//! (0.5.0); the host-level behaviour must match line for line: which requests are answered,
//! with which operation, status, code and stage, and the exit status.
//!
//! Needs the upstream venv of `scripts/setup.sh` (or `FABRIC_TEST_PYTHON`: an interpreter with
//! nemo-fabric-adapters-common 0.5.0). Without it: a failure (a `SKIPPED` line with `FABRIC_ALLOW_SKIPS=1`).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Stands for a line of invalid UTF-8 bytes.
const INVALID_UTF8: &str = "<invalid utf-8>";

/// The upstream 0.5.0 packages and their skip policy (see `tests/upstream/mod.rs` at the
/// workspace root).
#[path = "../../../../tests/upstream/mod.rs"]
mod upstream;

/// An interpreter with nemo-fabric-adapters-common 0.5.0 (`FABRIC_TEST_PYTHON` or the
/// `.venv` of `scripts/setup.sh`); `None` after a loud skip, only with `FABRIC_ALLOW_SKIPS=1`.
fn python() -> Option<PathBuf> {
    upstream::require().map(|upstream| upstream.python().to_path_buf())
}

fn context(runtime_id: &str) -> Value {
    json!({
        "runtime_id": runtime_id,
        "invocation_id": "invocation-1",
        "request_id": "request-1",
        "environment": {
            "environment_id": "env-1",
            "provider": "local",
            "control_location": "in_env_control",
            "ownership": "caller_owned"
        },
        "artifacts": {}
    })
}

fn start(runtime_id: &str) -> String {
    json!({"operation": "start", "payload": {"agent_name": "t", "config": {}, "runtime_context": context(runtime_id)}})
        .to_string()
}

fn invoke(runtime_id: &str) -> String {
    json!({"operation": "invoke", "payload": {"runtime_context": context(runtime_id), "request": {"input": "x"}}})
        .to_string()
}

fn with_payload(operation: &str, payload: Value) -> String {
    json!({"operation": operation, "payload": payload}).to_string()
}

/// Sends every line, closes stdin, and returns the answered lines in a comparable form
/// plus the exit status.
fn drive(mut command: Command, lines: &[String]) -> (Vec<String>, Option<i32>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn host");
    let mut stdin = child.stdin.take().unwrap();
    let mut input = Vec::new();
    for line in lines {
        if line == INVALID_UTF8 {
            input.extend_from_slice(b"\xff\xfe{}");
        } else {
            input.extend_from_slice(line.as_bytes());
        }
        input.push(b'\n');
    }
    // A host that exits early closes its stdin; ignore the broken pipe.
    let _ = stdin.write_all(&input);
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    let summary = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("JSON response");
            let outcome = &v["outcome"];
            match outcome["status"].as_str() {
                Some("succeeded") => format!(
                    "{} succeeded result={}",
                    v["operation"].as_str().unwrap_or("?"),
                    outcome["output"]["status"]
                ),
                _ => format!(
                    "{} failed code={} stage={} retryable={}",
                    v["operation"].as_str().unwrap_or("?"),
                    outcome["error"]["code"],
                    outcome["error"]["stage"],
                    outcome["error"]["retryable"]
                ),
            }
        })
        .collect();
    (summary, status.code())
}

fn compare(name: &str, lines: &[String]) {
    let Some(python) = python() else { return };
    let ours = drive(
        Command::new(env!("CARGO_BIN_EXE_fabric-adapter-scripted")),
        lines,
    );
    let echo_src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../python-echo/src");
    let mut upstream = Command::new(python);
    upstream
        .args(["-m", "fabric_python_echo"])
        .env("PYTHONPATH", echo_src)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let theirs = drive(upstream, lines);
    assert_eq!(
        ours, theirs,
        "sequence `{name}`: ours (left) vs upstream host (right)"
    );
}

#[test]
fn malformed_and_misrouted_requests_match_upstream() {
    compare(
        "no-exit",
        &[
            invoke("R1"),
            "{oops".into(),
            INVALID_UTF8.into(),
            "[1, 2]".into(),
            "\"just a string\"".into(),
            with_payload("dance", json!({})),
            with_payload("invoke", json!([])),
            with_payload("invoke", json!({"runtime_context": {}})),
            with_payload("invoke", json!({"runtime_context": 0})),
            with_payload("invoke", json!({"runtime_context": {"runtime_id": ""}})),
            with_payload("invoke", json!({"runtime_context": "x"})),
            start("R1"),
            invoke("R2"),
            with_payload(
                "invoke",
                json!({"runtime_context": context("R1"), "request": {"input": "x", "bogus": 1}}),
            ),
            with_payload("invoke", json!({"runtime_context": context("R1")})),
            with_payload(
                "invoke_openai_stream",
                json!({"runtime_context": context("R1"), "request": {"input": "x"}}),
            ),
            invoke("R1"),
            // A truthy non-object runtime_context with an active runtime latches it.
            with_payload("invoke", json!({"runtime_context": ["x"]})),
            invoke("R1"),
            with_payload("stop", json!({"runtime_id": "R2"})),
            invoke("R1"),
        ],
    );
}

#[test]
fn exits_match_upstream() {
    compare(
        "start payload not an object",
        &[with_payload("start", json!([])), invoke("R1")],
    );
    compare(
        "missing operation means start",
        &["{}".into(), invoke("R1")],
    );
    compare(
        "start without runtime id",
        &[with_payload("start", json!({"config": {}})), invoke("R1")],
    );
    compare("second start", &[start("R1"), start("R1"), invoke("R1")]);
    compare(
        "stop before start",
        &[
            with_payload("stop", json!({"runtime_id": "R1"})),
            invoke("R1"),
        ],
    );
    compare(
        "stop without id",
        &[start("R1"), with_payload("stop", json!({})), invoke("R1")],
    );
    compare(
        "invalid config",
        &[
            with_payload(
                "start",
                json!({"config": {"bogus": 1}, "runtime_context": context("R1")}),
            ),
            invoke("R1"),
        ],
    );
    compare(
        "stop",
        &[
            start("R1"),
            invoke("R1"),
            with_payload("stop", json!({"runtime_id": "R1"})),
            invoke("R1"),
        ],
    );
    compare("eof", &[start("R1"), invoke("R1")]);
    compare("eof before start", &[]);
}

/// Response bytes equal Python's `json.dumps(response, sort_keys=True)` for tricky outputs.
/// Writes `input` to `command`'s stdin, closes it, and returns all of its stdout once it
/// exited successfully.
fn pipe_through(command: &mut Command, input: &str) -> String {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    out
}

#[test]
fn response_bytes_match_python_json_dumps() {
    let Some(python) = python() else { return };
    let outputs = [
        json!({"b": 1, "a": [true, false, null], "é": "x", "Z": {}, "aa": [], "": 0}),
        json!([
            "é",
            "\u{1F600}",
            "\u{2028}",
            "\u{0}\u{1f}\u{7f}",
            "tab\tquote\"back\\slash/",
            "\r\n"
        ]),
        json!([
            0.1,
            1.0,
            -0.0,
            1e16,
            1.5e16,
            1e-7,
            123.456,
            5e-324,
            1.7976931348623157e308,
            2.5e-5,
            0.0001
        ]),
        json!([
            0,
            -1,
            18446744073709551615u64,
            -9223372036854775808i64,
            9007199254740993u64
        ]),
        json!({"nested": {"z": [{"y": 1, "x": 2}], "k\u{e9}y": "v\u{e9}"}}),
        json!("plain"),
        json!(null),
    ];
    // Raw request text, so the hard-to-round decimals reach the parser as written.
    let raw_outputs: Vec<String> = outputs
        .iter()
        .map(Value::to_string)
        .chain(
            [
                "2.2250738585072011e-308",
                "1.00000000000000011102230246251565404236316680908203125",
                "9007199254740993.0",
                "[7.3177701707893310e+15, 1e23, 8.41e21, 2.675]",
            ]
            .map(String::from),
        )
        .collect();
    let replies: Vec<String> = raw_outputs
        .iter()
        .map(|o| format!("{{\"output\": {o}}}"))
        .collect();
    let start = format!(
        "{{\"operation\": \"start\", \"payload\": {{\"config\": {{\"harness\": {{\"settings\": {{\"replies\": [{}]}}}}}}, \"runtime_context\": {}}}}}",
        replies.join(", "),
        context("R1")
    );
    let lines: Vec<String> = std::iter::once(start)
        .chain(raw_outputs.iter().map(|_| invoke("R1")))
        .collect();
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let ours = pipe_through(
        Command::new(env!("CARGO_BIN_EXE_fabric-adapter-scripted")).stderr(Stdio::null()),
        &input,
    );
    // Python builds the same responses from the same request text and dumps them.
    let script = r#"
import json, sys
lines = sys.stdin.read().split("\n")
replies = json.loads(lines[0])["payload"]["config"]["harness"]["settings"]["replies"]
print(json.dumps({"operation": "start", "outcome": {"status": "succeeded", "output": None}}, sort_keys=True))
for reply in replies:
    result = {"status": "succeeded", "output": reply["output"]}
    print(json.dumps({"operation": "invoke", "outcome": {"status": "succeeded", "output": result}}, sort_keys=True))
"#;
    let theirs = pipe_through(Command::new(python).args(["-c", script]), &input);
    for (a, b) in ours.lines().zip(theirs.lines()) {
        assert_eq!(a, b);
    }
    assert_eq!(ours.lines().count(), raw_outputs.len() + 1);
    assert_eq!(ours, theirs);
}
