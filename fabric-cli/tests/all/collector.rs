//! `fabric collector serve` driven by a real HTTP client (std TcpStream): every endpoint's
//! status codes, the bearer token, the record and queue limits, routing by request id and
//! scope ancestry, the drop counters, the loopback rule and the signal stop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// A running `fabric collector serve` (killed by pid when dropped).
pub(crate) struct Served {
    pub(crate) child: Child,
    stdout: BufReader<ChildStdout>,
    pub(crate) addr: String,
    pub(crate) token: String,
}

impl Served {
    pub(crate) fn start(extra: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["collector", "serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .env_remove("FABRIC_COLLECTOR_TOKEN")
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn fabric collector serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("first line");
        let first: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(first["token_source"], "generated");
        let base = first["base_url"].as_str().expect("base_url");
        assert_eq!(first["atof_url"], format!("{base}/v1/atof"));
        Served {
            child,
            stdout,
            addr: base.trim_start_matches("http://").to_owned(),
            token: first["token"].as_str().expect("token").to_owned(),
        }
    }

    pub(crate) fn auth(&self) -> String {
        format!("Authorization: Bearer {}\r\n", self.token)
    }

    /// One request with a Content-Length body; the status and the body.
    pub(crate) fn call(
        &self,
        method: &str,
        path: &str,
        headers: &str,
        body: &[u8],
    ) -> (u16, Vec<u8>) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n{headers}Content-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("write head");
        stream.write_all(body).expect("write body");
        read_response(stream)
    }

    fn post_json(&self, path: &str, value: &Value) -> (u16, Value) {
        let (status, body) = self.call("POST", path, &self.auth(), value.to_string().as_bytes());
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    pub(crate) fn register(&self, request_id: &str) {
        let (status, body) = self.post_json("/v1/register", &json!({"request_id": request_id}));
        assert_eq!(status, 201, "{body}");
        assert_eq!(body, json!({"request_id": request_id, "status": "ready"}));
    }

    /// Posts records as one chunked NDJSON body.
    pub(crate) fn publish(&self, records: &[Value]) -> u16 {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let head = format!(
            "POST /v1/atof HTTP/1.1\r\nHost: {}\r\n{}Content-Type: application/x-ndjson\r\n\
             Transfer-Encoding: chunked\r\n\r\n",
            self.addr,
            self.auth()
        );
        stream.write_all(head.as_bytes()).expect("head");
        for record in records {
            let line = format!("{record}\n");
            let chunk = format!("{:x}\r\n{line}\r\n", line.len());
            stream.write_all(chunk.as_bytes()).expect("chunk");
        }
        stream.write_all(b"0\r\n\r\n").expect("last chunk");
        read_response(stream).0
    }

    pub(crate) fn stats(&self) -> Value {
        let (status, body) = self.call("GET", "/v1/stats", &self.auth(), b"");
        assert_eq!(status, 200);
        serde_json::from_slice(&body).expect("stats JSON")
    }

    /// Opens `GET /v1/stream/{id}`; the status and the connection (head consumed).
    fn open_stream(&self, request_id: &str) -> (u16, BufReader<TcpStream>) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let head = format!(
            "GET /v1/stream/{request_id} HTTP/1.1\r\nHost: {}\r\n{}\r\n",
            self.addr,
            self.auth()
        );
        stream.write_all(head.as_bytes()).expect("head");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("status line");
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).expect("header");
            if header == "\r\n" || header.is_empty() {
                break;
            }
        }
        (parse_status(&status), reader)
    }
}

impl Served {
    /// SIGTERM by pid: the last stdout line and the exit code.
    fn terminate(mut self) -> (Value, Option<i32>) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let mut last = String::new();
        self.stdout.read_line(&mut last).unwrap();
        let code = self.child.wait().unwrap().code();
        (
            serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}")),
            code,
        )
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_status(line: &str) -> u16 {
    line.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("status line: {line:?}"))
}

fn read_response(mut stream: TcpStream) -> (u16, Vec<u8>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let split = text
        .find("\r\n\r\n")
        .unwrap_or_else(|| panic!("no head: {text:?}"));
    let status = parse_status(&text);
    (status, raw[split + 4..].to_vec())
}

/// Reads the next NDJSON record of a chunked stream (`None` at the last chunk).
fn next_record(reader: &mut BufReader<TcpStream>) -> Option<Value> {
    let mut size = String::new();
    reader.read_line(&mut size).expect("chunk size");
    let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
    if size == 0 {
        return None;
    }
    let mut data = vec![0; size + 2];
    reader.read_exact(&mut data).expect("chunk");
    Some(serde_json::from_slice(&data[..size]).expect("record JSON"))
}

pub(crate) fn scope_start(uuid: &str, request_id: &str) -> Value {
    json!({"kind": "scope", "scope_category": "start", "uuid": uuid,
           "metadata": {"nemo_fabric_request_id": request_id}})
}

#[test]
fn endpoints_answer_as_upstream_with_the_token_required() {
    let served = Served::start(&[]);
    let (status, body) = served.call("GET", "/healthz", "", b"");
    assert_eq!((status, body.as_slice()), (200, b"ok".as_slice()));
    assert_eq!(served.call("GET", "/nope", "", b"").0, 404);
    assert_eq!(served.call("POST", "/healthz", "", b"").0, 405);
    let body = json!({"request_id": "r"}).to_string();
    for headers in [
        String::new(),
        "Authorization: Bearer wrong\r\n".into(),
        format!("Authorization: Basic {}\r\n", served.token),
        format!("Authorization: Bearer {}x\r\n", served.token),
    ] {
        let (status, body) = served.call("POST", "/v1/register", &headers, body.as_bytes());
        assert_eq!(status, 401, "{headers}");
        assert_eq!(body, br#"{"detail":"Unauthorized"}"#);
        assert_eq!(served.call("POST", "/v1/atof", &headers, b"{}\n").0, 401);
        assert_eq!(served.call("GET", "/v1/stream/r", &headers, b"").0, 401);
        assert_eq!(served.call("GET", "/v1/stats", &headers, b"").0, 401);
        let path = "/v1/deregister-request/r";
        assert_eq!(served.call("DELETE", path, &headers, b"").0, 401);
    }
    let auth = served.auth();
    let bad = |payload: &[u8], detail: &str| {
        let (status, body) = served.call("POST", "/v1/register", &auth, payload);
        assert_eq!(status, 400, "{}", String::from_utf8_lossy(payload));
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["detail"], detail);
    };
    bad(b"[1]", "Request body must be a JSON object");
    bad(b"not json", "Request body must be a JSON object");
    bad(
        br#"{"request_id": ""}"#,
        "request_id must be a non-empty string",
    );
    bad(
        br#"{"request_id": "r", "correlation_mode": "x"}"#,
        "correlation_mode is not supported",
    );
    bad(
        br#"{"request_id": "r", "capture_records": 1}"#,
        "capture_records must be a boolean",
    );
    bad(
        br#"{"request_id": "r", "registration_token": "t"}"#,
        "registration_token requires the Pi correlation mode",
    );
    served.register("r");
    let (status, body) = served.post_json("/v1/register", &json!({"request_id": "r"}));
    assert_eq!(status, 409);
    assert_eq!(body["detail"], "request_id 'r' is already registered");
    let (status, body) = served.post_json(
        "/v1/register",
        &json!({"request_id": "pi", "correlation_mode": "pi_turn_window"}),
    );
    assert_eq!(
        (status, body["detail"].as_str()),
        (
            409,
            Some("correlation modes require a standalone collector")
        )
    );
    // Streams: unknown 404, one attached at a time (409).
    assert_eq!(served.open_stream("unknown").0, 404);
    let (status, _attached) = served.open_stream("r");
    assert_eq!(status, 200);
    assert_eq!(served.open_stream("r").0, 409);
    // Deregistration: a bad flag is 400; unknown ids and repeats are 204.
    let (status, _) = served.call(
        "DELETE",
        "/v1/deregister-request/r?remove_queue=maybe",
        &auth,
        b"",
    );
    assert_eq!(status, 400);
    for path in [
        "/v1/deregister-request/nobody",
        "/v1/deregister-request/r?remove_queue=true",
    ] {
        let (status, body) = served.call("DELETE", path, &auth, b"");
        assert_eq!((status, body.len()), (204, 0), "{path}");
    }
}

#[test]
fn records_route_by_request_id_then_ancestry_and_streams_drain() {
    let served = Served::start(&[]);
    served.register("a");
    served.register("b");
    let (status, mut stream_a) = served.open_stream("a");
    assert_eq!(status, 200);
    let records = [
        scope_start("sa", "a"),
        scope_start("sb", "b"),
        json!({"kind": "scope", "scope_category": "start", "uuid": "child", "parent_uuid": "sa"}),
        json!({"kind": "mark", "uuid": "m1", "parent_uuid": "child", "name": "deep"}),
        json!({"kind": "mark", "uuid": "m2", "parent_uuid": "nobody"}),
        json!({"kind": "mark", "name": "no uuid"}),
        scope_start("sx", "never-registered"),
        json!({"kind": "scope", "scope_category": "end", "uuid": "sa"}),
    ];
    assert_eq!(served.publish(&records), 200);
    // Blank and non-object lines are skipped, not fatal.
    let (status, _) = served.call("POST", "/v1/atof", &served.auth(), b"\n  \n[1]\nnot json\n");
    assert_eq!(status, 200);
    let uuids: Vec<Value> = (0..4)
        .map(|_| next_record(&mut stream_a).expect("record")["uuid"].clone())
        .collect();
    assert_eq!(
        uuids,
        [json!("sa"), json!("child"), json!("m1"), json!("sa")]
    );
    // Deregistered without remove_queue: b's queued record is still delivered, then the end.
    let (status, _) = served.call("DELETE", "/v1/deregister-request/b", &served.auth(), b"");
    assert_eq!(status, 204);
    let (status, mut stream_b) = served.open_stream("b");
    assert_eq!(status, 200);
    assert_eq!(next_record(&mut stream_b).expect("b record")["uuid"], "sb");
    assert_eq!(next_record(&mut stream_b), None);
    // a's stream ends once a is deregistered.
    let (status, _) = served.call("DELETE", "/v1/deregister-request/a", &served.auth(), b"");
    assert_eq!(status, 204);
    assert_eq!(next_record(&mut stream_a), None);
    let stats = served.stats();
    assert_eq!(stats["records_received"], 10, "{stats}");
    assert_eq!(stats["records_routed"], 5, "{stats}");
    assert_eq!(stats["records_uncorrelated"], 3, "{stats}");
    assert_eq!(stats["records_invalid"], 2, "{stats}");
    assert_eq!(stats["registrations"], 0, "{stats}");
}

#[test]
fn oversize_records_are_413_and_full_queues_drop_after_the_backpressure_timeout() {
    let served = Served::start(&["--backpressure-timeout", "2"]);
    served.register("q");
    // A record of exactly 1 MiB is accepted; one byte more is 413.
    let mut record = scope_start("s", "q");
    let filler = 1024 * 1024 - record.to_string().len() - r#","pad":"""#.len();
    record["pad"] = json!("x".repeat(filler));
    assert_eq!(record.to_string().len(), 1024 * 1024);
    assert_eq!(served.publish(std::slice::from_ref(&record)), 200);
    record["pad"] = json!("x".repeat(filler + 1));
    let (status, body) = served.call(
        "POST",
        "/v1/atof",
        &served.auth(),
        record.to_string().as_bytes(),
    );
    assert_eq!(status, 413);
    assert_eq!(body, br#"{"detail":"ATOF record is too large"}"#);
    // 1,024 records fill the queue (one is queued already); the overflow waits for room,
    // then is dropped and counted, and the post still succeeds.
    let marks: Vec<Value> = (0..1025)
        .map(|i| json!({"kind": "mark", "uuid": format!("m{i}"), "parent_uuid": "s"}))
        .collect();
    assert_eq!(served.publish(&marks), 200);
    let stats = served.stats();
    assert_eq!(stats["records_routed"], 1024, "{stats}");
    assert_eq!(stats["records_dropped_backpressure"], 2, "{stats}");
    assert_eq!(stats["records_too_large"], 1, "{stats}");
    // A consumer drains the queue in order: the big record first.
    let (status, mut stream) = served.open_stream("q");
    assert_eq!(status, 200);
    assert_eq!(next_record(&mut stream).expect("first")["uuid"], "s");
    assert_eq!(next_record(&mut stream).expect("second")["uuid"], "m0");
    // The byte bound: 16 records of ~1 MiB fill 16 MiB; with the consumer reading, none
    // is dropped.
    let big: Vec<Value> = (0..20)
        .map(|i| {
            let mut r = json!({"kind": "mark", "uuid": format!("big{i}"), "parent_uuid": "s"});
            r["pad"] = json!("y".repeat(1000 * 1000));
            r
        })
        .collect();
    let reader = std::thread::spawn(move || {
        let mut seen = 0;
        while let Some(record) = next_record(&mut stream) {
            if record.get("pad").is_some() {
                seen += 1;
            }
            if seen == 20 {
                break;
            }
        }
        seen
    });
    assert_eq!(served.publish(&big), 200);
    assert_eq!(reader.join().unwrap(), 20);
    assert_eq!(served.stats()["records_dropped_backpressure"], 2);
}

#[test]
fn serve_refuses_non_loopback_and_stops_on_sigterm() {
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["collector", "serve", "--listen", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&output.stdout).expect("error JSON");
    assert_eq!(error["error"]["code"], "collector_listen_invalid");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allow-non-loopback")
    );
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["collector", "serve"])
        .env("FABRIC_COLLECTOR_TOKEN", "short")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&output.stdout).expect("error JSON");
    assert_eq!(error["error"]["code"], "collector_token_invalid");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("\"short\""));
    // A token from the environment is used and never printed.
    let token = "t".repeat(40);
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["collector", "serve", "--listen", "127.0.0.1:0"])
        .env("FABRIC_COLLECTOR_TOKEN", &token)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(!line.contains(&token));
    let first: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(first["token_source"], "env");
    let served = Served {
        child,
        stdout,
        addr: first["base_url"]
            .as_str()
            .unwrap()
            .trim_start_matches("http://")
            .into(),
        token,
    };
    served.register("x");
    let (last, code) = served.terminate();
    assert_eq!(last["stopped"], true);
    assert_eq!(last["stats"]["registrations"], 1);
    assert_eq!(code, Some(0));
}
