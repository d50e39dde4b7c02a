//! `fabric env exec|write|read|list --reference REF` on environments of the `subprocess`
//! and `container` providers (the container from `scripts/container-image.sh`, podman
//! required): exit codes, bounded and flagged output, a deadline that kills a process group
//! with its grandchild, a write/read round trip, a listing, and links planted in the
//! workspace that point out of it refused by read, write and `--cwd`.
//!
//! The environment is prepared through `fabric_host` (so this test process owns and
//! releases it); every operation is the `fabric` command attaching to its reference.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::env_container::{self, Prepared};
use crate::support::provider::{config_with, subprocess_descriptor, typed};
use fabric_host::Fabric;
use serde_json::{Value, json};

/// A prepared environment seen from the CLI: the config file, the reference file and the
/// workspace on this machine.
struct Target {
    config: PathBuf,
    reference: PathBuf,
    workspace: PathBuf,
}

impl Target {
    fn run(&self, command: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "env",
            command,
            self.config.to_str().expect("utf-8"),
            "--reference",
            self.reference.to_str().expect("utf-8"),
        ];
        args.extend_from_slice(extra);
        support::fabric(&args)
    }

    /// `fabric env exec ... -- argv` that succeeded: its ExecResult.
    fn exec(&self, flags: &[&str], argv: &[&str]) -> Value {
        let mut extra = flags.to_vec();
        extra.push("--");
        extra.extend_from_slice(argv);
        let output = self.run("exec", &extra);
        assert!(output.status.success(), "{output:?}");
        support::stdout_json(&output)
    }

    /// The error code and message of a failed command (exit 2 or 3).
    fn failed(&self, command: &str, extra: &[&str]) -> (String, String) {
        let output = self.run(command, extra);
        assert!(!output.status.success(), "{output:?}");
        let error: Value = serde_json::from_slice(&output.stderr)
            .or_else(|_| serde_json::from_slice(&output.stdout))
            .unwrap_or_else(|_| panic!("no error JSON: {output:?}"));
        let error = if error["error"].is_object() {
            &error["error"]
        } else {
            &error
        };
        let text = |key: &str| error[key].as_str().unwrap_or_default().to_owned();
        (text("code"), text("message"))
    }

    /// The error code of a failed command.
    fn refused(&self, command: &str, extra: &[&str]) -> String {
        self.failed(command, extra).0
    }
}

/// Writes the reference of `environment` next to the config.
fn target(dir: &Path, reference: &Value, workspace: PathBuf) -> Target {
    let path = dir.join("reference.json");
    std::fs::write(&path, reference.to_string()).expect("reference");
    Target {
        config: dir.join("fabric.json"),
        reference: path,
        workspace,
    }
}

/// Every operation of the module doc on one environment. `pid_alive` says whether a pid
/// written by a command in the environment still runs.
fn assert_operations(target: &Target, pid_alive: &dyn Fn(&str) -> bool) {
    // exit codes and both streams
    let ran = target.exec(&[], &["sh", "-c", "echo out; echo err >&2; exit 7"]);
    assert_eq!(ran["exit_code"], 7, "{ran}");
    assert_eq!(ran["stdout"], "out\n");
    assert_eq!(ran["stderr"], "err\n");
    assert_eq!(ran["timed_out"], false);
    // never through a shell: the argument is one word
    let ran = target.exec(&[], &["sh", "-c", "printf %s \"$0\"", "a b;c"]);
    assert_eq!(ran["stdout"], "a b;c");
    // a program that cannot start is an error naming it, not an exit code
    let (code, message) = target.failed("exec", &["--", "no-such-program-7c1e", "x"]);
    assert_eq!(code, "exec_failed", "{message}");
    assert!(message.contains("`no-such-program-7c1e`"), "{message}");

    // bounds: stdout cut at the limit and flagged, stderr untouched
    let noisy = "i=0; while [ $i -lt 500 ]; do echo 0123456789; i=$((i+1)); done; echo e >&2";
    let ran = target.exec(&["--output-limit", "100"], &["sh", "-c", noisy]);
    assert_eq!(ran["stdout"].as_str().expect("stdout").len(), 100, "{ran}");
    assert_eq!(ran["stdout_truncated"], true);
    assert_eq!(ran["stderr"], "e\n");
    assert_eq!(ran["stderr_truncated"], false);

    // stdin, env and cwd
    let input = target.workspace.join("input.txt");
    std::fs::write(&input, "from stdin").expect("input");
    std::fs::create_dir_all(target.workspace.join("sub")).expect("sub");
    let ran = target.exec(
        &[
            "--stdin",
            input.to_str().expect("utf-8"),
            "--env",
            "GREETING=hi",
            "--cwd",
            "sub",
        ],
        &["sh", "-c", "read line; echo \"$line/$GREETING/${PWD##*/}\""],
    );
    assert_eq!(ran["stdout"], "from stdin/hi/sub\n", "{ran}");

    // the deadline kills the process group: the child and its grandchild (both blocked
    // reading a FIFO nobody writes)
    let fifo = target.workspace.join("never");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let hang =
        "sh -c 'echo $$ > grandchild.pid; read x < never' & echo $$ > child.pid; read x < never";
    let ran = target.exec(&["--timeout", "1"], &["sh", "-c", hang]);
    assert_eq!(ran["timed_out"], true, "{ran}");
    assert_eq!(ran["exit_code"], Value::Null);
    assert!(ran["duration_ms"].as_u64().expect("duration") >= 1000);
    for file in ["child.pid", "grandchild.pid"] {
        let pid = std::fs::read_to_string(target.workspace.join(file)).expect("pid file");
        assert!(
            !pid_alive(pid.trim()),
            "{file} {pid} survived the deadline: {ran}"
        );
    }

    // write / read round trip, a listing
    let data = target.workspace.join("data.bin");
    std::fs::write(&data, b"result: 42\n").expect("data");
    let wrote = target.run(
        "write",
        &[
            "--path",
            "out/result.txt",
            "--from",
            data.to_str().expect("utf-8"),
        ],
    );
    assert!(wrote.status.success(), "{wrote:?}");
    let read = target.run("read", &["--path", "out/result.txt"]);
    assert!(read.status.success(), "{read:?}");
    let content = support::stdout_json(&read);
    assert_eq!(content["content_hex"], hex::encode(b"result: 42\n"));
    assert_eq!(content["truncated"], false);
    let short = support::stdout_json(
        &target.run("read", &["--path", "out/result.txt", "--max-bytes", "3"]),
    );
    assert_eq!(short["content_hex"], "726573");
    assert_eq!(short["truncated"], true);
    assert_eq!(short["size"], 11);
    let raw = target.run("read", &["--path", "out/result.txt", "--raw"]);
    assert_eq!(raw.stdout, b"result: 42\n");
    // what the command in the environment sees is what was written
    let ran = target.exec(&[], &["sh", "-c", "read a < out/result.txt; echo \"$a\""]);
    assert_eq!(ran["stdout"], "result: 42\n", "{ran}");
    let listing = support::stdout_json(&target.run("list", &["--path", "out"]));
    assert_eq!(
        listing["entries"],
        json!([{"name": "result.txt", "kind": "file", "size": 11}])
    );
    assert_eq!(
        target.refused("read", &["--path", "missing.txt"]),
        "file_not_found"
    );
    assert_eq!(
        target.refused("read", &["--path", "../outside"]),
        "invalid_environment_request"
    );

    // links planted by the agent that point out of the workspace: refused, never followed
    let secrets = tempfile::tempdir().expect("secrets");
    std::fs::write(secrets.path().join("key"), "SECRET 5e1f").expect("secret");
    std::os::unix::fs::symlink(secrets.path().join("key"), target.workspace.join("loot"))
        .expect("symlink");
    std::os::unix::fs::symlink(secrets.path(), target.workspace.join("escape")).expect("symlink");
    assert_eq!(target.refused("read", &["--path", "loot"]), "path_refused");
    assert_eq!(
        target.refused("read", &["--path", "escape/key"]),
        "path_refused"
    );
    assert_eq!(
        target.refused(
            "write",
            &[
                "--path",
                "escape/key",
                "--from",
                data.to_str().expect("utf-8")
            ]
        ),
        "path_refused"
    );
    assert_eq!(
        std::fs::read_to_string(secrets.path().join("key")).expect("secret"),
        "SECRET 5e1f"
    );
    assert_eq!(
        target.refused("exec", &["--cwd", "escape", "--", "true"]),
        "path_refused"
    );
    let listing = support::stdout_json(&target.run("list", &[]));
    let loot = listing["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["name"] == "loot")
        .cloned();
    assert_eq!(loot.expect("loot listed")["kind"], "symlink");
}

/// Whether the process of `/proc/PID/stat` runs: it exists and is no zombie (a killed
/// process waits for its new parent to reap it). SIGKILL is delivered asynchronously, so
/// this waits up to 2 s for the state to settle.
fn running(stat: &Path) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let state = std::fs::read_to_string(stat)
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.chars().next()))
            .flatten();
        let alive = matches!(state, Some(c) if c != 'Z' && c != 'X');
        if !alive || std::time::Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn env_ops_run_commands_and_files_in_a_subprocess_environment() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("environments");
    std::fs::create_dir(&root).expect("mkdir");
    let descriptor = subprocess_descriptor(dir.path());
    let config = config_with(
        dir.path(),
        "ops",
        json!({}),
        "subprocess",
        &descriptor,
        json!({"settings": {"root": root}}),
    );
    let (config, options) = typed(dir.path(), config);
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(&config, &options)
        .expect("prepare");
    let workspace = PathBuf::from(environment.info().workspace.expect("workspace"));
    let target = target(dir.path(), &json!(environment.reference()), workspace);
    assert_operations(&target, &|pid| {
        running(&Path::new("/proc").join(pid).join("stat"))
    });
    fabric.release_environment(&environment).expect("release");
}

#[test]
fn env_ops_run_commands_and_files_in_a_container_environment() {
    let Some(prepared) = Prepared::new(|_| {}) else {
        return;
    };
    let container = &prepared.container;
    let target = container_target(&prepared);
    // pids are the container's: ask inside whether one still runs
    let alive = |pid: &str| {
        std::process::Command::new("podman")
            .args([
                "exec",
                container,
                "sh",
                "-c",
                &format!(
                    "read s < /proc/{pid}/stat || exit 1; case \"$s\" in *') Z '*) exit 1;; esac"
                ),
            ])
            .status()
            .is_ok_and(|s| s.success())
    };
    assert_operations(&target, &alive);
    prepared.release();
}

/// The CLI's view of a prepared container environment: its workspace is the environment
/// directory's on this machine (bind-mounted at `/sandbox/workspace`).
fn container_target(prepared: &Prepared) -> Target {
    let reference = json!(prepared.environment.reference());
    target(
        prepared.dir.path(),
        &reference,
        prepared.directory().join("workspace"),
    )
}

#[test]
fn container_policy_caps_memory_and_pids_and_keeps_the_root_read_only() {
    let Some(prepared) = Prepared::new(|settings| {
        settings["resources"] = json!({"memory_mib": 64, "pids": 24, "tmpfs_mib": 8});
        settings["read_only_root"] = json!(true);
        settings["network"] = json!("none");
    }) else {
        return;
    };
    let target = container_target(&prepared);
    // a string doubled past 64 MiB: the memory limit kills it
    let hog = target.exec(
        &["--timeout", "60"],
        &["sh", "-c", "a=0123456789abcdef; while :; do a=$a$a; done"],
    );
    assert_eq!(
        (&hog["exit_code"], &hog["signal"]),
        (&Value::Null, &json!(9)),
        "{hog}"
    );
    // the root is read-only; the workspace and the /tmp tmpfs are not
    let writes =
        "echo x > /x 2>/dev/null && echo root; echo y > /tmp/y && echo tmp; echo z > z && echo ws";
    let wrote = target.exec(&[], &["sh", "-c", writes]);
    assert_eq!(wrote["stdout"], "tmp\nws\n", "{wrote}");
    // the limits are the container's cgroup's
    let limits = "read m < /sys/fs/cgroup/memory/memory.limit_in_bytes; read p < /sys/fs/cgroup/pids/pids.max; echo $m $p";
    assert_eq!(
        target.exec(&[], &["sh", "-c", limits])["stdout"],
        "67108864 24\n"
    );
    // last (its processes are being killed while the call returns): a fork bomb stops at
    // the pids limit
    let made = std::process::Command::new("mkfifo")
        .arg(target.workspace.join("never"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let bomb = "i=0; while [ $i -lt 64 ]; do (read x < never) & i=$((i+1)); done; echo all";
    let forked = target.exec(&["--timeout", "20"], &["sh", "-c", bomb]);
    assert_ne!(forked["exit_code"], 0, "{forked}");
    assert!(
        forked["stderr"].as_str().expect("stderr").contains("fork"),
        "{forked}"
    );
    assert_eq!(forked["stdout"], "", "{forked}");
    prepared.release();
    // release reports what the container's cgroup saw: the OOM kill, the peak at the limit
    let info = prepared.environment.info();
    let observation = json!(info.sandbox_observation.expect("observation"));
    assert_eq!(observation["outcome"], "oom", "{observation}");
    assert_eq!(observation["role"], "agent");
    assert_eq!(observation["provider"], "container");
    let peak = observation["peak_memory_mib"].as_f64().expect("peak");
    assert!((48.0..=64.0).contains(&peak), "{observation}");
    assert!(
        observation["cpu_time_s"].as_f64().expect("cpu") > 0.0,
        "{observation}"
    );
    assert!(observation["wall_time_s"].as_f64().expect("wall") > 0.0);
    let source = observation["resource_usage_source"]
        .as_str()
        .expect("source");
    assert!(source.starts_with("cgroup_v"), "{observation}");
}

#[test]
fn container_policy_values_are_checked_naming_the_setting() {
    if !env_container::podman_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = env_container::settings(dir.path());
    settings["resources"] = json!({"memory_mib": "lots"});
    let (config, options) = env_container::provider_config(dir.path(), settings);
    let error = Fabric::new()
        .prepare_environment(&config, &options)
        .expect_err("invalid memory_mib");
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.code, "invalid_settings", "{info:?}");
    assert!(
        info.message.contains("settings.resources.memory_mib"),
        "{}",
        info.message
    );
}

#[test]
fn the_subprocess_provider_refuses_policy_it_cannot_apply_naming_the_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptor = subprocess_descriptor(dir.path());
    for (settings, named) in [
        (
            json!({"resources": {"memory_mib": 64}}),
            "settings.resources",
        ),
        (json!({"network": "bridge"}), "settings.network"),
    ] {
        let config = config_with(
            dir.path(),
            "ops",
            json!({}),
            "subprocess",
            &descriptor,
            json!({"settings": settings}),
        );
        let (config, options) = typed(dir.path(), config);
        let error = Fabric::new()
            .prepare_environment(&config, &options)
            .expect_err("unsupported");
        let info = fabric_config::ErrorInfo::from(error);
        assert_eq!(info.code, "environment_setting_unsupported", "{info:?}");
        assert!(info.message.contains(named), "{}", info.message);
    }
}
