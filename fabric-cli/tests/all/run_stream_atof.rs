//! `fabric run --stream-atof` with a test adapter that publishes ATOF records to the
//! `nemo-fabric-stream` sink of its Relay config (tests/fixtures/atof-adapter): the records
//! routed to the invocation's request id come out as JSON lines, then the RunResult; the
//! collector's token reaches the adapter through its environment only.

use std::path::Path;

use crate::support::{fabric, repo_root, stdout_json};
use serde_json::{Value, json};

/// A config of the ATOF test adapter in `dir` (`relay`: with Relay telemetry).
fn config(dir: &Path, relay: bool) -> String {
    let descriptor_path = repo_root().join("tests/fixtures/atof-adapter/atof.fabric-adapter.json");
    let mut config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "atof-cli"},
        "harness": {"adapter_id": "test.fabric.atof"},
        "discovery": {"local_paths": [descriptor_path]},
        "environment": {"artifacts": dir.join("artifacts")},
        "runtime": {"timeout_seconds": 60}
    });
    if relay {
        config["telemetry"] = json!({"providers": {"relay": {}}});
        config["relay"] = json!({"observability": {"atof": {"enabled": true, "sinks": [
            {"type": "file", "name": "local", "path": "relay/atof.jsonl"},
            {"type": "stream", "name": "nemo-fabric-stream", "url": "http://example.invalid:1",
             "transport": "ndjson"}
        ]}}});
    }
    let path = dir.join("fabric.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn records_stream_as_lines_then_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true);
    let output = fabric(&["run", &config, "--input", "records:5", "--stream-atof"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let (result, records) = lines.split_last().expect("lines");
    assert_eq!(result["status"], "succeeded", "{result}");
    assert_eq!(result["output"]["response"], "posted 7");
    // Scope start (with this request id), five marks, scope end; the unowned mark is not
    // routed here.
    assert_eq!(records.len(), 7, "{text}");
    assert_eq!(records[0]["scope_category"], "start");
    assert_eq!(
        records[0]["metadata"]["nemo_fabric_request_id"],
        result["request_id"]
    );
    let names: Vec<&str> = records[1..6]
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["step-0", "step-1", "step-2", "step-3", "step-4"]);
    assert_eq!(records[6]["scope_category"], "end");
    // The Relay config the adapter read: the embedded collector's sink replaced the
    // configured one (other sinks kept), with the token only as a variable name.
    let root = Path::new(result["artifacts"]["root"].as_str().unwrap());
    let listed = result["artifacts"]["artifacts"].as_array().unwrap();
    let relay_config = listed
        .iter()
        .find(|a| a["name"] == "relay_config")
        .expect("relay_config artifact");
    let written =
        std::fs::read_to_string(root.join(relay_config["path"].as_str().unwrap())).unwrap();
    assert!(!written.contains("Bearer"), "{written}");
    assert!(!written.contains("example.invalid"), "{written}");
    let document: Value = serde_json::from_str(&written).unwrap();
    let sinks = document["relay"]["config"]["components"][0]["config"]["atof"]["sinks"]
        .as_array()
        .expect("sinks")
        .clone();
    assert_eq!(sinks.len(), 2, "{sinks:?}");
    assert_eq!(sinks[0]["name"], "local");
    let stream = &sinks[1];
    assert_eq!(stream["name"], "nemo-fabric-stream");
    assert_eq!(stream["transport"], "ndjson");
    assert!(
        stream["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    assert!(stream["url"].as_str().unwrap().ends_with("/v1/atof"));
    assert_eq!(
        stream["header_env"],
        json!({"Authorization": "FABRIC_RELAY_STREAM_AUTHORIZATION"})
    );
}

#[test]
fn streaming_without_relay_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), false);
    let output = fabric(&["run", &config, "--input", "hi", "--stream-atof"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "streaming_requires_relay");
    assert_eq!(error["error"]["path"], "options.streaming");
}

#[test]
fn the_documented_example_runs() {
    let example = repo_root().join("examples/relay-stream/fabric.json");
    let out = repo_root().join("examples/relay-stream/out");
    let output = fabric(&[
        "run",
        example.to_str().unwrap(),
        "--input",
        "records:2",
        "--stream-atof",
    ]);
    // What the run wrote (the example's artifact root) is not the checkout's business.
    let ignored = std::process::Command::new("git")
        .args(["check-ignore", "-q", "examples/relay-stream/out/x"])
        .current_dir(repo_root())
        .status();
    let _ = std::fs::remove_dir_all(&out);
    if let Ok(ignored) = ignored
        && repo_root().join(".git").exists()
    {
        assert!(ignored.success(), ".gitignore must cover examples/*/out/");
    }
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines[..4]
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["scope", "mark", "mark", "scope"]);
    assert_eq!(lines[4]["output"]["response"], "posted 4");
}
