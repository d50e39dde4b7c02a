//! Resource snapshots and invocation system stats through the Rust API, with the scripted
//! adapter (issue 7).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{mode, scripted_config, wait_until};
use fabric_config::RunRequest;
use fabric_config::agent::RunStatus;
use fabric_host::{ErrorClass, Fabric, RunOptions, RuntimeState};
use serde_json::{Value, json};

const MIB: f64 = 1024.0 * 1024.0;

fn request_with(input: &str, scripted: Value) -> RunRequest {
    let mut request = RunRequest::new(input);
    request.context.insert("scripted".into(), scripted);
    request
}

fn run(dir: &Path, extra: Value, scripted: Value) -> Value {
    let config = scripted_config("stats", json!({}), extra);
    let result = Fabric::new()
        .run(
            &config,
            request_with("hi", scripted),
            &RunOptions::with_base_dir(dir),
        )
        .expect("run");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    serde_json::to_value(&result).expect("json")
}

#[test]
fn default_stats_cover_every_group_and_reuse_the_after_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run(dir.path(), json!({}), json!({}));
    let stats = &result["system_stats"];
    assert_eq!(
        stats["collected_groups"],
        json!(["process", "cgroup.cpu", "cgroup.memory", "cgroup.pressure"])
    );
    assert_eq!(stats["before"]["status"], "available", "{stats}");
    assert_eq!(stats["after"]["status"], "available", "{stats}");
    assert_eq!(
        stats["before"]["snapshot"]["runtime_id"],
        result["runtime_id"]
    );
    assert!(stats["elapsed_seconds"].as_f64().expect("elapsed") >= 0.0);
    assert!(
        stats["cpu_time_seconds_estimate"].as_f64().is_some(),
        "{stats}"
    );
    assert!(stats["cgroup"].is_object(), "{stats}");
    assert!(stats.get("sampled").is_none(), "no sampling by default");
    assert_eq!(result["resource_snapshot"], stats["after"]["snapshot"]);
    assert!(
        result["resource_snapshot"]["process_count"]
            .as_u64()
            .expect("count")
            >= 1
    );
    assert!(
        stats_refs(&result).is_empty(),
        "files are written only when sampling"
    );
}

#[test]
fn explicit_null_disables_stats_but_keeps_the_resource_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run(dir.path(), json!({"system_stats": null}), json!({}));
    assert!(
        result.get("system_stats").is_none_or(Value::is_null),
        "{result}"
    );
    let snapshot = &result["resource_snapshot"];
    assert_eq!(snapshot["runtime_id"], result["runtime_id"]);
    assert!(snapshot["resident_memory_bytes"].as_u64().expect("rss") > 0);
}

#[test]
fn each_group_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    for group in ["process", "cgroup.cpu", "cgroup.memory", "cgroup.pressure"] {
        let result = run(
            dir.path(),
            json!({"system_stats": {"collect": [group]}}),
            json!({}),
        );
        let stats = &result["system_stats"];
        assert_eq!(stats["collected_groups"], json!([group]), "{stats}");
        let process = group == "process";
        let expected = if process {
            "available"
        } else {
            "not_collected"
        };
        assert_eq!(stats["before"]["status"], expected, "{group}: {stats}");
        assert_eq!(stats["after"]["status"], expected, "{group}: {stats}");
        assert_eq!(stats["cgroup"].is_object(), !process, "{group}: {stats}");
        assert_eq!(
            stats.get("cpu_time_seconds_estimate").is_some(),
            process,
            "{group}: {stats}"
        );
        // resource_snapshot is independent of the selected groups.
        assert_eq!(
            result["resource_snapshot"]["runtime_id"], result["runtime_id"],
            "{group}"
        );
    }
}

#[test]
fn sampling_sees_the_memory_peak() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run(
        dir.path(),
        json!({"system_stats": {"collect": ["process"], "sampling": {"interval_ms": 20, "max_samples": 1000}}}),
        json!({"memory_mib": [80, 400, 80], "step_ms": 400}),
    );
    let sampled = &result["system_stats"]["sampled"];
    let rss = &sampled["resident_memory_bytes"];
    let peak = rss["sampled_peak"].as_f64().expect("peak");
    assert!(peak >= 350.0 * MIB, "peak {} MiB: {sampled}", peak / MIB);
    let mean = rss["time_weighted_mean"].as_f64().expect("mean");
    assert!(mean < peak, "{sampled}");
    assert!(
        sampled["retained_samples"].as_u64().expect("n") >= 10,
        "{sampled}"
    );
    // The endpoints are instantaneous: after the memory was freed.
    let after = result["system_stats"]["after"]["snapshot"]["resident_memory_bytes"]
        .as_f64()
        .expect("after");
    assert!(after < 300.0 * MIB, "after {} MiB", after / MIB);
}

#[test]
fn burning_cpu_gives_a_positive_estimate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run(
        dir.path(),
        json!({"system_stats": {"collect": ["process"]}}),
        json!({"burn_cpu_ms": 300}),
    );
    let estimate = result["system_stats"]["cpu_time_seconds_estimate"]
        .as_f64()
        .expect("estimate");
    assert!(estimate > 0.05, "estimate {estimate}");
}

fn stats_refs(result: &Value) -> Vec<Value> {
    result["artifacts"]["artifacts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|a| {
            a["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("system_stats"))
        })
        .cloned()
        .collect()
}

#[test]
fn sampled_artifacts_sit_next_to_the_invocation_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("artifacts");
    let mut request = request_with("hi", json!({"sleep_ms": 150}));
    request.request_id = Some("req-stats-1".into());
    let config = scripted_config(
        "stats",
        json!({}),
        json!({"runtime": {"artifacts": root.to_str().expect("utf8")},
               "system_stats": {"sampling": {"interval_ms": 20, "max_samples": 3}}}),
    );
    let result = Fabric::new()
        .run(&config, request, &RunOptions::with_base_dir(dir.path()))
        .expect("run");
    let result = serde_json::to_value(&result).expect("json");
    let runtime_id = result["runtime_id"].as_str().expect("rid");
    let invocation_id = result["invocation_id"].as_str().expect("iid");
    let reference_dir = format!(".fabric/{runtime_id}/{invocation_id}");
    let refs = stats_refs(&result);
    let kinds: Vec<&str> = refs
        .iter()
        .map(|r| r["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["system_stats_samples", "system_stats_summary"]);
    assert_eq!(
        refs[0]["path"],
        format!("{reference_dir}/system-stats.jsonl").as_str()
    );
    assert_eq!(
        refs[1]["path"],
        format!("{reference_dir}/system-stats-summary.json").as_str()
    );
    let sampled = &result["system_stats"]["sampled"];
    assert_eq!(sampled["samples"], refs[0]);
    assert_eq!(sampled["summary"], refs[1]);
    assert_eq!(sampled["truncated"], true, "{sampled}");
    let invocation_dir = root.join(&reference_dir);
    assert!(invocation_dir.join("adapter-invocation.json").is_file());
    let samples = invocation_dir.join("system-stats.jsonl");
    let summary = invocation_dir.join("system-stats-summary.json");
    assert_eq!(mode(&samples), 0o600);
    assert_eq!(mode(&summary), 0o600);
    let text = std::fs::read_to_string(&samples).expect("samples");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    assert_eq!(lines.len(), 5, "2 endpoints + max_samples 3: {text}");
    assert_eq!(lines[0]["kind"], "before");
    assert_eq!(lines[4]["kind"], "after");
    for line in &lines {
        assert_eq!(line["runtime_id"], runtime_id);
        assert_eq!(line["invocation_id"], invocation_id);
        assert_eq!(line["request_id"], "req-stats-1");
    }
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).expect("summary")).expect("json");
    assert_eq!(summary["invocation_id"], invocation_id);
    assert_eq!(summary["request_id"], "req-stats-1");
}

#[test]
fn samples_survive_a_protocol_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("artifacts");
    let config = scripted_config(
        "stats",
        json!({}),
        json!({"runtime": {"artifacts": root.to_str().expect("utf8")},
               "system_stats": {"sampling": {"interval_ms": 20, "max_samples": 100}}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let error = runtime
        .invoke(request_with("x", json!({"protocol_fault": "non_json"})))
        .expect_err("protocol failure");
    assert_eq!(error.code(), "protocol_error");
    let home = runtime.fabric_home().to_path_buf();
    runtime.stop();
    let summaries: Vec<_> = std::fs::read_dir(&home)
        .expect("home")
        .filter_map(Result::ok)
        .map(|e| e.path().join("system-stats-summary.json"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(summaries.len(), 1, "summary written after the failure");
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(&summaries[0]).expect("read")).expect("json");
    assert_eq!(summary["system_stats"]["before"]["status"], "available");
    assert!(summaries[0].with_file_name("system-stats.jsonl").is_file());
}

#[test]
fn snapshot_during_a_long_invoke_returns_promptly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("stats", json!({}), json!({}));
    let runtime = Arc::new(
        Fabric::new()
            .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
            .expect("start"),
    );
    let invoking = Arc::clone(&runtime);
    let worker = std::thread::spawn(move || {
        invoking.invoke(request_with("slow", json!({"sleep_ms": 1500})))
    });
    wait_until("busy", || runtime.status().state == RuntimeState::Busy);
    let started = Instant::now();
    let snapshot = runtime.resource_snapshot().expect("snapshot");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(500), "took {took:?}");
    assert_eq!(
        runtime.status().state,
        RuntimeState::Busy,
        "invoke still running"
    );
    assert_eq!(snapshot.runtime_id, runtime.runtime_id());
    assert!(snapshot.process_count >= 1 && snapshot.resident_memory_bytes > 0);
    let result = worker.join().expect("join").expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded);
    runtime.stop();
}

#[test]
fn snapshot_after_stop_is_unavailable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("stats", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    runtime.resource_snapshot().expect("live snapshot");
    runtime.stop();
    let error = runtime.resource_snapshot().expect_err("stopped");
    assert_eq!(error.code(), "resource_observation_unavailable");
    assert_eq!(error.class(), ErrorClass::ResourceUnavailable);
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.metadata["reason"], "runtime_stopped");
}

#[test]
fn snapshot_counts_spawned_children() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("stats", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let alone = runtime.resource_snapshot().expect("snapshot").process_count;
    let result = runtime
        .invoke(request_with("kids", json!({"spawn_children": 3})))
        .expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    let with_children = runtime.resource_snapshot().expect("snapshot").process_count;
    assert_eq!(with_children, alone + 3, "children counted");
    runtime.stop();
}
