//! Shared helpers of the end-to-end CLI tests that run the scripted adapter.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::{Value, json};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Builds the scripted adapter once unless target/debug holds a binary newer than its sources.
pub fn ensure_scripted_adapter() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"));
        let built = std::fs::metadata(target.join("debug/fabric-adapter-scripted"))
            .and_then(|m| m.modified())
            .ok();
        let newest_source = std::fs::read_dir(repo_root().join("adapters/scripted/src"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().and_then(|m| m.modified()).ok())
            .max();
        if let (Some(built), Some(source)) = (built, newest_source)
            && built >= source
        {
            return;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "-p", "fabric-adapter-scripted"])
            .current_dir(repo_root())
            .status()
            .expect("cargo build");
        assert!(status.success(), "building fabric-adapter-scripted failed");
    });
}

pub fn fabric(args: &[&str]) -> Output {
    ensure_scripted_adapter();
    Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(args)
        .output()
        .expect("run fabric")
}

pub fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A scripted config named `name` in `dir` (found through discovery.local_paths).
pub fn scripted_config(dir: &Path, name: &str, settings: Value) -> String {
    let descriptor = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": name},
        "harness": {"adapter_id": "fabric.scripted", "settings": settings},
        "discovery": {"local_paths": [descriptor]},
        "runtime": {"timeout_seconds": 30}
    });
    let path = dir.join("fabric.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path.to_string_lossy().into_owned()
}

pub mod agent_ctl;
pub mod provider;
/// The upstream 0.5.0 oracles and their skip policy (see `tests/upstream/mod.rs` at the
/// workspace root).
#[path = "../../../../tests/upstream/mod.rs"]
pub mod upstream;
pub mod view;

fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Runs `fabric ARGS` with stdout and stderr on a pseudo-terminal; returns the exit code and
/// what the terminal showed (CR LF turned into LF).
pub fn on_terminal(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    ensure_scripted_adapter();
    let mut command_line = shell_quote(env!("CARGO_BIN_EXE_fabric"));
    for arg in args {
        command_line.push(' ');
        command_line.push_str(&shell_quote(arg));
    }
    let output = Command::new("script")
        .args(["-qec", &command_line, "/dev/null"])
        .envs(env.iter().copied())
        .env("TERM", "xterm")
        .output()
        .expect("`script` (util-linux) runs the command on a pseudo-terminal");
    let text = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
    (output.status.code(), text)
}

/// The one rule for a missing dependency (`tests/dependency.rs` at the workspace root).
pub use upstream::dependency;
