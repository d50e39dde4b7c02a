//! `fabric export gym`: the output of `fabric run --stream-atof` (ATOF records, then the
//! RunResult) exported as a NeMo Gym bundle and trajectory; input errors.

use std::path::Path;

use crate::support::{fabric, repo_root, stdout_json};
use serde_json::{Value, json};

/// A Relay-streaming config of the ATOF test adapter in `dir`.
fn config(dir: &Path) -> String {
    let descriptor = repo_root().join("tests/fixtures/atof-adapter/atof.fabric-adapter.json");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "gym-export"},
        "harness": {"adapter_id": "test.fabric.atof"},
        "discovery": {"local_paths": [descriptor]},
        "environment": {"artifacts": dir.join("artifacts")},
        "runtime": {"timeout_seconds": 60},
        "telemetry": {"providers": {"relay": {}}},
        "relay": {"observability": {"atof": {"enabled": true}}}
    });
    let path = dir.join("fabric.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

fn gaps<'a>(bundle: &'a Value, code: &str) -> Vec<&'a Value> {
    bundle["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["code"] == code)
        .collect()
}

#[test]
fn a_streamed_run_exports_to_gym() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let run = fabric(&["run", &config, "--input", "records:2", "--stream-atof"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let lines = dir.path().join("run.jsonl");
    std::fs::write(&lines, &run.stdout).unwrap();
    let result: Value =
        serde_json::from_str(String::from_utf8_lossy(&run.stdout).lines().last().unwrap()).unwrap();

    let args = [
        "export",
        "gym",
        lines.to_str().unwrap(),
        "--task-id",
        "task-7",
        "--rollout-id",
        "r-0",
    ];
    let output = fabric(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let out = stdout_json(&output);
    let bundle = &out["ng_agent_observations"];
    assert_eq!(bundle["source"], "nemo-fabric");
    let invocation = &bundle["records"][0];
    assert_eq!(invocation["kind"], "agent_invocation");
    assert_eq!(invocation["invocation_id"], result["invocation_id"]);
    assert_eq!(invocation["status"], "completed");
    // The ATOF root scope was found: tool and model calls were observed (there are none).
    assert!(gaps(bundle, "tool_calls_unobserved").is_empty(), "{bundle}");
    assert!(
        gaps(bundle, "atof_records_uncorrelated").is_empty(),
        "{bundle}"
    );
    let turn = &out["trajectory"]["turns"][0];
    assert_eq!(
        (turn["task_id"].as_str(), turn["rollout_id"].as_str()),
        (Some("task-7"), Some("r-0"))
    );
    assert_eq!(turn["answer"]["response"], "posted 4");
    assert_eq!(turn["step_count"], 0);

    // The same records from a separate --atof file give the same bundle.
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    let (records, last) = text.trim_end().rsplit_once('\n').unwrap();
    let (only_result, only_atof) = (dir.path().join("r.jsonl"), dir.path().join("a.jsonl"));
    std::fs::write(&only_result, last).unwrap();
    std::fs::write(&only_atof, records).unwrap();
    let output = fabric(&[
        "export",
        "gym",
        only_result.to_str().unwrap(),
        "--task-id",
        "task-7",
        "--rollout-id",
        "r-0",
        "--atof",
        only_atof.to_str().unwrap(),
    ]);
    assert_eq!(stdout_json(&output), out);
}

#[test]
fn input_errors_exit_2_with_codes() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let output = fabric(&[
        "export",
        "gym",
        missing.to_str().unwrap(),
        "--task-id",
        "t",
        "--rollout-id",
        "r",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["error"]["code"], "export_read_failed");

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "\n{\"status\": \"succeeded\"}\n").unwrap();
    let output = fabric(&[
        "export",
        "gym",
        bad.to_str().unwrap(),
        "--task-id",
        "t",
        "--rollout-id",
        "r",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "export_line_invalid");
    assert_eq!(error["error"]["metadata"]["line"], 2);

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let output = fabric(&[
        "export",
        "gym",
        empty.to_str().unwrap(),
        "--task-id",
        " ",
        "--rollout-id",
        "r",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let error = stdout_json(&output);
    assert_eq!(error["error"]["code"], "gym_id_blank");
    assert_eq!(error["error"]["path"], "--task-id");
}
