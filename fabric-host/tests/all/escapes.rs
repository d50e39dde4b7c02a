//! No escape through what an adapter controls (issue 33, item 1): the core never writes its
//! own files through a symbolic link the adapter planted under its artifact root or
//! FABRIC_HOME, and the scripted adapter's `write_files` never edits through one.

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::support::scripted_config;
use fabric_config::RunRequest;
use fabric_config::agent::RunStatus;
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn core_files_are_never_written_through_a_link_the_adapter_planted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("keep.txt"), "keep").expect("write");
    let root = dir.path().join("artifacts");
    let config = scripted_config(
        "escapes",
        json!({}),
        json!({"environment": {"artifacts": root.to_str().expect("utf8")}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let first = runtime.invoke(RunRequest::new("one")).expect("invoke");
    assert_eq!(first.status, RunStatus::Succeeded);

    // What an adapter can do: swap its FABRIC_HOME for a link to a directory of the user's.
    let home = root.join(".fabric").join(runtime.runtime_id());
    std::fs::rename(&home, root.join(".fabric").join("moved")).expect("rename");
    symlink(outside.path(), &home).expect("symlink");
    let error = runtime
        .invoke(RunRequest::new("two"))
        .expect_err("the record cannot be written through the link");
    assert_eq!(error.code(), "path_refused", "{error}");
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.metadata["reason"], "symlink");
    assert_eq!(
        listing(outside.path()),
        ["keep.txt"],
        "nothing written outside"
    );
    drop(runtime);
}

#[test]
fn write_files_never_edits_through_a_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "secret").expect("write");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir");
    symlink(&secret, ws.join("link.txt")).expect("symlink");
    symlink(outside.path(), ws.join("dirlink")).expect("symlink");
    let config = scripted_config(
        "escapes",
        json!({}),
        json!({"environment": {"workspace": ws.to_str().expect("utf8")}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let edit = |files: Value| {
        let mut request = RunRequest::new("edit");
        request
            .context
            .insert("scripted".into(), json!({"write_files": files}));
        runtime.invoke(request).expect("invoke")
    };
    for files in [
        json!({"link.txt": "pwned"}),
        json!({"dirlink/new.txt": "pwned"}),
        json!({"dirlink/secret.txt": null}),
    ] {
        let result = edit(files.clone());
        assert_eq!(result.status, RunStatus::Failed, "{files}");
        let error = result.error.expect("error");
        assert_eq!(error.code, "path_refused", "{files}: {}", error.message);
    }
    assert_eq!(std::fs::read(&secret).expect("secret"), b"secret");
    assert_eq!(listing(outside.path()), ["secret.txt"]);
    // Ordinary edits still work, and deleting a link deletes the link, never its target.
    let result = edit(json!({"sub/ok.txt": "fine", "link.txt": null}));
    assert_eq!(result.status, RunStatus::Succeeded, "{:?}", result.error);
    assert_eq!(std::fs::read(ws.join("sub/ok.txt")).expect("ok"), b"fine");
    assert!(ws.join("link.txt").symlink_metadata().is_err());
    assert!(secret.exists());
    assert!(runtime.stop().error.is_none());
}

#[test]
fn an_unchanged_workspace_never_reuses_a_patch_the_adapter_replaced_with_a_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("id_rsa");
    std::fs::write(&secret, "PRIVATE KEY 7d1c").expect("write");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(&ws)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(ws.join("a.txt"), "old\n").expect("write");
    git(&["add", "."]);
    git(&["commit", "-qm", "base"]);
    std::fs::write(ws.join("a.txt"), "new\n").expect("write");
    let root = dir.path().join("artifacts");
    let config = scripted_config(
        "escapes",
        json!({}),
        json!({"environment": {"workspace": ws.to_str().expect("utf8"),
                               "artifacts": root.to_str().expect("utf8")}}),
    );
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let patch_of = |result: &fabric_config::result::RunResult| {
        let artifact = result
            .artifacts
            .artifacts
            .iter()
            .find(|a| a.name == "workspace_patch")
            .expect("workspace_patch");
        root.join(&artifact.path)
    };
    let first = runtime.invoke(RunRequest::new("one")).expect("invoke");
    let first_patch = patch_of(&first);
    assert!(
        std::fs::read_to_string(&first_patch)
            .expect("patch")
            .contains("+new")
    );
    // The adapter replaces the last patch with a link to a secret; the workspace is unchanged.
    std::fs::remove_file(&first_patch).expect("remove");
    symlink(&secret, &first_patch).expect("symlink");
    let second = runtime.invoke(RunRequest::new("two")).expect("invoke");
    let second_patch = patch_of(&second);
    let meta = second_patch.symlink_metadata().expect("meta");
    assert!(meta.is_file(), "the new patch is a regular file of its own");
    let text = std::fs::read_to_string(&second_patch).expect("patch");
    assert!(text.contains("+new") && !text.contains("PRIVATE"), "{text}");
    assert!(runtime.stop().error.is_none());
}
