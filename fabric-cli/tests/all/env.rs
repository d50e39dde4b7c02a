//! `fabric env prepare` prints a reference that `fabric env attach` / `release` accept;
//! attach keeps the caller's ownership and release only detaches.

use crate::support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn config_with_workspace(dir: &std::path::Path, workspace: &str) -> String {
    let path = support::scripted_config(dir, "env", json!({}));
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    config["environment"] = json!({"workspace": workspace});
    std::fs::write(&path, config.to_string()).expect("write");
    path
}

#[test]
fn prepare_prints_a_reference_that_attach_and_release_accept() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("task")).expect("mkdir");
    std::fs::write(dir.path().join("task/keep.txt"), "caller data").expect("write");
    let config = config_with_workspace(dir.path(), "task");

    let prepared = support::fabric(&["env", "prepare", &config]);
    assert!(prepared.status.success(), "{prepared:?}");
    let prepared = support::stdout_json(&prepared);
    let workspace = dir.path().join("task").to_string_lossy().into_owned();
    assert_eq!(prepared["environment"]["workspace"], workspace.as_str());
    assert_eq!(
        prepared["reference"],
        json!({"provider": "local", "resource": {"workspace": workspace}})
    );
    let reference = dir.path().join("reference.json");
    std::fs::write(&reference, prepared["reference"].to_string()).expect("write");
    let reference = reference.to_string_lossy().into_owned();

    let attached = support::fabric(&["env", "attach", &config, "--reference", &reference]);
    assert!(attached.status.success(), "{attached:?}");
    let attached = support::stdout_json(&attached);
    assert_eq!(attached["environment"]["attached"], true);
    assert_eq!(attached["environment"]["ownership"], "caller_owned");

    // release reads the reference from stdin too
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["env", "release", &config, "--reference", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(prepared["reference"].to_string().as_bytes())
        .expect("write stdin");
    let released = child.wait_with_output().expect("wait");
    assert!(released.status.success(), "{released:?}");
    let released = support::stdout_json(&released);
    assert_eq!(released["released"]["released"], true);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("task/keep.txt")).expect("kept"),
        "caller data"
    );
}

#[test]
fn bad_references_exit_2_with_a_code_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_with_workspace(dir.path(), ".");
    let cases = [
        (
            json!({"provider": "local", "resource": {"workspace": "missing"}}),
            "environment_not_found",
            "resource.workspace",
        ),
        (
            json!({"provider": "other"}),
            "invalid_environment_reference",
            "provider",
        ),
        (
            json!({"provider": "local", "extra": 1}),
            "invalid_environment_reference",
            "--reference",
        ),
    ];
    for (reference, code, path) in cases {
        let file = dir.path().join("reference.json");
        std::fs::write(&file, reference.to_string()).expect("write");
        let output = support::fabric(&[
            "env",
            "attach",
            &config,
            "--reference",
            &file.to_string_lossy(),
        ]);
        assert_eq!(output.status.code(), Some(2), "{reference}: {output:?}");
        let error = support::stdout_json(&output);
        let error = error.get("error").unwrap_or(&error);
        assert_eq!(error["code"], code, "{reference}: {error}");
        assert_eq!(error["metadata"]["path"], path, "{reference}: {error}");
    }
}
