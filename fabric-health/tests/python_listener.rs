//! Cross-language: the Rust client checks the Python adapter helper's listener
//! (`bindings/python/src/fabric_core/adapter_health.py`). Interpreter: `FABRIC_TEST_PYTHON`,
//! else `python3`; skipped only when neither runs.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use fabric_health::client::Check;
use fabric_health::wire;
use fabric_health::{CheckOutcome, CheckRequest, HealthLevel, reason};

const HOST: &str = r#"
import asyncio, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("adapter_health", sys.argv[1])
ah = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ah)
modes = json.loads(sys.argv[3])

class Runtime:
    async def check(self, level):
        mode = modes.get(level, "pass")
        if mode == "stall":
            await asyncio.sleep(60)
        if mode == "fail":
            return {"outcome": "failed", "reason": "not_ready", "source_id": "py:" + level}
        return {"outcome": "passed", "source_id": "py:" + level}

listener = ah.serve_health(Runtime(), sys.argv[2])
print("listening", flush=True)
sys.stdin.read()
listener.stop()
"#;

fn python() -> Option<String> {
    let candidate = std::env::var("FABRIC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&candidate)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(candidate)
}

fn module_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bindings/python/src/fabric_core/adapter_health.py")
}

struct PyHost {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    home: tempfile::TempDir,
}

impl PyHost {
    fn start(python: &str, modes: &str) -> PyHost {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(python)
            .arg("-c")
            .arg(HOST)
            .arg(module_path())
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
            .expect("python host starts");
        assert_eq!(line.trim(), "listening");
        let stdin = child.stdin.take();
        PyHost {
            child: Some(child),
            stdin,
            home,
        }
    }

    fn endpoint(&self) -> PathBuf {
        self.home.path().join(wire::ENDPOINT_FILE_NAME)
    }

    /// Closes stdin (the host stops its listener and exits) and waits for the exit.
    fn stop(mut self) -> PathBuf {
        drop(self.stdin.take());
        let mut child = self.child.take().expect("running");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let status = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("python host exits");
        assert!(status.unwrap().success());
        self.endpoint()
    }
}

impl Drop for PyHost {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn rust_client_checks_python_listener() {
    let Some(python) = python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs python3 or FABRIC_TEST_PYTHON"
        );
        eprintln!("skipping: no python3 (set FABRIC_TEST_PYTHON)");
        return;
    };

    // All levels pass; the endpoint file is private and gone after stop.
    let host = PyHost::start(&python, "{}");
    let request = CheckRequest::runtime("R1").with_level(HealthLevel::Ready);
    let report = Check::new(&request).run(&host.endpoint());
    assert_eq!(report.outcome, CheckOutcome::Passed, "{report:?}");
    let sources: Vec<_> = report.checks.iter().map(|c| c.source_id.as_str()).collect();
    assert_eq!(sources, ["py:live", "py:active", "py:ready"]);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(host.endpoint())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A second core with the wrong secret gets no `passed`.
    let mut endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.endpoint()).unwrap()).unwrap();
    endpoint["secret"] = "00".repeat(32).into();
    let forged = tempfile::tempdir().unwrap();
    let forged_path = forged.path().join(wire::ENDPOINT_FILE_NAME);
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&forged_path)
            .unwrap();
        file.write_all(endpoint.to_string().as_bytes()).unwrap();
    }
    let report = Check::new(&request).run(&forged_path);
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some(reason::NO_RESPONSE));
    let path = host.stop();
    assert!(!path.exists(), "endpoint file removed at stop");
    let report = Check::new(&request).run(&path);
    assert_eq!(report.reason.as_deref(), Some(reason::RUNTIME_UNAVAILABLE));

    // `active` fails: evaluation stops there.
    let host = PyHost::start(&python, r#"{"active": "fail"}"#);
    let report = Check::new(&request).run(&host.endpoint());
    assert_eq!(report.outcome, CheckOutcome::Failed, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some("not_ready"));
    assert_eq!(report.checks.len(), 2);
    host.stop();

    // `ready` stalls: unknown/probe_timeout inside the deadline.
    let host = PyHost::start(&python, r#"{"ready": "stall"}"#);
    let request = request.with_timeout_seconds(0.4);
    let started = Instant::now();
    let report = Check::new(&request).run(&host.endpoint());
    let took = started.elapsed();
    assert_eq!(report.outcome, CheckOutcome::Unknown, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some(reason::PROBE_TIMEOUT));
    assert!(took <= Duration::from_millis(400 + 250), "{took:?}");
    host.stop();
}
