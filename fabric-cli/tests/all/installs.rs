//! The bundled default (`fabric run examples/hello/fabric.json`) from copies of `fabric` laid
//! out as the installs lay it out, away from this checkout: the binary alone (`cargo install`,
//! `dist/fabric`), and an installed prefix (the C SDK, the wheel's venv) whose
//! `share/nemo-fabric/adapters/scripted/launch.sh` has no adapter binary beside it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{repo_root, stdout_json};

/// Runs `fabric ARGS` from `exe` in `dir` with none of this checkout's hints in the
/// environment (no FABRIC_*, CARGO_TARGET_DIR or VIRTUAL_ENV).
fn run_copy(exe: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(exe);
    command.args(args).current_dir(dir).env_clear();
    for key in ["PATH", "HOME", "TMPDIR", "LANG"] {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    command.output().expect("run the copied fabric")
}

/// `fabric` copied to `bin`, and the hello example in `dir`.
fn copy_fabric(bin: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(bin).expect("bin dir");
    std::fs::create_dir_all(dir).expect("example dir");
    let exe = bin.join("fabric");
    std::fs::copy(env!("CARGO_BIN_EXE_fabric"), &exe).expect("copy fabric");
    std::fs::copy(
        repo_root().join("examples/hello/fabric.json"),
        dir.join("fabric.json"),
    )
    .expect("copy the hello example");
    exe
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_file() {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

/// Runs the hello example and returns the RunResult after checking the scripted reply.
fn run_hello(exe: &Path, dir: &Path) -> Value {
    let output = run_copy(
        exe,
        dir,
        &["run", "fabric.json", "--input", "Hello, Fabric", "--json"],
    );
    let result = stdout_json(&output);
    assert_eq!(
        result["status"],
        "succeeded",
        "{result:#}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        result["output"]["response"],
        "Hello! You said: Hello, Fabric"
    );
    result
}

fn provenance(exe: &Path, dir: &Path) -> Value {
    let plan = stdout_json(&run_copy(exe, dir, &["plan", "fabric.json"]));
    plan["adapter_descriptor"]["provenance"].clone()
}

#[test]
fn fabric_alone_runs_the_bundled_default_with_the_adapter_it_carries() {
    let temp = tempfile::tempdir().expect("tempdir");
    let exe = copy_fabric(&temp.path().join("bin"), &temp.path().join("hello"));
    let dir = temp.path().join("hello");

    let provenance = provenance(&exe, &dir);
    assert_eq!(provenance[0]["source"], "bundled", "{provenance}");
    assert_eq!(
        provenance[0]["path"],
        exe.display().to_string(),
        "not this checkout's adapters: {provenance}"
    );
    let result = run_hello(&exe, &dir);
    assert_eq!(
        result["metadata"]["host_command"],
        format!("{} __adapter scripted", exe.display())
    );
}

#[test]
fn an_installed_prefix_runs_the_scripted_adapter_through_its_own_fabric() {
    let temp = tempfile::tempdir().expect("tempdir");
    let prefix = temp.path().join("prefix");
    let exe = copy_fabric(&prefix.join("bin"), &temp.path().join("hello"));
    let dir = temp.path().join("hello");
    let adapters = prefix.join("share/nemo-fabric/adapters");
    copy_dir(&repo_root().join("adapters/lib"), &adapters.join("lib"));
    copy_dir(
        &repo_root().join("adapters/scripted"),
        &adapters.join("scripted"),
    );

    let descriptor = adapters.join("scripted/scripted.fabric-adapter.json");
    let provenance = provenance(&exe, &dir);
    assert_eq!(provenance[0]["source"], "bundled", "{provenance}");
    assert_eq!(provenance[0]["path"], descriptor.display().to_string());
    let result = run_hello(&exe, &dir);
    let host = result["metadata"]["host_command"].as_str().expect("host");
    assert!(host.ends_with("/scripted/launch.sh"), "{host}");
}

#[test]
fn the_hidden_adapter_command_serves_the_host_protocol() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["__adapter", "scripted"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdin.take());
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "stdin EOF ends the host with 0");
    assert!(output.stdout.is_empty());
    let help = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .arg("--help")
        .output()
        .expect("help");
    assert!(
        !String::from_utf8_lossy(&help.stdout).contains("__adapter"),
        "the command is hidden"
    );
}
