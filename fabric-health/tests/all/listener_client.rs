//! End-to-end tests: the Rust listener and client over real loopback sockets, plus fake
//! listeners that misbehave in specific ways.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fabric_health::client::{self, Check};
use fabric_health::listener::{self, ListenerHandle, ProbeOutcome, Transport};
use fabric_health::wire::{self, EndpointAddr, Secret};
use fabric_health::{Activity, CheckOutcome, CheckReport, CheckRequest, HealthLevel, reason};
use serde_json::{Map, Value, json};

/// Scheduling slack allowed past a deadline on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(250);

fn all_pass(_: HealthLevel, _: Duration) -> ProbeOutcome {
    ProbeOutcome::passed("test:probe")
}

fn ready(runtime: &str) -> CheckRequest {
    CheckRequest::runtime(runtime).with_level(HealthLevel::Ready)
}

fn assert_not_passed(report: &CheckReport, why: &str) {
    assert_eq!(report.outcome, CheckOutcome::Unknown, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some(why), "{report:?}");
    assert!(report.checks.is_empty(), "{report:?}");
}

fn endpoint_json(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(listener::endpoint_path(dir)).unwrap()).unwrap()
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A request line as the real client would build it.
fn request_line(secret: &Secret, nonce: &str, level: &str) -> String {
    let mut body = Map::new();
    body.insert("kind".into(), json!(wire::REQUEST_KIND));
    body.insert("v".into(), json!(1));
    body.insert("nonce".into(), json!(nonce));
    body.insert("level".into(), json!(level));
    body.insert("budget_ms".into(), json!(1000));
    body.insert("issued_at_ms".into(), json!(unix_ms()));
    wire::seal(secret, body)
}

/// Sends `line` and returns whatever the listener writes back before closing.
fn exchange_raw(handle: &ListenerHandle, line: &str) -> String {
    let mut out = String::new();
    match handle.addr() {
        EndpointAddr::Tcp(addr) => {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            stream.write_all(line.as_bytes()).unwrap();
            let _ = stream.read_to_string(&mut out);
        }
        EndpointAddr::Unix(path) => {
            let mut stream = UnixStream::connect(path).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            stream.write_all(line.as_bytes()).unwrap();
            let _ = stream.read_to_string(&mut out);
        }
    }
    out
}

fn write_endpoint(dir: &Path, secret_hex: &str, port: u16, pid: u32, mode: u32) -> PathBuf {
    let path = dir.join(wire::ENDPOINT_FILE_NAME);
    let _ = fs::remove_file(&path);
    let text = json!({
        "schema_version": wire::ENDPOINT_SCHEMA_VERSION,
        "host": "127.0.0.1", "port": port, "pid": pid, "secret": secret_hex,
    });
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&path)
        .unwrap();
    file.write_all(text.to_string().as_bytes()).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// A one-shot fake listener with a known secret: reads one request (authenticated with that
/// secret), then writes whatever `respond` returns.
fn fake_listener(
    dir: &Path,
    respond: impl FnOnce(&Secret, Map<String, Value>) -> Vec<u8> + Send + 'static,
) -> (PathBuf, thread::JoinHandle<()>) {
    let secret_hex = "5a".repeat(32);
    let secret = Secret::from_hex(&secret_hex).unwrap();
    let socket = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let path = write_endpoint(dir, &secret_hex, port, 4242, 0o600);
    let join = thread::spawn(move || {
        let (stream, _) = socket.accept().unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let body = wire::open(&secret, line.trim_end().as_bytes()).expect("client MAC verifies");
        let answer = respond(&secret, body);
        let mut stream = reader.into_inner();
        let _ = stream.write_all(&answer);
    });
    (path, join)
}

fn observation(level: &str, outcome: &str) -> Value {
    json!({"level": level, "outcome": outcome, "reason": null, "source_id": "fake:probe",
           "observed_at": "2026-11-30T12:00:00.000Z"})
}

fn response(secret: &Secret, request: &Map<String, Value>, observations: Value) -> Vec<u8> {
    let mut body = Map::new();
    body.insert("kind".into(), json!(wire::RESPONSE_KIND));
    body.insert("v".into(), json!(1));
    body.insert("nonce".into(), request["nonce"].clone());
    body.insert("pid".into(), json!(4242));
    body.insert("observations".into(), observations);
    wire::seal(secret, body).into_bytes()
}

#[test]
fn ready_passes_with_three_observations_and_full_report() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), all_pass).unwrap();
    let request = ready("runtime-1");
    let mut check = Check::new(&request);
    check.activity(Activity::Busy);
    let report = check.run(handle.endpoint_path());
    assert_eq!(report.outcome, CheckOutcome::Passed, "{report:?}");
    assert_eq!(report.reason, None);
    let levels: Vec<_> = report.checks.iter().map(|c| c.level).collect();
    assert_eq!(levels, HealthLevel::ALL);
    assert!(report.checks.iter().all(|c| c.source_id == "test:probe"));
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(v["schema_version"], "fabric.check/v1alpha1");
    assert_eq!(v["scope"], "runtime");
    assert_eq!(
        v["target"],
        json!({"runtime_id": "runtime-1", "service_id": null})
    );
    assert_eq!(v["level"], "ready");
    assert_eq!(v["activity"], "busy");
    assert!(report.started_at.ends_with('Z') && report.finished_at.ends_with('Z'));
    assert!(report.started_at <= report.finished_at);
    assert!(report.elapsed_ms < 1000);
}

#[test]
fn live_request_probes_only_live() {
    let home = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let handle = listener::spawn(home.path(), move |level, _| {
        log.lock().unwrap().push(level);
        ProbeOutcome::passed("test:probe")
    })
    .unwrap();
    let report = client::check(
        handle.endpoint_path(),
        &CheckRequest::runtime("r"),
        Instant::now() + Duration::from_secs(3),
        Some(Activity::Idle),
    );
    assert_eq!(report.outcome, CheckOutcome::Passed);
    assert_eq!(report.level, Some(HealthLevel::Live));
    assert_eq!(*seen.lock().unwrap(), vec![HealthLevel::Live]);
}

#[test]
fn failed_level_stops_evaluation() {
    let home = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let handle = listener::spawn(home.path(), move |level, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        match level {
            HealthLevel::Live => ProbeOutcome::passed("test:process"),
            _ => ProbeOutcome::failed("test:interface", "interface_closed"),
        }
    })
    .unwrap();
    let report = Check::new(&ready("r")).run(handle.endpoint_path());
    assert_eq!(report.outcome, CheckOutcome::Failed);
    assert_eq!(report.reason.as_deref(), Some("interface_closed"));
    assert_eq!(report.checks.len(), 2);
    assert_eq!(report.checks[1].level, HealthLevel::Active);
    assert_eq!(report.checks[1].source_id, "test:interface");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "ready must not be probed after a failure"
    );
}

#[test]
fn probe_unknown_and_unsupported_pass_through() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), |level, _| match level {
        HealthLevel::Live => ProbeOutcome::passed("test:a"),
        HealthLevel::Active => ProbeOutcome::unsupported("test:b"),
        HealthLevel::Ready => ProbeOutcome::unknown("test:c", "capabilities_unverified"),
    })
    .unwrap();
    let report = Check::new(&ready("r")).run(handle.endpoint_path());
    assert_eq!(report.outcome, CheckOutcome::Unsupported);
    assert_eq!(report.reason.as_deref(), Some(reason::UNSUPPORTED_LEVEL));
    drop(handle);

    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), |level, _| match level {
        HealthLevel::Live => ProbeOutcome::unknown("test:c", "capabilities_unverified"),
        _ => unreachable!("evaluation stops at live"),
    })
    .unwrap();
    let report = Check::new(&ready("r")).run(handle.endpoint_path());
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some("capabilities_unverified"));
    assert_eq!(report.checks.len(), 1);
}

#[test]
fn probe_receives_remaining_budget() {
    let home = tempfile::tempdir().unwrap();
    let budgets = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&budgets);
    let handle = listener::spawn(home.path(), move |_, left| {
        log.lock().unwrap().push(left);
        ProbeOutcome::passed("test:probe")
    })
    .unwrap();
    let request = ready("r").with_timeout_seconds(0.8);
    assert!(Check::new(&request).run(handle.endpoint_path()).passed());
    let budgets = budgets.lock().unwrap();
    assert_eq!(budgets.len(), 3);
    assert!(
        budgets
            .iter()
            .all(|b| !b.is_zero() && *b <= Duration::from_millis(800)),
        "{budgets:?}"
    );
    assert!(
        budgets.windows(2).all(|w| w[1] <= w[0]),
        "one budget shrinks: {budgets:?}"
    );
}

#[test]
fn stalled_ready_probe_times_out_inside_the_deadline() {
    let home = tempfile::tempdir().unwrap();
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let handle = listener::spawn(home.path(), move |level, _| {
        if level == HealthLevel::Ready {
            // Stall until the test ends (the sender is dropped) — far past the deadline.
            let _ = gate.lock().unwrap().recv_timeout(Duration::from_secs(30));
        }
        ProbeOutcome::passed("test:probe")
    })
    .unwrap();
    let request = ready("r").with_timeout_seconds(0.3);
    let started = Instant::now();
    let report = Check::new(&request).run(handle.endpoint_path());
    let took = started.elapsed();
    assert_not_passed(&report, reason::PROBE_TIMEOUT);
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took <= Duration::from_millis(300) + SLACK, "{took:?}");
    drop(release);
}

#[test]
fn stalled_listener_times_out_inside_the_deadline() {
    let home = tempfile::tempdir().unwrap();
    let socket = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let path = write_endpoint(home.path(), &"11".repeat(32), port, 1, 0o600);
    // Accepted by the kernel backlog, never read or answered.
    let request = ready("r").with_timeout_seconds(0.2);
    let started = Instant::now();
    let report = Check::new(&request).run(&path);
    assert_not_passed(&report, reason::PROBE_TIMEOUT);
    assert!(started.elapsed() <= Duration::from_millis(200) + SLACK);
    drop(socket);
}

#[test]
fn expired_deadline_returns_timeout_without_io() {
    let home = tempfile::tempdir().unwrap();
    let request = CheckRequest::runtime("r");
    let mut check = Check::new(&request);
    check.deadline(Instant::now());
    assert_not_passed(
        &check.run(&home.path().join("absent.json")),
        reason::PROBE_TIMEOUT,
    );
}

#[test]
fn forged_request_is_dropped_without_probing() {
    let home = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let handle = listener::spawn(home.path(), move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        ProbeOutcome::passed("test:probe")
    })
    .unwrap();
    let wrong = Secret::from_hex(&"00".repeat(32)).unwrap();
    let answer = exchange_raw(&handle, &request_line(&wrong, &"ab".repeat(32), "ready"));
    assert_eq!(answer, "", "a forged request gets no answer");
    for junk in ["not json\n", "{}\n", "[1,2]\n", "{\"mac\":\"00\"}\n"] {
        assert_eq!(exchange_raw(&handle, junk), "");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // A core holding the wrong secret (stale or foreign endpoint file) never sees `passed`.
    let mut endpoint = endpoint_json(home.path());
    endpoint["secret"] = json!("00".repeat(32));
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join(wire::ENDPOINT_FILE_NAME);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .unwrap();
    file.write_all(endpoint.to_string().as_bytes()).unwrap();
    let report = Check::new(&ready("r")).run(&path);
    assert_not_passed(&report, reason::NO_RESPONSE);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn replayed_nonce_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), all_pass).unwrap();
    let secret = Secret::from_hex(endpoint_json(home.path())["secret"].as_str().unwrap()).unwrap();
    let line = request_line(&secret, &"cd".repeat(32), "live");
    let first = exchange_raw(&handle, &line);
    let body = wire::open(&secret, first.trim_end().as_bytes()).expect("authentic response");
    assert_eq!(body["nonce"], json!("cd".repeat(32)));
    assert_eq!(
        exchange_raw(&handle, &line),
        "",
        "the same line again is dropped"
    );
    // A fresh nonce still works.
    let again = exchange_raw(&handle, &request_line(&secret, &"ce".repeat(32), "live"));
    assert!(wire::open(&secret, again.trim_end().as_bytes()).is_ok());
}

#[test]
fn stale_request_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), all_pass).unwrap();
    let secret = Secret::from_hex(endpoint_json(home.path())["secret"].as_str().unwrap()).unwrap();
    let mut body = Map::new();
    body.insert("kind".into(), json!(wire::REQUEST_KIND));
    body.insert("v".into(), json!(1));
    body.insert("nonce".into(), json!("ef".repeat(32)));
    body.insert("level".into(), json!("live"));
    body.insert("budget_ms".into(), json!(1000));
    body.insert(
        "issued_at_ms".into(),
        json!(unix_ms() - 2 * wire::FRESHNESS_WINDOW_MS),
    );
    assert_eq!(exchange_raw(&handle, &wire::seal(&secret, body)), "");
}

#[test]
fn response_with_wrong_mac_is_authentication_failed() {
    let home = tempfile::tempdir().unwrap();
    let (path, join) = fake_listener(home.path(), |_, request| {
        let wrong = Secret::from_hex(&"77".repeat(32)).unwrap();
        response(&wrong, &request, json!([observation("live", "passed")]))
    });
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&path),
        reason::AUTHENTICATION_FAILED,
    );
    join.join().unwrap();
}

#[test]
fn response_for_another_nonce_is_authentication_failed() {
    let home = tempfile::tempdir().unwrap();
    let (path, join) = fake_listener(home.path(), |secret, mut request| {
        request.insert("nonce".into(), json!("00".repeat(32)));
        response(secret, &request, json!([observation("live", "passed")]))
    });
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&path),
        reason::AUTHENTICATION_FAILED,
    );
    join.join().unwrap();
}

#[test]
fn reflected_request_is_authentication_failed() {
    let home = tempfile::tempdir().unwrap();
    let (path, join) = fake_listener(home.path(), |secret, request| {
        wire::seal(secret, request).into_bytes()
    });
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&path),
        reason::AUTHENTICATION_FAILED,
    );
    join.join().unwrap();
}

#[test]
fn malformed_responses_are_invalid_response() {
    type Respond = Box<dyn FnOnce(&Secret, Map<String, Value>) -> Vec<u8> + Send>;
    let cases: Vec<(&str, Respond)> = vec![
        ("not json", Box::new(|_, _| b"garbage\n".to_vec())),
        (
            "empty observations",
            Box::new(|s, r| response(s, &r, json!([]))),
        ),
        (
            "passed short of the requested level",
            Box::new(|s, r| response(s, &r, json!([observation("live", "passed")]))),
        ),
        (
            "levels out of order",
            Box::new(|s, r| {
                let obs = json!([
                    observation("active", "passed"),
                    observation("live", "passed"),
                    observation("ready", "passed")
                ]);
                response(s, &r, obs)
            }),
        ),
        (
            "evaluation continued after a failure",
            Box::new(|s, r| {
                let obs = json!([
                    observation("live", "failed"),
                    observation("active", "passed"),
                    observation("ready", "passed")
                ]);
                response(s, &r, obs)
            }),
        ),
        (
            "bad outcome",
            Box::new(|s, r| {
                response(
                    s,
                    &r,
                    json!([
                        observation("live", "great"),
                        observation("active", "passed"),
                        observation("ready", "passed")
                    ]),
                )
            }),
        ),
        (
            "bad reason",
            Box::new(|s, r| {
                let mut o = observation("live", "failed");
                o["reason"] = json!("Not Snake");
                response(s, &r, json!([o]))
            }),
        ),
        (
            "bad timestamp",
            Box::new(|s, r| {
                let mut o = observation("live", "failed");
                o["observed_at"] = json!("yesterday");
                response(s, &r, json!([o]))
            }),
        ),
        (
            "oversized line",
            Box::new(|_, _| vec![b'x'; wire::MAX_RESPONSE_BYTES + 10]),
        ),
    ];
    for (name, respond) in cases {
        let home = tempfile::tempdir().unwrap();
        let (path, join) = fake_listener(home.path(), respond);
        let report = Check::new(&ready("r")).run(&path);
        assert_eq!(report.outcome, CheckOutcome::Unknown, "{name}: {report:?}");
        assert_eq!(
            report.reason.as_deref(),
            Some(reason::INVALID_RESPONSE),
            "{name}"
        );
        join.join().unwrap();
    }
}

#[test]
fn listener_closing_without_answer_is_no_response() {
    let home = tempfile::tempdir().unwrap();
    let (path, join) = fake_listener(home.path(), |_, _| Vec::new());
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&path),
        reason::NO_RESPONSE,
    );
    join.join().unwrap();
}

#[test]
fn endpoint_file_is_private_and_removed_at_stop() {
    let home = tempfile::tempdir().unwrap();
    fs::set_permissions(home.path(), fs::Permissions::from_mode(0o700)).unwrap();
    let handle = listener::spawn_with(home.path(), Transport::Unix, all_pass).unwrap();
    let path = handle.endpoint_path().to_path_buf();
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Default transport: a 0600 unix socket inside the (0700) FABRIC_HOME, schema v2.
    let endpoint = endpoint_json(home.path());
    assert_eq!(endpoint["schema_version"], wire::ENDPOINT_SCHEMA_VERSION_V2);
    assert_eq!(endpoint["transport"], "unix");
    assert!(endpoint.get("port").is_none() && endpoint.get("host").is_none());
    let socket = PathBuf::from(endpoint["socket"].as_str().unwrap());
    assert_eq!(handle.addr(), &EndpointAddr::Unix(socket.clone()));
    assert_eq!(handle.port(), None);
    assert_eq!(
        socket.parent().unwrap(),
        fs::canonicalize(home.path()).unwrap()
    );
    {
        use std::os::unix::fs::FileTypeExt;
        let meta = fs::symlink_metadata(&socket).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(endpoint["pid"], std::process::id());
    assert!(wire::valid_nonce(endpoint["secret"].as_str().unwrap()));
    assert!(Check::new(&ready("r")).run(&path).passed());
    // No temporary files are left next to it: the endpoint file and the socket.
    assert_eq!(fs::read_dir(home.path()).unwrap().count(), 2);
    handle.stop();
    assert!(!path.exists() && !socket.exists());
    assert_eq!(fs::read_dir(home.path()).unwrap().count(), 0);
    // After stop the runtime is unavailable, not passed.
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&path),
        reason::RUNTIME_UNAVAILABLE,
    );

    // Dropping the handle also removes it; two listeners get different secrets.
    let a = listener::spawn(home.path(), all_pass).unwrap();
    let secret_a = endpoint_json(home.path())["secret"].clone();
    drop(a);
    assert!(!path.exists());
    let _b = listener::spawn(home.path(), all_pass).unwrap();
    assert_ne!(endpoint_json(home.path())["secret"], secret_a);
}

#[test]
fn missing_endpoint_or_refused_connection_is_unavailable() {
    let home = tempfile::tempdir().unwrap();
    let absent = home.path().join(wire::ENDPOINT_FILE_NAME);
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&absent),
        reason::RUNTIME_UNAVAILABLE,
    );
    assert_not_passed(
        &Check::new(&CheckRequest::service("s")).run(&absent),
        reason::SERVICE_UNAVAILABLE,
    );
    // A port nobody listens on (bound then released).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = write_endpoint(home.path(), &"22".repeat(32), port, 1, 0o600);
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&path),
        reason::RUNTIME_UNAVAILABLE,
    );
}

#[test]
fn stop_during_probe_is_observation_changed() {
    let home = tempfile::tempdir().unwrap();
    let stopped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stopped);
    let handle = listener::spawn(home.path(), move |level, _| {
        if level == HealthLevel::Active {
            flag.store(true, Ordering::SeqCst); // the runtime is stopped while probing
        }
        ProbeOutcome::passed("test:probe")
    })
    .unwrap();
    let request = ready("r");
    let current = || !stopped.load(Ordering::SeqCst);
    let mut check = Check::new(&request);
    check.still_current(&current);
    assert_not_passed(
        &check.run(handle.endpoint_path()),
        reason::OBSERVATION_CHANGED,
    );
}

#[test]
fn server_scope_and_adapters_without_levels_are_unsupported() {
    let home = tempfile::tempdir().unwrap();
    let report = Check::new(&CheckRequest::server()).run(&home.path().join("x"));
    assert_eq!(report.outcome, CheckOutcome::Unsupported);
    assert_eq!(report.reason.as_deref(), Some(reason::UNSUPPORTED_SCOPE));
    assert_eq!(report.level, None);
    let report = client::check_unsupported(&CheckRequest::runtime("r"), Some(Activity::Idle));
    assert_eq!(report.outcome, CheckOutcome::Unsupported);
    assert_eq!(report.reason.as_deref(), Some(reason::UNSUPPORTED_ADAPTER));
    assert_eq!(report.activity, Some(Activity::Idle));
    let request = CheckRequest::runtime("gone");
    assert_not_passed(
        &Check::new(&request).unavailable(),
        reason::RUNTIME_UNAVAILABLE,
    );
}

#[test]
fn concurrent_checks_and_a_check_while_another_probe_stalls() {
    let home = tempfile::tempdir().unwrap();
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let handle = listener::spawn(home.path(), move |level, left| {
        if level == HealthLevel::Ready {
            // `ready` stalls like a long native call; cheaper levels answer at once.
            let _ = gate.lock().unwrap().recv_timeout(left);
            return ProbeOutcome::failed("test:ready", "not_ready");
        }
        ProbeOutcome::passed("test:probe")
    })
    .unwrap();
    let path = handle.endpoint_path().to_path_buf();
    thread::scope(|scope| {
        let stalled = scope.spawn(|| Check::new(&ready("r").with_timeout_seconds(5.0)).run(&path));
        let workers: Vec<_> = (0..6)
            .map(|_| {
                scope.spawn(|| {
                    (0..20)
                        .map(|_| {
                            let request =
                                CheckRequest::runtime("r").with_level(HealthLevel::Active);
                            Check::new(&request).run(&path)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for w in workers {
            for report in w.join().unwrap() {
                assert!(report.passed(), "{report:?}");
            }
        }
        release.send(()).unwrap();
        let report = stalled.join().unwrap();
        assert_eq!(report.outcome, CheckOutcome::Failed, "{report:?}");
        assert_eq!(report.reason.as_deref(), Some("not_ready"));
    });
}
