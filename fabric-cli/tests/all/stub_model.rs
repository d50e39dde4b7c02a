//! `fabric stub-model serve` driven by a plain HTTP client: each API whole and streamed,
//! scripted tool calls, errors and raw bodies, the request log, the loopback rule, script
//! errors naming the field, and the signal stop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// A running `fabric stub-model serve` (stopped by pid when dropped; `batch_capture.rs`
/// uses it too).
pub(crate) struct Stub {
    child: Child,
    stdout: BufReader<ChildStdout>,
    addr: String,
    pub(crate) base: String,
}

impl Stub {
    pub(crate) fn start(args: &[&str]) -> Stub {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["stub-model", "serve"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fabric stub-model serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("first line");
        let first: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let base = first["base_url"].as_str().expect("base_url").to_owned();
        assert_eq!(first["messages_url"], format!("{base}/messages"));
        let addr = base
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .to_owned();
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        Stub {
            child,
            stdout,
            addr,
            base,
        }
    }

    /// POSTs `body` to `path`; the status, the content type and the body.
    fn post(&self, path: &str, body: &Value) -> (u16, String, String) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let body = body.to_string();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Authorization: Bearer sk-secret-sentinel\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("head");
        stream.write_all(body.as_bytes()).expect("body");
        let mut raw = String::new();
        stream.read_to_string(&mut raw).expect("answer");
        let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
        let status = head[9..12].parse().expect("status");
        let content_type = head
            .lines()
            .find_map(|line| line.strip_prefix("content-type: "))
            .unwrap_or_default()
            .to_owned();
        (status, content_type, body.to_owned())
    }

    fn json(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, kind, text) = self.post(path, body);
        assert_eq!(kind, "application/json");
        (status, serde_json::from_str(&text).expect("JSON answer"))
    }

    /// SIGTERM by pid: the last stdout line and the exit code.
    fn stop(mut self) -> (Value, i32) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = self.child.wait().expect("wait");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("last line");
        (
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")),
            status.code().unwrap_or(-1),
        )
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `data:` payloads of an SSE body (with their `event:` names, when given).
fn events(body: &str) -> Vec<(Option<String>, String)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = Some(value.to_owned());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            (name, data)
        })
        .collect()
}

fn script_file(dir: &tempfile::TempDir, script: &Value) -> String {
    let path = dir.path().join("script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn tool_then_text() -> Value {
    json!({"replies": [
        {"text": "looking", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
        {"text": "all done"},
    ]})
}

#[test]
fn chat_completions_whole_and_streamed_with_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, &tool_then_text());
    let stub = Stub::start(&["--script", &script]);
    let (status, answer) = stub.json(
        "/v1/chat/completions",
        &json!({"model": "m1", "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(status, 200);
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "m1");
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], "looking");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "bash");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"command": "ls"}));

    let (status, kind, body) = stub.post(
        "/v1/chat/completions",
        &json!({"model": "m1", "stream": true, "stream_options": {"include_usage": true}}),
    );
    assert_eq!((status, kind.as_str()), (200, "text/event-stream"));
    let events = events(&body);
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(_, data)| serde_json::from_str(data).unwrap())
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "all done");
    assert!(
        chunks
            .iter()
            .filter(|c| c["choices"][0]["delta"]["content"].is_string())
            .count()
            > 2
    );
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "stop")
    );
    assert_eq!(chunks.last().unwrap()["usage"]["total_tokens"], 2);
    // The last reply repeats.
    let (_, again) = stub.json("/chat/completions", &json!({"model": "m2"}));
    assert_eq!(again["choices"][0]["message"]["content"], "all done");
}

#[test]
fn responses_and_messages_whole_and_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, &tool_then_text());
    let stub = Stub::start(&["--script", &script]);
    let (_, kind, body) = stub.post("/v1/responses", &json!({"model": "r", "stream": true}));
    assert_eq!(kind, "text/event-stream");
    let events = events(&body);
    for (seq, (name, data)) in events.iter().enumerate() {
        let event: Value = serde_json::from_str(data).unwrap();
        assert_eq!(event["sequence_number"], seq);
        assert_eq!(Some(event["type"].as_str().unwrap()), name.as_deref());
    }
    let last: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(last["type"], "response.completed");
    let output = &last["response"]["output"];
    assert_eq!(output[0]["content"][0]["text"], "looking");
    assert_eq!(output[1]["type"], "function_call");
    assert_eq!(output[1]["name"], "bash");

    let (status, message) = stub.json("/v1/messages", &json!({"model": "claude"}));
    assert_eq!(status, 200);
    assert_eq!(message["type"], "message");
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(
        message["content"],
        json!([{"type": "text", "text": "all done"}])
    );

    let (_, kind, body) = stub.post("/v1/messages", &json!({"model": "c", "stream": true}));
    assert_eq!(kind, "text/event-stream");
    let names: Vec<String> = events_names(&body);
    assert_eq!(names.first().unwrap(), "message_start");
    assert_eq!(names.last().unwrap(), "message_stop");
    assert_eq!(
        names.iter().filter(|n| *n == "content_block_delta").count(),
        2
    );
    let (status, responses) = stub.json("/v1/responses", &json!({"model": "r"}));
    assert_eq!(status, 200);
    assert_eq!(responses["status"], "completed");
    assert_eq!(responses["output"][0]["content"][0]["text"], "all done");
}

fn events_names(body: &str) -> Vec<String> {
    events(body)
        .into_iter()
        .filter_map(|(name, _)| name)
        .collect()
}

#[test]
fn scripted_errors_raw_bodies_and_the_request_log() {
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(
        &dir,
        &json!({"replies": [
            {"error": {"status": 503, "message": "overloaded"}},
            {"raw": "this is not JSON"},
            {"text": "fine"},
        ]}),
    );
    let log = dir.path().join("requests.jsonl");
    let stub = Stub::start(&["--script", &script, "--log", log.to_str().unwrap()]);
    let (status, error) = stub.json("/v1/messages", &json!({"model": "c"}));
    assert_eq!(status, 503);
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["message"], "overloaded");
    let (status, _, body) = stub.post("/v1/chat/completions", &json!({"model": "m"}));
    assert_eq!((status, body.as_str()), (200, "this is not JSON"));
    let (status, _) = stub.json("/v1/unknown", &json!({}));
    assert_eq!(status, 404);
    let _ = &stub.base;
    let (last, code) = stub.stop();
    assert_eq!(code, 0);
    assert_eq!(last, json!({"stopped": true, "requests": 2}));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("sk-secret-sentinel"),
        "headers are never logged"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["api"], "messages");
    assert_eq!(lines[0]["status"], 503);
    assert_eq!(lines[0]["body"], json!({"model": "c"}));
    assert_eq!(lines[1]["api"], "chat_completions");
    assert_eq!(lines[1]["path"], "/v1/chat/completions");
    assert_eq!(lines[1]["reply"], 1);
    assert_eq!(lines[1]["seq"], 1);
}

#[test]
fn bad_scripts_and_addresses_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, &json!({"replies": [{"text": "a"}, {"txt": "b"}]}));
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["stub-model", "serve"])
            .args(args)
            .output()
            .unwrap();
        let error: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), error)
    };
    let (code, error) = run(&["--script", &script]);
    assert_eq!(code, Some(2));
    assert_eq!(error["error"]["code"], "stub_model_script_invalid");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("replies[1]"),
        "{error}"
    );
    let (code, error) = run(&["--listen", "0.0.0.0:0"]);
    assert_eq!(code, Some(2));
    assert_eq!(error["error"]["metadata"]["field"], "--listen");
    let (code, error) = run(&["--script", "/nonexistent/script.json"]);
    assert_eq!(code, Some(2));
    assert_eq!(error["error"]["metadata"]["field"], "--script");
}
