//! Shared support for the cross-language listener tests: a child host process that serves a
//! health listener in a private temp directory, and the checks every listener must pass.

/// The one rule for a missing dependency (`tests/dependency.rs` at the workspace root).
#[path = "../../../../tests/dependency.rs"]
pub mod dependency;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use fabric_health::client::Check;
use fabric_health::wire;
use fabric_health::{CheckOutcome, CheckRequest, reason};

/// A host process that prints `listening` once its listener is up and stops it when its stdin
/// closes.
pub struct Host {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    home: tempfile::TempDir,
    name: &'static str,
}

impl Host {
    /// Spawns `command` with the home directory and `modes` appended as its last two arguments
    /// and waits (bounded) for its `listening` line. `name` labels failures (`python`, `node`).
    pub fn start(name: &'static str, mut command: Command, modes: &str) -> Host {
        let home = tempfile::tempdir().unwrap();
        {
            // Like the FABRIC_HOME the core creates.
            use std::os::unix::fs::PermissionsExt;
            let private = std::fs::Permissions::from_mode(0o700);
            std::fs::set_permissions(home.path(), private).unwrap();
        }
        let mut child = command
            .arg(home.path())
            .arg(modes)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{name} host starts"));
        assert_eq!(line.trim(), "listening");
        let stdin = child.stdin.take();
        Host {
            child: Some(child),
            stdin,
            home,
            name,
        }
    }

    pub fn endpoint(&self) -> PathBuf {
        self.home.path().join(wire::ENDPOINT_FILE_NAME)
    }

    /// Closes stdin (the host stops its listener and exits) and waits for the exit.
    pub fn stop(mut self) -> PathBuf {
        drop(self.stdin.take());
        let mut child = self.child.take().expect("running");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let name = self.name;
        let status = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{name} host exits"));
        assert!(status.unwrap().success());
        self.endpoint()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Writes `text` to a new file with mode 0600.
pub fn write_private(path: &Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// All levels pass with `{prefix}:{level}` source ids and the endpoint file is private.
pub fn assert_all_levels_pass(host: &Host, request: &CheckRequest, prefix: &str) {
    let report = Check::new(request).run(&host.endpoint());
    assert_eq!(report.outcome, CheckOutcome::Passed, "{report:?}");
    let sources: Vec<_> = report.checks.iter().map(|c| c.source_id.as_str()).collect();
    let expected: Vec<_> = ["live", "active", "ready"]
        .iter()
        .map(|level| format!("{prefix}:{level}"))
        .collect();
    assert_eq!(sources, expected);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(host.endpoint())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The default transport: a 0600 unix socket inside the 0700 home.
    let endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.endpoint()).unwrap()).unwrap();
    assert_eq!(
        endpoint["schema_version"],
        wire::ENDPOINT_SCHEMA_VERSION_V2,
        "{endpoint}"
    );
    assert_eq!(endpoint["transport"], "unix", "{endpoint}");
    let socket = PathBuf::from(endpoint["socket"].as_str().unwrap());
    let home = std::fs::canonicalize(host.endpoint().parent().unwrap()).unwrap();
    assert_eq!(socket.parent().unwrap(), home);
    {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let meta = std::fs::symlink_metadata(&socket).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::metadata(&home).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
}

/// A core with the wrong secret gets no `passed`.
pub fn assert_forged_secret_gets_no_answer(host: &Host, request: &CheckRequest) {
    let mut endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.endpoint()).unwrap()).unwrap();
    endpoint["secret"] = "00".repeat(32).into();
    let forged = tempfile::tempdir().unwrap();
    let forged_path = forged.path().join(wire::ENDPOINT_FILE_NAME);
    write_private(&forged_path, &endpoint.to_string());
    let report = Check::new(request).run(&forged_path);
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some(reason::NO_RESPONSE));
}

/// Stops `host`: the endpoint file is gone and a check reports the runtime unavailable.
pub fn assert_stop_removes_endpoint(host: Host, request: &CheckRequest) {
    let path = host.stop();
    assert!(!path.exists(), "endpoint file removed at stop");
    let report = Check::new(request).run(&path);
    assert_eq!(report.reason.as_deref(), Some(reason::RUNTIME_UNAVAILABLE));
}

/// `start(modes)` starts a host: a failing `active` stops evaluation there, and a stalling
/// `ready` gives unknown/probe_timeout inside the deadline.
pub fn assert_failure_and_stall(start: impl Fn(&str) -> Host, request: &CheckRequest) {
    // `active` fails: evaluation stops there.
    let host = start(r#"{"active": "fail"}"#);
    let report = Check::new(request).run(&host.endpoint());
    assert_eq!(report.outcome, CheckOutcome::Failed, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some("not_ready"));
    assert_eq!(report.checks.len(), 2);
    host.stop();

    // `ready` stalls: unknown/probe_timeout inside the deadline.
    let host = start(r#"{"ready": "stall"}"#);
    let request = request.clone().with_timeout_seconds(0.4);
    let started = Instant::now();
    let report = Check::new(&request).run(&host.endpoint());
    let took = started.elapsed();
    assert_eq!(report.outcome, CheckOutcome::Unknown, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some(reason::PROBE_TIMEOUT));
    assert!(took <= Duration::from_millis(400 + 250), "{took:?}");
    host.stop();
}

/// Held by the running [`Attacker`]: one attack at a time in this test binary, as when each
/// test file was its own binary. An attack holds `n` descriptors (and an in-process listener
/// its side of them); two at once could exceed a soft limit of 1024 descriptors.
static ONE_ATTACK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A local process holding many idle connections to a TCP health listener: it opens `n`
/// connections, never writes, and reopens every connection the listener closes.
pub struct Attacker {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<thread::JoinHandle<usize>>,
    held: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    _alone: std::sync::MutexGuard<'static, ()>,
}

impl Attacker {
    /// Starts attacking `addr` and returns once `n` connections were opened once.
    pub fn start(addr: std::net::SocketAddr, n: usize) -> Attacker {
        use std::io::{ErrorKind, Read};
        use std::net::TcpStream;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let alone = ONE_ATTACK
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let held = std::sync::Arc::new(AtomicUsize::new(0));
        let (ready_tx, ready_rx) = mpsc::channel();
        let (flag, count) = (stop.clone(), held.clone());
        let thread = thread::spawn(move || {
            let mut conns: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
            let mut opened = 0usize;
            let mut first = true;
            while !flag.load(Ordering::SeqCst) {
                for slot in conns.iter_mut() {
                    let closed = match slot {
                        Some(stream) => {
                            let mut byte = [0u8; 1];
                            !matches!(stream.read(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock)
                        }
                        None => true,
                    };
                    if closed {
                        *slot = TcpStream::connect_timeout(&addr, Duration::from_millis(200))
                            .ok()
                            .inspect(|s| {
                                let _ = s.set_nonblocking(true);
                            });
                        opened += usize::from(slot.is_some());
                    }
                }
                count.store(conns.iter().flatten().count(), Ordering::SeqCst);
                if first {
                    first = false;
                    let _ = ready_tx.send(());
                }
                thread::sleep(Duration::from_millis(10));
            }
            opened
        });
        ready_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("attacker opens its connections");
        Attacker {
            stop,
            thread: Some(thread),
            held,
            _alone: alone,
        }
    }

    /// Connections open at the last sweep.
    pub fn held(&self) -> usize {
        self.held.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops and returns how many connections were opened in all.
    pub fn stop(mut self) -> usize {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.take().map_or(0, |t| t.join().unwrap())
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// 40 sequential `ready` checks through `endpoint` while `attacker` holds its connections:
/// every one passes.
pub fn assert_checks_pass_under_attack(endpoint: &Path, attacker: &Attacker) {
    let request = CheckRequest::runtime("R1").with_level(fabric_health::HealthLevel::Ready);
    let mut passed = 0;
    let mut failures = Vec::new();
    for _ in 0..40 {
        let report = Check::new(&request).run(endpoint);
        if report.outcome == CheckOutcome::Passed {
            passed += 1;
        } else {
            failures.push(report.reason.clone());
        }
    }
    assert!(attacker.held() >= 100, "attack is on: {}", attacker.held());
    assert_eq!(passed, 40, "40/40 checks pass under attack: {failures:?}");
}

/// The TCP address in a v1 endpoint file.
pub fn tcp_addr(endpoint: &Path) -> std::net::SocketAddr {
    let value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(endpoint).unwrap()).unwrap();
    assert_eq!(
        value["schema_version"],
        wire::ENDPOINT_SCHEMA_VERSION,
        "{value}"
    );
    let port = value["port"].as_u64().unwrap() as u16;
    std::net::SocketAddr::from(([127, 0, 0, 1], port))
}
