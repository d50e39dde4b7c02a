//! Fault tests: small misbehaving hosts (tests/all/support/fake_host.py) drive every failure
//! mode of the lifecycle protocol. Each test asserts the structured error (code + stage),
//! a generous time bound, and that no process of the host's group is left.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fabric_config::{ErrorInfo, Stage};
use fabric_host::{Escalation, Host, HostError, HostSpec, ProtocolViolation, StopPolicy};
use fabric_stats::procs as procfs;
use serde_json::{Value, json};

fn python() -> String {
    std::env::var("FABRIC_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn fake_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/support/fake_host.py")
}

pub(crate) fn spec(mode: &str, extra: &[(&str, &str)]) -> HostSpec {
    let mut spec = HostSpec::new(python());
    spec.args = vec![fake_script().into()];
    spec.env = std::env::vars_os().collect();
    spec.env.push(("FAKE_MODE".into(), mode.into()));
    for (key, value) in extra {
        spec.env.push(((*key).into(), (*value).into()));
    }
    spec.cwd = std::env::temp_dir();
    spec
}

pub(crate) fn start(host: &Host) {
    host.call(
        "start",
        &json!({"runtime_context": {"runtime_id": "runtime-test"}}),
        Stage::Start,
        Duration::from_secs(30),
    )
    .expect("start succeeds");
}

pub(crate) fn invoke(host: &Host, input: Value, timeout: Duration) -> Result<Value, HostError> {
    host.call(
        "invoke",
        &json!({"runtime_context": {"runtime_id": "runtime-test"}, "request": {"input": input}}),
        Stage::Invoke,
        timeout,
    )
}

pub(crate) fn fast_policy() -> StopPolicy {
    StopPolicy {
        grace: Duration::from_millis(500),
        term_wait: Duration::from_millis(500),
        kill_wait: Duration::from_secs(1),
    }
}

pub(crate) fn stop(host: &Host) -> fabric_host::StopReport {
    host.stop(Some(&json!({"runtime_id": "runtime-test"})), fast_policy())
}

/// Waits (bounded) until no live process of group `pgid` remains; zombies reparented to
/// init are already dead and do not count.
fn assert_group_gone(pgid: u32) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let live: Vec<_> = procfs::group_members(Path::new("/proc"), pgid)
            .into_iter()
            .filter(|stat| !stat.is_exited())
            .collect();
        // Our own child (the leader) must also be reaped, not left a zombie; reaping may
        // finish on the reactor thread a moment after the group is dead, so it is part of
        // the bounded wait.
        let leader = procfs::read_stat(Path::new("/proc"), pgid);
        let leader_reaped =
            leader.is_none() || leader.is_some_and(|s| s.ppid != std::process::id());
        if live.is_empty() && leader_reaped {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes of group {pgid} remain: {live:?}; leader reaped: {leader_reaped}"
        );
        std::thread::yield_now();
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn process_alive(pid: u32) -> bool {
    procfs::read_stat(Path::new("/proc"), pid).is_some_and(|s| !s.is_exited())
}

#[test]
fn healthy_host_round_trip_and_clean_stop() {
    let host = Host::launch(spec("ok", &[])).expect("launch");
    start(&host);
    let output = invoke(&host, json!("hello"), Duration::from_secs(10)).expect("invoke");
    assert_eq!(output["output"]["echo"], "hello");
    let report = stop(&host);
    assert!(
        matches!(report.response, Some(Ok(Value::Null))),
        "{report:?}"
    );
    assert_eq!(report.escalation, Escalation::None);
    assert_eq!(report.exit.as_deref(), Some("exit code 0"));
    assert!(report.error.is_none());
    assert_group_gone(host.pid());
    // Stop is idempotent and invoke after stop is a state error.
    let again = stop(&host);
    assert!(again.exited_before);
    let error = invoke(&host, json!("late"), Duration::from_secs(1)).expect_err("stopped");
    assert!(error.is_state_error(), "{error:?}");
    assert_eq!(error.code(), "runtime_stopped");
}

#[test]
fn crash_mid_invoke_is_terminal_and_other_hosts_are_unaffected() {
    let other = Host::launch(spec("ok", &[])).expect("launch other");
    start(&other);
    let host = Host::launch(spec("crash_invoke", &[("FAKE_SECRET", "tok-93xq")])).expect("launch");
    start(&host);
    let began = Instant::now();
    let error = invoke(&host, json!("x"), Duration::from_secs(30)).expect_err("crash");
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(error.code(), "host_crashed");
    assert_eq!(error.stage(), Stage::Invoke);
    assert!(error.is_terminal());
    let info = ErrorInfo::from(error.clone());
    assert_eq!(info.metadata["host_exit"], "exit code 3");
    let tail = info.metadata["stderr_tail"].as_str().expect("tail");
    assert!(tail.contains("boom: about to crash"), "{tail}");
    // Terminal: the next call fails the same way, without a respawn.
    let again = invoke(&host, json!("y"), Duration::from_secs(5)).expect_err("terminal");
    assert_eq!(again.code(), "host_crashed");
    // The other runtime is unaffected.
    let output = invoke(&other, json!("still here"), Duration::from_secs(10)).expect("other ok");
    assert_eq!(output["output"]["echo"], "still here");
    let report = stop(&host);
    assert!(report.exited_before);
    assert_group_gone(host.pid());
    stop(&other);
    assert_group_gone(other.pid());
}

#[test]
fn stderr_tail_is_redacted() {
    let mut spec = spec("crash_invoke", &[("FAKE_SECRET", "tok-93xq")]);
    spec.secrets = vec!["tok-93xq".into()];
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("host.stderr.log");
    spec.stderr_log = Some(log.clone());
    let host = Host::launch(spec).expect("launch");
    start(&host);
    let error = invoke(&host, json!("x"), Duration::from_secs(30)).expect_err("crash");
    let info = ErrorInfo::from(error);
    let rendered = serde_json::to_string(&info).expect("json");
    assert!(!rendered.contains("tok-93xq"), "secret leaked: {rendered}");
    assert!(rendered.contains("token=***"), "{rendered}");
    stop(&host);
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.contains("token=***") && !text.contains("tok-93xq"),
        "{text}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// Issue 21 item 7: the stderr log is a small ring (two segments of
/// `HostSpec::stderr_log_bytes`), not 64 MiB of RAM in /dev/shm, and keeps the newest lines.
#[test]
fn stderr_log_is_a_bounded_ring_keeping_the_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("host.stderr.log");
    let mut spec = HostSpec::new("sh");
    spec.args = vec![
        "-c".into(),
        "yes 'stderr noise, padded to be long enough' | head -n 40000 >&2; echo last-line >&2"
            .into(),
    ];
    spec.env = std::env::vars_os().collect();
    spec.cwd = std::env::temp_dir();
    spec.stderr_log = Some(log.clone());
    spec.stderr_log_bytes = 64 * 1024;
    assert_eq!(
        HostSpec::new("x").stderr_log_bytes,
        fabric_host::DEFAULT_STDERR_LOG_BYTES
    );
    let host = Host::launch(spec).expect("launch");
    // The host exits by itself after ~1.6 MB of stderr; stop reaps it and drains stderr.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !host.stderr_tail().contains("last-line") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop(&host);
    let current = std::fs::read_to_string(&log).expect("log");
    let previous = std::fs::metadata(dir.path().join("host.stderr.log.1")).expect("segment");
    assert!(current.len() <= 64 * 1024, "{}", current.len());
    assert!(previous.len() <= 64 * 1024);
    assert!(current.ends_with("last-line\n"), "the tail is kept");
}

#[test]
fn eof_mid_invoke_is_host_crashed() {
    let host = Host::launch(spec("eof_invoke", &[])).expect("launch");
    start(&host);
    let began = Instant::now();
    let error = invoke(&host, json!("x"), Duration::from_secs(30)).expect_err("eof");
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(error.code(), "host_crashed");
    assert_eq!(error.stage(), Stage::Invoke);
    // The host is still running (it only closed stdout): stop must end it.
    let report = stop(&host);
    assert_ne!(report.escalation, Escalation::None);
    assert!(report.elapsed < Duration::from_secs(4));
    assert_group_gone(host.pid());
}

fn assert_protocol(mode: &str, extra: &[(&str, &str)], violation: ProtocolViolation) {
    let mut spec = spec(mode, extra);
    if mode == "oversized" && extra.is_empty() {
        // default cap (16 MiB) against 20 MiB of junk
    } else if mode == "oversized" {
        spec.max_line_bytes = 1024 * 1024;
    }
    let host = Host::launch(spec).expect("launch");
    start(&host);
    let began = Instant::now();
    let error = invoke(&host, json!("x"), Duration::from_secs(30)).expect_err(mode);
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{mode} took {:?}",
        began.elapsed()
    );
    assert_eq!(error.code(), "protocol_error", "{mode}: {error:?}");
    assert_eq!(error.stage(), Stage::Invoke);
    match &error {
        HostError::Protocol { violation: v, .. } => assert_eq!(*v, violation, "{mode}"),
        other => panic!("{mode}: unexpected {other:?}"),
    }
    assert!(error.is_terminal());
    let again = invoke(&host, json!("y"), Duration::from_secs(5)).expect_err("terminal");
    assert_eq!(again.code(), "protocol_error");
    let report = stop(&host);
    assert!(
        report.elapsed < Duration::from_secs(4),
        "{mode}: {report:?}"
    );
    assert_group_gone(host.pid());
}

#[test]
fn non_json_line_is_protocol_error() {
    assert_protocol("non_json", &[], ProtocolViolation::InvalidJson);
}

#[test]
fn invalid_utf8_is_protocol_error() {
    assert_protocol("invalid_utf8", &[], ProtocolViolation::InvalidUtf8);
}

#[test]
fn wrong_operation_is_protocol_error() {
    assert_protocol("wrong_operation", &[], ProtocolViolation::WrongOperation);
}

#[test]
fn oversized_line_is_capped() {
    assert_protocol(
        "oversized",
        &[("FAKE_SIZE", "3145728")],
        ProtocolViolation::LineTooLong,
    );
}

#[test]
fn oversized_line_at_default_cap() {
    assert_protocol("oversized", &[], ProtocolViolation::LineTooLong);
}

#[test]
fn missed_deadline_is_timeout_on_time() {
    let host = Host::launch(spec("silent", &[])).expect("launch");
    start(&host);
    let began = Instant::now();
    let error = invoke(&host, json!("x"), Duration::from_millis(1500)).expect_err("timeout");
    let elapsed = began.elapsed();
    assert!(elapsed >= Duration::from_millis(1500), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(3000), "{elapsed:?}");
    assert_eq!(error.code(), "timeout");
    assert_eq!(error.stage(), Stage::Invoke);
    assert_eq!(ErrorInfo::from(error).metadata["timeout_ms"], 1500);
    let again = invoke(&host, json!("y"), Duration::from_secs(5)).expect_err("terminal");
    assert_eq!(again.code(), "timeout");
    // Terminal host: stop skips the protocol and escalates to signals at once.
    let report = stop(&host);
    assert_eq!(report.escalation, Escalation::Terminated);
    assert!(report.elapsed < Duration::from_secs(2), "{report:?}");
    assert_group_gone(host.pid());
}

#[test]
fn host_ignoring_stop_and_sigterm_is_killed_within_bound() {
    let host = Host::launch(spec("ignore_stop", &[])).expect("launch");
    start(&host);
    let output = invoke(&host, json!("x"), Duration::from_secs(10)).expect("invoke ok");
    assert_eq!(output["output"]["echo"], "x");
    let began = Instant::now();
    let report = host.stop(
        Some(&json!({"runtime_id": "runtime-test"})),
        StopPolicy::default(),
    );
    let elapsed = began.elapsed();
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    assert!(
        elapsed >= Duration::from_secs(2),
        "grace must be honoured: {elapsed:?}"
    );
    assert_eq!(report.escalation, Escalation::Killed, "{report:?}");
    assert!(report.response.is_none());
    assert_eq!(report.exit.as_deref(), Some("signal 9"));
    assert!(report.error.is_none());
    assert_group_gone(host.pid());
}

#[test]
fn stop_ends_grandchildren_including_a_new_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids_file = dir.path().join("pids");
    let pids_path = pids_file.to_str().expect("utf8 path");
    let host = Host::launch(spec("grandchildren", &[("FAKE_PIDS", pids_path)])).expect("launch");
    start(&host);
    let text = std::fs::read_to_string(&pids_file).expect("pids written at start");
    let pids: Vec<u32> = text
        .split_whitespace()
        .map(|p| p.parse().expect("pid"))
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(process_alive(pids[0]) && process_alive(pids[1]));
    let report = stop(&host);
    assert_eq!(report.escalation, Escalation::None, "{report:?}");
    assert_group_gone(host.pid());
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|&p| process_alive(p)) {
        assert!(
            Instant::now() < deadline,
            "grandchildren survived: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn failed_start_keeps_adapter_code_and_cleans_up() {
    let host = Host::launch(spec("fail_start", &[])).expect("launch");
    let error = host
        .call(
            "start",
            &json!({"runtime_context": {"runtime_id": "runtime-test"}}),
            Stage::Start,
            Duration::from_secs(30),
        )
        .expect_err("start fails");
    assert_eq!(error.code(), "lifecycle_invalid_config");
    assert_eq!(error.stage(), Stage::Start);
    assert!(!error.is_terminal());
    let report = stop(&host);
    assert!(report.elapsed < Duration::from_secs(3));
    assert_group_gone(host.pid());
}

#[test]
fn launch_failure_is_structured() {
    let mut spec = HostSpec::new("/nonexistent/fabric-host-binary");
    spec.cwd = std::env::temp_dir();
    let error = Host::launch(spec).expect_err("no such program");
    assert_eq!(error.code(), "host_launch_failed");
    assert_eq!(error.stage(), Stage::Start);
}

#[test]
fn concurrent_call_on_one_host_is_busy() {
    let host = Arc::new(Host::launch(spec("slow", &[])).expect("launch"));
    start(&host);
    let worker = {
        let host = Arc::clone(&host);
        std::thread::spawn(move || {
            host.call(
                "invoke",
                &json!({"runtime_context": {"runtime_id": "runtime-test"}, "request": {"input": "a", "sleep": 1.0}}),
                Stage::Invoke,
                Duration::from_secs(10),
            )
        })
    };
    // Wait (bounded) until the first call is in flight (the host logs a marker).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !host.stderr_tail().contains("slow invoke started") {
        assert!(Instant::now() < deadline, "first invoke never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let busy = invoke(&host, json!("b"), Duration::from_secs(10)).expect_err("busy");
    assert_eq!(busy.code(), "runtime_busy");
    assert!(busy.is_state_error());
    let first = worker.join().expect("join").expect("first invoke ok");
    assert_eq!(first["output"]["echo"], "a");
    stop(&host);
    assert_group_gone(host.pid());
}

#[test]
fn two_hundred_hosts_on_one_reactor_thread() {
    const HOSTS: usize = 200;
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("echo.sh");
    std::fs::write(
        &script,
        "while IFS= read -r line; do\n  case \"$line\" in\n    *'\"operation\":\"stop\"'*) echo '{\"operation\":\"stop\",\"outcome\":{\"status\":\"succeeded\"}}'; exit 0;;\n    *) echo '{\"operation\":\"invoke\",\"outcome\":{\"status\":\"succeeded\",\"output\":1}}';;\n  esac\ndone\n",
    )
    .expect("write script");
    let began = Instant::now();
    let hosts: Vec<Arc<Host>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    (0..HOSTS / 8)
                        .map(|_| {
                            let mut spec = HostSpec::new("sh");
                            spec.args = vec![script.clone().into()];
                            spec.env = std::env::vars_os().collect();
                            spec.cwd = dir.path().to_path_buf();
                            Arc::new(Host::launch(spec).expect("launch"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("join"))
            .collect()
    });
    assert_eq!(hosts.len(), HOSTS);
    std::thread::scope(|scope| {
        for chunk in hosts.chunks(HOSTS / 8) {
            scope.spawn(move || {
                for _ in 0..5 {
                    for host in chunk {
                        let output =
                            invoke(host, json!("x"), Duration::from_secs(30)).expect("invoke");
                        assert_eq!(output, json!(1));
                    }
                }
            });
        }
    });
    let reactors = std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .filter_map(Result::ok)
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.trim() == "fabric-reactor")
        })
        .count();
    assert_eq!(reactors, 1, "exactly one reactor thread");
    std::thread::scope(|scope| {
        for chunk in hosts.chunks(HOSTS / 8) {
            scope.spawn(move || {
                for host in chunk {
                    let report = stop(host);
                    assert_eq!(report.escalation, Escalation::None, "{report:?}");
                }
            });
        }
    });
    for host in &hosts {
        assert_group_gone(host.pid());
    }
    assert!(began.elapsed() < Duration::from_secs(60));
}

#[test]
fn dropped_host_is_terminated_and_reaped() {
    let host = Host::launch(spec("silent", &[])).expect("launch");
    start(&host);
    let pid = host.pid();
    drop(host);
    assert_group_gone(pid);
}

#[test]
fn exit_detection_without_pidfd() {
    let mut crash = spec("crash_invoke", &[]);
    crash.use_pidfd = false;
    let host = Host::launch(crash).expect("launch");
    start(&host);
    let began = Instant::now();
    let error = invoke(&host, json!("x"), Duration::from_secs(30)).expect_err("crash");
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(error.code(), "host_crashed");
    assert_eq!(
        ErrorInfo::from(error).metadata.get("host_exit"),
        Some(&json!("exit code 3"))
    );
    stop(&host);
    assert_group_gone(host.pid());

    // A host that keeps stdout open (grandchild) and ignores stop: escalation still ends it.
    let mut stubborn = spec("ignore_stop", &[]);
    stubborn.use_pidfd = false;
    let host = Host::launch(stubborn).expect("launch");
    start(&host);
    let report = stop(&host);
    assert_eq!(report.escalation, Escalation::Killed, "{report:?}");
    assert!(report.elapsed < Duration::from_secs(4));
    assert_group_gone(host.pid());
}

#[test]
fn large_request_and_response_round_trip() {
    // 3 MiB does not fit in a pipe: the caller writes what fits, the reactor the rest.
    let host = Host::launch(spec("ok", &[])).expect("launch");
    start(&host);
    let big = "x".repeat(3 * 1024 * 1024);
    for _ in 0..3 {
        let output = invoke(&host, json!(big), Duration::from_secs(30)).expect("invoke");
        assert_eq!(
            output["output"]["echo"].as_str().map(str::len),
            Some(big.len())
        );
    }
    let small = invoke(&host, json!("after"), Duration::from_secs(10)).expect("small");
    assert_eq!(small["output"]["echo"], "after");
    stop(&host);
    assert_group_gone(host.pid());
}

#[test]
fn host_that_closed_stdin_is_reported_not_hung() {
    let host = Host::launch(spec("close_stdin", &[])).expect("launch");
    start(&host);
    let began = Instant::now();
    let error = invoke(&host, json!("x"), Duration::from_secs(30)).expect_err("closed stdin");
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(error.code(), "host_crashed");
    assert_eq!(error.stage(), Stage::Invoke);
    let report = stop(&host);
    assert!(report.elapsed < Duration::from_secs(4));
    assert_group_gone(host.pid());
}

#[test]
fn finished_operations_do_not_accumulate_deadlines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("echo.sh");
    std::fs::write(
        &script,
        "while IFS= read -r line; do echo '{\"operation\":\"invoke\",\"outcome\":{\"status\":\"succeeded\",\"output\":1}}'; done\n",
    )
    .expect("script");
    let mut spec = HostSpec::new("sh");
    spec.args = vec![script.into()];
    spec.env = std::env::vars_os().collect();
    spec.cwd = dir.path().to_path_buf();
    let host = Host::launch(spec).expect("launch");
    for _ in 0..12_000 {
        // Hour-long deadlines, as with the default runtime timeout.
        invoke(&host, json!("x"), Duration::from_secs(3600)).expect("invoke");
    }
    let stats = fabric_host::engine_stats().expect("stats");
    assert!(
        stats.timers < 10_000,
        "deadline heap keeps finished operations: {stats:?}"
    );
    host.stop(None, fast_policy());
    assert_group_gone(host.pid());
}
