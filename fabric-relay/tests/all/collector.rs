//! The embedded collector over raw HTTP: other local processes holding connections cannot
//! lock publishers out, nor can a token holder whose bodies never come; `HEAD` answers
//! carry no body; the memory budget and the registration cap answer 503 with their codes;
//! and a client that asks to keep its connection may.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use fabric_relay::StreamNext;
use fabric_relay::collector::{Collector, CollectorOptions};

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    stream
}

/// Reads one response: its status code and body (`content-length` framed).
fn response(reader: &mut BufReader<TcpStream>) -> (u16, String) {
    let mut status = String::new();
    reader.read_line(&mut status).expect("status line");
    let code = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line {status:?}"));
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().expect("length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("body");
    (code, String::from_utf8(body).expect("utf-8"))
}

fn post(path: &str, token: &str, body: &str, keep_alive: bool) -> Vec<u8> {
    let connection = if keep_alive {
        "Connection: keep-alive\r\n"
    } else {
        ""
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n{connection}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A scope start routed to `request_id`, as one NDJSON line.
fn record(request_id: &str, uuid: &str) -> String {
    format!(
        r#"{{"kind":"scope","scope_category":"start","uuid":"{uuid}","metadata":{{"nemo_fabric_request_id":"{request_id}"}}}}"#
    ) + "\n"
}

/// Publishes `records` on a new connection; the status.
fn publish(addr: SocketAddr, token: &str, records: &str) -> u16 {
    let stream = connect(addr);
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    writer
        .write_all(&post("/v1/atof", token, records, false))
        .expect("write");
    response(&mut BufReader::new(stream)).0
}

/// 20 publishes, each on its own connection, all answered 200 within a second.
fn twenty_publishes_within_a_second(collector: &Collector, request_id: &str) {
    let began = Instant::now();
    for i in 0..20 {
        let status = publish(
            collector.local_addr(),
            collector.token(),
            &record(request_id, &format!("{request_id}-{i}")),
        );
        assert_eq!(status, 200);
    }
    let took = began.elapsed();
    assert!(took < Duration::from_secs(1), "20 publishes took {took:?}");
}

/// Whether the server closed the connection (EOF or reset) within `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).expect("timeout");
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

#[test]
fn held_connections_cannot_lock_publishers_out() {
    let collector = Collector::start(&CollectorOptions::loopback()).expect("collector");
    let addr = collector.local_addr();
    // 200 connections of another local process: silent ones and ones stopped mid-head.
    let mut held = Vec::new();
    for i in 0..200 {
        let mut stream = connect(addr);
        if i % 2 == 1 {
            stream
                .write_all(b"POST /v1/atof HTTP/1.1\r\nAuthorization: Bea")
                .expect("write");
        }
        held.push(stream);
    }
    let began = Instant::now();
    let stream = connect(addr);
    let mut writer = stream.try_clone().expect("clone");
    writer
        .write_all(&post(
            "/v1/register",
            collector.token(),
            r#"{"request_id": "r1"}"#,
            false,
        ))
        .expect("write");
    let (status, body) = response(&mut BufReader::new(stream));
    assert_eq!(status, 201, "{body}");
    assert!(began.elapsed() < Duration::from_secs(1));
    // And a publisher's record reaches its reader.
    let reader = collector.attach("r1").expect("attach");
    let record = r#"{"kind":"scope","scope_category":"start","uuid":"u1","metadata":{"nemo_fabric_request_id":"r1"}}"#;
    let stream = connect(addr);
    let mut writer = stream.try_clone().expect("clone");
    writer
        .write_all(&post(
            "/v1/atof",
            collector.token(),
            &format!("{record}\n"),
            false,
        ))
        .expect("write");
    assert_eq!(response(&mut BufReader::new(stream)).0, 200);
    assert!(matches!(
        reader.next(Some(Duration::from_secs(5))),
        StreamNext::Item(_)
    ));
    // 20 more publishers, each on a new connection while the 200 are still held.
    twenty_publishes_within_a_second(&collector, "r1");
    assert_eq!(collector.stats().records_routed, 21);
    drop(held);
}

#[test]
fn a_token_holder_whose_bodies_never_come_cannot_hold_every_slot() {
    let idle = Duration::from_secs(3);
    let options = CollectorOptions {
        body_idle: idle,
        ..CollectorOptions::loopback()
    };
    let collector = Collector::start(&options).expect("collector");
    collector.register("r").expect("register");
    let addr = collector.local_addr();
    // 130 accepted publishes announcing 100 bytes that never come: more than every slot.
    let began = Instant::now();
    let head = format!(
        "POST /v1/atof HTTP/1.1\r\nAuthorization: Bearer {}\r\nContent-Length: 100\r\n\r\n",
        collector.token()
    );
    let mut held = Vec::new();
    for _ in 0..130 {
        let mut stream = connect(addr);
        stream.write_all(head.as_bytes()).expect("write");
        held.push(stream);
    }
    // Once they stalled, real publishers still get slots (the stalled bodies are shed).
    std::thread::sleep(Duration::from_millis(1200));
    twenty_publishes_within_a_second(&collector, "r");
    // And no stalled body keeps its slot past the inactivity deadline.
    for stream in &mut held {
        let left = (idle + Duration::from_secs(2)).saturating_sub(began.elapsed());
        assert!(
            closed_within(stream, left.max(Duration::from_millis(10))),
            "a stalled body outlived the {idle:?} deadline"
        );
    }
    assert_eq!(collector.stats().records_routed, 20);
}

#[test]
fn a_body_that_keeps_coming_is_not_dropped() {
    let idle = Duration::from_millis(500);
    let options = CollectorOptions {
        body_idle: idle,
        ..CollectorOptions::loopback()
    };
    let collector = Collector::start(&options).expect("collector");
    collector.register("r").expect("register");
    let stream = connect(collector.local_addr());
    let mut writer = stream.try_clone().expect("clone");
    let head = format!(
        "POST /v1/atof HTTP/1.1\r\nAuthorization: Bearer {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        collector.token()
    );
    writer.write_all(head.as_bytes()).expect("head");
    // Longer in all than the deadline, never idle for as long: a streaming publisher.
    for i in 0..4 {
        std::thread::sleep(idle / 2);
        let line = record("r", &format!("u{i}"));
        let chunk = format!("{:x}\r\n{line}\r\n", line.len());
        writer.write_all(chunk.as_bytes()).expect("chunk");
    }
    writer.write_all(b"0\r\n\r\n").expect("end");
    assert_eq!(response(&mut BufReader::new(stream)).0, 200);
    assert_eq!(collector.stats().records_routed, 4);
}

/// Sends `request` and reads until the server closes: the whole answer.
fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut stream = connect(addr);
    stream.write_all(request.as_bytes()).expect("write");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("read to the end");
    String::from_utf8(all).expect("utf-8")
}

#[test]
fn head_requests_get_headers_without_a_body() {
    let collector = Collector::start(&CollectorOptions::loopback()).expect("collector");
    let addr = collector.local_addr();
    let auth = format!("Authorization: Bearer {}\r\n", collector.token());
    for path in ["/v1/stats", "/healthz", "/v1/stream/nobody"] {
        let get = exchange(addr, &format!("GET {path} HTTP/1.1\r\n{auth}\r\n"));
        let head = exchange(addr, &format!("HEAD {path} HTTP/1.1\r\n{auth}\r\n"));
        let (get_head, get_body) = get.split_once("\r\n\r\n").expect("a head");
        assert!(!get_body.is_empty(), "GET {path}: {get}");
        // The same status line and headers, the same content-length, and nothing after.
        assert_eq!(head, format!("{get_head}\r\n\r\n"), "HEAD {path}");
    }
    // HEAD of a registration's stream answers as GET would, without attaching to it.
    collector.register("r").expect("register");
    let head = exchange(addr, &format!("HEAD /v1/stream/r HTTP/1.1\r\n{auth}\r\n"));
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    let _reader = collector.attach("r").expect("still attachable after HEAD");
}

#[test]
fn registrations_beyond_the_cap_are_refused_with_503() {
    let options = CollectorOptions {
        max_registrations: 2,
        ..CollectorOptions::loopback()
    };
    let collector = Collector::start(&options).expect("collector");
    collector.register("a").expect("first");
    let stream = connect(collector.local_addr());
    let mut writer = stream.try_clone().expect("clone");
    writer
        .write_all(&post(
            "/v1/register",
            collector.token(),
            r#"{"request_id": "b"}"#,
            false,
        ))
        .expect("write");
    assert_eq!(response(&mut BufReader::new(stream)).0, 201);
    let stream = connect(collector.local_addr());
    let mut writer = stream.try_clone().expect("clone");
    writer
        .write_all(&post(
            "/v1/register",
            collector.token(),
            r#"{"request_id": "c"}"#,
            false,
        ))
        .expect("write");
    let (status, body) = response(&mut BufReader::new(stream));
    assert_eq!(status, 503, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body["code"], "collector_registrations_full");
    let error = collector.register("d").unwrap_err();
    assert_eq!(
        fabric_config::ErrorInfo::from(error).code,
        "collector_registrations_full"
    );
    collector.deregister("a", true);
    collector
        .register("d")
        .expect("room again after a deregistration");
    assert_eq!(collector.stats().registrations_refused, 2);
}

#[test]
fn the_memory_budget_holds_records_back_and_refuses_what_cannot_fit() {
    let budget = 2 * 1024 * 1024;
    let options = CollectorOptions {
        memory_budget: budget,
        put_timeout: Duration::from_millis(50),
        ..CollectorOptions::loopback()
    };
    let collector = Collector::start(&options).expect("collector");
    let addr = collector.local_addr();
    // Three registrations nobody reads, each sent 1 MiB of records: 3 MiB offered.
    let pad = "x".repeat(32 * 1024);
    for id in ["a", "b", "c"] {
        collector.register(id).expect("register");
        let start = record(id, id);
        let mut body = start.clone();
        for i in 0..32 {
            body.push_str(&format!(
                r#"{{"kind":"mark","uuid":"{id}-{i}","parent_uuid":"{id}","pad":"{pad}"}}"#
            ));
            body.push('\n');
        }
        assert_eq!(publish(addr, collector.token(), &body), 200);
    }
    let stats = collector.stats();
    assert!(stats.memory_bytes <= budget as u64, "{stats:?}");
    assert!(stats.records_dropped_backpressure > 0, "{stats:?}");
    assert_eq!(stats.memory_budget_bytes, budget as u64);
    // A partial record that cannot be buffered waits, then is refused with 503.
    let stream = connect(addr);
    let mut writer = stream.try_clone().expect("clone");
    let head = format!(
        "POST /v1/atof HTTP/1.1\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n",
        collector.token(),
        900 * 1024 + 1
    );
    writer.write_all(head.as_bytes()).expect("head");
    let _ = writer.write_all(&vec![b' '; 900 * 1024]);
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let (status, body) = response(&mut BufReader::new(stream));
    assert_eq!(status, 503, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body["code"], "collector_memory_full");
    assert_eq!(collector.stats().requests_refused_memory, 1);
}

#[test]
fn a_client_asking_for_keep_alive_keeps_its_connection() {
    let collector = Collector::start(&CollectorOptions::loopback()).expect("collector");
    let stream = connect(collector.local_addr());
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    for id in ["a", "b"] {
        writer
            .write_all(&post(
                "/v1/register",
                collector.token(),
                &format!(r#"{{"request_id": "{id}"}}"#),
                true,
            ))
            .expect("write");
        assert_eq!(response(&mut reader).0, 201);
    }
    assert_eq!(collector.stats().registrations, 2);
}
