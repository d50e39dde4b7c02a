//! Cross-language: the Rust client checks the TypeScript adapter host library's listener
//! (`bindings/typescript/src/adapter/health.ts`, used by `serve()` from `fabric-core/adapter`).
//! Needs `node`; builds `bindings/typescript` (npm run build) when its `dist/` is missing or
//! stale.
//! Skipped only when node is missing and `CI` is unset.

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
const [adapterPath, home, modesText] = process.argv.slice(1);
const { serveHealth } = require(adapterPath);
const modes = JSON.parse(modesText);
const runtime = {
  async check(level, { signal }) {
    const mode = modes[level] ?? "pass";
    if (mode === "stall") await new Promise(() => {});
    if (mode === "fail") return { outcome: "failed", reason: "not_ready", source_id: "ts:" + level };
    return { outcome: "passed", source_id: "ts:" + level };
  },
};
serveHealth(runtime, home).then((listener) => {
  process.stdout.write("listening\n");
  process.stdin.resume();
  process.stdin.on("end", () => listener.stop().then(() => process.exit(0)));
});
"#;

fn typescript_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bindings/typescript")
}

fn node() -> Option<&'static str> {
    Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some("node")
}

/// `dist/adapter/index.js`, built with `npm run build` when the compiled listener is missing
/// or older than its source.
fn adapter_module() -> PathBuf {
    let module = typescript_dir().join("dist/adapter/index.js");
    let modified = |p: PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let compiled = modified(typescript_dir().join("dist/adapter/health.js"));
    let source = modified(typescript_dir().join("src/adapter/health.ts"));
    if compiled.is_none() || compiled < source {
        let status = Command::new("npm")
            .args(["run", "--silent", "build"])
            .current_dir(typescript_dir())
            .status()
            .expect("npm runs (bindings/typescript needs `npm ci` first)");
        assert!(status.success(), "bindings/typescript builds");
    }
    module
}

struct NodeHost {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    home: tempfile::TempDir,
}

impl NodeHost {
    fn start(module: &Path, modes: &str) -> NodeHost {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new("node")
            .arg("-e")
            .arg(HOST)
            .arg(module)
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
            .expect("node host starts");
        assert_eq!(line.trim(), "listening");
        let stdin = child.stdin.take();
        NodeHost {
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
            .expect("node host exits");
        assert!(status.unwrap().success());
        self.endpoint()
    }
}

impl Drop for NodeHost {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn write_private(path: &Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

#[test]
fn rust_client_checks_typescript_listener() {
    if node().is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI needs node");
        eprintln!("skipping: node is not installed");
        return;
    }
    let module = adapter_module();

    // All levels pass; the endpoint file is private and gone after stop.
    let host = NodeHost::start(&module, "{}");
    let request = CheckRequest::runtime("R1").with_level(HealthLevel::Ready);
    let report = Check::new(&request).run(&host.endpoint());
    assert_eq!(report.outcome, CheckOutcome::Passed, "{report:?}");
    let sources: Vec<_> = report.checks.iter().map(|c| c.source_id.as_str()).collect();
    assert_eq!(sources, ["ts:live", "ts:active", "ts:ready"]);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(host.endpoint())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Many checks in a row: every nonce is fresh, every answer verifies.
    for _ in 0..20 {
        let report = Check::new(&request).run(&host.endpoint());
        assert_eq!(report.outcome, CheckOutcome::Passed, "{report:?}");
    }
    // A core with the wrong secret gets no `passed`.
    let mut endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.endpoint()).unwrap()).unwrap();
    endpoint["secret"] = "00".repeat(32).into();
    let forged = tempfile::tempdir().unwrap();
    let forged_path = forged.path().join(wire::ENDPOINT_FILE_NAME);
    write_private(&forged_path, &endpoint.to_string());
    let report = Check::new(&request).run(&forged_path);
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some(reason::NO_RESPONSE));
    // A wrong pid in the endpoint file: the answer is authentic but not from that host.
    let mut endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.endpoint()).unwrap()).unwrap();
    endpoint["pid"] = 1.into();
    let other = tempfile::tempdir().unwrap();
    let other_path = other.path().join(wire::ENDPOINT_FILE_NAME);
    write_private(&other_path, &endpoint.to_string());
    let report = Check::new(&request).run(&other_path);
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some(reason::INVALID_RESPONSE));

    let path = host.stop();
    assert!(!path.exists(), "endpoint file removed at stop");
    let report = Check::new(&request).run(&path);
    assert_eq!(report.reason.as_deref(), Some(reason::RUNTIME_UNAVAILABLE));

    // `active` fails: evaluation stops there.
    let host = NodeHost::start(&module, r#"{"active": "fail"}"#);
    let report = Check::new(&request).run(&host.endpoint());
    assert_eq!(report.outcome, CheckOutcome::Failed, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some("not_ready"));
    assert_eq!(report.checks.len(), 2);
    host.stop();

    // `ready` stalls: unknown/probe_timeout inside the deadline.
    let host = NodeHost::start(&module, r#"{"ready": "stall"}"#);
    let request = request.with_timeout_seconds(0.4);
    let started = Instant::now();
    let report = Check::new(&request).run(&host.endpoint());
    let took = started.elapsed();
    assert_eq!(report.outcome, CheckOutcome::Unknown, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some(reason::PROBE_TIMEOUT));
    assert!(took <= Duration::from_millis(400 + 250), "{took:?}");
    host.stop();
}
