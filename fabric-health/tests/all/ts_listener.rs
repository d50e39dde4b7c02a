//! Cross-language: the Rust client checks the TypeScript adapter host library's listener
//! (`bindings/typescript/src/adapter/health.ts`, used by `serve()` from `fabric-core/adapter`).
//! Needs `node`; builds `bindings/typescript` (npm run build) when its `dist/` is missing or
//! stale.
//! Without node it fails, unless `FABRIC_ALLOW_SKIPS=1` (tests/dependency.rs).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::Host;
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

fn start_host(module: &Path, modes: &str) -> Host {
    start_host_on(module, modes, "unix")
}

fn start_host_on(module: &Path, modes: &str, transport: &str) -> Host {
    let mut command = Command::new("node");
    command.arg("-e").arg(HOST).arg(module);
    command.env("FABRIC_HEALTH_TRANSPORT", transport);
    Host::start("node", command, modes)
}

#[test]
fn rust_client_checks_typescript_listener() {
    if node().is_none() {
        return support::dependency::missing("node", "Node.js 20 or later (scripts/setup.sh)");
    }
    let module = adapter_module();

    // All levels pass; the endpoint file is private and gone after stop.
    let host = start_host(&module, "{}");
    let request = CheckRequest::runtime("R1").with_level(HealthLevel::Ready);
    support::assert_all_levels_pass(&host, &request, "ts");
    // Many checks in a row: every nonce is fresh, every answer verifies.
    for _ in 0..20 {
        let report = Check::new(&request).run(&host.endpoint());
        assert_eq!(report.outcome, CheckOutcome::Passed, "{report:?}");
    }
    // A core with the wrong secret gets no `passed`.
    support::assert_forged_secret_gets_no_answer(&host, &request);
    // A wrong pid in the endpoint file: the answer is authentic but not from that host.
    let mut endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.endpoint()).unwrap()).unwrap();
    endpoint["pid"] = 1.into();
    let other = tempfile::tempdir().unwrap();
    let other_path = other.path().join(wire::ENDPOINT_FILE_NAME);
    support::write_private(&other_path, &endpoint.to_string());
    let report = Check::new(&request).run(&other_path);
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some(reason::INVALID_RESPONSE));
    support::assert_stop_removes_endpoint(host, &request);

    support::assert_failure_and_stall(|modes| start_host(&module, modes), &request);

    // 500 idle attacker connections on TCP: 40/40 checks still pass.
    let host = start_host_on(&module, "{}", "tcp");
    let attacker = support::Attacker::start(support::tcp_addr(&host.endpoint()), 500);
    support::assert_checks_pass_under_attack(&host.endpoint(), &attacker);
    attacker.stop();
    host.stop();
}
