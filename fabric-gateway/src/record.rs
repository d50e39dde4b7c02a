//! One call's record: what the worker saw, turned into a [`ModelCallRecord`].

use std::time::Duration;

use fabric_config::ModelCallRecord;
use fabric_config::gym::{ModelServerKind, ModelServerRef};
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::forward::Call;
use crate::sse;

/// The records' file name in an invocation's (or runtime's) `.fabric` directory.
pub const MODEL_CALLS_FILE: &str = "model-calls.jsonl";

/// What the worker observed of one call.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    pub(crate) status: Option<u16>,
    pub(crate) first_byte: Option<Duration>,
    pub(crate) first_token: Option<Duration>,
    pub(crate) latency: Duration,
    pub(crate) streamed: bool,
    pub(crate) chunks: u64,
    pub(crate) error: Option<String>,
    body: Vec<u8>,
    truncated: bool,
}

impl Observed {
    /// Keeps response bytes up to `cap`.
    pub(crate) fn keep(&mut self, bytes: &[u8], cap: usize) {
        let room = cap.saturating_sub(self.body.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// Why a call got no answer, without its URL or any header (they may hold credentials).
pub(crate) fn describe(error: &ureq::Error) -> String {
    let what = match error {
        ureq::Error::Timeout(_) => "timed out",
        ureq::Error::HostNotFound => "host not found",
        ureq::Error::ConnectionFailed => "connection failed",
        ureq::Error::Io(_) => "connection error",
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "TLS error",
        ureq::Error::BadUri(_) => "invalid base_url",
        _ => "request failed",
    };
    format!("the endpoint could not be reached: {what}")
}

/// A body as recorded: JSON when it parses whole, else text; truncated bodies are text.
fn body_value(bytes: &[u8], cap: usize) -> (Value, bool) {
    if bytes.len() > cap {
        let text = String::from_utf8_lossy(&bytes[..cap]).into_owned();
        return (Value::String(text), true);
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => (value, false),
        Err(_) => (
            Value::String(String::from_utf8_lossy(bytes).into_owned()),
            false,
        ),
    }
}

fn api(path: &str) -> &'static str {
    let path = path.trim_end_matches('/');
    if path.ends_with("/chat/completions") {
        "chat_completions"
    } else if path.ends_with("/responses") {
        "responses"
    } else if path.ends_with("/messages") {
        "messages"
    } else {
        "other"
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// `total_tokens`, else input plus output (Anthropic, Responses), else prompt plus
/// completion.
fn total_tokens(usage: &Value) -> Option<u64> {
    let n = |key: &str| usage.get(key).and_then(Value::as_u64);
    n("total_tokens")
        .or_else(|| Some(n("input_tokens")? + n("output_tokens")?))
        .or_else(|| Some(n("prompt_tokens")? + n("completion_tokens")?))
}

/// The first choice's list at `pointer` of each answer (one, or each stream event),
/// concatenated; `None` when no answer had one.
fn gathered(answers: &[Value], pointer: &str) -> Option<Vec<Value>> {
    let mut found = None::<Vec<Value>>;
    for answer in answers {
        if let Some(items) = answer.pointer(pointer).and_then(Value::as_array) {
            found
                .get_or_insert_with(Vec::new)
                .extend(items.iter().cloned());
        }
    }
    found
}

pub(crate) fn build(call: &Call, seen: Observed) -> ModelCallRecord {
    let cap = call.route.options.body_cap;
    let (request, request_truncated) = body_value(&call.body, cap);
    let (response, answers) = if seen.streamed && !seen.truncated {
        let events = sse::events(&seen.body);
        (Value::Array(events.clone()), events)
    } else if seen.truncated {
        (
            Value::String(String::from_utf8_lossy(&seen.body).into_owned()),
            Vec::new(),
        )
    } else {
        let (value, _) = body_value(&seen.body, cap);
        (value.clone(), vec![value])
    };
    let usage = if seen.streamed {
        sse::usage(&answers)
    } else {
        answers.first().and_then(|a| a.get("usage")).cloned()
    };
    let response_id = if seen.streamed {
        sse::response_id(&answers)
    } else {
        answers
            .first()
            .and_then(|a| a.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(&call.upstream.model)
        .to_owned();
    let started_at = OffsetDateTime::from(call.started_at)
        .format(&Rfc3339)
        .unwrap_or_default();
    ModelCallRecord {
        model_call_id: format!("model-call-{}", uuid::Uuid::new_v4()),
        runtime_id: call.route.runtime_id.clone(),
        invocation_id: call.invocation_id.clone(),
        model_role: call.upstream.role.clone(),
        model_ref: ModelServerRef {
            kind: ModelServerKind::ResponsesApiModels,
            name: call.upstream.role.clone(),
        },
        base_url: call.upstream.base_url.clone(),
        model,
        api: api(&call.path).to_owned(),
        method: call.method.clone(),
        path: call.path.clone(),
        started_at,
        request,
        request_truncated,
        status: seen.status,
        response,
        response_truncated: seen.truncated,
        streamed: seen.streamed,
        chunks: seen.chunks,
        error: seen.error,
        time_to_first_byte_ms: seen.first_byte.map(millis),
        time_to_first_token_ms: seen.first_token.map(millis),
        latency_ms: millis(seen.latency),
        total_tokens: usage.as_ref().and_then(total_tokens),
        usage,
        response_id,
        prompt_token_ids: answers
            .first()
            .and_then(|a| a.get("prompt_token_ids"))
            .and_then(Value::as_array)
            .cloned(),
        token_ids: gathered(&answers, "/choices/0/token_ids"),
        logprobs: gathered(&answers, "/choices/0/logprobs/content"),
    }
}
