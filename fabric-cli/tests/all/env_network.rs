//! The container provider's `network` policy against a server on this machine's loopback:
//! with `network: none` the container cannot reach it; with
//! `{"mode": "loopback", "allow_ports": [PORT]}` it reaches that port at its own
//! `127.0.0.1:PORT` (a request answered end to end) and still not a port left off the list.
//! The subprocess provider's `network: "none"` (a network namespace of its own): its exec
//! reaches no host port, while without the setting the same probe does; in both a program
//! that cannot start is `exec_failed` naming it.
//! The probe is `fabric-agent-ctl connect HOST:PORT` (the image's, or this build's), run
//! with the environment's `exec`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use crate::env_container::{self, Prepared};
use crate::support::provider::{config_with, subprocess_descriptor, typed};
use fabric_config::environment_ops::ExecRequest;
use fabric_config::provider::ExecOutput;
use fabric_host::{Environment, Fabric};
use serde_json::{Value, json};

/// A server on `127.0.0.1:<free port>` answering each connection with `pong:` and what it
/// read; stopped (its thread joined) when dropped.
struct Answering {
    port: u16,
    stopped: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Answering {
    fn start() -> Answering {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stopped);
        let thread = thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(mut stream) = stream {
                    let mut asked = Vec::new();
                    let _ = stream.read_to_end(&mut asked);
                    let _ = stream.write_all(&[b"pong:".as_slice(), &asked].concat());
                }
            }
        });
        Answering {
            port,
            stopped,
            thread: Some(thread),
        }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The image's `fabric-agent-ctl connect 127.0.0.1:PORT` in the environment, sending
/// `ping`.
fn probe(environment: &Environment, port: u16) -> ExecOutput {
    probe_with(environment, "/usr/local/bin/fabric-agent-ctl", port)
}

fn probe_with(environment: &Environment, agent_ctl: &str, port: u16) -> ExecOutput {
    let request: ExecRequest = serde_json::from_value(json!({
        "argv": [agent_ctl, "connect", format!("127.0.0.1:{port}")],
        "stdin_hex": hex(b"ping"),
        "timeout_seconds": 30,
    }))
    .expect("request");
    environment.exec_request(&request).expect("exec")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Prepares a container environment with `network`, runs `check` on it and releases it
/// (also when `check` panics).
fn with_network(network: Value, check: impl FnOnce(&Environment)) {
    let prepared = Prepared::new(|settings| settings["network"] = network)
        .expect("podman is available (checked by the test)");
    check(&prepared.environment);
    prepared.release();
}

#[test]
fn container_network_none_reaches_no_host_port_and_loopback_only_the_allowed_one() {
    if !env_container::podman_available() {
        return;
    }
    let allowed = Answering::start();
    let other = Answering::start();
    // the probe works: this machine's servers answer it directly
    let direct = TcpStream::connect(("127.0.0.1", other.port));
    assert!(direct.is_ok());
    drop(direct);

    with_network(json!("none"), |environment| {
        let refused = probe(environment, allowed.port);
        assert_eq!(refused.exit_code, Some(1), "{refused:?}");
        assert_eq!(refused.stdout, "", "{refused:?}");
    });

    let network = json!({"mode": "loopback", "allow_ports": [allowed.port]});
    with_network(network, |environment| {
        let reached = probe(environment, allowed.port);
        assert_eq!(reached.exit_code, Some(0), "{reached:?}");
        assert_eq!(reached.stdout, "pong:ping", "{reached:?}");
        // twice: the relay serves every connection
        assert_eq!(probe(environment, allowed.port).stdout, "pong:ping");
        let refused = probe(environment, other.port);
        assert_eq!(refused.exit_code, Some(1), "{refused:?}");
        // (not its stderr: podman exec may lose a quickly exiting command's stderr)
        assert_eq!(refused.stdout, "", "{refused:?}");
    });
}

#[test]
fn subprocess_network_none_runs_in_a_namespace_that_reaches_no_host_port() {
    let server = Answering::start();
    let agent_ctl = env!("CARGO_BIN_EXE_fabric-agent-ctl");
    for (settings, reaches) in [(json!({}), true), (json!({"network": "none"}), false)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let descriptor = subprocess_descriptor(dir.path());
        let mut settings = settings;
        settings["root"] = json!(dir.path());
        let config = config_with(
            dir.path(),
            "netns",
            json!({}),
            "subprocess",
            &descriptor,
            json!({"settings": settings}),
        );
        let (config, options) = typed(dir.path(), config);
        let fabric = Fabric::new();
        // prepare answered: the runtime server in the namespace is reachable on its socket
        let environment = fabric
            .prepare_environment(&config, &options)
            .expect("prepare");
        let probed = probe_with(&environment, agent_ctl, server.port);
        // a program that cannot start is `exec_failed` naming it, in the namespace or not
        let missing = environment
            .exec_request(&ExecRequest::new(vec!["no-such-program-5b2d".into()]))
            .map(|output| format!("{output:?}"))
            .map_err(fabric_config::ErrorInfo::from);
        fabric.release_environment(&environment).expect("release");
        let missing = missing.expect_err("a missing program ran");
        assert_eq!(missing.code, "exec_failed", "{settings}: {missing:?}");
        assert!(
            missing.message.contains("`no-such-program-5b2d`"),
            "{missing:?}"
        );
        if reaches {
            assert_eq!(probed.stdout, "pong:ping", "{probed:?}");
        } else {
            assert_eq!(probed.exit_code, Some(1), "{probed:?}");
            assert!(probed.stderr.contains("unreachable"), "{probed:?}");
        }
    }
}
