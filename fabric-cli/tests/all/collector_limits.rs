//! `fabric collector serve` under hostile and heavy local load, at the socket level: held
//! and half-sent connections, a token holder whose bodies never come, `HEAD`, the memory
//! budget (the process's resident memory, read from `/proc`), and the range of the bound
//! flags.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::collector::{Served, scope_start};

fn connect(served: &Served) -> TcpStream {
    TcpStream::connect(&served.addr).expect("connect")
}

/// 20 publishes, each on a new connection, all answered 200 within a second.
fn twenty_publishes_within_a_second(served: &Served, request_id: &str) {
    let began = Instant::now();
    for i in 0..20 {
        let record = scope_start(&format!("{request_id}-{i}"), request_id);
        assert_eq!(served.publish(&[record]), 200);
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

/// The process's resident set (`VmRSS`), in bytes.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("VmRSS");
    kib * 1024
}

#[test]
fn held_and_half_sent_connections_cannot_lock_publishers_out() {
    let served = Served::start(&[]);
    served.register("r");
    let mut held = Vec::new();
    for i in 0..200 {
        let mut stream = connect(&served);
        if i % 2 == 1 {
            stream
                .write_all(b"POST /v1/atof HTTP/1.1\r\nAuthorization: Bea")
                .expect("write");
        }
        held.push(stream);
    }
    twenty_publishes_within_a_second(&served, "r");
    assert_eq!(served.stats()["records_routed"], 20);
    drop(held);
}

#[test]
fn a_token_holder_whose_bodies_never_come_cannot_hold_every_slot() {
    let served = Served::start(&["--body-idle-timeout", "3"]);
    served.register("r");
    let began = Instant::now();
    let head = format!(
        "POST /v1/atof HTTP/1.1\r\n{}Content-Length: 100\r\n\r\n",
        served.auth()
    );
    let mut held = Vec::new();
    for _ in 0..130 {
        let mut stream = connect(&served);
        stream.write_all(head.as_bytes()).expect("write");
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(1200)); // the bodies have stalled
    twenty_publishes_within_a_second(&served, "r");
    for stream in &mut held {
        let left = Duration::from_secs(5).saturating_sub(began.elapsed());
        assert!(
            closed_within(stream, left.max(Duration::from_millis(10))),
            "a stalled body outlived --body-idle-timeout"
        );
    }
}

#[test]
fn head_of_stats_is_the_head_alone() {
    let served = Served::start(&[]);
    let mut stream = connect(&served);
    let request = format!("HEAD /v1/stats HTTP/1.1\r\n{}\r\n", served.auth());
    stream.write_all(request.as_bytes()).expect("write");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read to the end");
    let text = String::from_utf8(raw).expect("utf-8");
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("content-length: "), "{text}");
    assert!(
        text.ends_with("\r\n\r\n"),
        "a body after the head: {text:?}"
    );
}

#[test]
fn resident_memory_stays_within_the_budget_with_100_registrations_publishing() {
    const BUDGET: u64 = 16 * 1024 * 1024;
    /// What the process needs besides the budget: code and data at start (~11 MiB), the
    /// transport buffers of up to 128 connections (~200 KiB each while a record streams),
    /// allocator slack.
    const CONSTANT: u64 = 48 * 1024 * 1024;
    let served = Served::start(&[
        "--memory-budget-bytes",
        &BUDGET.to_string(),
        "--backpressure-timeout",
        "0.01",
    ]);
    let pid = served.child.id();
    let before = rss_bytes(pid);
    // 100 registrations nobody reads, each published 1 MiB of records at once: 100 MiB
    // offered, 16 MiB kept (without a budget all of it stays queued: 11 -> 120 MiB).
    let ids: Vec<String> = (0..100).map(|i| format!("r{i}")).collect();
    for id in &ids {
        served.register(id);
    }
    let pad = "x".repeat(32 * 1024);
    let served = std::sync::Arc::new(served);
    let publishers: Vec<_> = ids
        .iter()
        .map(|id| {
            let served = std::sync::Arc::clone(&served);
            let mut records = vec![scope_start(id, id)];
            records.extend((0..32).map(|i| {
                json!({"kind": "mark", "uuid": format!("{id}-{i}"), "parent_uuid": id,
                       "pad": pad})
            }));
            std::thread::spawn(move || served.publish(&records))
        })
        .collect();
    let mut peak = before;
    while !publishers.iter().all(|p| p.is_finished()) {
        peak = peak.max(rss_bytes(pid));
        std::thread::sleep(Duration::from_millis(20));
    }
    for publisher in publishers {
        assert_eq!(publisher.join().expect("publisher"), 200);
    }
    peak = peak.max(rss_bytes(pid));
    let stats: Value = served.stats();
    eprintln!(
        "collector RSS: {} MiB before, {} MiB peak; budget {} MiB; stats {stats}",
        before >> 20,
        peak >> 20,
        BUDGET >> 20
    );
    assert!(
        stats["memory_bytes"].as_u64().expect("memory_bytes") <= BUDGET,
        "{stats}"
    );
    assert!(stats["records_dropped_backpressure"].as_u64() > Some(0));
    assert!(
        peak <= BUDGET + CONSTANT,
        "peak RSS {} MiB is over the {} MiB budget plus {} MiB",
        peak >> 20,
        BUDGET >> 20,
        CONSTANT >> 20
    );
}

#[test]
fn bound_flags_are_range_checked_naming_the_flag() {
    // Out of any number's range: the command line's one parser (src/flags.rs) refuses them.
    for (flag, value, code) in [
        ("--memory-budget-bytes", "1000", "invalid_value"),
        ("--max-registrations", "0", "invalid_value"),
        ("--body-idle-timeout", "0", "invalid_timeout_seconds"),
        ("--body-idle-timeout", "1e30", "invalid_timeout_seconds"),
        ("--body-idle-timeout", "NaN", "invalid_timeout_seconds"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["collector", "serve", flag, value])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        let error: Value = serde_json::from_slice(&output.stdout).expect("error JSON");
        assert_eq!(error["error"]["code"], code, "{flag} {value}: {error}");
        assert_eq!(error["error"]["path"], flag, "{error}");
    }
    // A number, but over what an inactivity deadline may be (a week).
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["collector", "serve", "--body-idle-timeout", "1e8"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&output.stdout).expect("error JSON");
    assert_eq!(error["error"]["code"], "collector_listen_invalid");
    assert_eq!(
        error["error"]["metadata"]["field"], "--body-idle-timeout",
        "{error}"
    );
}
