//! Fuzzing hooks (not API; `fuzz/` and `fabric-fuzz` call them): the lifecycle response
//! decoder as the reactor feeds it, the OpenAI stream listener's HTTP through the reactor's
//! driver in memory, and the runtime server's request lines.

use std::path::Path;
use std::sync::Arc;

use fabric_config::{ErrorInfo, Stage};
use serde_json::Value;

use crate::host::parse_response;
use crate::result;

/// Splits `data` into lines as the reactor does (`\n`, one trailing `\r` dropped) and
/// decodes each as the answer to `start`, `invoke` and `stop`; a succeeded `invoke` output
/// goes through the AgentRunResult checks, usage normalization and artifact validation,
/// and every error is turned into the ErrorInfo a caller would see.
pub fn lifecycle_response(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for (operation, stage) in [
            ("start", Stage::Start),
            ("invoke", Stage::Invoke),
            ("stop", Stage::Stop),
        ] {
            match parse_response(line, operation, stage) {
                Ok(output) if stage == Stage::Invoke => invoke_output(output),
                Ok(_) => {}
                Err(error) => render(ErrorInfo::from(error)),
            }
        }
    }
}

fn invoke_output(output: Value) {
    let agent = match result::decode_agent_result(output) {
        Ok(agent) => agent,
        Err(error) => return render(ErrorInfo::from(error)),
    };
    if let Some(error) = agent.error {
        render(result::adapter_error(error));
    }
    if let Some(usage) = result::normalize_usage(agent.usage) {
        let _ = serde_json::to_string(&usage);
    }
    let root = Path::new("/nonexistent/fabric-fuzz-artifacts");
    let _ = result::artifact_refs(agent.artifacts.clone(), None);
    if let Ok(refs) = result::artifact_refs(agent.artifacts, Some(root)) {
        let _ = serde_json::to_string(&refs);
    }
}

/// Encodes an error as the C ABI would (a failure here is a bug: ErrorInfo always encodes).
fn render(info: ErrorInfo) {
    let encoded = serde_json::to_string(&info);
    assert!(encoded.is_ok(), "an ErrorInfo must encode");
}

/// The token the fuzzed OpenAI stream listener accepts (seeds send `Bearer fuzz`); its
/// identity is runtime `r`, invocation `i`, request `q`.
pub const STREAM_TOKEN: &str = "fuzz";

/// One connection's bytes to an OpenAI stream listener, split into pieces as
/// `fabric_relay::fuzz::pieces` does: every answer is HTTP/1.1 (`100 Continue` first when
/// the head was accepted), and the stream's shared state stays consistent.
pub fn openai_stream(data: &[u8]) {
    stream_answers(data);
}

/// What the listener wrote back to the connection of [`openai_stream`].
fn stream_answers(data: &[u8]) -> Vec<u8> {
    use crate::stream::{Identity, Shared, StreamService, listener_limits};
    let shared = Arc::new(Shared::default());
    let identity = Identity {
        runtime_id: "r".into(),
        invocation_id: "i".into(),
        request_id: "q".into(),
    };
    let mut service = StreamService::new(STREAM_TOKEN.into(), identity, Arc::clone(&shared));
    let out = fabric_reactor::http::fuzz::connection(
        &mut service,
        &listener_limits(),
        fabric_relay::fuzz::pieces(data),
    );
    assert!(
        out.is_empty() || out.starts_with(b"HTTP/1.1 "),
        "an answer that is not HTTP/1.1"
    );
    let state = shared.lock();
    let counted: usize = state.queue.iter().map(String::len).sum();
    assert_eq!(counted, state.queued_bytes, "queued bytes drifted");
    assert!(
        !state.ended || state.claimed,
        "an end record without a claimed connection"
    );
    out
}

/// Request lines of the runtime server's socket (split at `\n` as its transport reads
/// them), served by a [`crate::RuntimeServer`] that owns no runtime: every answer is one
/// JSON line. A `start` whose config validates is decoded but not served (it would launch
/// an adapter host), nor is a well-formed `exec` (it would run a program).
pub fn runtime_request(data: &[u8]) {
    use fabric_config::bridge::{self, Operation};
    let server = crate::RuntimeServer::new("/nonexistent/fabric-fuzz-runtime-server");
    for line in data.split_inclusive(|&b| b == b'\n') {
        if let Ok(value) = bridge::decode_strict(line)
            && let Ok(request) = bridge::validate_request(&value)
        {
            let served = match (request.operation, &request.payload) {
                (Operation::Exec, _) => false,
                (Operation::Start, bridge::Payload::Config(config)) => {
                    fabric_config::FabricConfig::from_value(config.clone())
                        .and_then(|c| c.validate())
                        .is_err()
                }
                _ => true,
            };
            if !served {
                continue;
            }
        }
        let encoded = server.handle_line(line).encode();
        assert_eq!(encoded.last(), Some(&b'\n'), "an answer is one line");
        let body = &encoded[..encoded.len() - 1];
        assert!(!body.contains(&b'\n'), "an answer is one line");
        let answer = serde_json::from_slice::<Value>(body);
        assert!(
            answer.as_ref().is_ok_and(Value::is_object),
            "an answer is a JSON object"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hooks_reach_the_listener_and_the_server() {
        let record = |kind: &str, sequence: u64| {
            let mut value = serde_json::json!({"type": kind, "sequence": sequence,
                "runtime_id": "r", "invocation_id": "i", "request_id": "q"});
            if kind == "chunk" {
                value["chunk"] = serde_json::json!({"id": "c", "object": "chat.completion.chunk",
                    "created": 1, "model": "m", "choices": []});
            }
            format!("{value}\n")
        };
        let body = record("chunk", 0) + &record("end", 1);
        let mut data = vec![9u8];
        data.extend_from_slice(
            b"POST /openai-stream HTTP/1.1\r\nAuthorization: Bearer fuzz\r\n\
              Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\
              Expect: 100-continue\r\n\r\n",
        );
        data.extend_from_slice(format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len()).as_bytes());
        let text = String::from_utf8(stream_answers(&data)).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
            "{text}"
        );
        // The runtime server answers a check of itself and refuses an unknown runtime.
        runtime_request(b"{\"operation\":\"check\",\"request\":{}}\n{\"operation\":\"stop\",\"runtime_id\":\"x\"}\n");
    }
}
