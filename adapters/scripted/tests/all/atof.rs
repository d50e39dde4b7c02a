//! Relay ATOF from the built binary: a loopback stub collector (this file) receives what
//! the adapter posts to the `nemo-fabric-stream` sink of the Relay config it is started
//! with. The differential tests against upstream's collector are in
//! `bindings/python/tests/test_atof_adapters.py`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(20);
const MAX_RECORD: usize = 1024 * 1024;

/// One POST the stub received.
#[derive(Debug)]
struct Post {
    path: String,
    headers: BTreeMap<String, String>,
    records: Vec<Value>,
    status: u16,
}

/// A loopback collector stub: answers 413 to a body with a line over 1 MiB, else 200.
fn stub_collector() -> (u16, Receiver<Post>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let tx = tx.clone();
            std::thread::spawn(move || serve_one(stream, &tx));
        }
    });
    (port, rx)
}

fn serve_one(stream: TcpStream, tx: &Sender<Post>) {
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').expect("header line");
        headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
    }
    let mut body = Vec::new();
    if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        let length: usize = headers["content-length"].parse().unwrap();
        body.resize(length, 0);
        reader.read_exact(&mut body).unwrap();
    }
    let lines: Vec<&[u8]> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let status = if lines.iter().any(|l| l.len() > MAX_RECORD) {
        413
    } else {
        200
    };
    let records = lines
        .iter()
        .filter(|l| l.len() <= MAX_RECORD)
        .map(|l| serde_json::from_slice(l).expect("each line is JSON"))
        .collect();
    // Queued before answering: the sender's next POST cannot overtake this one.
    let _ = tx.send(Post {
        path,
        headers,
        records,
        status,
    });
    let _ = write!(
        writer,
        "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}

fn relay_config(dir: &Path, port: u16) -> String {
    relay_config_with(dir, port, "ndjson")
}

fn relay_config_with(dir: &Path, port: u16, transport: &str) -> String {
    let path = dir.join("relay-config.json");
    let sink = json!({"type": "stream", "name": "nemo-fabric-stream", "transport": transport,
        "url": format!("http://127.0.0.1:{port}/v1/atof"),
        "header_env": {"Authorization": "ATOF_TEST_TOKEN"}});
    let config = json!({"schema_version": "fabric.relay/v1alpha1", "relay": {"enabled": true,
        "config": {"version": 1, "components": [{"kind": "observability", "enabled": true,
            "config": {"version": 4, "atof": {"enabled": true, "sinks": [sink]}}}]}}});
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

struct Adapter {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Adapter {
    fn start(config_path: Option<&str>, settings: Value) -> (Adapter, Value) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fabric-adapter-scripted"))
            .env("ATOF_TEST_TOKEN", "Bearer sentinel-token-7")
            .env_remove("FABRIC_RELAY_CONFIG_PATH")
            .env_remove("FABRIC_RELAY_ENABLED")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn adapter");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut adapter = Adapter {
            child,
            stdin,
            lines,
        };
        let mut context = context();
        if let Some(path) = config_path {
            context["telemetry"] = json!({"relay_enabled": true, "config_path": path});
        }
        let config = json!({"harness": {"settings": settings}});
        let answer = adapter.request(json!({"operation": "start", "payload": {
            "agent_name": "t", "base_dir": "/tmp", "config": config, "runtime_context": context}}));
        (adapter, answer)
    }

    fn request(&mut self, message: Value) -> Value {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        let line = self.lines.recv_timeout(DEADLINE).expect("an answer");
        serde_json::from_str(&line).unwrap()
    }

    fn invoke(&mut self, request_context: Value) -> Value {
        let answer = self.request(json!({"operation": "invoke", "payload": {
            "runtime_context": context(), "request": {"input": "hi", "context": request_context}}}));
        assert_eq!(answer["outcome"]["status"], "succeeded", "{answer}");
        answer["outcome"]["output"]["output"].clone()
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn context() -> Value {
    json!({"runtime_id": "R1", "invocation_id": "invocation-1", "request_id": "request-1",
        "environment": {"environment_id": "env-1", "provider": "local",
            "control_location": "in_env_control", "ownership": "caller_owned"},
        "artifacts": {}})
}

fn started(port: u16, settings: Value) -> (tempfile::TempDir, Adapter) {
    let dir = tempfile::tempdir().unwrap();
    let path = relay_config(dir.path(), port);
    let (adapter, answer) = Adapter::start(Some(&path), settings);
    assert_eq!(answer["outcome"]["status"], "succeeded", "{answer}");
    (dir, adapter)
}

#[test]
fn an_invocation_posts_a_correlated_scope_with_its_marks() {
    let (port, posts) = stub_collector();
    let (_dir, mut adapter) = started(port, json!({"atof": {"marks": 3}}));
    let output = adapter.invoke(json!({}));
    assert_eq!(output["atof"], json!({"sent": 5, "http_statuses": [200]}));
    let post = posts.recv_timeout(DEADLINE).expect("a POST");
    assert_eq!(post.path, "/v1/atof");
    assert_eq!(post.headers["authorization"], "Bearer sentinel-token-7");
    assert_eq!(post.headers["content-type"], "application/x-ndjson");
    assert_eq!(post.headers["transfer-encoding"], "chunked");
    let records = &post.records;
    let kinds: Vec<_> = records
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["scope_category"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("scope", Some("start")),
            ("mark", None),
            ("mark", None),
            ("mark", None),
            ("scope", Some("end"))
        ]
    );
    let (start, end) = (&records[0], &records[4]);
    assert_eq!(start["metadata"]["nemo_fabric_request_id"], "request-1");
    assert_eq!(
        start["metadata"]["nemo_fabric_invocation_id"],
        "invocation-1"
    );
    assert_eq!(start["data"], json!({"input": "hi"}));
    assert_eq!(start["atof_version"], "0.1");
    let scope = start["uuid"].as_str().unwrap();
    assert_eq!(end["uuid"], scope);
    assert_eq!(end["metadata"]["otel.status_code"], "OK");
    assert_eq!(end["data"], json!({"response": "hi"}));
    for (index, mark) in records[1..4].iter().enumerate() {
        assert_eq!(mark["parent_uuid"], scope);
        assert_eq!(mark["data"]["index"], index);
        assert_ne!(mark["uuid"], scope);
    }
    // The next invocation is a new scope.
    adapter.invoke(json!({"scripted_atof": {"marks": 0}}));
    let post = posts.recv_timeout(DEADLINE).expect("a second POST");
    assert_eq!(post.records.len(), 2);
    assert_ne!(post.records[0]["uuid"], scope);
}

#[test]
fn faults_change_the_correlation_the_token_or_the_record_size() {
    let (port, posts) = stub_collector();
    let (_dir, mut adapter) = started(port, json!({"atof": {"marks": 2}}));

    adapter.invoke(json!({"scripted_atof": {"fault": "wrong_request_id"}}));
    let metadata = &posts.recv_timeout(DEADLINE).unwrap().records[0]["metadata"];
    let id = metadata["nemo_fabric_request_id"].as_str().unwrap();
    assert!(
        id.starts_with("request-unregistered-") && id != "request-1",
        "{id}"
    );

    adapter.invoke(json!({"scripted_atof": {"fault": "no_correlation"}}));
    let post = posts.recv_timeout(DEADLINE).unwrap();
    assert!(
        post.records[0]["metadata"]
            .get("nemo_fabric_request_id")
            .is_none()
    );
    assert_eq!(
        post.records[0]["metadata"]["nemo_fabric_invocation_id"],
        "invocation-1"
    );

    adapter.invoke(json!({"scripted_atof": {"fault": "bad_token"}}));
    let post = posts.recv_timeout(DEADLINE).unwrap();
    assert_eq!(post.headers["authorization"], "Bearer wrong-token");

    let output = adapter.invoke(json!({"scripted_atof": {"fault": "oversize"}}));
    assert_eq!(
        output["atof"],
        json!({"sent": 3, "http_statuses": [200], "oversize_http_status": 413})
    );
    let mut received: Vec<Post> = (0..2)
        .map(|_| posts.recv_timeout(DEADLINE).unwrap())
        .collect();
    received.sort_by_key(|p| p.status);
    assert_eq!((received[0].status, received[0].records.len()), (200, 3));
    assert_eq!(received[0].records[1]["data"]["index"], 1);
    assert_eq!((received[1].status, received[1].records.len()), (413, 0));
    assert!(
        received[1].headers["content-length"]
            .parse::<usize>()
            .unwrap()
            > MAX_RECORD
    );
}

#[test]
fn nothing_is_posted_without_relay_or_when_switched_off() {
    let (port, posts) = stub_collector();
    let (_dir, mut adapter) = started(port, json!({"atof": {"enabled": false}}));
    assert!(adapter.invoke(json!({})).get("atof").is_none());
    // Switched back on for one request.
    assert_eq!(
        adapter.invoke(json!({"scripted_atof": {"enabled": true}}))["atof"]["sent"],
        3
    );
    assert_eq!(posts.recv_timeout(DEADLINE).unwrap().records.len(), 3);

    let (mut plain, answer) = Adapter::start(None, json!({}));
    assert_eq!(answer["outcome"]["status"], "succeeded");
    assert!(plain.invoke(json!({})).get("atof").is_none());
    let bad = plain.request(
        json!({"operation": "invoke", "payload": {"runtime_context": context(),
        "request": {"input": "x", "context": {"scripted_atof": {"marks": "many"}}}}}),
    );
    assert_eq!(bad["outcome"]["error"]["code"], "lifecycle_invalid_request");
    assert!(
        bad["outcome"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("scripted_atof.marks")
    );
}

#[test]
fn an_unreadable_relay_config_fails_start() {
    let (_adapter, answer) = Adapter::start(Some("/nonexistent/relay-config.json"), json!({}));
    assert_eq!(answer["outcome"]["status"], "failed");
    assert_eq!(
        answer["outcome"]["error"]["code"],
        "scripted_relay_config_invalid"
    );
}

#[test]
fn http_post_sends_one_request_per_record() {
    let (port, posts) = stub_collector();
    let dir = tempfile::tempdir().unwrap();
    let path = relay_config_with(dir.path(), port, "http_post");
    let (mut adapter, answer) = Adapter::start(Some(&path), json!({"atof": {"marks": 2}}));
    assert_eq!(answer["outcome"]["status"], "succeeded", "{answer}");
    let output = adapter.invoke(json!({}));
    assert_eq!(output["atof"], json!({"sent": 4, "http_statuses": [200]}));
    let received: Vec<Post> = (0..4)
        .map(|_| posts.recv_timeout(DEADLINE).unwrap())
        .collect();
    for post in &received {
        assert_eq!(post.records.len(), 1);
        assert_eq!(post.headers["content-type"], "application/json");
        assert!(post.headers.contains_key("content-length"));
        assert_eq!(post.headers["authorization"], "Bearer sentinel-token-7");
    }
    // Sent one after another: the stub saw them in order.
    let kinds: Vec<_> = received
        .iter()
        .map(|p| p.records[0]["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["scope", "mark", "mark", "scope"]);
}

#[test]
fn an_unreachable_sink_is_reported_and_the_turn_succeeds() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (_dir, mut adapter) = started(port, json!({"atof": {"marks": 2}}));
    let output = adapter.invoke(json!({}));
    assert_eq!(output["response"], "hi");
    assert_eq!(
        output["atof"],
        json!({"sent": 0, "http_statuses": [], "error": "could not connect to the ATOF sink"})
    );
}
