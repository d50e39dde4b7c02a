//! `fabric run --stream` with the scripted adapter: JSON lines when piped (chunks, then the
//! RunResult), the assistant text on a terminal (through `script`), and the failures.

use crate::support;

use std::process::Command;

use crate::support::{ensure_scripted_adapter, fabric};
use serde_json::{Value, json};

const REPLY: &str = "The quick brown fox jumps over the lazy dog.";

fn config(dir: &std::path::Path, stream: Value) -> String {
    support::scripted_config(
        dir,
        "cli-stream",
        json!({"replies": [REPLY], "stream": stream}),
    )
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn piped_stream_prints_chunk_lines_then_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), json!({"chunk_chars": 4}));
    let output = fabric(&["run", &config, "--input", "hi", "--stream"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let lines = lines(&output.stdout);
    let (result, chunks) = lines.split_last().expect("lines");
    assert_eq!(chunks.len(), REPLY.len().div_ceil(4));
    let text: String = chunks
        .iter()
        .map(|chunk| {
            assert_eq!(chunk["object"], "chat.completion.chunk");
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap_or("")
        })
        .collect();
    assert_eq!(text, REPLY);
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    // The last line is the RunResult, with the stop folded in as `fabric run` does.
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["output"]["response"], REPLY);
    let kinds: Vec<&str> = result["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|event| event["kind"].as_str())
        .collect();
    assert_eq!(kinds.last(), Some(&"runtime_stop"), "{kinds:?}");
    let chunk_id = format!("chatcmpl-{}", result["invocation_id"].as_str().unwrap());
    assert!(chunks.iter().all(|chunk| chunk["id"] == chunk_id.as_str()));
}

#[test]
fn a_broken_stream_is_a_protocol_error_with_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), json!({"fault": "gap", "chunk_chars": 4}));
    let output = fabric(&["run", &config, "--input", "hi", "--stream"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let lines = lines(&output.stdout);
    let error = &lines.last().expect("a last line")["error"];
    assert_eq!(error["code"], "openai_stream_protocol_error");
    assert_eq!(error["stage"], "invoke");
}

#[test]
fn stream_conflicts_with_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), json!({}));
    let inputs = dir.path().join("inputs.jsonl");
    std::fs::write(&inputs, "\"a\"\n").unwrap();
    let output = fabric(&[
        "run",
        &config,
        "--inputs",
        inputs.to_str().unwrap(),
        "--stream",
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

/// Terminal mode through `script` (a pseudo-terminal on stdout and stderr).
#[cfg(target_os = "linux")]
#[test]
fn terminal_stream_prints_the_text_then_the_readable_result() {
    ensure_scripted_adapter();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), json!({"chunk_chars": 3}));
    let command = format!(
        "'{}' run '{config}' --input hi --stream",
        env!("CARGO_BIN_EXE_fabric")
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
    // The streamed text on its own line, then the readable result of `fabric run`.
    let (streamed, rest) = text.split_once('\n').expect("a first line");
    assert_eq!(streamed, REPLY, "{text}");
    assert!(rest.starts_with("✓ succeeded"), "{text}");
    assert!(rest.contains(REPLY), "{text}");
    assert!(!rest.contains("{\n"), "no JSON on a terminal: {text}");
}
