//! Core-collected artifacts (issue 15 items 2 and 6) through the Rust API: per-invocation
//! `stdout.txt` / `stderr.txt` and the git workspace patch, on a real git checkout the
//! scripted adapter edits, adds and deletes files in.

use std::path::Path;
use std::process::Command;

use crate::support::{mode, scripted_config};
use fabric_config::RunRequest;
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn checkout(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("keep.txt"), "keep\n").expect("write");
    std::fs::write(dir.join("edit.txt"), "old\n").expect("write");
    std::fs::write(dir.join("gone.txt"), "bye\n").expect("write");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "base"]);
}

fn request(scripted: Value) -> RunRequest {
    let mut request = RunRequest::new("hi");
    request.context.insert("scripted".into(), scripted);
    request
}

fn names(result: &Value) -> Vec<(String, String, String)> {
    // No artifact root: the manifest may be empty or absent (result shapes are issue 15
    // item 7).
    result["artifacts"]["artifacts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap_or_default().to_owned(),
                a["kind"].as_str().unwrap_or_default().to_owned(),
                a["media_type"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn path_of(result: &Value, root: &Path, name: &str) -> std::path::PathBuf {
    let artifact = result["artifacts"]["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {result}"));
    root.join(artifact["path"].as_str().expect("path"))
}

fn kinds(result: &Value) -> Vec<String> {
    result["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn workspace_patch_applies_to_the_base_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    let root = dir.path().join("artifacts");
    std::fs::create_dir(&ws).expect("mkdir");
    checkout(&ws);
    let config = scripted_config(
        "artifacts",
        json!({}),
        json!({"environment": {"workspace": ws.to_str().expect("utf8"),
                               "artifacts": root.to_str().expect("utf8"),
                               "env": {"SECRET_VALUE": "hunter2-secret"}}}),
    );
    let options = RunOptions::with_base_dir(dir.path());
    let runtime = Fabric::new()
        .start_runtime(&config, &options)
        .expect("start");

    // Clean checkout: logs only, no patch, no event.
    let first =
        serde_json::to_value(runtime.invoke(request(json!({}))).expect("invoke")).expect("json");
    assert_eq!(
        names(&first),
        [("stdout".into(), "log".into(), "text/plain".into())]
    );
    assert!(!kinds(&first).contains(&"artifact_collect".to_owned()));
    let stdout = path_of(&first, &root, "stdout");
    assert_eq!(mode(&stdout), 0o600);
    let output: Value =
        serde_json::from_slice(&std::fs::read(&stdout).expect("stdout")).expect("json");
    assert_eq!(output, first["output"]);

    // The adapter edits, adds (text and binary) and deletes files, and writes to stderr.
    let edits = json!({
        "stderr": "working with hunter2-secret",
        "write_files": {
            "edit.txt": "new\n",
            "added/new.txt": "fresh\n",
            "blob.bin": {"bytes": [0, 1, 2, 255]},
            "gone.txt": null
        }
    });
    let second =
        serde_json::to_value(runtime.invoke(request(edits)).expect("invoke")).expect("json");
    assert_eq!(
        names(&second),
        [
            ("stdout".into(), "log".into(), "text/plain".into()),
            ("stderr".into(), "log".into(), "text/plain".into()),
            (
                "workspace_patch".into(),
                "patch".into(),
                "text/x-diff".into()
            ),
            ("workspace_status".into(), "log".into(), "text/plain".into()),
        ]
    );
    let inv = second["invocation_id"].as_str().expect("id");
    let rid = second["runtime_id"].as_str().expect("id");
    assert_eq!(
        second["artifacts"]["artifacts"][2]["path"],
        format!(".fabric/{rid}/{inv}/workspace.patch")
    );
    let stderr = std::fs::read_to_string(path_of(&second, &root, "stderr")).expect("stderr");
    assert_eq!(
        stderr, "working with ***\n",
        "redacted, this invocation only"
    );
    let collect = second["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["kind"] == "artifact_collect")
        .expect("artifact_collect event");
    assert_eq!(collect["metadata"]["reused"], false);
    assert_eq!(collect["metadata"]["truncated"], false);
    let status =
        std::fs::read_to_string(path_of(&second, &root, "workspace_status")).expect("status");
    assert_eq!(status, " M edit.txt\n D gone.txt\n?? added/\n?? blob.bin\n");
    let patch_path = path_of(&second, &root, "workspace_patch");
    assert_eq!(mode(&patch_path), 0o600);
    let patch = std::fs::read_to_string(&patch_path).expect("patch");
    assert!(patch.contains("GIT binary patch"), "{patch}");
    assert!(patch.contains("deleted file mode"), "{patch}");

    // Unchanged workspace: the same patch, reused without re-diffing.
    let third =
        serde_json::to_value(runtime.invoke(request(json!({}))).expect("invoke")).expect("json");
    let reused = third["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["kind"] == "artifact_collect")
        .expect("artifact_collect event");
    assert_eq!(reused["metadata"]["reused"], true);
    assert_eq!(
        std::fs::read_to_string(path_of(&third, &root, "workspace_patch")).expect("patch"),
        patch
    );
    // A further edit of an already-modified file is seen.
    let fourth = serde_json::to_value(
        runtime
            .invoke(request(json!({"write_files": {"edit.txt": "newer\n"}})))
            .expect("invoke"),
    )
    .expect("json");
    let newer = std::fs::read_to_string(path_of(&fourth, &root, "workspace_patch")).expect("patch");
    assert!(newer.contains("+newer"), "{newer}");
    runtime.stop();

    // SWE-style scoring: the patch applies to a fresh clone of the base commit and yields
    // the agent's tree.
    let clone = dir.path().join("clone");
    git(
        dir.path(),
        &["clone", "-q", ws.to_str().expect("utf8"), "clone"],
    );
    git(
        &clone,
        &["apply", "--binary", patch_path.to_str().expect("utf8")],
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("edit.txt")).expect("edit"),
        "new\n"
    );
    assert!(!clone.join("gone.txt").exists());
    assert_eq!(
        std::fs::read(clone.join("blob.bin")).expect("blob"),
        [0, 1, 2, 255]
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("added/new.txt")).expect("new"),
        "fresh\n"
    );
}

#[test]
fn nothing_is_collected_without_an_artifact_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    checkout(dir.path());
    let config = scripted_config(
        "artifacts",
        json!({}),
        json!({"environment": {"workspace": dir.path().to_str().expect("utf8")}}),
    );
    let result = Fabric::new()
        .run(
            &config,
            request(json!({"write_files": {"x.txt": "x"}})),
            &RunOptions::with_base_dir(dir.path()),
        )
        .expect("run");
    let result = serde_json::to_value(result).expect("json");
    assert!(names(&result).is_empty(), "{result}");
    assert!(!kinds(&result).contains(&"artifact_collect".to_owned()));
}

#[test]
fn a_workspace_outside_git_gets_logs_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("artifacts");
    let config = scripted_config(
        "artifacts",
        json!({}),
        json!({"environment": {"artifacts": root.to_str().expect("utf8")}}),
    );
    let result = Fabric::new()
        .run(
            &config,
            request(json!({"write_files": {"x.txt": "x"}})),
            &RunOptions::with_base_dir(dir.path()),
        )
        .expect("run");
    let result = serde_json::to_value(result).expect("json");
    assert_eq!(
        names(&result),
        [("stdout".into(), "log".into(), "text/plain".into())]
    );
}

/// Issue 34 item 5: each invocation's `stderr.txt` holds only what the host wrote while that
/// invocation ran (a partial line, written just before the answer, included); an invocation
/// that wrote nothing to stderr lists no `stderr` log.
#[test]
fn stderr_log_is_per_invocation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("artifacts");
    let config = scripted_config(
        "stderr-logs",
        json!({}),
        json!({"environment": {"artifacts": root.to_str().expect("utf8")}}),
    );
    let options = RunOptions::with_base_dir(dir.path());
    let runtime = Fabric::new()
        .start_runtime(&config, &options)
        .expect("start");
    let invoke = |scripted: Value| {
        serde_json::to_value(runtime.invoke(request(scripted)).expect("invoke")).expect("json")
    };
    let log_names = |result: &Value| -> Vec<String> {
        names(result)
            .into_iter()
            .filter(|(_, kind, _)| kind == "log")
            .map(|(name, _, _)| name)
            .collect()
    };

    let first = invoke(json!({"stderr": "first invocation"}));
    assert_eq!(log_names(&first), ["stdout", "stderr"]);
    let text = std::fs::read_to_string(path_of(&first, &root, "stderr")).expect("stderr");
    assert_eq!(text, "first invocation\n");

    let second = invoke(json!({"stderr": "second invocation"}));
    assert_eq!(log_names(&second), ["stdout", "stderr"]);
    let path = path_of(&second, &root, "stderr");
    let (inv, rid) = (
        second["invocation_id"].as_str().expect("id"),
        second["runtime_id"].as_str().expect("id"),
    );
    assert_eq!(path, root.join(format!(".fabric/{rid}/{inv}/stderr.txt")));
    assert_eq!(mode(&path), 0o600);
    let text = std::fs::read_to_string(&path).expect("stderr");
    assert_eq!(
        text, "second invocation\n",
        "only the second invocation's part"
    );

    let third = invoke(json!({}));
    assert_eq!(
        log_names(&third),
        ["stdout"],
        "nothing written: no stderr log"
    );
}

/// Issue 34 item 5: an invocation's `stderr.txt` keeps at most 4 MiB (docs/hosting.md,
/// "Bounds"); a cut file ends with the truncation line and its entry says `truncated`.
#[test]
fn stderr_log_is_bounded_and_marked_when_cut() {
    const CAP: usize = 4 * 1024 * 1024;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("artifacts");
    let config = scripted_config(
        "stderr-cap",
        json!({}),
        json!({"environment": {"artifacts": root.to_str().expect("utf8")}}),
    );
    let options = RunOptions::with_base_dir(dir.path());
    let runtime = Fabric::new()
        .start_runtime(&config, &options)
        .expect("start");
    // One line longer than the cap (the adapter adds the newline).
    let line = "x".repeat(CAP + 1000);
    let result = serde_json::to_value(
        runtime
            .invoke(request(json!({"stderr": line})))
            .expect("invoke"),
    )
    .expect("json");
    let entry = result["artifacts"]["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .find(|a| a["name"] == "stderr")
        .cloned()
        .expect("stderr entry");
    assert_eq!(entry["metadata"]["truncated"], true);
    let text = std::fs::read_to_string(root.join(entry["path"].as_str().expect("path")))
        .expect("stderr.txt");
    let marker = "\n[fabric: stderr.txt truncated, 1001 bytes dropped]\n";
    assert!(text.ends_with(marker), "{}", &text[text.len() - 80..]);
    assert_eq!(text.len(), CAP + marker.len());
}
