//! `fabric-agent-ctl serve` and the command bridge end to end with the scripted adapter:
//! lifecycle, several runtimes by id, health checks, ownership files, every limit and code.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use crate::support::agent_ctl::{AGENT_CTL, Serve, code, ctl_at, raw, raw_with, response};
use fabric_config::bridge::{Operation, Payload, Request, Response};
use serde_json::{Value, json};

fn config(dir: &Path, name: &str, settings: Value) -> String {
    let sub = dir.join(format!("cfg-{name}"));
    std::fs::create_dir_all(&sub).expect("config dir");
    support::scripted_config(&sub, name, settings)
}

fn write(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).expect("write");
    path.to_string_lossy().into_owned()
}

fn start(serve: &Serve, agent: &str, config: &str) -> String {
    let output = serve.ctl(&["start", "--agent", agent, "--config", config]);
    let started = response(&output);
    assert_eq!(output.status.code(), Some(0), "{started}");
    assert_eq!(started["changed"], true);
    assert!(started["result"]["runtime_binding"].is_string());
    started["result"]["runtime_id"]
        .as_str()
        .expect("runtime_id")
        .to_owned()
}

fn invoke(serve: &Serve, agent: &str, id: &str, input: &str) -> Value {
    let file = write(&serve.dir, "input.json", &json!(input));
    let output = serve.ctl(&[
        "invoke",
        "--agent",
        agent,
        "--runtime-id",
        id,
        "--input",
        &file,
    ]);
    let result = response(&output);
    assert_eq!(output.status.code(), Some(0), "{result}");
    assert_eq!(result["changed"], Value::Null);
    result["result"].clone()
}

#[test]
fn two_turn_conversation_checks_stop_and_ownership_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let socket = dir.path().join("fabric.sock");
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(&dir.path().join("fabric.lock")), 0o600);
    assert!(dir.path().join("fabric.unclean").exists());
    for sub in ["tmp", "workspace", "artifacts"] {
        assert_eq!(mode(&dir.path().join(sub)), 0o700, "{sub}");
    }

    // A server check before any runtime exists.
    let check = serve.ctl(&["check"]);
    let report = response(&check);
    assert_eq!(check.status.code(), Some(0), "{report}");
    assert_eq!(report["changed"], false);
    assert_eq!(report["result"]["schema_version"], "fabric.check/v1alpha1");
    assert_eq!(report["result"]["scope"], "server");
    assert_eq!(report["result"]["outcome"], "passed");

    let settings = json!({"replies": ["first: {input}", "second: {input} after {previous_input}"]});
    let cfg = config(dir.path(), "hello", settings);
    let id = start(&serve, "hello", &cfg);
    let first = invoke(&serve, "hello", &id, "Ada");
    assert_eq!(first["status"], "succeeded");
    assert_eq!(first["output"]["response"], "first: Ada");
    // The second turn through --request on stdin, with the caller's request id.
    let output = ctl_at(
        AGENT_CTL,
        dir.path(),
        &[
            "invoke",
            "--agent",
            "hello",
            "--runtime-id",
            &id,
            "--request",
            "-",
        ],
        Some(br#"{"input": "Bo", "request_id": "turn-2"}"#),
    );
    let second = response(&output);
    assert_eq!(output.status.code(), Some(0), "{second}");
    assert_eq!(
        second["result"]["output"]["response"],
        "second: Bo after Ada"
    );
    assert_eq!(second["result"]["request_id"], "turn-2");

    let ready = serve.ctl(&["check", "--agent", "hello", "--runtime-id", &id, "--ready"]);
    let report = response(&ready);
    assert_eq!(ready.status.code(), Some(0), "{report}");
    assert_eq!(report["result"]["scope"], "runtime");
    assert_eq!(report["result"]["level"], "ready");
    assert_eq!(report["result"]["outcome"], "passed");

    let stop = serve.ctl(&["stop", "--agent", "hello", "--runtime-id", &id]);
    assert_eq!(stop.status.code(), Some(0));
    assert_eq!(response(&stop)["changed"], true);
    assert_eq!(response(&stop)["result"], Value::Null);
    let again = serve.ctl(&["stop", "--agent", "hello", "--runtime-id", &id]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(response(&again)["changed"], false);

    let input = write(dir.path(), "late.json", &json!("late"));
    let late = serve.ctl(&[
        "invoke",
        "--agent",
        "hello",
        "--runtime-id",
        &id,
        "--input",
        &input,
    ]);
    assert_eq!(late.status.code(), Some(1));
    let late = response(&late);
    assert_eq!(code(&late), Some("runtime_unavailable"));
    assert_eq!(late["error"]["stage"], "invoke");
    let gone = serve.ctl(&["check", "--agent", "hello", "--runtime-id", &id]);
    assert_eq!(
        gone.status.code(),
        Some(1),
        "a stopped runtime's check does not pass"
    );
    assert_eq!(response(&gone)["result"]["reason"], "runtime_unavailable");

    // A new start after a stop.
    let next = start(&serve, "hello", &cfg);
    assert_ne!(next, id);
    assert_eq!(
        invoke(&serve, "hello", &next, "Cy")["output"]["response"],
        "first: Cy"
    );

    let (status, stderr) = serve.terminate();
    assert_eq!(status, Some(0), "{stderr}");
    assert!(!socket.exists(), "the server removes its socket");
    assert!(dir.path().join("fabric.lock").exists());
    assert!(
        dir.path().join("fabric.unclean").exists(),
        "a used sandbox keeps its marker"
    );
    // The replacement server refuses the used sandbox.
    let output = std::process::Command::new(AGENT_CTL)
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", &socket)
        .output()
        .expect("serve");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cleanup_unconfirmed"));
    assert!(output.stdout.is_empty());
}

#[test]
fn several_runtimes_by_id_are_independent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let alpha_cfg = config(
        dir.path(),
        "alpha",
        json!({"replies": ["alpha {turn}: {input}"]}),
    );
    let beta_cfg = config(
        dir.path(),
        "beta",
        json!({"replies": ["beta {turn}: {input}"]}),
    );
    let a = start(&serve, "alpha", &alpha_cfg);
    let b = start(&serve, "beta", &beta_cfg);
    let a2 = start(&serve, "alpha", &alpha_cfg);
    assert!(a != b && a != a2);
    assert_eq!(
        invoke(&serve, "alpha", &a, "x")["output"]["response"],
        "alpha 1: x"
    );
    assert_eq!(
        invoke(&serve, "beta", &b, "y")["output"]["response"],
        "beta 1: y"
    );
    assert_eq!(
        invoke(&serve, "alpha", &a, "z")["output"]["response"],
        "alpha 2: z"
    );
    assert_eq!(
        invoke(&serve, "alpha", &a2, "w")["output"]["response"],
        "alpha 1: w"
    );

    // The agent must match the runtime.
    let input = write(dir.path(), "in.json", &json!("q"));
    let wrong = serve.ctl(&[
        "invoke",
        "--agent",
        "beta",
        "--runtime-id",
        &a,
        "--input",
        &input,
    ]);
    assert_eq!(wrong.status.code(), Some(1));
    assert_eq!(code(&response(&wrong)), Some("wrong_agent"));
    let unknown = serve.ctl(&["stop", "--agent", "beta", "--runtime-id", "runtime-nope"]);
    assert_eq!(code(&response(&unknown)), Some("runtime_unavailable"));
    assert_eq!(response(&unknown)["error"]["stage"], "request");

    // Stopping one leaves the others usable.
    let stop = serve.ctl(&["stop", "--agent", "alpha", "--runtime-id", &a]);
    assert_eq!(stop.status.code(), Some(0));
    assert_eq!(
        invoke(&serve, "beta", &b, "v")["output"]["response"],
        "beta 2: v"
    );
    assert_eq!(
        invoke(&serve, "alpha", &a2, "u")["output"]["response"],
        "alpha 2: u"
    );
    // SIGTERM stops the idle runtimes and exits 0.
    let (status, stderr) = serve.terminate();
    assert_eq!(status, Some(0), "{stderr}");
}

#[test]
fn a_sandbox_directory_replaced_by_a_link_is_refused() {
    // Code in a sandbox sharing this machine's filesystem swaps `artifacts` for a link to a
    // directory of the user's: the next server refuses it instead of writing there.
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("artifacts")).expect("symlink");
    let output = std::process::Command::new(AGENT_CTL)
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", dir.path().join("fabric.sock"))
        .output()
        .expect("serve");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("path_refused"), "{stderr}");
    assert!(!dir.path().join("fabric.unclean").exists());
    assert_eq!(
        std::fs::read_dir(outside.path()).expect("outside").count(),
        0
    );
}

#[test]
fn the_lock_refuses_a_second_server_and_an_unused_server_removes_its_marker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let output = std::process::Command::new(AGENT_CTL)
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", dir.path().join("fabric.sock"))
        .output()
        .expect("second serve");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("host_lock_held"), "{stderr}");
    // The first server still answers.
    assert_eq!(serve.ctl(&["check"]).status.code(), Some(0));
    let (status, _) = serve.terminate();
    assert_eq!(status, Some(0));
    assert!(
        !dir.path().join("fabric.unclean").exists(),
        "unused: marker removed"
    );
    // So a replacement server may start, and refuses extra arguments.
    let replacement = Serve::ours(dir.path());
    replacement.terminate();
    let extra = std::process::Command::new(AGENT_CTL)
        .args(["serve", "--agent", "x"])
        .env("FABRIC_HOST_SOCKET", dir.path().join("fabric.sock"))
        .output()
        .expect("serve");
    assert_eq!(extra.status.code(), Some(1));
}

/// The direct children of `pid` (from /proc).
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    found
}

#[test]
fn a_server_killed_mid_start_leaves_the_marker_and_the_next_server_refuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let cfg = config(dir.path(), "slow", json!({"start_delay_ms": 60000}));
    let socket_dir = dir.path().to_path_buf();
    let client = std::thread::spawn(move || {
        ctl_at(
            AGENT_CTL,
            &socket_dir,
            &["start", "--agent", "slow", "--config", &cfg],
            None,
        )
    });
    // The start is in flight once the adapter host is the server's child.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let hosts = loop {
        let hosts = children(serve.pid());
        if !hosts.is_empty() {
            break hosts;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no adapter host appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    serve.kill();
    for host in hosts {
        // The orphaned adapter host (its own process group) is ours to stop.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &host.to_string()])
            .status();
    }
    let uncertain = client.join().expect("client thread");
    assert_eq!(uncertain.status.code(), Some(1));
    let uncertain = response(&uncertain);
    assert_eq!(code(&uncertain), Some("invalid_response"));
    assert_eq!(uncertain["error"]["effects"], "unknown");
    assert_eq!(uncertain["changed"], Value::Null);
    assert!(dir.path().join("fabric.unclean").exists());
    let output = std::process::Command::new(AGENT_CTL)
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", dir.path().join("fabric.sock"))
        .output()
        .expect("replacement serve");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cleanup_unconfirmed"));
}

#[test]
fn start_failures_validation_and_uncertain_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    // Unknown adapter: validation_failed, nothing changed, naming the field.
    let mut bad: Value = serde_json::from_str(
        &std::fs::read_to_string(config(dir.path(), "bad", json!({}))).expect("read"),
    )
    .expect("json");
    bad["harness"]["adapter_id"] = json!("no.such.adapter");
    let bad = write(dir.path(), "bad.json", &bad);
    let output = serve.ctl(&["start", "--agent", "bad", "--config", &bad]);
    assert_eq!(output.status.code(), Some(1));
    let failed = response(&output);
    assert_eq!(code(&failed), Some("validation_failed"));
    assert_eq!(failed["error"]["stage"], "validation");
    assert_eq!(failed["error"]["effects"], "none");
    assert_eq!(failed["changed"], false);
    assert!(
        failed["error"]["message"]
            .as_str()
            .expect("message")
            .contains("config.")
    );
    // metadata.name must equal --agent (checked before sending).
    let good = config(dir.path(), "good", json!({}));
    let wrong = serve.ctl(&["start", "--agent", "other", "--config", &good]);
    assert_eq!(code(&response(&wrong)), Some("wrong_agent"));
    // An adapter that fails start: the outcome is uncertain, later starts are refused.
    let failing = config(
        dir.path(),
        "failing",
        json!({"start_fail": {"code": "boom", "message": "no"}}),
    );
    let output = serve.ctl(&["start", "--agent", "failing", "--config", &failing]);
    let failed = response(&output);
    assert_eq!(code(&failed), Some("start_failed"), "{failed}");
    assert_eq!(failed["error"]["effects"], "unknown");
    assert_eq!(failed["changed"], Value::Null);
    let refused = serve.ctl(&["start", "--agent", "good", "--config", &good]);
    let refused = response(&refused);
    assert_eq!(code(&refused), Some("cleanup_unconfirmed"));
    assert_eq!(refused["error"]["stage"], "start");
    // Shutdown after an uncertain start cannot confirm cleanup.
    let (status, stderr) = serve.terminate();
    assert_eq!(status, Some(1));
    assert!(stderr.contains("cleanup_unconfirmed"), "{stderr}");
}

#[test]
fn request_shape_limits_and_codes_over_the_raw_socket() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let socket = dir.path().join("fabric.sock");
    let cases: [(&[u8], &str, &str, Option<&str>); 8] = [
        (b"{\"interface_version\":2,\"operation\":\"stop\",\"agent\":\"a\",\"agent\":\"b\",\"runtime_id\":\"r\"}\n", "unknown", "invalid_request", Some("`agent`")),
        (b"{\"interface_version\":2,\"operation\":\"check\",\"request\":{\"timeout_seconds\":NaN}}\n", "unknown", "invalid_request", None),
        (b"{\"interface_version\":2,\"operation\":\"stop\",\"agent\":\"a\",\"runtime_id\":\"r\",\"extra\":1}\n", "stop", "invalid_request", Some("`extra`")),
        (b"{\"interface_version\":1,\"operation\":\"stop\",\"agent\":\"a\",\"runtime_id\":\"r\"}\n", "stop", "interface_unsupported", Some("`interface_version`")),
        (b"{\"interface_version\":2,\"operation\":\"start\",\"agent\":\"a\",\"config\":{\"metadata\":{\"name\":\"b\"}}}\n", "start", "wrong_agent", Some("`config.metadata.name`")),
        (b"{\"interface_version\":2,\"operation\":\"serve\"}\n", "serve", "invalid_request", Some("`operation`")),
        (b"{\"interface_version\":2,\"operation\":\"check\",\"agent\":\"a\"}\n", "check", "invalid_request", Some("`runtime_id`")),
        (b"{\"interface_version\":2,\"operation\":\"stop\"}", "unknown", "invalid_request", None),
    ];
    for (bytes, operation, expected, field) in cases {
        let answer = raw(&socket, bytes);
        assert_eq!(answer["operation"], operation, "{answer}");
        assert_eq!(code(&answer), Some(expected), "{answer}");
        assert_eq!(answer["changed"], false);
        assert_eq!(answer["error"]["effects"], "none");
        if let Some(field) = field {
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .expect("message")
                    .contains(field),
                "{answer}"
            );
        }
        let status = if expected == "interface_unsupported" {
            "unsupported"
        } else {
            "failed"
        };
        assert_eq!(answer["status"], status);
    }
    // 512 KiB limit: a line of exactly the limit is read (and fails only its shape); one
    // byte more is request_too_large.
    let limit = fabric_config::bridge::REQUEST_LIMIT;
    let line = |len: usize| {
        let head = br#"{"interface_version":2,"operation":"check","pad":""#;
        let mut bytes = head.to_vec();
        bytes.resize(len - 3, b'x');
        bytes.extend_from_slice(b"\"}\n");
        bytes
    };
    let at_limit = raw(&socket, &line(limit));
    assert_eq!(code(&at_limit), Some("invalid_request"), "{at_limit}");
    assert!(
        at_limit["error"]["message"]
            .as_str()
            .expect("m")
            .contains("`pad`")
    );
    let over = raw(&socket, &line(limit + 1));
    assert_eq!(code(&over), Some("request_too_large"), "{over}");
    // 10 s read deadline: a client that never finishes its line.
    let started = std::time::Instant::now();
    let stalled = raw_with(&socket, b"{\"interface_version\":2", false);
    assert_eq!(code(&stalled), Some("invalid_request"));
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "answered before the read deadline"
    );
    serve.terminate();
}

#[test]
fn oversized_responses_become_response_too_large() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let template = "{input}".repeat(12);
    let cfg = config(dir.path(), "big", json!({"replies": [template]}));
    let id = start(&serve, "big", &cfg);
    let input = write(dir.path(), "big.json", &json!("y".repeat(400 * 1024)));
    let output = serve.ctl(&[
        "invoke",
        "--agent",
        "big",
        "--runtime-id",
        &id,
        "--input",
        &input,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let answer = response(&output);
    assert_eq!(
        code(&answer),
        Some("response_too_large"),
        "{}",
        &answer.to_string()[..200.min(answer.to_string().len())]
    );
    assert_eq!(answer["error"]["stage"], "transport");
    assert_eq!(answer["error"]["effects"], "unknown");
    assert_eq!(answer["changed"], Value::Null);
    serve.terminate();
}

#[test]
fn client_arguments_inputs_and_transport_failures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let here = dir.path();
    let run = |args: &[&str]| {
        let output = ctl_at(AGENT_CTL, here, args, None);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        response(&output)
    };
    // No server: host_unavailable, nothing sent.
    let down = run(&["check"]);
    assert_eq!(code(&down), Some("host_unavailable"));
    assert_eq!(down["error"]["stage"], "transport");
    assert_eq!(down["error"]["effects"], "none");
    // Strict flags, named in the message.
    for (args, flag) in [
        (
            &["stop", "--agent", "a", "--agent", "b", "--runtime-id", "r"][..],
            "--agent",
        ),
        (
            &["stop", "--agent", "a", "--runtime-id", "r", "--bogus", "x"][..],
            "--bogus",
        ),
        (&["stop", "--agent", "--runtime-id", "r"][..], "--agent"),
        (
            &["invoke", "--agent", "a", "--runtime-id", "r"][..],
            "--input",
        ),
        (&["check", "--live"][..], "--live"),
        (
            &[
                "check",
                "--agent",
                "a",
                "--runtime-id",
                "r",
                "--live",
                "--ready",
            ][..],
            "--ready",
        ),
        (
            &["check", "--timeout-seconds", "0"][..],
            "--timeout-seconds",
        ),
        (&["nope"][..], "operation"),
    ] {
        let answer = run(args);
        assert_eq!(code(&answer), Some("invalid_request"), "{args:?}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .expect("m")
                .contains(flag),
            "{answer}"
        );
    }
    // Inputs: duplicate keys (named), NaN, a directory, an oversized file.
    let dup = here.join("dup.json");
    std::fs::write(&dup, r#"{"input": "a", "input": "b"}"#).expect("write");
    let answer = run(&[
        "invoke",
        "--agent",
        "a",
        "--runtime-id",
        "r",
        "--request",
        dup.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&answer), Some("invalid_input"));
    assert!(
        answer["error"]["message"]
            .as_str()
            .expect("m")
            .contains("input")
    );
    let nan = here.join("nan.json");
    std::fs::write(&nan, "NaN").expect("write");
    let answer = run(&[
        "invoke",
        "--agent",
        "a",
        "--runtime-id",
        "r",
        "--input",
        nan.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&answer), Some("invalid_input"));
    let answer = run(&[
        "invoke",
        "--agent",
        "a",
        "--runtime-id",
        "r",
        "--input",
        here.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&answer), Some("invalid_input"));
    let big = here.join("big.json");
    std::fs::write(
        &big,
        json!("z".repeat(fabric_config::bridge::REQUEST_LIMIT)).to_string(),
    )
    .expect("write");
    let answer = run(&[
        "invoke",
        "--agent",
        "a",
        "--runtime-id",
        "r",
        "--input",
        big.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&answer), Some("invalid_input"));
    // Below the input limit, but the request line would exceed it.
    std::fs::write(
        &big,
        json!("z".repeat(fabric_config::bridge::REQUEST_LIMIT - 40)).to_string(),
    )
    .expect("write");
    let answer = run(&[
        "invoke",
        "--agent",
        "a",
        "--runtime-id",
        "r",
        "--input",
        big.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&answer), Some("request_too_large"));
}

#[test]
fn the_rust_client_bounds_a_call_and_never_replays() {
    // A "server" that accepts and never answers: the client's deadline (320 s by default,
    // here 1 s) ends the call with invalid_response and unknown effects.
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("fabric.sock");
    let listener = UnixListener::bind(&socket).expect("bind");
    let holder = std::thread::spawn(move || listener.accept().map(|(stream, _)| stream));
    let mut client = fabric_sandbox::bridge::Client::new(&socket);
    client.set_timeout(Duration::from_secs(1));
    let request = Request {
        operation: Operation::Stop,
        agent: Some("a".into()),
        runtime_id: Some("r".into()),
        payload: Payload::None,
    };
    let answer: Response = client.call(&request);
    let error = answer.error.expect("error");
    assert_eq!(error.code, "invalid_response");
    assert_eq!(error.effects, fabric_config::bridge::Effects::Unknown);
    assert_eq!(answer.changed, None);
    drop(holder.join());
}

#[test]
fn shutdown_rejects_new_work_with_host_stopping() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = fabric_host::RuntimeServer::new(dir.path());
    let check = server.handle_line(b"{\"interface_version\":2,\"operation\":\"check\"}\n");
    assert_eq!(check.result["outcome"], "passed");
    assert_eq!(
        server.shutdown(),
        fabric_sandbox::bridge::ShutdownOutcome::Clean { used: false }
    );
    let stop = server.handle_line(
        b"{\"interface_version\":2,\"operation\":\"stop\",\"agent\":\"a\",\"runtime_id\":\"r\"}\n",
    );
    assert_eq!(stop.error.expect("error").code, "host_stopping");
    let check = server.handle_line(b"{\"interface_version\":2,\"operation\":\"check\"}\n");
    assert_eq!(check.result["outcome"], "failed");
    assert_eq!(check.result["reason"], "host_stopping");
}

#[test]
fn a_crashed_host_is_invoke_failed_and_a_busy_runtime_makes_shutdown_unconfirmed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let cfg = config(dir.path(), "busy", json!({}));
    let crashing = start(&serve, "busy", &cfg);
    let crash = write(
        dir.path(),
        "crash.json",
        &json!({"input": "x", "context": {"scripted": {"crash": true}}}),
    );
    let output = serve.ctl(&[
        "invoke",
        "--agent",
        "busy",
        "--runtime-id",
        &crashing,
        "--request",
        &crash,
    ]);
    let crashed = response(&output);
    assert_eq!(output.status.code(), Some(1), "{crashed}");
    assert_eq!(code(&crashed), Some("invoke_failed"));
    assert_eq!(crashed["error"]["effects"], "unknown");
    assert_eq!(crashed["changed"], Value::Null);

    // A long invocation: checks still answer and report the runtime busy.
    let id = start(&serve, "busy", &cfg);
    let slow = write(
        dir.path(),
        "slow.json",
        &json!({"input": "x", "context": {"scripted": {"sleep_ms": 60000}}}),
    );
    let socket_dir = dir.path().to_path_buf();
    let invoke_id = id.clone();
    let client = std::thread::spawn(move || {
        ctl_at(
            AGENT_CTL,
            &socket_dir,
            &[
                "invoke",
                "--agent",
                "busy",
                "--runtime-id",
                &invoke_id,
                "--request",
                &slow,
            ],
            None,
        )
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let check = serve.ctl(&["check", "--agent", "busy", "--runtime-id", &id]);
        let report = response(&check);
        if report["result"]["activity"] == "busy" {
            assert_eq!(
                check.status.code(),
                Some(0),
                "a busy runtime is live: {report}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the invocation never became busy"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        serve.ctl(&["check"]).status.code(),
        Some(0),
        "server check during an invocation"
    );
    let hosts = children(serve.pid());
    let (status, stderr) = serve.terminate();
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("cleanup_unconfirmed"), "{stderr}");
    for host in hosts {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &host.to_string()])
            .status();
    }
    let uncertain = client.join().expect("client");
    let uncertain = response(&uncertain);
    assert_eq!(code(&uncertain), Some("invalid_response"), "{uncertain}");
    assert_eq!(uncertain["error"]["effects"], "unknown");
    assert!(dir.path().join("fabric.unclean").exists());
}
