//! `fabric batch --capture-model-calls` (and its budgets) with a harness that calls its model
//! (`tests/fixtures/capture/model_caller.py`) against `fabric stub-model serve`: each item's
//! RunResult carries its `model_calls`, whose records are the calls the stub answered, and
//! the summary totals them.

use std::path::Path;

use serde_json::{Value, json};

use crate::stub_model::Stub;
use crate::support::{fabric, repo_root, stdout_json};

/// A config whose harness makes `calls` model calls per invocation.
fn config(dir: &Path, base_url: &str, calls: u32) -> String {
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "batch-capture"},
        "harness": {"adapter_id": "test.capture.model-caller", "settings": {"calls": calls}},
        "discovery": {"local_paths": [repo_root().join("tests/fixtures/capture")]},
        "models": {"default": {"provider": "openai", "model": "m", "base_url": base_url}},
    });
    let path = dir.join("fabric.json");
    std::fs::write(&path, config.to_string()).expect("config");
    path.to_string_lossy().into_owned()
}

fn run_batch(
    dir: &Path,
    stub: &Stub,
    (items, calls): (usize, u32),
    extra: &[&str],
) -> (Value, Vec<Value>) {
    let config = config(dir, &stub.base, calls);
    let items_path = dir.join("items.jsonl");
    let text: String = (0..items)
        .map(|i| {
            format!(
                "{}\n",
                json!({"id": format!("i{i}"), "input": format!("task {i}")})
            )
        })
        .collect();
    std::fs::write(&items_path, text).expect("items");
    let output = dir.join("results.jsonl");
    let mut args = vec![
        "batch",
        &config,
        "--items",
        items_path.to_str().expect("utf-8"),
        "--output",
        output.to_str().expect("utf-8"),
        "--concurrency",
        "2",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = fabric(&args);
    let summary = stdout_json(&out);
    let lines = std::fs::read_to_string(&output)
        .expect("results")
        .lines()
        .map(|line| serde_json::from_str(line).expect("line"))
        .collect();
    (summary, lines)
}

fn records(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("records")
        .lines()
        .map(|line| serde_json::from_str(line).expect("record"))
        .collect()
}

#[test]
fn each_item_carries_its_captured_calls_and_the_summary_totals_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stub = Stub::start(&["--reply", "captured answer"]);
    let (summary, lines) = run_batch(dir.path(), &stub, (3, 2), &["--capture-model-calls"]);
    assert_eq!(summary["succeeded"], 3, "{summary:#}");
    assert_eq!(
        summary["model_calls"],
        json!({"invocations": 3, "calls": 6}),
        "{summary:#}"
    );
    assert_eq!(lines.len(), 3);
    for line in &lines {
        let result = &line["result"];
        assert_eq!(result["output"]["response"], "captured answer", "{line:#}");
        let calls = &result["model_calls"];
        assert_eq!(calls["count"], 2, "{line:#}");
        let records = records(calls["path"].as_str().expect("records path"));
        assert_eq!(records.len(), 2);
        let id = line["id"].as_str().expect("id");
        let task = format!("task {}", id.trim_start_matches('i'));
        for (index, record) in records.iter().enumerate() {
            assert_eq!(record["call_index"], index);
            assert_eq!(record["invocation_id"], result["invocation_id"]);
            assert_eq!(record["status_code"], 200);
            assert_eq!(record["request"]["messages"][0]["content"], task.as_str());
            assert_eq!(
                record["response"]["choices"][0]["message"]["content"],
                "captured answer"
            );
            let text = record.to_string();
            assert!(!text.contains("sk-test"), "credentials are never recorded");
        }
    }
}

#[test]
fn without_the_flag_nothing_is_captured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stub = Stub::start(&[]);
    let (summary, lines) = run_batch(dir.path(), &stub, (2, 1), &[]);
    assert_eq!(summary["succeeded"], 2, "{summary:#}");
    assert!(summary.get("model_calls").is_none(), "{summary:#}");
    for line in &lines {
        assert!(line["result"].get("model_calls").is_none(), "{line:#}");
    }
}

#[test]
fn a_call_over_max_model_calls_is_refused_per_item() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stub = Stub::start(&[]);
    let (summary, lines) = run_batch(
        dir.path(),
        &stub,
        (2, 2),
        &["--capture-model-calls", "--max-model-calls", "1"],
    );
    assert_eq!(summary["failed"], 2, "{summary:#}");
    for line in &lines {
        let result = &line["result"];
        assert_eq!(result["status"], "failed", "{line:#}");
        let events: Vec<&str> = result["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter_map(|event| event["kind"].as_str())
            .collect();
        assert!(events.contains(&"budget_exceeded"), "{events:?}");
        assert_eq!(result["model_calls"]["count"], 1, "{line:#}");
    }
}

#[test]
fn budgets_need_capture_model_calls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stub = Stub::start(&[]);
    let config = config(dir.path(), &stub.base, 1);
    let out = fabric(&[
        "batch",
        &config,
        "--items",
        "-",
        "--output",
        dir.path().join("r.jsonl").to_str().expect("utf-8"),
        "--max-total-tokens",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(stdout_json(&out)["error"]["path"], "--max-total-tokens");
}
