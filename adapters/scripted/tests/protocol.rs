//! Drives the built `fabric-adapter-scripted` binary over stdin/stdout.
//!
//! Responses are decoded here independently of the adapter's encoder: each stdout line
//! must be one JSON object `{"operation", "outcome"}` and nothing else may reach stdout.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use fabric_health::{CheckOutcome, CheckReport, CheckRequest, HealthLevel};
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(20);

struct Adapter {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
}

impl Adapter {
    fn spawn() -> Adapter {
        Self::spawn_with_env(&[])
    }

    fn spawn_with_env(env: &[(&str, &Path)]) -> Adapter {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fabric-adapter-scripted"));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("spawn adapter");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Adapter {
            stdin: child.stdin.take(),
            child,
            lines: rx,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// The next response line, decoded and shape-checked.
    fn recv(&self) -> Value {
        let raw = self
            .lines
            .recv_timeout(DEADLINE)
            .expect("a response line before the deadline");
        decode_line(&raw)
    }

    fn request(&mut self, message: Value) -> Value {
        self.send(message);
        self.recv()
    }

    /// No line arrives within `window` (used only to prove an absence).
    fn assert_silent(&self, window: Duration) {
        match self.lines.recv_timeout(window) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(line) => panic!("unexpected line: {}", String::from_utf8_lossy(&line)),
            Err(RecvTimeoutError::Disconnected) => panic!("stdout closed"),
        }
    }

    fn close_stdin(&mut self) {
        self.stdin.take();
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let until = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < until,
                "adapter did not exit before the deadline"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stdout reached EOF and carried no further line.
    fn assert_stdout_closed(&self) {
        match self.lines.recv_timeout(DEADLINE) {
            Err(RecvTimeoutError::Disconnected) => {}
            Ok(line) => panic!("unexpected stdout line: {}", String::from_utf8_lossy(&line)),
            Err(RecvTimeoutError::Timeout) => panic!("stdout still open"),
        }
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Independent decoder: a single JSON object line with exactly `operation` and `outcome`.
fn decode_line(raw: &[u8]) -> Value {
    assert_eq!(raw.last(), Some(&b'\n'), "response must end with a newline");
    let body = &raw[..raw.len() - 1];
    assert!(!body.contains(&b'\n'));
    assert!(body.is_ascii(), "responses are ASCII-escaped");
    let value: Value = serde_json::from_slice(body).expect("response is JSON");
    let object = value.as_object().expect("response is an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["operation", "outcome"]);
    let outcome = object["outcome"].as_object().expect("outcome object");
    match outcome["status"].as_str() {
        Some("succeeded") => assert!(outcome.contains_key("output")),
        Some("failed") => {
            let error = outcome["error"].as_object().expect("error object");
            for key in ["stage", "code", "message"] {
                assert!(error[key].is_string(), "error.{key}");
            }
            assert!(error["retryable"].is_boolean());
        }
        other => panic!("unexpected outcome status {other:?}"),
    }
    value
}

fn context(runtime_id: &str, artifacts: Option<&Path>) -> Value {
    let mut environment = json!({
        "environment_id": "env-1",
        "provider": "local",
        "control_location": "in_env_control",
        "ownership": "caller_owned"
    });
    if let Some(root) = artifacts {
        environment["artifacts"] = json!(root);
    }
    json!({
        "runtime_id": runtime_id,
        "invocation_id": "invocation-1",
        "request_id": "request-1",
        "environment": environment,
        "artifacts": {}
    })
}

fn start_msg(runtime_id: &str, config: Value) -> Value {
    json!({"operation": "start", "payload": {
        "agent_name": "test",
        "base_dir": "/tmp",
        "config": config,
        "runtime_context": context(runtime_id, None),
    }})
}

fn invoke_msg(runtime_id: &str, input: Value, ctx: Value) -> Value {
    json!({"operation": "invoke", "payload": {
        "runtime_context": context(runtime_id, None),
        "request": {"input": input, "context": ctx},
    }})
}

fn stop_msg(runtime_id: &str) -> Value {
    json!({"operation": "stop", "payload": {"runtime_id": runtime_id}})
}

fn succeeded_output(response: &Value) -> &Value {
    assert_eq!(response["outcome"]["status"], "succeeded", "{response}");
    &response["outcome"]["output"]
}

fn lifecycle_code(response: &Value) -> &str {
    assert_eq!(response["outcome"]["status"], "failed", "{response}");
    response["outcome"]["error"]["code"].as_str().unwrap()
}

fn started(config: Value) -> Adapter {
    let mut adapter = Adapter::spawn();
    let response = adapter.request(start_msg("R1", config));
    assert_eq!(response["operation"], "start");
    assert_eq!(*succeeded_output(&response), Value::Null);
    adapter
}

#[test]
fn echo_keeps_conversation_state_and_stop_exits() {
    let mut a = started(json!({
        "harness": {"settings": {"replies": ["first: {input}", "second: {input}, before: {previous_input}"]}},
        "instructions": {"system": {"content": "Be brief.", "mode": "append"}},
        "runtime": {"max_turns": 4}
    }));
    let one = a.request(invoke_msg("R1", json!("alpha"), json!({})));
    assert_eq!(one["operation"], "invoke");
    let result = succeeded_output(&one);
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["output"]["response"], "first: alpha");
    assert_eq!(result["output"]["turn"], 1);
    assert_eq!(result["output"]["history"], 0);
    let meta = &result["output"]["metadata"];
    assert_eq!(
        meta["system_instruction"],
        json!({"content": "Be brief.", "mode": "append"})
    );
    assert_eq!(meta["max_turns"], 4);

    let two = a.request(invoke_msg("R1", json!({"text": "beta"}), json!({})));
    let result = succeeded_output(&two);
    assert_eq!(result["output"]["response"], "second: beta, before: alpha");
    assert_eq!(result["output"]["turn"], 2);
    assert_eq!(result["output"]["history"], 1);

    // Replies cycle by default.
    let three = a.request(invoke_msg("R1", json!("gamma"), json!({})));
    assert_eq!(
        succeeded_output(&three)["output"]["response"],
        "first: gamma"
    );

    let stop = a.request(stop_msg("R1"));
    assert_eq!(stop["operation"], "stop");
    assert_eq!(*succeeded_output(&stop), Value::Null);
    assert!(a.wait_exit().success());
    a.assert_stdout_closed();
}

#[test]
fn default_is_echo() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg("R1", json!("hello there"), json!({})));
    let result = succeeded_output(&r);
    assert_eq!(result["output"]["response"], "hello there");
    assert_eq!(result["output"]["metadata"]["source"], "echo");
    assert!(result.get("error").is_none());
}

#[test]
fn two_runtimes_do_not_share_state() {
    let mut a = started(json!({"harness": {"settings": {"replies": ["prev={previous_input}"]}}}));
    let mut b = started(json!({"harness": {"settings": {"replies": ["prev={previous_input}"]}}}));
    a.request(invoke_msg("R1", json!("only-in-a"), json!({})));
    let rb = b.request(invoke_msg("R1", json!("b1"), json!({})));
    assert_eq!(succeeded_output(&rb)["output"]["response"], "prev=");
    let ra = a.request(invoke_msg("R1", json!("a2"), json!({})));
    assert_eq!(
        succeeded_output(&ra)["output"]["response"],
        "prev=only-in-a"
    );
}

#[test]
fn fail_directive_returns_failed_result_with_code_and_usage() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {
            "fail": {"code": "tool_error", "message": "the tool broke", "retryable": true},
            "usage": {"input_tokens": 12, "output_tokens": 3, "cost_usd": 0.5}
        }}),
    ));
    let result = succeeded_output(&r);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["output"], Value::Null);
    assert_eq!(
        result["error"],
        json!({"code": "tool_error", "message": "the tool broke", "retryable": true})
    );
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 12, "output_tokens": 3, "cost_usd": 0.5})
    );
    // A failed result is not a lifecycle failure: the runtime keeps serving.
    let next = a.request(invoke_msg("R1", json!("y"), json!({})));
    assert_eq!(succeeded_output(&next)["status"], "succeeded");
}

#[test]
fn directives_in_input_object_work_too() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!({"text": "hi", "scripted": {"fail": {"code": "c", "message": "m"}}}),
        json!({}),
    ));
    assert_eq!(succeeded_output(&r)["error"]["code"], "c");
    let bad = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"nope": 1}}),
    ));
    let result = succeeded_output(&bad);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["error"]["code"], "scripted_invalid_directive");
}

#[test]
fn artifact_directive_writes_under_the_root_and_returns_a_relative_ref() {
    let scratch = scratch_dir("artifact");
    let root = scratch.path().join("root");
    let mut a = started(json!({}));
    let mut msg = invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"artifact": {"name": "notes/answer.txt", "content": "forty-two", "media_type": "text/plain"}}}),
    );
    msg["payload"]["runtime_context"] = context("R1", Some(&root));
    let r = a.request(msg);
    let result = succeeded_output(&r);
    assert_eq!(
        result["artifacts"],
        json!([{"name": "notes/answer.txt", "kind": "file", "path": "notes/answer.txt", "media_type": "text/plain"}])
    );
    let written = std::fs::read_to_string(root.join("notes/answer.txt")).unwrap();
    assert_eq!(written, "forty-two");
    // Unsafe names never touch the file system.
    let mut msg = invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"artifact": {"name": "../escape.txt", "content": "no"}}}),
    );
    msg["payload"]["runtime_context"] = context("R1", Some(&root));
    let r = a.request(msg);
    assert_eq!(
        succeeded_output(&r)["error"]["code"],
        "scripted_invalid_directive"
    );
    assert!(!scratch.path().join("escape.txt").exists());
}

#[test]
fn artifact_root_falls_back_to_fabric_artifacts() {
    let scratch = scratch_dir("artifact-env");
    let root = scratch.path().to_path_buf();
    let mut a = Adapter::spawn_with_env(&[("FABRIC_ARTIFACTS", &root)]);
    assert_eq!(
        *succeeded_output(&a.request(start_msg("R1", json!({})))),
        Value::Null
    );
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"artifact": {"name": "a.txt", "content": "env"}}}),
    ));
    assert_eq!(succeeded_output(&r)["artifacts"][0]["path"], "a.txt");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "env");
}

#[test]
fn malformed_lines_are_answered_and_do_not_exit() {
    let mut a = started(json!({}));
    a.send_raw(b"{not json\n");
    assert_eq!(lifecycle_code(&a.recv()), "lifecycle_invalid_request");
    a.send_raw(b"[1, 2]\n");
    assert_eq!(lifecycle_code(&a.recv()), "lifecycle_invalid_request");
    a.send_raw(b"\xff\xfe\n");
    assert_eq!(lifecycle_code(&a.recv()), "lifecycle_invalid_request");
    let r = a.request(json!({"operation": "dance", "payload": {}}));
    assert_eq!(r["operation"], "dance");
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_operation");
    let r = a.request(json!({"operation": "invoke", "payload": []}));
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_payload");
    let r = a.request(json!({"operation": "invoke", "payload": {"runtime_context": {}}}));
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_runtime");
    let mut typed = invoke_msg("R1", json!("x"), json!({}));
    typed["payload"]["request"]["surprise"] = json!(1);
    assert_eq!(
        lifecycle_code(&a.request(typed)),
        "lifecycle_invalid_request"
    );
    // Still serving.
    let r = a.request(invoke_msg("R1", json!("still here"), json!({})));
    assert_eq!(succeeded_output(&r)["output"]["response"], "still here");
}

#[test]
fn invoke_before_start_and_stop_before_start() {
    let mut a = Adapter::spawn();
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(r["operation"], "invoke");
    assert_eq!(lifecycle_code(&r), "lifecycle_not_started");
    assert_eq!(r["outcome"]["error"]["stage"], "invoke");
    // A failed stop ends the host, as upstream's does.
    let r = a.request(stop_msg("R1"));
    assert_eq!(lifecycle_code(&r), "lifecycle_not_started");
    assert!(a.wait_exit().success());
}

#[test]
fn runtime_mismatch() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg("R2", json!("x"), json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_runtime_mismatch");
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(succeeded_output(&r)["status"], "succeeded");
}

#[test]
fn second_start_fails_and_exits() {
    let mut a = started(json!({}));
    let r = a.request(start_msg("R1", json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_already_started");
    assert!(a.wait_exit().success());
}

#[test]
fn invalid_config_and_settings_fail_start_and_exit() {
    let mut a = Adapter::spawn();
    let r = a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {}}, "surprise": true}),
    ));
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_config");
    assert!(a.wait_exit().success());

    let mut a = Adapter::spawn();
    let r = a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"replies": [{"turns": 0}]}}}),
    ));
    assert_eq!(lifecycle_code(&r), "invalid_settings");
    assert_eq!(
        r["outcome"]["error"]["metadata"]["path"],
        "harness.settings.replies[0].turns"
    );
    assert!(a.wait_exit().success());

    let mut a = Adapter::spawn();
    let r = a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"start_fail": {"code": "warmup_failed", "message": "no", "retryable": true}}}}),
    ));
    assert_eq!(lifecycle_code(&r), "warmup_failed");
    assert_eq!(r["outcome"]["error"]["retryable"], true);
    assert!(a.wait_exit().success());
}

#[test]
fn eof_stops_and_exits_zero() {
    let mut a = started(json!({}));
    a.request(invoke_msg("R1", json!("x"), json!({})));
    a.close_stdin();
    assert!(a.wait_exit().success());
    a.assert_stdout_closed();
}

#[test]
fn eof_before_start_exits_zero() {
    let mut a = Adapter::spawn();
    a.close_stdin();
    assert!(a.wait_exit().success());
    a.assert_stdout_closed();
}

#[test]
fn max_turns_is_enforced_on_claimed_turns() {
    let mut a = started(json!({
        "harness": {"settings": {"replies": [{"response": "ok", "turns": 2}, {"response": "too long", "turns": 3}]}},
        "runtime": {"max_turns": 2}
    }));
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(succeeded_output(&r)["output"]["metadata"]["turns_used"], 2);
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    let result = succeeded_output(&r);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["error"]["code"], "max_turns_exceeded");
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"turns": 5}}),
    ));
    assert_eq!(succeeded_output(&r)["error"]["code"], "max_turns_exceeded");
}

#[test]
fn exhausted_replies_can_fail() {
    let mut a =
        started(json!({"harness": {"settings": {"replies": ["one"], "when_exhausted": "fail"}}}));
    a.request(invoke_msg("R1", json!("x"), json!({})));
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(
        succeeded_output(&r)["error"]["code"],
        "scripted_replies_exhausted"
    );
}

#[test]
fn raise_latches_the_runtime() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"raise": {"code": "adapter_broke", "message": "m"}}}),
    ));
    assert_eq!(lifecycle_code(&r), "adapter_broke");
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_runtime_failed");
    let r = a.request(stop_msg("R1"));
    assert_eq!(*succeeded_output(&r), Value::Null);
    assert!(a.wait_exit().success());
}

#[test]
fn crash_exits_without_answering() {
    let mut a = started(json!({}));
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"crash": true}}),
    ));
    let status = a.wait_exit();
    assert_eq!(status.code(), Some(70));
    a.assert_stdout_closed();
}

#[test]
fn openai_stream_can_be_switched_off() {
    let mut a = started(json!({"harness": {"settings": {"stream": {"implemented": false}}}}));
    let mut msg = invoke_msg("R1", json!("x"), json!({}));
    msg["operation"] = json!("invoke_openai_stream");
    let r = a.request(msg);
    assert_eq!(r["operation"], "invoke_openai_stream");
    assert_eq!(lifecycle_code(&r), "lifecycle_openai_stream_unsupported");
    assert_eq!(r["outcome"]["error"]["stage"], "invoke");
}

#[test]
fn openai_stream_without_a_sink_is_refused() {
    let mut a = started(json!({}));
    let mut msg = invoke_msg("R1", json!("x"), json!({}));
    msg["operation"] = json!("invoke_openai_stream");
    let r = a.request(msg.clone());
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_stream_sink");
    msg["payload"]["stream"] = json!({"protocol_version": "fabric.openai_stream/v1alpha1",
        "profile": "openai.chat_completions.chunk/v1", "host": "127.0.0.1", "port": 1,
        "token": "t", "runtime_id": "R1", "invocation_id": "other", "request_id": "x"});
    let r = a.request(msg);
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_stream_sink");
    assert!(
        r["outcome"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("identity")
    );
}

#[test]
fn protocol_faults_on_demand() {
    let mut a = started(json!({}));
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "non_json"}}),
    ));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    assert!(serde_json::from_slice::<Value>(&raw).is_err());
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "invalid_utf8"}}),
    ));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    assert!(std::str::from_utf8(&raw).is_err());
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "wrong_operation"}}),
    ));
    assert_eq!(r["operation"], "stop");
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "invalid_result"}}),
    ));
    assert_eq!(succeeded_output(&r)["status"], "bogus");
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "oversized", "oversized_bytes": 100000}}),
    ));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    assert_eq!(raw.len(), 100000);
    decode_line(&raw);
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "silent"}}),
    ));
    let r = a.request(invoke_msg("R1", json!("after silence"), json!({})));
    assert_eq!(succeeded_output(&r)["output"]["response"], "after silence");
}

#[test]
fn ignore_stop_never_answers() {
    let mut a = started(json!({"harness": {"settings": {"ignore_stop": true}}}));
    a.send(stop_msg("R1"));
    a.assert_silent(Duration::from_millis(300));
    assert!(
        a.child.try_wait().unwrap().is_none(),
        "host must keep running"
    );
}

#[test]
fn spawned_children_live_until_stop() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"spawn_children": 3}}),
    ));
    let pids: Vec<u32> = succeeded_output(&r)["output"]["metadata"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap() as u32)
        .collect();
    assert_eq!(pids.len(), 3);
    for pid in &pids {
        assert_eq!(
            parent_of(*pid),
            Some(a.child.id()),
            "child {pid} belongs to the adapter"
        );
    }
    a.request(stop_msg("R1"));
    assert!(a.wait_exit().success());
    for pid in &pids {
        // Reaped children no longer exist (or, if the pid was reused, have another parent).
        assert_ne!(parent_of(*pid), Some(a.child.id()));
    }
}

#[test]
fn memory_steps_touch_resident_memory() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"memory_mib": [20, 96, 20], "step_ms": 0, "memory_hold": true}}),
    ));
    let meta = &succeeded_output(&r)["output"]["metadata"];
    assert_eq!(meta["memory_peak_mib"], 96);
    assert_eq!(meta["memory_held_mib"], 20);
    let pid = a.child.id();
    let hwm = status_kib(pid, "VmHWM:").unwrap();
    let rss = status_kib(pid, "VmRSS:").unwrap();
    assert!(hwm >= 96 * 1024, "peak RSS {hwm} KiB");
    assert!((20 * 1024..60 * 1024).contains(&rss), "held RSS {rss} KiB");
    // The next invocation without memory directives frees the held level.
    a.request(invoke_msg("R1", json!("x"), json!({})));
    let rss = status_kib(pid, "VmRSS:").unwrap();
    assert!(rss < 16 * 1024, "RSS after release {rss} KiB");
}

#[test]
fn small_levels_are_returned_to_the_os_after_large_ones() {
    let mut a = started(json!({}));
    let pid = a.child.id();
    let baseline = status_kib(pid, "VmRSS:").unwrap();
    let hold = |levels: Value| json!({"scripted": {"memory_mib": levels, "step_ms": 0, "memory_hold": true}});
    // A 20 MiB block freed, then a 12 MiB block: both must leave no resident memory behind.
    a.request(invoke_msg("R1", json!("x"), hold(json!([20]))));
    a.request(invoke_msg("R1", json!("x"), json!({})));
    a.request(invoke_msg("R1", json!("x"), hold(json!([12]))));
    let held = status_kib(pid, "VmRSS:").unwrap();
    assert!(
        held >= baseline + 11 * 1024,
        "held {held} KiB, baseline {baseline} KiB"
    );
    a.request(invoke_msg("R1", json!("x"), json!({})));
    let after = status_kib(pid, "VmRSS:").unwrap();
    assert!(
        after < baseline + 4 * 1024,
        "after release {after} KiB, baseline {baseline} KiB"
    );
}

#[test]
fn burn_cpu_uses_cpu_time() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"burn_cpu_ms": 150}}),
    ));
    assert_eq!(
        succeeded_output(&r)["output"]["metadata"]["cpu_burned_ms"],
        150
    );
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", a.child.id())).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // utime + stime in clock ticks (fields 14 and 15 of the full line).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    assert!(ticks >= 5, "cpu ticks {ticks}");
}

#[test]
fn responses_match_python_json_dumps_bytes() {
    let mut a = started(json!({}));
    a.send(invoke_msg("R1", json!("é"), json!({})));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    let text = String::from_utf8(raw).unwrap();
    assert!(text.starts_with(r#"{"operation": "invoke", "outcome": {"output": {"output": {"history": 0, "metadata": {"adapter_id": "fabric.scripted""#), "{text}");
    assert!(text.contains(r#""response": "\u00e9""#), "{text}");
    assert!(
        text.ends_with("\"status\": \"succeeded\"}, \"status\": \"succeeded\"}}\n"),
        "{text}"
    );
}

fn health_check(home: &Path, level: HealthLevel, timeout_s: f64) -> CheckReport {
    let request = CheckRequest::runtime("R1")
        .with_level(level)
        .with_timeout_seconds(timeout_s);
    fabric_health::client::Check::new(&request).run(&home.join("health.endpoint.json"))
}

fn reasons(report: &CheckReport) -> Vec<(String, String, Option<String>)> {
    report
        .checks
        .iter()
        .map(|c| {
            (
                c.level.as_str().to_owned(),
                c.outcome.as_str().to_owned(),
                c.reason.clone(),
            )
        })
        .collect()
}

#[test]
fn health_listener_reports_all_three_levels() {
    let home = scratch_dir("health");
    let mut a = Adapter::spawn_with_env(&[("FABRIC_HOME", home.path())]);
    // The listener is up before the first request is read: any answer proves it.
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_not_started");
    let endpoint = home.path().join("health.endpoint.json");
    assert!(endpoint.exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&endpoint).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let before = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(before.outcome, CheckOutcome::Failed);
    assert_eq!(before.reason.as_deref(), Some("runtime_not_started"));

    assert_eq!(
        *succeeded_output(&a.request(start_msg("R1", json!({})))),
        Value::Null
    );
    let ready = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(ready.outcome, CheckOutcome::Passed, "{:?}", reasons(&ready));
    assert_eq!(ready.checks.len(), 3);

    // A check during a long invocation still passes.
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"sleep_ms": 400}}),
    ));
    let busy = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(busy.outcome, CheckOutcome::Passed);
    assert_eq!(succeeded_output(&a.recv())["status"], "succeeded");

    // A latched runtime is no longer ready.
    a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"raise": {"code": "broken", "message": "m"}}}),
    ));
    let latched = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(latched.outcome, CheckOutcome::Failed);
    assert_eq!(latched.reason.as_deref(), Some("runtime_failed"));

    // The endpoint file is gone once stop is answered.
    a.request(stop_msg("R1"));
    assert!(!endpoint.exists());
    assert!(a.wait_exit().success());
}

#[test]
fn health_settings_fail_or_stall_a_level() {
    let home = scratch_dir("health-fail");
    let mut a = Adapter::spawn_with_env(&[("FABRIC_HOME", home.path())]);
    a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"health": {"fail": "active"}}}}),
    ));
    let report = health_check(home.path(), HealthLevel::Ready, 3.0);
    assert_eq!(report.outcome, CheckOutcome::Failed);
    assert_eq!(report.reason.as_deref(), Some("scripted_failure"));
    assert_eq!(report.checks.len(), 2, "stops at the first non-pass");

    let home = scratch_dir("health-stall");
    let mut a = Adapter::spawn_with_env(&[("FABRIC_HOME", home.path())]);
    a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"health": {"stall": "ready"}}}}),
    ));
    let started = Instant::now();
    let report = health_check(home.path(), HealthLevel::Ready, 0.3);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the deadline bounds a stalled probe"
    );
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some("probe_timeout"));
    let live = health_check(home.path(), HealthLevel::Live, 3.0);
    assert_eq!(live.outcome, CheckOutcome::Passed);
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(1)?.parse().ok()
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn scratch_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("fabric-scripted-{tag}-"))
        .tempdir()
        .unwrap()
}
