//! Shared helpers of the runtime tests: the scripted adapter binary and configs, and running a
//! test alone in its own process.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fabric_config::FabricConfig;
use fabric_stats::procs as procfs;
use serde_json::Value;

/// Runs a test alone in its own process of this binary (see `tests/alone.rs` at the
/// workspace root).
#[path = "../../../../tests/alone.rs"]
pub mod alone;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Builds `fabric-adapter-scripted` once (the descriptor's launch.sh finds it in target/).
pub fn ensure_scripted_adapter() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        if scripted_binary_is_fresh() {
            return;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-q", "-p", "fabric-adapter-scripted"])
            .current_dir(repo_root())
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building fabric-adapter-scripted failed");
    });
}

/// Whether target/debug/fabric-adapter-scripted exists and is newer than its sources
/// (saves a cargo invocation, which waits for the shared build lock).
fn scripted_binary_is_fresh() -> bool {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let Ok(built) =
        std::fs::metadata(target.join("debug/fabric-adapter-scripted")).and_then(|m| m.modified())
    else {
        return false;
    };
    let sources = repo_root().join("adapters/scripted");
    let mut stack = vec![sources];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return false;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    stack.push(path);
                }
            } else if entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| m > built)
            {
                return false;
            }
        }
    }
    true
}

/// A config for the scripted adapter found through `discovery.local_paths`.
pub fn scripted_config(name: &str, settings: Value, extra: Value) -> FabricConfig {
    ensure_scripted_adapter();
    let descriptor = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let mut config = serde_json::json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": name},
        "harness": {"adapter_id": "fabric.scripted", "settings": settings},
        "discovery": {"local_paths": [descriptor.to_str().expect("utf8")]},
        "runtime": {"timeout_seconds": 30}
    });
    if let (Some(target), Value::Object(extra)) = (config.as_object_mut(), extra) {
        for (key, value) in extra {
            match (target.get_mut(&key), value) {
                (Some(Value::Object(existing)), Value::Object(more)) => existing.extend(more),
                (_, value) => {
                    target.insert(key, value);
                }
            }
        }
    }
    serde_json::from_value(config).expect("valid config")
}

/// Waits (bounded) until no live process of group `pgid` remains and the leader is reaped.
pub fn assert_group_gone(pgid: u32) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let live: Vec<_> = procfs::group_members(Path::new("/proc"), pgid)
            .into_iter()
            .filter(|stat| !stat.is_exited())
            .collect();
        let leader_zombie_ours = procfs::read_stat(Path::new("/proc"), pgid)
            .is_some_and(|s| s.ppid == std::process::id());
        if live.is_empty() && !leader_zombie_ours {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes of group {pgid} remain: {live:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Mode bits of a path.
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

/// Waits (yielding, at most 10 s) until `done` holds; fails naming `what` otherwise.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

/// The upstream 0.5.0 oracles and their skip policy (see `tests/upstream/mod.rs` at the
/// workspace root).
#[path = "../../../../tests/upstream/mod.rs"]
pub mod upstream;

/// An interpreter with the upstream packages (`FABRIC_TEST_PYTHON` or the `.venv` of
/// `scripts/setup.sh`), or `None` when `FABRIC_ALLOW_SKIPS=1` let the caller skip (see
/// [`upstream::require`]; without it the test fails).
pub fn test_python() -> Option<std::ffi::OsString> {
    upstream::require().map(|upstream| upstream.python().as_os_str().to_owned())
}

/// A config named `py` for the upstream-style python-echo adapter with this `harness` block.
/// The adapter module is importable through PYTHONPATH (no pip install needed).
pub fn python_echo_config(harness: Value) -> FabricConfig {
    let root = repo_root();
    let descriptor = root.join("adapters/python-echo/python-echo.fabric-adapter.json");
    serde_json::from_value(serde_json::json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "py"},
        "harness": harness,
        "discovery": {"local_paths": [descriptor]},
        "environment": {"env": {"PYTHONPATH": root.join("adapters/python-echo/src")}}
    }))
    .expect("config")
}
