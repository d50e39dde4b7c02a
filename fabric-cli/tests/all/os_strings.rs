//! Config values that become OS strings (issue 33 items 8 and 9): a NUL byte in an
//! environment value, the workspace or the artifact path is a config error naming the field
//! (exit 2) from `validate` and `run` alike, never a launch failure; a config under a
//! directory whose name is not UTF-8 is refused with an error naming that directory, never
//! run against a lossily converted path.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{fabric, repo_root, stdout_json};

/// A scripted config with `environment` in `dir`; its path.
fn config_with(dir: &Path, environment: Value) -> String {
    let descriptor = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "os-strings"},
        "harness": {"adapter_id": "fabric.scripted"},
        "discovery": {"local_paths": [descriptor]},
        "environment": environment,
    });
    let path = dir.join("fabric.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path.to_str().expect("utf-8 temp dir").to_owned()
}

#[test]
fn a_nul_byte_in_env_workspace_or_artifacts_is_a_config_error_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            json!({"env": {"API_TOKEN": "S3CR3T-SENTINEL\u{0}x"}}),
            "environment.env.API_TOKEN",
        ),
        (json!({"workspace": "w\u{0}s"}), "environment.workspace"),
        (json!({"artifacts": "a\u{0}b"}), "environment.artifacts"),
    ];
    for (environment, path) in cases {
        let config = config_with(dir.path(), environment);
        for command in [
            vec!["validate", config.as_str()],
            vec!["run", config.as_str(), "--input", "x"],
        ] {
            let output = fabric(&command);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{command:?} {path}: {output:?}"
            );
            let error = &stdout_json(&output)["error"];
            assert_eq!(error["code"], "nul_byte", "{path}: {error}");
            assert_eq!(error["path"], path, "{error}");
            assert_eq!(error["stage"], "config", "{error}");
            let printed = String::from_utf8_lossy(&output.stdout);
            assert!(!printed.contains("S3CR3T"), "the value leaked: {printed}");
        }
    }
}

/// Issue 33 item 9: a config under a directory named with the byte 0xFF.
#[test]
fn a_config_under_a_non_utf8_directory_is_refused_naming_the_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let odd = dir.path().join(OsStr::from_bytes(b"d\xff"));
    std::fs::create_dir(&odd).expect("mkdir d\\xff");
    let descriptor = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "non-utf8"},
        "harness": {"adapter_id": "fabric.scripted"},
        "discovery": {"local_paths": [descriptor]},
        "environment": {"workspace": "ws"},
    });
    let file = odd.join("fabric.json");
    std::fs::write(&file, config.to_string()).expect("write config");
    let file = file.as_os_str();

    let run = |args: &[&OsStr]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(args)
            .output()
            .expect("run fabric")
    };
    let input = OsStr::new("x");
    for args in [
        vec![OsStr::new("run"), file, OsStr::new("--input"), input],
        vec![OsStr::new("check"), file],
        vec![OsStr::new("plan"), file],
        vec![
            OsStr::new("validate"),
            file,
            OsStr::new("--base-dir"),
            odd.as_os_str(),
        ],
    ] {
        let output = run(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let error = &stdout_json(&output)["error"];
        assert_eq!(error["code"], "base_dir_not_utf8", "{args:?}: {error}");
        let message = error["message"].as_str().expect("message");
        // The directory is named with the offending byte escaped, not replaced.
        assert!(message.contains(r"d\xFF"), "{args:?}: {message}");
        assert!(!message.contains('\u{FFFD}'), "{args:?}: {message}");
    }
    // doctor reports it as its failing check, with the verdict's exit code (docs/cli.md).
    let output = run(&[OsStr::new("doctor"), file]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let report = stdout_json(&output);
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    assert_eq!(failed[0]["code"], "base_dir_not_utf8", "{report}");
    // Nothing ran against a lossily converted path.
    let lossy = dir.path().join("d\u{FFFD}");
    assert!(!lossy.exists(), "{}", lossy.display());

    // A UTF-8 --base-dir anchors the same config anywhere: the file's own directory does
    // not matter then.
    let base = tempfile::tempdir().expect("base");
    std::fs::create_dir(base.path().join("ws")).expect("workspace");
    let output = run(&[
        OsStr::new("run"),
        file,
        OsStr::new("--input"),
        input,
        OsStr::new("--base-dir"),
        base.path().as_os_str(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}
