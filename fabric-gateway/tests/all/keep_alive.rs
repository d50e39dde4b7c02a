//! Kept connections: a harness sends call after call on one connection through the
//! gateway, each answered and recorded once; the gateway reuses its endpoint connection,
//! and answers 502 (never a second send) when a reused endpoint connection broke under it.

use std::time::Duration;

use fabric_gateway::{Capture, CaptureOptions, Upstream};
use tempfile::TempDir;

use crate::forward::records;
use crate::measure::numbered;
use crate::stub::{self, Mode, Stub};

const ANSWER: &str = r#"{"id":"chatcmpl-k","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#;

/// A stub answering `parts` in `mode`, the gateway registered in front of it (with
/// `invocation` begun, when given), and the gateway's chat URL. The temporary directory
/// holds the records.
fn through(
    parts: Vec<Vec<u8>>,
    gap: Duration,
    mode: Mode,
    invocation: Option<&str>,
) -> (Stub, TempDir, Capture, String) {
    let stub = Stub::start_with(parts, gap, mode);
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = Capture::register(
        "runtime-kept",
        vec![Upstream::new("default", "m", &stub.base_url())],
        dir.path(),
        CaptureOptions::default(),
    )
    .expect("register");
    if let Some(invocation) = invocation {
        capture.begin(invocation);
    }
    let url = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    (stub, dir, capture, url)
}

#[test]
fn calls_on_one_kept_connection_are_each_answered_and_recorded_once() {
    let (stub, _dir, capture, url) = through(
        vec![stub::kept_json_answer(ANSWER)],
        Duration::ZERO,
        Mode::KeepAlive,
        Some("inv-k"),
    );
    let mut client = stub::Kept::connect(&url);
    for n in 0..5 {
        let answer = client.call(&url, &format!("{{\"n\":{n}}}"), b"usage");
        assert_eq!(answer.status, 200, "{}", answer.head);
        assert!(
            answer.head.contains("connection: keep-alive"),
            "{}",
            answer.head
        );
        assert_eq!(answer.body, ANSWER.as_bytes(), "call {n}");
    }
    assert_eq!(stub.accepted(), 1, "one endpoint connection, reused");
    let received = stub.received();
    assert_eq!(received.len(), 5);
    assert!(
        received
            .iter()
            .enumerate()
            .all(|(n, r)| r.body == format!("{{\"n\":{n}}}").as_bytes())
    );
    let summary = capture.end();
    assert_eq!(summary.records, 5);
    let records = records(&summary.path.expect("path"));
    let indexes: Vec<_> = records.iter().map(|r| r["call_index"].as_u64()).collect();
    assert_eq!(
        indexes,
        (0..5).map(Some).collect::<Vec<_>>(),
        "each call once"
    );
    assert!(
        records
            .iter()
            .all(|r| r["status_code"] == 200 && r["response"]["id"] == "chatcmpl-k")
    );
}

#[test]
fn streams_on_one_kept_connection_keep_their_chunks() {
    let events: Vec<Vec<u8>> = (0..3).map(numbered).collect();
    let (stub, _dir, capture, url) = through(
        stub::kept_sse(&events),
        Duration::from_millis(20),
        Mode::KeepAlive,
        Some("inv-s"),
    );
    let mut client = stub::Kept::connect(&url);
    for _ in 0..3 {
        let answer = client.call(&url, "{\"stream\":true}", b"000");
        assert_eq!(answer.status, 200, "{}", answer.head);
        assert_eq!(answer.body, events.concat());
    }
    assert_eq!(stub.accepted(), 1, "one endpoint connection, reused");
    let summary = capture.end();
    assert_eq!(summary.records, 3);
    for record in records(&summary.path.expect("path")) {
        assert_eq!(record["streamed"], true);
        assert_eq!(
            record["chunks"], 3,
            "one read per event (they come 20 ms apart)"
        );
    }
}

#[test]
fn connection_close_is_answered_and_closed() {
    let (_stub, _dir, _capture, url) = through(
        vec![stub::kept_json_answer(ANSWER)],
        Duration::ZERO,
        Mode::KeepAlive,
        None,
    );
    // `post` asks `Connection: close`: the answer ends with the connection's close.
    let (status, head, body) = stub::answer(stub::post(&url, "{}", ""));
    assert_eq!(status, 200);
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(body, ANSWER.as_bytes());
}

#[test]
fn a_reused_endpoint_connection_that_broke_is_answered_502_never_sent_twice() {
    // The stub reads the second request of every connection and closes it unanswered: it
    // received that call, so sending it again would make the records differ from what the
    // endpoint saw.
    let (stub, _dir, capture, url) = through(
        vec![stub::kept_json_answer(ANSWER)],
        Duration::ZERO,
        Mode::DropSecond,
        Some("inv-r"),
    );
    let statuses: Vec<u16> = (0..3)
        .map(|_| {
            // A new harness connection per call: a 502 closes the one it was answered on.
            let mut client = stub::Kept::connect(&url);
            let answer = client.call(&url, "{}", b"HTTP");
            if answer.status == 200 {
                assert_eq!(answer.body, ANSWER.as_bytes());
            }
            answer.status
        })
        .collect();
    // Call 1 opens a connection; call 2 reuses it and breaks (502); call 3 opens a new one.
    assert_eq!(statuses, [200, 502, 200], "{statuses:?}");
    assert_eq!(
        stub.received().len(),
        3,
        "each call reached the endpoint once"
    );
    let summary = capture.end();
    assert_eq!(summary.records, 3, "one record per call");
    let records = records(&summary.path.expect("path"));
    assert_eq!(
        records.len(),
        stub.received().len(),
        "records match what the stub received"
    );
    // The broken call: no answer from the endpoint, its error recorded.
    assert!(records[1]["status_code"].is_null(), "{}", records[1]);
    assert!(records[1]["error"].is_string(), "{}", records[1]);
}

#[test]
fn a_whole_answer_larger_than_the_outbox_passes_on_a_kept_connection() {
    // Passed on every 64 KiB, not only at its end: the worker never waits on a full outbox
    // nobody drains.
    let big = format!("{{\"text\":\"{}\"}}", "x".repeat(3 * 1024 * 1024));
    let (stub, _dir, _capture, url) = through(
        vec![stub::kept_json_answer(&big)],
        Duration::ZERO,
        Mode::KeepAlive,
        None,
    );
    let mut client = stub::Kept::connect(&url);
    for _ in 0..2 {
        let answer = client.call(&url, "{}", b"text");
        assert_eq!(answer.status, 200, "{}", answer.head);
        assert!(answer.body == big.as_bytes(), "{} bytes", answer.body.len());
    }
    assert_eq!(stub.accepted(), 1);
}
