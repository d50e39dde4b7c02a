//! Calls through the gateway against a loopback stub: forwarded byte for byte, recorded,
//! refused without the token, refused over budget.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use fabric_gateway::{Capture, CaptureOptions, MODEL_CALLS_FILE, Upstream};
use serde_json::{Value, json};

use crate::stub::{self, Stub};

const SECRET: &str = "sk-gateway-secret-sentinel";

fn capture(stub: &Stub, dir: &Path, options: CaptureOptions) -> Capture {
    Capture::register(
        "runtime-test",
        vec![Upstream::new("default", "stub-model", &stub.base_url())],
        dir,
        options,
    )
    .expect("register")
}

pub(crate) fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("records")
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect()
}

const ANSWER: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","model":"stub-model","prompt_token_ids":[1,2],"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"token_ids":[7],"logprobs":{"content":[{"token":"hi","logprob":-0.5}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#;

#[test]
fn a_call_is_forwarded_byte_for_byte_and_recorded_without_credentials() {
    let stub = Stub::start(vec![stub::json_answer(ANSWER)], Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = capture(&stub, dir.path(), CaptureOptions::default());
    capture.begin("inv-1");
    let invocation = dir.path().join("inv-1");
    let url = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    let request =
        r#"{"model":"stub-model","messages":[{"role":"user","content":"hello"}],"logprobs":true}"#;
    let auth = format!("authorization: Bearer {SECRET}\r\n");
    let (status, _, body) = stub::answer(stub::post(&url, request, &auth));
    assert_eq!(status, 200);
    assert_eq!(body, ANSWER.as_bytes(), "the answer body passes unchanged");

    let received = stub.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        received[0].body,
        request.as_bytes(),
        "the request body passes unchanged"
    );
    assert!(
        received[0]
            .head
            .starts_with("POST /v1/chat/completions HTTP/1.1")
    );
    assert!(
        received[0].head.contains(SECRET),
        "credentials pass through"
    );

    let summary = capture.end();
    assert_eq!(summary.records, 1);
    let path = summary.path.expect("records path");
    assert_eq!(path, invocation.join(MODEL_CALLS_FILE));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
    assert_eq!(mode & 0o077, 0, "records are private: {mode:o}");
    let dir_mode = std::fs::metadata(&invocation)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(
        dir_mode & 0o077,
        0,
        "the records' directory is private: {dir_mode:o}"
    );
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(!text.contains(SECRET), "no credential in a record");
    let record = &records(&path)[0];
    assert_eq!(
        record["request"],
        serde_json::from_str::<Value>(request).unwrap()
    );
    assert_eq!(
        record["response"],
        serde_json::from_str::<Value>(ANSWER).unwrap()
    );
    assert_eq!(record["invocation_id"], "inv-1");
    assert_eq!(record["runtime_id"], "runtime-test");
    assert_eq!(record["model_role"], "default");
    assert_eq!(record["dialect"], "chat");
    assert_eq!(record["status_code"], 200);
    assert_eq!(record["call_index"], 0);
    assert_eq!(record["client_session_id"], "inv-1");
    assert_eq!(record["tokens_in"], 2);
    assert_eq!(record["tokens_out"], 1);
    let started = record["started_at"].as_f64().expect("started_at");
    assert!(started > 1.7e9 && record["completed_at"].as_f64().expect("completed_at") >= started);
    assert_eq!(record["streamed"], false);
    assert_eq!(record["response_id"], "chatcmpl-1");
    assert_eq!(record["tokens_total"], 3);
    assert_eq!(record["token_ids"], json!([7]));
    assert_eq!(record["prompt_token_ids"], json!([1, 2]));
    assert_eq!(
        record["logprobs"],
        json!([{"token": "hi", "logprob": -0.5}])
    );
    assert_eq!(record["base_url"], stub.base_url());
    assert_eq!(
        record["model_ref"],
        json!({"type": "responses_api_models", "name": "default"})
    );
    assert!(record["latency_total_ms"].as_f64().expect("latency") > 0.0);
    assert!(
        record["model_call_id"]
            .as_str()
            .expect("id")
            .starts_with("model-call-")
    );
}

fn event(n: usize) -> Vec<u8> {
    format!(
        "data: {{\"id\":\"chatcmpl-s\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"t{n}\"}},\"logprobs\":{{\"content\":[{{\"token\":\"t{n}\",\"logprob\":-0.{n}}}]}}}}]}}\n\n"
    )
    .into_bytes()
}

#[test]
fn a_stream_is_forwarded_chunk_by_chunk_as_it_arrives() {
    let gap = Duration::from_millis(300);
    let first = [stub::SSE_HEAD, &event(1)].concat();
    let parts = vec![first, event(2), event(3), b"data: [DONE]\n\n".to_vec()];
    let stub = Stub::start(parts.clone(), gap);
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = capture(&stub, dir.path(), CaptureOptions::default());
    capture.begin("inv-s");
    let url = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    let started = Instant::now();
    let mut stream = stub::post(&url, r#"{"model":"m","stream":true}"#, "");
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&data).contains("t1") {
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "the stream ended before its first event");
        data.extend_from_slice(&buf[..n]);
    }
    assert!(
        started.elapsed() < gap,
        "the first event arrived only after {:?}",
        started.elapsed()
    );
    // Each event is passed on when it arrives, not with a later one.
    while !String::from_utf8_lossy(&data).contains("t2") {
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "the stream ended before its second event");
        data.extend_from_slice(&buf[..n]);
    }
    assert!(
        started.elapsed() < gap * 2 - gap / 4,
        "the second event arrived only after {:?}",
        started.elapsed()
    );
    stream.read_to_end(&mut data).expect("rest");
    let (status, head, body) = stub::split_answer(&data);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream"));
    let sent = parts.concat();
    assert_eq!(
        body,
        sent[stub::SSE_HEAD.len()..],
        "the same chunks in the same order"
    );

    let summary = capture.end();
    let record = &records(&summary.path.expect("path"))[0];
    assert_eq!(record["streamed"], true);
    assert_eq!(record["chunks"], 4);
    assert_eq!(
        record["response_events"].as_array().expect("events").len(),
        3
    );
    assert_eq!(record["response"], Value::Null);
    assert_eq!(record["response_id"], "chatcmpl-s");
    assert_eq!(record["logprobs"].as_array().expect("logprobs").len(), 3);
    assert!(record["latency_ttft_ms"].as_f64().expect("ttft") < 300.0);
}

#[test]
fn a_request_without_the_token_is_refused() {
    let stub = Stub::start(vec![stub::json_answer(ANSWER)], Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = capture(&stub, dir.path(), CaptureOptions::default());
    let url = capture.base_url("default").expect("url");
    let origin = &url[..url.find('/').unwrap() + 2 + url[7..].find('/').unwrap()];
    for path in [
        "/default/chat/completions".to_owned(),
        format!("/{}/default/chat/completions", "0".repeat(64)),
        "/".to_owned(),
    ] {
        let (status, _, _) = stub::answer(stub::post(&format!("{origin}{path}"), "{}", ""));
        assert_eq!(status, 404, "{path}");
    }
    let unknown_role = format!("{}/chat/completions", url.replace("/default", "/other"));
    assert_eq!(stub::answer(stub::post(&unknown_role, "{}", "")).0, 404);
    drop(capture);
    let stale = format!("{url}/chat/completions");
    assert_eq!(
        stub::answer(stub::post(&stale, "{}", "")).0,
        404,
        "token unregistered"
    );
    assert!(stub.received().is_empty(), "nothing was forwarded");
}

#[test]
fn a_call_over_max_model_calls_is_answered_429_and_not_forwarded() {
    let stub = Stub::start(vec![stub::json_answer(ANSWER)], Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let options = CaptureOptions {
        max_model_calls: Some(1),
        ..CaptureOptions::default()
    };
    let capture = capture(&stub, dir.path(), options);
    capture.begin("inv-b");
    let base = capture.base_url("default").expect("url");
    let chat = format!("{base}/chat/completions");
    assert_eq!(stub::answer(stub::post(&chat, "{}", "")).0, 200);
    let (status, _, body) = stub::answer(stub::post(&chat, "{}", ""));
    assert_eq!(status, 429);
    let body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(body["error"]["code"], "max_model_calls");
    let (status, _, body) = stub::answer(stub::post(&format!("{base}/messages"), "{}", ""));
    assert_eq!(status, 429);
    let body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(body["error"]["type"], "rate_limit_error");
    assert_eq!(stub.received().len(), 1, "refused calls are not forwarded");
    let summary = capture.end();
    assert_eq!(summary.records, 1);
    assert_eq!(summary.budget_exceeded.len(), 2);
    assert_eq!(summary.budget_exceeded[0].budget, "max_model_calls");
    assert_eq!(summary.budget_exceeded[0].limit, 1);
    assert_eq!(summary.budget_exceeded[0].calls, 1);
    // A new invocation starts from zero.
    capture.begin("inv-c");
    assert_eq!(stub::answer(stub::post(&chat, "{}", "")).0, 200);
}

#[test]
fn max_total_tokens_counts_reported_usage() {
    let stub = Stub::start(vec![stub::json_answer(ANSWER)], Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let options = CaptureOptions {
        max_total_tokens: Some(3),
        ..CaptureOptions::default()
    };
    let capture = capture(&stub, dir.path(), options);
    capture.begin("inv-t");
    let chat = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    assert_eq!(stub::answer(stub::post(&chat, "{}", "")).0, 200);
    assert_eq!(stub::answer(stub::post(&chat, "{}", "")).0, 429);
    let summary = capture.end();
    assert_eq!(summary.budget_exceeded[0].budget, "max_total_tokens");
    assert_eq!(summary.budget_exceeded[0].total_tokens, 3);
}

#[test]
fn bodies_over_the_cap_are_stored_truncated_with_a_flag() {
    let stub = Stub::start(vec![stub::json_answer(ANSWER)], Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let options = CaptureOptions {
        body_cap: 16,
        ..CaptureOptions::default()
    };
    let capture = capture(&stub, dir.path(), options);
    capture.begin("inv-cap");
    let chat = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    let (_, _, body) = stub::answer(stub::post(&chat, r#"{"model":"m","messages":[]}"#, ""));
    assert_eq!(body, ANSWER.as_bytes(), "the harness still gets everything");
    let record = &records(&capture.end().path.expect("path"))[0];
    assert_eq!(record["request_truncated"], true);
    assert_eq!(record["response_truncated"], true);
    assert_eq!(record["request_raw"].as_str().expect("text").len(), 16);
    assert_eq!(record["response_raw"].as_str().expect("text").len(), 16);
}

#[test]
fn an_unreachable_endpoint_is_answered_502_and_recorded() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = dead.local_addr().expect("addr");
    drop(dead);
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = Capture::register(
        "runtime-dead",
        vec![Upstream::new("default", "m", &format!("http://{addr}/v1"))],
        dir.path(),
        CaptureOptions::default(),
    )
    .expect("register");
    let chat = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    let (status, _, _) = stub::answer(stub::post(&chat, "{}", ""));
    assert_eq!(status, 502);
    // Outside an invocation: the runtime's file, written after the answer (no invocation
    // end waits for it here), so it may land a moment after the 502.
    let path = dir.path().join(MODEL_CALLS_FILE);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !std::fs::read_to_string(&path).is_ok_and(|text| text.ends_with('\n')) {
        assert!(std::time::Instant::now() < deadline, "no record written");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let record = &records(&path)[0];
    assert_eq!(record["invocation_id"], Value::Null);
    assert!(
        record["error"]
            .as_str()
            .expect("error")
            .contains("could not be reached")
    );
}
