//! Native OpenAI streaming through the Rust facade with the scripted adapter: chunks and
//! result, early close, the one-active-turn rule, and every listener answer provoked by a
//! real adapter process (`harness.settings.stream.fault`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::support::scripted_config;
use fabric_config::agent::RunStatus;
use fabric_config::stream::OpenAiChunk;
use fabric_config::{ErrorInfo, RunRequest, Stage};
use fabric_host::{Fabric, PullStream, RunOptions, Runtime, RuntimeState, StreamBatch, StreamNext};
use serde_json::{Value, json};

fn runtime(dir: &Path, stream: Value) -> Arc<Runtime> {
    let settings =
        json!({"replies": ["The quick brown fox jumps over the lazy dog."], "stream": stream});
    let config = scripted_config("openai-stream", settings, json!({}));
    Arc::new(
        Fabric::new()
            .start_runtime(&config, &RunOptions::with_base_dir(dir))
            .expect("start"),
    )
}

/// Reads every item (or the error that ended the stream).
fn drain(stream: &dyn PullStream) -> (Vec<OpenAiChunk>, Option<ErrorInfo>) {
    let mut chunks = Vec::new();
    loop {
        match stream.next(Some(Duration::from_secs(30))) {
            Ok(StreamNext::Item(text)) => {
                let value: Value = serde_json::from_str(&text).expect("chunk JSON");
                chunks.push(OpenAiChunk::check(&value).expect("valid chunk"));
            }
            Ok(StreamNext::End) => return (chunks, None),
            Ok(StreamNext::Timeout) => panic!("no item within 30 s"),
            Err(error) => return (chunks, Some(ErrorInfo::from(error))),
        }
    }
}

#[test]
fn chunks_then_a_separate_result() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(dir.path(), json!({"chunk_chars": 4}));
    assert!(runtime.supports_openai_streaming());
    let stream = runtime
        .invoke_openai_stream(RunRequest::new("hi"))
        .expect("stream");
    // One active turn: a second stream or an invoke is a state error while it is open.
    let busy = runtime.invoke(RunRequest::new("again")).unwrap_err();
    assert_eq!((busy.code(), busy.is_state_error()), ("runtime_busy", true));
    assert!(busy.to_string().contains("streaming invocation is active"));
    let second = runtime
        .invoke_openai_stream(RunRequest::new("again"))
        .unwrap_err();
    assert_eq!(second.code(), "runtime_busy");

    let (chunks, error) = drain(&stream);
    assert!(error.is_none(), "{error:?}");
    let text: String = chunks.iter().map(OpenAiChunk::text).collect();
    assert_eq!(text, "The quick brown fox jumps over the lazy dog.");
    assert_eq!(chunks.len(), text.len().div_ceil(4));
    assert_eq!(
        chunks[0].choices[0].delta.role.as_deref(),
        Some("assistant")
    );
    let result = stream.result().expect("result");
    assert_eq!(result.status, RunStatus::Succeeded);
    assert_eq!(result.invocation_id, stream.info().invocation_id);
    assert_eq!(result.output["response"], text.as_str());
    // END again after the end; the runtime is free for the next turn.
    assert_eq!(stream.next(None).unwrap(), StreamNext::End);
    drop(stream);
    let next = runtime.invoke(RunRequest::new("next")).expect("invoke");
    assert_eq!(next.status, RunStatus::Succeeded);
    // The stream token never reaches the invocation record.
    let record = std::fs::read_to_string(
        runtime
            .fabric_home()
            .join(&result.invocation_id)
            .join("adapter-invocation.json"),
    );
    if let Ok(record) = record {
        assert!(record.contains("\"token\": \"***\""), "{record}");
    }
    runtime.stop();
}

#[test]
fn batches_take_every_ready_item_and_a_zero_timeout_never_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(dir.path(), json!({"chunk_chars": 1}));
    let stream = runtime
        .invoke_openai_stream(RunRequest::new("hi"))
        .expect("stream");
    let mut text = String::new();
    let mut batches = 0;
    loop {
        // Drain what is ready without waiting; wait (and finish) only when nothing is.
        let batch = match stream.next_batch(0, Some(Duration::ZERO)).expect("poll") {
            StreamBatch::Timeout => stream
                .next_batch(16, Some(Duration::from_secs(30)))
                .expect("wait"),
            other => other,
        };
        match batch {
            StreamBatch::Items(items) => {
                assert!(!items.is_empty());
                batches += 1;
                for item in items {
                    let value: Value = serde_json::from_str(&item).expect("chunk JSON");
                    text.push_str(&OpenAiChunk::check(&value).expect("chunk").text());
                }
            }
            StreamBatch::End => break,
            StreamBatch::Timeout => panic!("no item within 30 s"),
        }
    }
    assert_eq!(text, "The quick brown fox jumps over the lazy dog.");
    assert!(batches <= text.len(), "{batches} batches");
    // Finished: a zero-timeout pull reports the end, the result is the reply.
    assert_eq!(
        stream.next_batch(0, Some(Duration::ZERO)).unwrap(),
        StreamBatch::End
    );
    assert_eq!(
        stream.result().expect("result").output["response"],
        text.as_str()
    );
    runtime.stop();
}

#[test]
fn close_drops_unread_chunks_without_cancelling_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(dir.path(), json!({"chunk_chars": 1, "delay_ms": 5}));
    let stream = runtime
        .invoke_openai_stream(RunRequest::new("hi"))
        .expect("stream");
    assert!(matches!(
        stream.next(Some(Duration::from_secs(30))),
        Ok(StreamNext::Item(_))
    ));
    stream.close();
    assert_eq!(stream.next(None).unwrap(), StreamNext::End);
    // The turn ran to its end: the result is the full reply.
    let result = stream.result().expect("result");
    assert_eq!(
        result.output["response"],
        "The quick brown fox jumps over the lazy dog."
    );
    assert_eq!(runtime.status().state, RuntimeState::Idle);
    runtime.stop();
}

#[test]
fn an_adapter_without_the_claim_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let config = scripted_config("no-claim", json!({}), json!({}));
    let mut plan = Fabric::new()
        .plan(&config, &RunOptions::with_base_dir(dir.path()))
        .unwrap();
    plan.capabilities.streaming = false;
    let runtime = Arc::new(
        Fabric::new()
            .start_runtime_plan(&plan, &RunOptions::with_base_dir(dir.path()).runtime)
            .unwrap(),
    );
    assert!(!runtime.supports_openai_streaming());
    let error = runtime
        .invoke_openai_stream(RunRequest::new("x"))
        .unwrap_err();
    let info = ErrorInfo::from(error);
    assert_eq!(
        (info.code.as_str(), info.stage),
        ("openai_streaming_unavailable", Stage::Invoke)
    );
    assert_eq!(runtime.status().invocations, 0);
    assert!(runtime.invoke(RunRequest::new("x")).is_ok());
    runtime.stop();
}

#[test]
fn a_claim_without_an_implementation_fails_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(dir.path(), json!({"implemented": false}));
    let stream = runtime.invoke_openai_stream(RunRequest::new("x")).unwrap();
    let (chunks, error) = drain(&stream);
    assert!(chunks.is_empty() && error.is_none());
    let info = ErrorInfo::from(stream.result().unwrap_err());
    assert_eq!(info.code, "lifecycle_openai_stream_unsupported");
    assert_eq!(runtime.status().state, RuntimeState::Failed);
    runtime.stop();
}

/// Runs one faulty stream and returns (chunks read, the stream error, the result error,
/// the runtime state afterwards).
fn faulty(fault: &str) -> (usize, Option<ErrorInfo>, ErrorInfo, RuntimeState) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(dir.path(), json!({"chunk_chars": 8, "fault": fault}));
    let stream = runtime.invoke_openai_stream(RunRequest::new("x")).unwrap();
    let (chunks, error) = drain(&stream);
    let result = stream.result().expect_err(fault);
    drop(stream);
    let state = runtime.status().state;
    runtime.stop();
    (chunks.len(), error, ErrorInfo::from(result), state)
}

#[test]
fn refused_connections_fail_the_invocation_with_the_listener_answer() {
    for (fault, status) in [
        ("bad_token", 401),
        ("bad_path", 404),
        ("not_chunked", 411),
        ("bad_content_type", 415),
        ("bad_expect", 417),
    ] {
        let (chunks, stream_error, error, state) = faulty(fault);
        assert_eq!(chunks, 0, "{fault}");
        assert!(stream_error.is_none(), "{fault}: {stream_error:?}");
        assert_eq!(error.code, "lifecycle_stream_transport_failed", "{fault}");
        assert_eq!(error.metadata["http_status"], status, "{fault}");
        assert_eq!(state, RuntimeState::Idle, "{fault}");
    }
}

#[test]
fn broken_records_are_protocol_errors_that_fail_the_runtime() {
    for (fault, status, message, chunks_before) in [
        ("gap", Some(400u64), "sequence", 1),
        ("identity_mismatch", Some(400), "invocation ID", 0),
        ("bad_json", Some(400), "not valid JSON", 0),
        ("bad_chunk", Some(400), "event id", 0),
        ("oversize", Some(413), "exceeds", 0),
        ("missing_end", Some(400), "without an end record", 6),
        ("close_early", None, "closed before completion", 1),
    ] {
        let (chunks, stream_error, error, state) = faulty(fault);
        assert_eq!(chunks, chunks_before, "{fault}");
        let stream_error = stream_error.unwrap_or_else(|| panic!("{fault}: no stream error"));
        assert_eq!(stream_error.code, "openai_stream_protocol_error", "{fault}");
        assert_eq!(stream_error.stage, Stage::Invoke);
        assert!(
            stream_error.message.contains(message),
            "{fault}: {stream_error:?}"
        );
        assert_eq!(
            stream_error
                .metadata
                .get("http_status")
                .and_then(Value::as_u64),
            status,
            "{fault}"
        );
        assert_eq!(error.code, "openai_stream_protocol_error", "{fault}");
        assert_eq!(state, RuntimeState::Failed, "{fault}");
    }
}

#[test]
fn a_second_connection_is_refused_and_the_first_completes() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(dir.path(), json!({"fault": "second_connection"}));
    let stream = runtime.invoke_openai_stream(RunRequest::new("x")).unwrap();
    let (chunks, error) = drain(&stream);
    assert!(error.is_none() && !chunks.is_empty(), "{error:?}");
    let result = stream.result().unwrap();
    assert_eq!(result.output["stream_second_connection_status"], 409);
    runtime.stop();
}
