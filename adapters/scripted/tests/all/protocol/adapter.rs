//! The spawned adapter, the independent response decoder and the message builders.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) const DEADLINE: Duration = Duration::from_secs(20);

pub(crate) struct Adapter {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) lines: Receiver<Vec<u8>>,
}

impl Adapter {
    pub(crate) fn spawn() -> Adapter {
        Self::spawn_with_env(&[])
    }

    pub(crate) fn spawn_with_env(env: &[(&str, &Path)]) -> Adapter {
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

    pub(crate) fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn send(&mut self, message: Value) {
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// The next response line, decoded and shape-checked.
    pub(crate) fn recv(&self) -> Value {
        let raw = self
            .lines
            .recv_timeout(DEADLINE)
            .expect("a response line before the deadline");
        decode_line(&raw)
    }

    pub(crate) fn request(&mut self, message: Value) -> Value {
        self.send(message);
        self.recv()
    }

    /// No line arrives within `window` (used only to prove an absence).
    pub(crate) fn assert_silent(&self, window: Duration) {
        match self.lines.recv_timeout(window) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(line) => panic!("unexpected line: {}", String::from_utf8_lossy(&line)),
            Err(RecvTimeoutError::Disconnected) => panic!("stdout closed"),
        }
    }

    pub(crate) fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub(crate) fn wait_exit(&mut self) -> ExitStatus {
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
    pub(crate) fn assert_stdout_closed(&self) {
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
pub(crate) fn decode_line(raw: &[u8]) -> Value {
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

pub(crate) fn context(runtime_id: &str, artifacts: Option<&Path>) -> Value {
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

pub(crate) fn start_msg(runtime_id: &str, config: Value) -> Value {
    json!({"operation": "start", "payload": {
        "agent_name": "test",
        "base_dir": "/tmp",
        "config": config,
        "runtime_context": context(runtime_id, None),
    }})
}

pub(crate) fn invoke_msg(runtime_id: &str, input: Value, ctx: Value) -> Value {
    json!({"operation": "invoke", "payload": {
        "runtime_context": context(runtime_id, None),
        "request": {"input": input, "context": ctx},
    }})
}

pub(crate) fn stop_msg(runtime_id: &str) -> Value {
    json!({"operation": "stop", "payload": {"runtime_id": runtime_id}})
}

pub(crate) fn succeeded_output(response: &Value) -> &Value {
    assert_eq!(response["outcome"]["status"], "succeeded", "{response}");
    &response["outcome"]["output"]
}

pub(crate) fn lifecycle_code(response: &Value) -> &str {
    assert_eq!(response["outcome"]["status"], "failed", "{response}");
    response["outcome"]["error"]["code"].as_str().unwrap()
}

pub(crate) fn started(config: Value) -> Adapter {
    let mut adapter = Adapter::spawn();
    let response = adapter.request(start_msg("R1", config));
    assert_eq!(response["operation"], "start");
    assert_eq!(*succeeded_output(&response), Value::Null);
    adapter
}

pub(crate) fn scratch_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("fabric-scripted-{tag}-"))
        .tempdir()
        .unwrap()
}
