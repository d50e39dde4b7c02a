//! The embedded collector over raw HTTP: other local processes holding connections cannot
//! lock publishers out, and a client that asks to keep its connection may.

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
    drop(held);
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
