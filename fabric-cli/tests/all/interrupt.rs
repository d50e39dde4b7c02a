//! `SIGINT` / `SIGTERM` on `fabric run` (issue 21, item 1): the CLI stops its runtimes,
//! leaves no process and no FABRIC_HOME behind, and exits 130 / 143; a second signal kills
//! the hosts at once.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::{ensure_scripted_adapter, repo_root};
use fabric_stats::ProcStat;
use fabric_stats::procs::{self as procfs};
use serde_json::{Value, json};

const PROC: &str = "/proc";

fn alive(pid: u32) -> bool {
    procfs::read_stat(Path::new(PROC), pid).is_some_and(|s| !s.is_exited())
}

fn is_sleep(pid: u32) -> bool {
    std::fs::read_to_string(format!("{PROC}/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
}

/// Direct children of `pid` (every thread's).
fn children(pid: u32) -> Vec<u32> {
    procfs::all_processes(Path::new(PROC))
        .into_iter()
        .filter(|stat| stat.ppid == pid)
        .map(|stat| stat.pid)
        .collect()
}

/// The running CLI and what it started; kills leftovers by pid when a test fails.
struct Cli {
    child: Child,
    xdg: tempfile::TempDir,
    host: u32,
    tree: Vec<ProcStat>,
}

impl Drop for Cli {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in std::iter::once(self.host).chain(self.tree.iter().map(|s| s.pid)) {
            if alive(pid) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
    }
}

/// Deadline-bounded wait (10 s) for `done`.
fn wait_for<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(value) = done() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts `fabric run <args>` with temporary homes under a private `XDG_RUNTIME_DIR` and
/// waits until its host runs an invocation that spawned a child and an orphan.
fn start(dir: &Path, args: &[&str]) -> Cli {
    ensure_scripted_adapter();
    let xdg = tempfile::tempdir().expect("xdg");
    let child = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .arg("run")
        .args(args)
        .env("XDG_RUNTIME_DIR", xdg.path())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fabric");
    let mut cli = Cli {
        child,
        xdg,
        host: 0,
        tree: Vec::new(),
    };
    let pid = cli.child.id();
    cli.host = wait_for("the adapter host", || children(pid).first().copied());
    let host = cli.host;
    // The orphan (adopted by the host) and the child, both `sleep`.
    cli.tree = wait_for("the invocation's processes", || {
        let tree = procfs::descendants(Path::new(PROC), host);
        (tree.iter().filter(|s| is_sleep(s.pid)).count() >= 2).then_some(tree)
    });
    assert!(!homes(cli.xdg.path()).is_empty(), "a temporary home exists");
    cli
}

fn homes(base: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(base)
        .expect("read xdg")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect()
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

fn wait_exit(cli: &mut Cli) -> ExitStatus {
    wait_for("the CLI to exit", || {
        cli.child.try_wait().expect("try_wait")
    })
}

fn assert_nothing_left(cli: &Cli) {
    wait_for("every started process to end", || {
        let left: Vec<u32> = std::iter::once(cli.host)
            .chain(cli.tree.iter().map(|s| s.pid))
            .filter(|&pid| alive(pid))
            .collect();
        left.is_empty().then_some(())
    });
    assert_eq!(homes(cli.xdg.path()), Vec::<PathBuf>::new(), "homes left");
}

fn slow_request(dir: &Path) -> String {
    let request = json!({
        "input": "take your time",
        "context": {"scripted": {"spawn_orphans": 1, "spawn_children": 1, "sleep_ms": 600000}}
    });
    let path = dir.join("request.json");
    std::fs::write(&path, request.to_string()).expect("write request");
    path.to_string_lossy().into_owned()
}

fn config(dir: &Path, descriptor: Option<&Path>) -> String {
    let config = support::scripted_config(dir, "interrupt", json!({}));
    let Some(descriptor) = descriptor else {
        return config;
    };
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("read")).expect("json");
    value["discovery"]["local_paths"] = json!([descriptor]);
    std::fs::write(&config, value.to_string()).expect("write config");
    config
}

#[test]
fn sigint_during_run_stops_everything_and_exits_130() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), None);
    let request = slow_request(dir.path());
    let mut cli = start(dir.path(), &[&config, "--request", &request]);
    signal(cli.child.id(), "INT");
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_nothing_left(&cli);
}

#[test]
fn sigterm_during_run_inputs_stops_everything_and_exits_143() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), None);
    let request = std::fs::read_to_string(slow_request(dir.path())).expect("request");
    let inputs = dir.path().join("inputs.jsonl");
    std::fs::write(&inputs, format!("\"first\"\n{request}\n\"never\"\n")).expect("inputs");
    let inputs = inputs.to_string_lossy().into_owned();
    let mut cli = start(dir.path(), &[&config, "--inputs", &inputs]);
    signal(cli.child.id(), "TERM");
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_nothing_left(&cli);
}

#[test]
fn a_second_sigint_kills_a_host_that_ignores_sigterm_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The scripted adapter behind a shell that ignores SIGTERM (kept across exec).
    let original = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let mut descriptor: Value =
        serde_json::from_str(&std::fs::read_to_string(&original).expect("read")).expect("json");
    descriptor["runner"] = json!({
        "command": "sh",
        "args": ["-c", "trap '' TERM; exec sh \"$0\"",
                 repo_root().join("adapters/scripted/launch.sh")]
    });
    let wrapped = dir.path().join("stubborn.fabric-adapter.json");
    std::fs::write(&wrapped, descriptor.to_string()).expect("descriptor");
    let config = config(dir.path(), Some(&wrapped));
    let request = slow_request(dir.path());
    let mut cli = start(dir.path(), &[&config, "--request", &request]);
    let pid = cli.child.id();
    let stderr = cli.child.stderr.take().expect("stderr");
    let (said, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let _ = said.send(line.unwrap_or_default());
        }
    });
    signal(pid, "INT");
    // The first signal's shutdown has begun (it then waits up to its SIGTERM bound).
    let line = heard
        .recv_timeout(Duration::from_secs(10))
        .expect("stderr line");
    assert!(line.contains("SIGINT: stopping runtimes"), "{line}");
    assert!(alive(cli.host), "the host ignores SIGTERM");
    let second = Instant::now();
    signal(pid, "INT");
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(
        second.elapsed() < Duration::from_millis(1500),
        "the second signal must not wait for the SIGTERM bound: {:?}",
        second.elapsed()
    );
    assert_nothing_left(&cli);
}

/// Ctrl-C while the host is still starting: the CLI says it was interrupted (issue 38 item
/// 7), not the `runtime_stopped` the cut-short start returns, and exits 130.
#[test]
fn sigint_during_start_says_it_was_interrupted() {
    ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    // A host that never answers `start`.
    let original = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let mut descriptor: Value =
        serde_json::from_str(&std::fs::read_to_string(&original).expect("read")).expect("json");
    descriptor["runner"] = json!({"command": "sh", "args": ["-c", "exec sleep 600"]});
    let silent = dir.path().join("silent.fabric-adapter.json");
    std::fs::write(&silent, descriptor.to_string()).expect("descriptor");
    let config = config(dir.path(), Some(&silent));
    let xdg = tempfile::tempdir().expect("xdg");
    let child = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["run", &config, "--input", "hi"])
        .env("XDG_RUNTIME_DIR", xdg.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fabric");
    let mut cli = Cli {
        child,
        xdg,
        host: 0,
        tree: Vec::new(),
    };
    let pid = cli.child.id();
    cli.host = wait_for("the adapter host", || children(pid).first().copied());
    signal(pid, "INT");
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(130), "{status:?}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut cli.child.stdout.take().expect("stdout"), &mut stdout)
        .expect("read stdout");
    let printed: Value = serde_json::from_str(&stdout).expect("stdout is the error JSON");
    let error = &printed["error"];
    assert_eq!(error["code"], "interrupted", "{printed}");
    assert_eq!(error["stage"], "start", "{printed}");
    assert_eq!(
        error["message"], "interrupted by SIGINT during start: the runtime was stopped",
        "{printed}"
    );
    assert_nothing_left(&cli);
}
