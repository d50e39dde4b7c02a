//! `fabric batch` (issue 31) end to end with the scripted adapter: ids, concurrency,
//! retries, resume after SIGINT and SIGKILL, input errors naming the line, per-item
//! timeouts, `--items -`, `reuse`.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, ensure_scripted_adapter, stdout_json};

/// A scripted config and an items file holding `items` in a new directory.
fn setup(items: &[Value]) -> (tempfile::TempDir, String, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = support::scripted_config(dir.path(), "batch-test", json!({}));
    let items_path = dir.path().join("items.jsonl");
    let text: String = items.iter().map(|item| format!("{item}\n")).collect();
    std::fs::write(&items_path, text).expect("write items");
    let output = dir.path().join("results.jsonl");
    (dir, config, items_path, output)
}

/// `batch CONFIG --items ITEMS --output OUTPUT EXTRA...` (`items` may be `-`).
fn batch_args<'a>(
    config: &'a str,
    items: &'a Path,
    output: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "batch",
        config,
        "--items",
        items.to_str().expect("utf-8"),
        "--output",
        output.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    args
}

fn batch(config: &str, items: &Path, output: &Path, extra: &[&str]) -> Output {
    support::fabric(&batch_args(config, items, output, extra))
}

/// Starts `fabric batch` in the background (stdout and stderr piped; stdin piped when
/// `items` is `-`).
fn spawn(config: &str, items: &Path, output: &Path, extra: &[&str]) -> Child {
    ensure_scripted_adapter();
    let stdin = if items == Path::new("-") {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(batch_args(config, items, output, extra))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fabric")
}

/// Asserts `out` exited with `code`, showing its stderr otherwise.
fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The output's lines by id.
fn by_id(output: &Path) -> HashMap<String, Value> {
    lines(output)
        .into_iter()
        .map(|line| (line["id"].as_str().expect("id").to_owned(), line))
        .collect()
}

/// Every output line, parsed (a torn or non-JSON line fails the test).
fn lines(output: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(output).unwrap_or_default();
    assert!(text.is_empty() || text.ends_with('\n'), "torn last line");
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line {line:?}: {e}"))
        })
        .collect()
}

fn ids(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|line| line["id"].as_str().expect("id").to_owned())
        .collect()
}

fn sleepy(count: usize, ms: u64) -> Vec<Value> {
    (0..count)
        .map(|i| json!({"id": format!("s{i}"), "input": {"scripted": {"sleep_ms": ms}}}))
        .collect()
}

#[test]
fn two_hundred_items_at_concurrency_8_succeed_with_their_ids() {
    let items: Vec<Value> = (0..200)
        .map(|i| match i % 3 {
            0 => json!({"id": format!("item-{i}"), "input": format!("hello {i}")}),
            1 => json!({"request_id": format!("item-{i}"), "input": format!("hello {i}")}),
            _ => json!(format!("hello {i}")),
        })
        .collect();
    let (dir, config, items_path, output) = setup(&items);
    let out = batch(&config, &items_path, &output, &["--concurrency", "8"]);
    assert_exit(&out, 0);
    let summary = stdout_json(&out);
    assert_eq!(summary["items"], 200);
    assert_eq!(summary["succeeded"], 200);
    let lines = lines(&output);
    // id -> the input it must echo: `id`, `request_id`, or the line number.
    let want: HashMap<String, String> = (0..200)
        .map(|i| {
            let id = if i % 3 == 2 {
                (i + 1).to_string()
            } else {
                format!("item-{i}")
            };
            (id, format!("hello {i}"))
        })
        .collect();
    assert_eq!(lines.len(), 200);
    let got: HashSet<String> = ids(&lines).into_iter().collect();
    assert_eq!(got, want.keys().cloned().collect::<HashSet<_>>());
    for line in &lines {
        let id = line["id"].as_str().unwrap();
        assert_eq!(line["result"]["output"]["response"], want[id], "{id}");
        assert_eq!(line["attempts"], 1);
    }
    drop(dir);
}

#[test]
fn sleep_items_run_concurrently() {
    let (_dir, config, items_path, output) = setup(&sleepy(64, 200));
    let began = Instant::now();
    let out = batch(&config, &items_path, &output, &["--concurrency", "16"]);
    let wall = began.elapsed();
    assert_exit(&out, 0);
    assert_eq!(stdout_json(&out)["succeeded"], 64);
    // One after another: 64 × 200 ms = 12.8 s; 16 at once: 4 waves of 200 ms plus starts.
    assert!(wall < Duration::from_millis(6_400), "took {wall:?}");
}

#[test]
fn crashing_items_are_retried_and_their_attempts_recorded() {
    let items = vec![
        json!({"id": "crash", "input": {"scripted": {"crash": true}}}),
        json!({"id": "fine", "input": "ok"}),
        json!({"id": "failed", "context": {"scripted": {"fail": {"code": "tool_failed", "message": "no"}}}, "input": "x"}),
    ];
    let (_dir, config, items_path, output) = setup(&items);
    let out = batch(&config, &items_path, &output, &["--attempts", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let summary = stdout_json(&out);
    assert_eq!(
        (
            summary["succeeded"].clone(),
            summary["failed"].clone(),
            summary["errored"].clone()
        ),
        (json!(1), json!(1), json!(1))
    );
    assert_eq!(summary["retries"], 2);
    let by_id = by_id(&output);
    let crash = &by_id["crash"];
    assert_eq!(crash["attempts"], 3);
    assert_eq!(crash["error"]["code"], "host_crashed");
    let log = crash["attempt_log"].as_array().unwrap();
    assert_eq!(log.len(), 3);
    assert!(log.iter().all(|a| a["code"] == "host_crashed"), "{log:?}");
    // A failed RunResult is a result, not retried (no --retry-failed).
    assert_eq!(by_id["failed"]["attempts"], 1);
    assert_eq!(by_id["failed"]["result"]["status"], "failed");
    let again = tempfile::tempdir().unwrap();
    let output2 = again.path().join("r.jsonl");
    let out = batch(
        &config,
        &items_path,
        &output2,
        &["--attempts", "2", "--retry-failed"],
    );
    assert_eq!(out.status.code(), Some(1));
    let failed = lines(&output2)
        .into_iter()
        .find(|l| l["id"] == "failed")
        .unwrap();
    assert_eq!(failed["attempts"], 2);
}

#[test]
fn per_item_timeout_cancels_that_item_only() {
    let items = vec![
        json!({"id": "slow", "input": {"scripted": {"sleep_ms": 20_000}}}),
        json!({"id": "quick", "input": {"scripted": {"sleep_ms": 100}}}),
        json!({"id": "plain", "input": "x"}),
    ];
    let (_dir, config, items_path, output) = setup(&items);
    let began = Instant::now();
    let out = batch(
        &config,
        &items_path,
        &output,
        &["--timeout", "1.5", "--concurrency", "3"],
    );
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let by_id = by_id(&output);
    assert_eq!(by_id["slow"]["error"]["code"], "batch_item_timeout");
    assert_eq!(by_id["quick"]["result"]["status"], "succeeded");
    assert_eq!(by_id["plain"]["result"]["status"], "succeeded");
}

#[test]
fn bad_items_name_the_line_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let config = support::scripted_config(dir.path(), "batch-test", json!({}));
    let items = dir.path().join("items.jsonl");
    let output = dir.path().join("out.jsonl");
    std::fs::write(
        &items,
        "\"a\"\n\n{\"id\": \"x\", \"input\": \"y\"}\n{not json\n",
    )
    .unwrap();
    let out = batch(&config, &items, &output, &[]);
    assert_eq!(out.status.code(), Some(2));
    let error = &stdout_json(&out)["error"];
    assert_eq!(error["code"], "batch_item_invalid");
    assert!(
        error["message"].as_str().unwrap().contains("line 4"),
        "{error}"
    );
    assert_eq!(error["metadata"]["line"], 4);
    assert!(lines(&output).is_empty());
    std::fs::write(
        &items,
        "{\"id\": \"x\", \"input\": 1}\n\"b\"\n{\"request_id\": \"x\", \"input\": 2}\n",
    )
    .unwrap();
    let out = batch(&config, &items, &output, &[]);
    assert_eq!(out.status.code(), Some(2));
    let error = &stdout_json(&out)["error"];
    assert_eq!(error["code"], "batch_item_duplicate");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("line 3") && message.contains("line 1"),
        "{message}"
    );
    assert!(lines(&output).is_empty());
}

#[test]
fn stdin_items_stream_and_a_bad_line_stops_before_it_runs() {
    ensure_scripted_adapter();
    let dir = tempfile::tempdir().unwrap();
    let config = support::scripted_config(dir.path(), "batch-test", json!({}));
    let output = dir.path().join("out.jsonl");
    let run = |stdin: &str| {
        let mut child = spawn(&config, Path::new("-"), &output, &["--concurrency", "1"]);
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run("\"one\"\n\"two\"\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(ids(&lines(&output)), ["1", "2"]);
    let out = run("\"one\"\n\"two\"\n\"three\"\n{\"id\": \"3\"}\n");
    assert_eq!(out.status.code(), Some(2));
    let error = &stdout_json(&out)["error"];
    assert_eq!(error["code"], "batch_item_duplicate");
    assert!(
        error["message"].as_str().unwrap().contains("line 4"),
        "{error}"
    );
    // Resume skipped 1 and 2, ran 3, and stopped at line 4.
    assert_eq!(ids(&lines(&output)), ["1", "2", "3"]);
}

#[test]
fn reuse_hands_runtimes_to_the_next_item() {
    let items: Vec<Value> = (0..12).map(|i| json!(format!("q{i}"))).collect();
    let (_dir, config, items_path, output) = setup(&items);
    let out = batch(
        &config,
        &items_path,
        &output,
        &["--concurrency", "2", "--isolation", "reuse"],
    );
    assert_eq!(out.status.code(), Some(0));
    let runtimes: HashSet<String> = lines(&output)
        .iter()
        .map(|l| l["result"]["runtime_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(runtimes.len() <= 2, "{runtimes:?}");
    let fresh = tempfile::tempdir().unwrap();
    let output2 = fresh.path().join("o.jsonl");
    let out = batch(&config, &items_path, &output2, &["--concurrency", "2"]);
    assert_exit(&out, 0);
    let prewarmed = stdout_json(&out)["prewarmed"].as_u64().expect("prewarmed");
    assert!((1..=12).contains(&prewarmed), "{prewarmed}");
    let runtimes: HashSet<String> = lines(&output2)
        .iter()
        .map(|l| l["result"]["runtime_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(runtimes.len(), 12);
}

/// Starts `fabric batch` in the background, 3 at once, 5 s of grace.
fn spawn_batch(config: &str, items: &Path, output: &Path) -> Child {
    spawn(
        config,
        items,
        output,
        &["--concurrency", "3", "--grace", "5"],
    )
}

/// Waits (at most 20 s) until `output` holds `count` lines.
fn wait_lines(output: &Path, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while lines(output).len() < count {
        assert!(Instant::now() < deadline, "no {count} lines in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Resuming completes the set: every id exactly once, no torn line.
fn resume_completes(config: &str, items: &Path, output: &Path, total: usize) {
    let out = batch(config, items, output, &["--concurrency", "8"]);
    assert_exit(&out, 0);
    let summary = stdout_json(&out);
    let lines = lines(output);
    let ids = ids(&lines);
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate ids: {ids:?}");
    assert_eq!(ids.len(), total);
    assert_eq!(
        summary["skipped"].as_u64().unwrap() + summary["succeeded"].as_u64().unwrap(),
        total as u64
    );
    assert!(summary["skipped"].as_u64().unwrap() > 0);
}

#[test]
fn resume_after_sigint_completes_the_set() {
    let (_dir, config, items_path, output) = setup(&sleepy(30, 300));
    let child = spawn_batch(&config, &items_path, &output);
    wait_lines(&output, 3);
    signal(&child, "-INT");
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 130);
    let summary = stdout_json(&out);
    assert_eq!(summary["interrupted"], true);
    assert!(summary["cancelled"].as_u64().unwrap() > 0, "{summary}");
    assert_eq!(summary["items"], 30);
    let written = lines(&output).len();
    assert!(written < 30);
    assert_eq!(summary["succeeded"].as_u64().unwrap() as usize, written);
    resume_completes(&config, &items_path, &output, 30);
}

#[test]
fn resume_after_sigkill_completes_the_set() {
    let (_dir, config, items_path, output) = setup(&sleepy(30, 300));
    let mut child = spawn_batch(&config, &items_path, &output);
    wait_lines(&output, 3);
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert!(lines(&output).len() < 30);
    // A write cut short elsewhere (a full disk) leaves a torn tail: resume removes it.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&output)
        .unwrap();
    file.write_all(b"{\"id\": \"s29\", \"res").unwrap();
    drop(file);
    resume_completes(&config, &items_path, &output, 30);
}

#[test]
fn on_a_terminal_the_summary_is_a_table_and_json_with_the_flag() {
    let items: Vec<Value> = (0..6).map(|i| json!(format!("t{i}"))).collect();
    let (_dir, config, items_path, output) = setup(&items);
    let args = batch_args(&config, &items_path, &output, &[]);
    let (code, text) = support::on_terminal(&args, &[]);
    assert_eq!(code, Some(0), "{text}");
    for row in ["succeeded  6", "items/s", "latency", "p99"] {
        assert!(text.contains(row), "{row} in {text}");
    }
    let mut with_json = args.clone();
    with_json.push("--json");
    let (code, text) = support::on_terminal(&with_json, &[]);
    assert_eq!(code, Some(0), "{text}");
    let start = text.find('{').expect("a JSON summary");
    let summary: Value = serde_json::from_str(text[start..].trim()).expect("JSON");
    assert_eq!(summary["skipped"], 6);
}

#[test]
fn sigint_ends_a_stdin_batch_while_stdin_stays_open() {
    ensure_scripted_adapter();
    let dir = tempfile::tempdir().unwrap();
    let config = support::scripted_config(dir.path(), "batch-test", json!({}));
    let output = dir.path().join("out.jsonl");
    let mut child = spawn(&config, Path::new("-"), &output, &["--concurrency", "2"]);
    let mut stdin = child.stdin.take().unwrap();
    for item in sleepy(4, 100) {
        writeln!(stdin, "{item}").unwrap();
    }
    stdin.flush().unwrap();
    wait_lines(&output, 2);
    signal(&child, "-INT");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "fabric batch did not end after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    assert_eq!(status.code(), Some(130));
    assert!(!lines(&output).is_empty());
}

#[test]
fn the_summary_totals_system_stats_when_collected() {
    let (dir, config, items_path, output) = setup(&sleepy(6, 50));
    let out = batch(&config, &items_path, &output, &["--concurrency", "3"]);
    assert_exit(&out, 0);
    let stats = stdout_json(&out)["system_stats"].clone();
    assert_eq!(stats["invocations"], 6, "{stats}");
    assert!(stats["elapsed_seconds"].as_f64().unwrap() >= 0.3, "{stats}");
    // The scripted adapter sleeps: its CPU may round to 0 at the clock tick.
    assert!(
        stats["cpu_time_seconds"].as_f64().unwrap() >= 0.0,
        "{stats}"
    );
    assert!(
        stats["peak_resident_memory_bytes"].as_u64().unwrap() > 0,
        "{stats}"
    );

    // Not collected (`"system_stats": null`): no totals.
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("config")).expect("json");
    document["system_stats"] = Value::Null;
    std::fs::write(&config, document.to_string()).expect("write config");
    let fresh = dir.path().join("again.jsonl");
    let out = batch(&config, &items_path, &fresh, &[]);
    assert_exit(&out, 0);
    let summary = stdout_json(&out);
    assert_eq!(summary["succeeded"], 6);
    assert!(summary.get("system_stats").is_none(), "{summary}");
}

#[test]
fn no_prewarm_starts_every_fresh_item_cold() {
    let items: Vec<Value> = (0..4).map(|i| json!(format!("c{i}"))).collect();
    let (_dir, config, items_path, output) = setup(&items);
    let out = batch(
        &config,
        &items_path,
        &output,
        &["--concurrency", "2", "--no-prewarm"],
    );
    assert_exit(&out, 0);
    let summary = stdout_json(&out);
    assert_eq!(
        (summary["succeeded"].clone(), summary["prewarmed"].clone()),
        (json!(4), json!(0))
    );
}
