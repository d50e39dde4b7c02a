//! Cross-language: the Rust client checks the Python adapter helper's listener
//! (`bindings/python/src/fabric_core/adapter_health.py`). Interpreter: `FABRIC_TEST_PYTHON`,
//! else `python3`; skipped only when neither runs.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::Host;
use fabric_health::{CheckRequest, HealthLevel};

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

fn start_host(python: &str, modes: &str) -> Host {
    start_host_on(python, modes, "unix")
}

fn start_host_on(python: &str, modes: &str, transport: &str) -> Host {
    let mut command = Command::new(python);
    command.arg("-c").arg(HOST).arg(module_path());
    command.env("FABRIC_HEALTH_TRANSPORT", transport);
    Host::start("python", command, modes)
}

#[test]
fn rust_client_checks_python_listener() {
    let Some(python) = python() else {
        return support::dependency::missing(
            "python3",
            "apt-get install python3, or set FABRIC_TEST_PYTHON",
        );
    };

    // All levels pass; the endpoint file is private and gone after stop.
    let host = start_host(&python, "{}");
    let request = CheckRequest::runtime("R1").with_level(HealthLevel::Ready);
    support::assert_all_levels_pass(&host, &request, "py");
    // A second core with the wrong secret gets no `passed`.
    support::assert_forged_secret_gets_no_answer(&host, &request);
    support::assert_stop_removes_endpoint(host, &request);

    support::assert_failure_and_stall(|modes| start_host(&python, modes), &request);

    // 500 idle attacker connections on TCP: 40/40 checks still pass.
    let host = start_host_on(&python, "{}", "tcp");
    let attacker = support::Attacker::start(support::tcp_addr(&host.endpoint()), 500);
    support::assert_checks_pass_under_attack(&host.endpoint(), &attacker);
    attacker.stop();
    host.stop();
}
