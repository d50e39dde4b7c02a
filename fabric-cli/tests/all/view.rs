//! `fabric view` (issue 32) through the CLI: fixture runs made with the scripted adapter
//! (Relay ATIF trajectory, sampled stats, an artifact, a workspace patch) and a batch with
//! failing items, served on 127.0.0.1:0 and read through the JSON API; the token, paths in
//! URLs, a non-loopback `--listen`, lines appended while it runs, 100,000 items.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::relay::relay_scripted_descriptor;
use crate::support::view::ViewServer;
use crate::support::{self, stdout_json};

/// A git checkout with one commit (the workspace whose patch the run collects).
fn git_workspace(dir: &Path) {
    std::fs::create_dir_all(dir).expect("workspace");
    std::fs::write(dir.join("a.txt"), "a\n").expect("a.txt");
    for args in [
        &["init", "-q"][..],
        &["add", "a.txt"],
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "init",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .expect("git (the workspace patch needs it)");
        assert!(status.success(), "git {args:?}");
    }
}

/// A Relay ATIF trajectory with a tool call and its result, the agent steps' timestamps,
/// model and token metrics, and a subagent the tool ran (its trajectory beside, `sub`).
fn trajectory() -> Value {
    json!({"schema_version": "ATIF-v1.4", "session_id": "s1", "agent": {"name": "scripted"},
    "steps": [
        {"step_id": 1, "source": "system", "message": "You list files."},
        {"step_id": 2, "source": "user", "message": "list the files",
         "timestamp": "2026-01-01T10:00:00Z"},
        {"step_id": 3, "source": "agent", "message": "Listing them.", "model_name": "stub/model",
         "timestamp": "2026-01-01T10:00:01.500Z",
         "metrics": {"prompt_tokens": 200, "completion_tokens": 12},
         "tool_calls": [{"tool_call_id": "call-1", "function_name": "list_files",
                         "arguments": {"path": "."}}],
         "observation": {"results": [{"source_call_id": "call-1", "content": "a.txt b.txt",
             "subagent_trajectory_ref": [{"session_id": "lister",
                                          "trajectory_path": "sub/lister.atif.json"}]}]}},
        {"step_id": 4, "source": "agent", "message": "There are two files.",
         "model_name": "stub/model", "timestamp": "2026-01-01T10:00:02Z",
         "metrics": {"prompt_tokens": 212, "completion_tokens": 25}}
    ]})
}

/// The subagent's own trajectory (`sub/lister.atif.json` beside the run's).
fn subagent_trajectory() -> Value {
    json!({"schema_version": "ATIF-v1.4", "session_id": "lister", "agent": {"name": "lister"},
    "steps": [
        {"step_id": 1, "source": "user", "message": "list ."},
        {"step_id": 2, "source": "agent", "message": "a.txt b.txt", "model_name": "stub/small",
         "metrics": {"prompt_tokens": 30, "completion_tokens": 4}}
    ]})
}

/// `fabric run` with Relay (the trajectory above), sampled stats, an artifact and a
/// workspace edit; its RunResult is written to `out/result.json`.
fn run_fixture(base: &Path) {
    let workspace = base.join("ws");
    git_workspace(&workspace);
    let relay = base.join("relay");
    std::fs::create_dir_all(&relay).expect("relay dir");
    let atif = relay.join("trajectory-s1.atif.json");
    std::fs::write(&atif, trajectory().to_string()).expect("atif");
    std::fs::create_dir_all(relay.join("sub")).expect("sub dir");
    std::fs::write(
        relay.join("sub/lister.atif.json"),
        subagent_trajectory().to_string(),
    )
    .expect("subagent atif");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "view-run"},
        "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": [
            {"output": {"response": "There are two files.",
                        "relay_artifacts": [{"kind": "atif", "path": atif}]}}
        ]}},
        "discovery": {"local_paths": [relay_scripted_descriptor(base)]},
        "environment": {"artifacts": base.join("art")},
        "telemetry": {"providers": {"relay": {}}},
        "relay": {"project": "view", "observability": {"atif": {"enabled": true}}},
        "system_stats": {"sampling": {"interval_ms": 10}},
        "runtime": {"timeout_seconds": 30}
    });
    let config_path = workspace.join("fabric.json");
    std::fs::write(&config_path, config.to_string()).expect("config");
    let request = json!({"input": "list the files", "context": {"scripted": {
        "sleep_ms": 300,
        "artifact": {"name": "notes.txt", "content": "hello notes"},
        "burn_cpu_ms": 100,
        "write_files": {"b.txt": "new file\n"}
    }}});
    let request_path = base.join("request.json");
    std::fs::write(&request_path, request.to_string()).expect("request");
    let output = support::fabric(&[
        "run",
        config_path.to_str().expect("utf-8"),
        "--request",
        request_path.to_str().expect("utf-8"),
        "--json",
    ]);
    let result = stdout_json(&output);
    assert_eq!(result["status"], "succeeded", "{}", result["error"]);
    let out = base.join("out");
    std::fs::create_dir_all(&out).expect("out");
    std::fs::write(out.join("result.json"), &output.stdout).expect("result");
    // A health-check report of the same config saved in the run's invocation directory.
    let check = support::fabric(&["check", config_path.to_str().expect("utf-8")]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    let stdout = result["artifacts"]["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .find(|artifact| artifact["name"] == "stdout")
        .expect("the stdout artifact");
    let invocation = Path::new(result["artifacts"]["root"].as_str().expect("root"))
        .join(stdout["path"].as_str().expect("path"));
    let invocation = invocation.parent().expect("invocation dir");
    std::fs::write(invocation.join("health.json"), &check.stdout).expect("health report");
    // Its NeMo Gym export (from a JSON-lines file of the results).
    let rollout = out.join("rollout.jsonl");
    std::fs::write(&rollout, format!("{result}\n")).expect("rollout");
    let export = support::fabric(&[
        "export",
        "gym",
        rollout.to_str().expect("utf-8"),
        "--task-id",
        "task-1",
        "--rollout-id",
        "rollout-1",
    ]);
    assert_eq!(export.status.code(), Some(0), "{export:?}");
    std::fs::write(out.join("gym.json"), &export.stdout).expect("gym export");
}

/// `fabric batch` of 20 items, every fourth failing with `tool_failed`; the lines go to
/// `out/batch/results.jsonl`, the summary to `results.summary.json` beside it.
fn batch_fixture(base: &Path) {
    let config_dir = base.join("batch-config");
    std::fs::create_dir_all(&config_dir).expect("config dir");
    let config = support::scripted_config(&config_dir, "view-batch", json!({}));
    let items: String = (0..20)
        .map(|i| {
            let mut scripted = json!({"sleep_ms": (i % 4) * 30,
                "usage": {"input_tokens": 10 + i, "output_tokens": 5, "total_tokens": 15 + i}});
            if i % 4 == 3 {
                scripted["fail"] = json!({"code": "tool_failed", "message": "no"});
            }
            format!(
                "{}\n",
                json!({"id": format!("item-{i:02}"), "input": format!("task {i}"),
                       "context": {"scripted": scripted}})
            )
        })
        .collect();
    let items_path = config_dir.join("items.jsonl");
    std::fs::write(&items_path, items).expect("items");
    let out = base.join("out/batch");
    std::fs::create_dir_all(&out).expect("batch out");
    let output = support::fabric(&[
        "batch",
        &config,
        "--items",
        items_path.to_str().expect("utf-8"),
        "--output",
        out.join("results.jsonl").to_str().expect("utf-8"),
        "--concurrency",
        "4",
        "--json",
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failed item exits 1: {output:?}"
    );
    let summary = stdout_json(&output);
    assert_eq!(summary["failed"], 5);
    std::fs::write(out.join("results.summary.json"), summary.to_string()).expect("summary");
}

/// The entry of `list` whose `path` ends with `suffix`.
fn at<'a>(list: &'a Value, suffix: &str) -> &'a Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|entry| entry["path"].as_str().is_some_and(|p| p.ends_with(suffix)))
        .unwrap_or_else(|| panic!("no path ending {suffix} in {list}"))
}

fn ids(items: &Value) -> Vec<&str> {
    items["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["id"].as_str().expect("id"))
        .collect()
}

#[test]
fn view_lists_runs_and_batches_and_serves_their_parts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path();
    run_fixture(base);
    batch_fixture(base);
    let view = ViewServer::start(&[base]);

    // The index lists the batch (with its summary), the run and its trajectory.
    let index = view.json("/api/index");
    let batch = at(&index["batches"], "out/batch/results.jsonl");
    assert_eq!(batch["items"], 20);
    assert_eq!(batch["counts"]["succeeded"], 15);
    assert_eq!(batch["counts"]["failed"], 5);
    assert_eq!(batch["summary"]["failed"], 5);
    assert_eq!(batch["running"], false);
    assert_eq!(index["totals"]["batches"], 1);
    let run = at(&index["runs"], "out/result.json");
    assert_eq!(run["kind"], "run_result");
    assert_eq!(run["status"], "succeeded");
    let trajectory = at(&index["trajectories"], "trajectory-s1.atif.json");
    assert_eq!(trajectory["kind"], "atif");
    assert_eq!(trajectory["run_id"], run["id"]);
    let gym = at(&index["gym_exports"], "out/gym.json");
    assert!(
        gym["records"].as_u64().is_some_and(|records| records > 0),
        "{gym}"
    );
    let exported = view.get(&format!(
        "/api/files/{}",
        gym["file_id"].as_str().expect("id")
    ));
    assert!(
        serde_json::from_slice::<Value>(&exported.body)
            .is_ok_and(|v| v["ng_agent_observations"].is_object())
    );
    // The invocation directory is the run's: not listed twice.
    assert_eq!(
        index["runs"].as_array().expect("runs").len(),
        1,
        "{}",
        index["runs"]
    );

    // Items: filtered, sorted, paged server-side.
    let batch_id = batch["id"].as_str().expect("id");
    let items = |query: &str| view.json(&format!("/api/batches/{batch_id}/items?{query}"));
    let failed = items("status=failed&sort=id");
    assert_eq!(failed["total"], 5);
    assert_eq!(
        ids(&failed),
        ["item-03", "item-07", "item-11", "item-15", "item-19"]
    );
    assert!(
        failed["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|item| { item["status"] == "failed" && item["error_code"] == "tool_failed" })
    );
    assert_eq!(items("error_code=tool_failed")["total"], 5);
    assert_eq!(items("q=item-1")["total"], 10);
    let by_tokens = items("sort=total_tokens&order=desc&limit=3");
    assert_eq!(by_tokens["total"], 20);
    assert_eq!(ids(&by_tokens), ["item-19", "item-18", "item-17"]);
    assert_eq!(by_tokens["items"][0]["total_tokens"], 34);
    let by_duration = items("sort=duration_ms&order=desc");
    let durations: Vec<u64> = by_duration["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["duration_ms"].as_u64().expect("duration"))
        .collect();
    assert!(durations.windows(2).all(|w| w[0] >= w[1]), "{durations:?}");
    let page = items("sort=id&offset=18&limit=5");
    assert_eq!(
        (page["total"].as_u64(), page["offset"].as_u64()),
        (Some(20), Some(18))
    );
    assert_eq!(ids(&page), ["item-18", "item-19"]);
    let bad = view.get(&format!("/api/batches/{batch_id}/items?sort=nope"));
    assert_eq!(bad.status, 400);
    assert!(String::from_utf8_lossy(&bad.body).contains("`sort`"));

    // Stats.
    let stats = view.json(&format!("/api/batches/{batch_id}/stats"));
    assert_eq!(stats["counts"]["failed"], 5);
    assert_eq!(stats["error_codes"], json!({"tool_failed": 5}));
    let bucketed: u64 = stats["latency_histogram"]
        .as_array()
        .expect("histogram")
        .iter()
        .map(|bucket| bucket["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(bucketed, 20);
    assert!(stats["latency_ms"]["p50"].as_u64() <= stats["latency_ms"]["p99"].as_u64());
    assert_eq!(
        stats["usage"]["total_tokens"],
        (0..20).map(|i| 15 + i).sum::<u64>()
    );
    assert!(
        stats["items_per_second"]
            .as_f64()
            .is_some_and(|rate| rate > 0.0)
    );

    // A failed item's run page.
    let item = view.json(&format!(
        "/api/runs/{}",
        failed["items"][0]["run_id"].as_str().expect("run id")
    ));
    assert_eq!(item["kind"], "batch_item");
    assert_eq!(item["status"], "failed");
    assert_eq!(item["error"]["code"], "tool_failed");

    // The run: conversation from the ATIF trajectory with the tool call, samples, patch.
    let detail = view.json(&format!("/api/runs/{}", run["id"].as_str().expect("id")));
    assert_eq!(detail["status"], "succeeded");
    assert_eq!(detail["input"], "list the files");
    assert_eq!(detail["conversation_source"], "atif");
    let conversation = detail["conversation"].as_array().expect("conversation");
    let roles: Vec<&str> = conversation
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    assert_eq!(conversation[2]["tool_calls"][0]["name"], "list_files");
    assert_eq!(conversation[2]["tool_calls"][0]["id"], "call-1");
    assert_eq!(conversation[3]["tool_call_id"], "call-1");
    assert_eq!(conversation[3]["content"], "a.txt b.txt");
    // The model call behind each assistant turn, from the step's timestamps and metrics.
    assert_eq!(
        conversation[2]["model_call"],
        json!({"latency_ms": 1500, "input_tokens": 200, "output_tokens": 12,
               "model": "stub/model"})
    );
    assert_eq!(conversation[4]["model_call"]["latency_ms"], 500);
    assert_eq!(conversation[4]["model_call"]["output_tokens"], 25);
    assert!(conversation[0]["model_call"].is_null());
    assert!(conversation[1]["model_call"].is_null());
    // The subagent the tool ran, nested under its result.
    assert_eq!(conversation[3]["subagent"], "lister");
    let children = conversation[3]["children"].as_array().expect("children");
    assert_eq!(children.len(), 2);
    assert_eq!(children[1]["role"], "assistant");
    assert_eq!(children[1]["content"], "a.txt b.txt");
    assert_eq!(children[1]["model_call"]["input_tokens"], 30);
    let samples = detail["system_stats"]["samples"]
        .as_array()
        .expect("samples");
    assert!(
        samples.len() >= 5,
        "sampled every 10 ms for 300 ms: {samples:?}"
    );
    assert!(
        samples
            .iter()
            .all(|s| s["rss_bytes"].as_u64().is_some_and(|b| b > 0))
    );
    assert!(detail["system_stats"]["summary"].is_object());
    assert!(detail["invocation"]["runtime_context"].is_object());
    // The health-check report saved beside the invocation.
    let health = detail["health"].as_array().expect("health");
    assert_eq!(health.len(), 1, "{health:?}");
    assert_eq!(health[0]["outcome"], "passed");
    assert_eq!(health[0]["schema_version"], "fabric.check/v1alpha1");

    let patch = &detail["patch"];
    let text = view.get(&format!(
        "/api/files/{}",
        patch["file_id"].as_str().expect("id")
    ));
    assert_eq!(text.status, 200);
    let diff = String::from_utf8_lossy(&text.body);
    assert!(
        diff.contains("diff --git a/b.txt b/b.txt") && diff.contains("+new file"),
        "{diff}"
    );
    assert_eq!(
        text.body.len() as u64,
        patch["size"].as_u64().expect("size")
    );

    // An artifact: preview, truncated preview, download.
    let notes = detail["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .find(|a| a["name"] == "notes.txt")
        .expect("the notes.txt artifact");
    assert_eq!(notes["text"], true);
    let notes_id = notes["file_id"].as_str().expect("file id");
    let preview = view.get(&format!("/api/files/{notes_id}"));
    assert_eq!(preview.body, b"hello notes");
    assert_eq!(preview.header("x-fabric-truncated"), None);
    let cut = view.get(&format!("/api/files/{notes_id}?max_bytes=5"));
    assert_eq!(cut.body, b"hello");
    assert_eq!(cut.header("x-fabric-truncated"), Some("true"));
    let download = view.get(&format!("/api/files/{notes_id}?download=1"));
    assert_eq!(download.body, b"hello notes");
    assert_eq!(
        download.header("content-disposition"),
        Some("attachment; filename=\"notes.txt\"")
    );

    // Compare the batch with itself: every item on both sides.
    let compared = view.json(&format!("/api/compare?a={batch_id}&b={batch_id}"));
    assert_eq!(compared["kind"], "batches");
    let rows = compared["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 20);
    assert!(
        rows.iter()
            .all(|row| row["a"]["status"] == row["b"]["status"])
    );
    drop(view);

    // The invocation directory alone is a run of its own, read from its files.
    let view = ViewServer::start(&[&base.join("art")]);
    let index = view.json("/api/index");
    let runs = index["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{}", index["runs"]);
    assert_eq!(runs[0]["kind"], "invocation");
    let detail = view.json(&format!(
        "/api/runs/{}",
        runs[0]["id"].as_str().expect("id")
    ));
    assert_eq!(detail["input"], "list the files");
    assert_eq!(detail["output"]["response"], "There are two files.");
    assert!(detail["stdout"]["file_id"].is_string());
    assert!(detail["patch"]["file_id"].is_string());
    assert!(
        !detail["system_stats"]["samples"]
            .as_array()
            .expect("samples")
            .is_empty()
    );
}

/// Peak resident memory of a process (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("VmHWM")
}

#[test]
fn view_streams_a_large_artifact_without_holding_it() {
    const SIZE: u64 = 512 * 1024 * 1024;
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path();
    // A sparse 512 MiB artifact listed by a RunResult.
    std::fs::File::create(base.join("big.bin"))
        .and_then(|file| file.set_len(SIZE))
        .expect("sparse file");
    let line: Value = serde_json::from_str(synthetic_line(1).trim()).expect("line");
    let mut result = line["result"].clone();
    result["artifacts"] = json!({"root": base, "artifacts": [
        {"name": "big.bin", "kind": "file", "path": "big.bin"}]});
    std::fs::write(base.join("result.json"), result.to_string()).expect("result");
    let view = ViewServer::start(&[base]);
    let index = view.json("/api/index");
    let run = view.json(&format!(
        "/api/runs/{}",
        index["runs"][0]["id"].as_str().expect("id")
    ));
    let artifact = &run["artifacts"][0];
    assert_eq!(artifact["size"], SIZE);
    let id = artifact["file_id"].as_str().expect("file id");
    let before = peak_rss_kib(view.pid());
    let download = view.get(&format!("/api/files/{id}?download=1"));
    assert_eq!(download.status, 200);
    assert_eq!(download.body.len() as u64, SIZE);
    assert!(download.body.iter().all(|&b| b == 0));
    let after = peak_rss_kib(view.pid());
    assert!(
        after < before + 64 * 1024,
        "the server's peak memory grew from {before} KiB to {after} KiB for a {SIZE}-byte download"
    );
    let preview = view.get(&format!("/api/files/{id}?max_bytes=100"));
    assert_eq!(preview.body.len(), 100);
    assert_eq!(preview.header("x-fabric-truncated"), Some("true"));
}

/// A batch line of item `i` with a minimal RunResult (`failed` every tenth item).
fn synthetic_line(i: usize) -> String {
    let status = if i % 10 == 9 { "failed" } else { "succeeded" };
    let result = json!({"agent_name": "a", "harness": "h", "adapter_kind": "process",
        "runtime_id": "runtime-1", "invocation_id": format!("invocation-{i}"),
        "request_id": format!("request-{i}"), "status": status, "output": {"response": "ok"},
        "usage": {"input_tokens": i % 100, "output_tokens": 1, "total_tokens": i % 100 + 1}});
    format!(
        "{}\n",
        json!({"id": format!("item-{i:06}"), "attempts": 1, "result": result,
               "attempt_log": [], "duration_ms": (i * 7919) % 10_000})
    )
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("open for append");
    file.write_all(text.as_bytes()).expect("append");
}

/// Polls `/api/index` until `done` holds (the rescan runs every second), at most 20 s.
fn index_until(view: &ViewServer, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let index = view.json("/api/index");
        if done(&index) {
            return index;
        }
        assert!(Instant::now() < deadline, "{what} within 20 s: {index}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn view_needs_its_token_and_never_serves_a_path_from_a_url() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path();
    std::fs::write(base.join("secret.txt"), "not served").expect("secret");
    std::fs::write(base.join("results.jsonl"), synthetic_line(0)).expect("batch");
    std::fs::write(base.join("bad.json"), "{not json").expect("bad");
    std::fs::write(base.join("garbage.jsonl"), "xx\n").expect("garbage");
    let atof = json!({"kind": "scope", "scope_category": "start", "uuid": "scope-1",
                      "name": "agent", "category": "agent", "timestamp": "2026-01-01T00:00:00Z"});
    std::fs::write(base.join("stream.atof.jsonl"), format!("{atof}\n")).expect("atof");
    // A run naming files outside the path: through a link, and by an absolute path.
    let outside = tempfile::tempdir().expect("outside");
    let elsewhere = outside.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "not served").expect("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, base.join("link.txt")).expect("link");
    let line: Value = serde_json::from_str(synthetic_line(3).trim()).expect("line");
    let mut result = line["result"].clone();
    result["artifacts"] = json!({"root": base, "artifacts": [
        {"name": "link", "kind": "file", "path": "link.txt"},
        {"name": "absolute", "kind": "file", "path": elsewhere},
        {"name": "inside", "kind": "file", "path": "secret.txt"}]});
    std::fs::write(base.join("result.json"), result.to_string()).expect("result");
    let view = ViewServer::start(&[base]);

    let index = view.json("/api/index");
    let run = view.json(&format!(
        "/api/runs/{}",
        at(&index["runs"], "result.json")["id"]
            .as_str()
            .expect("id")
    ));
    let artifacts = run["artifacts"].as_array().expect("artifacts");
    assert_eq!(
        artifacts[0]["file_id"],
        Value::Null,
        "a link out of the path"
    );
    assert_eq!(
        artifacts[1]["file_id"],
        Value::Null,
        "a file outside the path"
    );
    assert!(artifacts[2]["file_id"].is_string(), "a file under the path");

    for target in ["/", "/api/index", "/assets/index.html"] {
        assert_eq!(
            view.raw(target, None).status,
            401,
            "{target} without a token"
        );
        assert_eq!(
            view.raw(target, Some("0123")).status,
            401,
            "{target}, wrong token"
        );
    }
    let page = view.raw(&format!("/?token={}", view.token), None);
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains(&format!(
        "<meta name=\"fabric-token\" content=\"{}\">",
        view.token
    )));
    let secret = base.join("secret.txt");
    let secret = secret.to_str().expect("utf-8");
    for target in [
        "/api/files/..",
        "/api/files/%2e%2e",
        "/api/files/%2E%2E%2Fsecret.txt",
        "/api/files/..%2f..%2fetc%2fpasswd",
        "/../../etc/passwd",
        "/etc/passwd",
        &format!("/api/files/{secret}"),
        &format!("/api/files/{}", secret.replace('/', "%2F")),
        "/api/files//etc/passwd",
        "/assets/../Cargo.toml",
        "/assets/%2e%2e/Cargo.toml",
        "/api/files/f0123456789abcdef",
        "/api/runs/..",
        "/api/batches/../items",
    ] {
        let answer = view.get(target);
        assert_eq!(answer.status, 404, "{target}");
        assert!(!String::from_utf8_lossy(&answer.body).contains("not served"));
    }
    let answer = view.get("/api/index");
    assert_eq!(
        answer.header("content-security-policy"),
        Some(fabric_view::CONTENT_SECURITY_POLICY)
    );
    assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(answer.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(answer.header("cache-control"), Some("no-store"));
    // Garbage is skipped with a problem, never a crash.
    let index = answer.json();
    for name in ["bad.json", "garbage.jsonl"] {
        let problem = at(&index["problems"], name);
        assert!(
            problem["message"]
                .as_str()
                .is_some_and(|m| m.contains("JSON"))
        );
    }
    assert_eq!(at(&index["batches"], "results.jsonl")["items"], 1);
    assert_eq!(
        at(&index["trajectories"], "stream.atof.jsonl")["kind"],
        "atof"
    );
}

#[test]
fn view_refuses_a_non_loopback_listen_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = support::fabric(&[
        "view",
        dir.path().to_str().expect("utf-8"),
        "--listen",
        "0.0.0.0:0",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], "view_listen_refused");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("--listen")),
        "{error}"
    );
}

#[test]
fn view_shows_batch_lines_and_files_that_arrive_while_it_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path();
    let results = base.join("results.jsonl");
    let third = synthetic_line(2);
    let (torn, rest) = third.split_at(20);
    std::fs::write(
        &results,
        format!("{}{}{torn}", synthetic_line(0), synthetic_line(1)),
    )
    .expect("batch");
    let view = ViewServer::start(&[base]);
    let index = view.json("/api/index");
    let batch = at(&index["batches"], "results.jsonl");
    assert_eq!(batch["items"], 2, "a torn last line waits for its end");
    assert_eq!(batch["running"], true);
    let id = batch["id"].as_str().expect("id").to_owned();

    append(&results, &format!("{rest}{}", synthetic_line(9)));
    let index = index_until(&view, "the appended lines", |index| {
        at(&index["batches"], "results.jsonl")["items"] == 4
    });
    assert_eq!(
        at(&index["batches"], "results.jsonl")["counts"]["failed"],
        1
    );
    let failed = view.json(&format!("/api/batches/{id}/items?status=failed"));
    assert_eq!(ids(&failed), ["item-000009"]);
    // Still running: the rate is the one lines arrived at since the file was first read.
    let stats = view.json(&format!("/api/batches/{id}/stats"));
    assert!(
        stats["items_per_second"]
            .as_f64()
            .is_some_and(|rate| rate > 0.0),
        "{stats}"
    );
    assert_eq!(stats["summary"], Value::Null);

    // A summary arriving ends "running"; a new RunResult file appears as a run.
    std::fs::write(
        base.join("results.summary.json"),
        json!({"items": 4, "succeeded": 3, "failed": 1, "errored": 0, "wall_ms": 2000,
               "items_per_second": 2.0, "latency": {"p50_ms": 1, "p90_ms": 2, "p99_ms": 3}})
        .to_string(),
    )
    .expect("summary");
    let line: Value = serde_json::from_str(synthetic_line(5).trim()).expect("line");
    std::fs::write(base.join("one.json"), line["result"].to_string()).expect("result");
    let index = index_until(&view, "the summary and the new run", |index| {
        index["runs"].as_array().is_some_and(|runs| runs.len() == 1)
            && at(&index["batches"], "results.jsonl")["running"] == false
    });
    assert_eq!(
        at(&index["runs"], "one.json")["invocation_id"],
        "invocation-5"
    );
    let stats = view.json(&format!("/api/batches/{id}/stats"));
    assert_eq!(stats["items_per_second"], 2.0);
    assert_eq!(stats["wall_seconds"], 2.0);
}

#[test]
fn view_indexes_and_pages_a_batch_of_100000_items() {
    const ITEMS: usize = 100_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let results = dir.path().join("results.jsonl");
    let text: String = (0..ITEMS).map(synthetic_line).collect();
    std::fs::write(&results, text).expect("batch");
    let started = Instant::now();
    let view = ViewServer::start(&[dir.path()]);
    let indexed = started.elapsed();
    let index = view.json("/api/index");
    let batch = at(&index["batches"], "results.jsonl");
    assert_eq!(batch["items"], ITEMS);
    let id = batch["id"].as_str().expect("id");
    let asked = Instant::now();
    let page = view.json(&format!(
        "/api/batches/{id}/items?sort=duration_ms&order=desc&offset=50000&limit=200"
    ));
    let sorted = asked.elapsed();
    assert_eq!(page["total"], ITEMS);
    let rows = page["items"].as_array().expect("rows");
    assert_eq!(rows.len(), 200);
    assert!(
        rows.windows(2)
            .all(|w| w[0]["duration_ms"].as_u64() >= w[1]["duration_ms"].as_u64())
    );
    let asked = Instant::now();
    let next = view.json(&format!(
        "/api/batches/{id}/items?sort=duration_ms&order=desc&offset=50200&limit=200"
    ));
    let next_page = asked.elapsed();
    assert!(next["items"][0]["row"].as_u64().is_some());
    let asked = Instant::now();
    let failed = view.json(&format!("/api/batches/{id}/items?status=failed&limit=50"));
    let filtered = asked.elapsed();
    assert_eq!(failed["total"], ITEMS / 10);
    eprintln!(
        "fabric view, {ITEMS} items (debug build): started and indexed in {indexed:?}, \
         sorted page in {sorted:?}, the next page in {next_page:?}, filtered page in {filtered:?}"
    );
}
