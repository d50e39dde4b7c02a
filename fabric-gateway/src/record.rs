//! One call's record: what the worker saw, turned into a [`ModelCallRecord`].

use std::time::Duration;

use fabric_config::ModelCallRecord;
use fabric_config::gym::{ModelServerKind, ModelServerRef};
use serde_json::Value;

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

/// A body as recorded: its JSON `value` when it parses whole (any JSON value: an answer's
/// fields are read from it), and its text in `raw` unless it is a JSON object (a record
/// keeps an object as itself, anything else as text); truncated bodies are text.
#[derive(Default)]
struct Body {
    value: Option<Value>,
    raw: Option<String>,
    truncated: bool,
}

impl Body {
    /// (the JSON object the record keeps, `None` for a body kept as text; the text;
    /// whether it was truncated)
    fn into_parts(self) -> (Option<Value>, Option<String>, bool) {
        let object = self.value.filter(|_| self.raw.is_none());
        (object, self.raw, self.truncated)
    }
}

fn text(bytes: &[u8], truncated: bool) -> Body {
    Body {
        raw: Some(String::from_utf8_lossy(bytes).into_owned()),
        truncated,
        ..Body::default()
    }
}

fn body(bytes: &[u8], cap: usize) -> Body {
    if bytes.len() > cap {
        return text(&bytes[..cap], true);
    }
    match serde_json::from_slice::<Value>(bytes).ok() {
        Some(value) if value.is_object() => Body {
            value: Some(value),
            raw: None,
            truncated: false,
        },
        parsed => Body {
            value: parsed,
            ..text(bytes, false)
        },
    }
}

/// The dialect by the path, with Gym's names.
fn dialect(path: &str) -> &'static str {
    let path = path.trim_end_matches('/');
    if path.ends_with("/chat/completions") {
        "chat"
    } else if path.ends_with("/responses") {
        "responses"
    } else if path.ends_with("/messages") {
        "messages"
    } else {
        "other"
    }
}

fn unix_seconds(at: std::time::SystemTime) -> f64 {
    at.duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs_f64())
        .unwrap_or_default()
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Input, output and total tokens of `usage`: Chat Completions' `prompt_tokens` and
/// `completion_tokens`, or Responses' and Anthropic's `input_tokens` and `output_tokens`;
/// the total is `total_tokens`, else input plus output.
fn tokens(usage: &Value) -> (Option<u64>, Option<u64>, Option<u64>) {
    let n = |key: &str| usage.get(key).and_then(Value::as_u64);
    let tokens_in = n("prompt_tokens").or_else(|| n("input_tokens"));
    let tokens_out = n("completion_tokens").or_else(|| n("output_tokens"));
    let total = n("total_tokens").or_else(|| Some(tokens_in? + tokens_out?));
    (tokens_in, tokens_out, total)
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
    let request = body(&call.body, cap);
    // The response is already cut at the cap as it arrived (`seen.truncated`).
    let (response, events) = if seen.truncated {
        (text(&seen.body, true), None)
    } else if seen.streamed {
        (Body::default(), Some(sse::events(&seen.body)))
    } else {
        (body(&seen.body, usize::MAX), None)
    };
    // What the answers (one, or each stream event) say, read in place: the bodies
    // themselves move into the record whole, never copied.
    let answers: &[Value] = match (&events, &response.value) {
        (Some(events), _) => events,
        (None, Some(answer)) => std::slice::from_ref(answer),
        (None, None) => &[],
    };
    let usage = if seen.streamed {
        sse::usage(answers)
    } else {
        answers.first().and_then(|a| a.get("usage")).cloned()
    };
    let response_id = if seen.streamed {
        sse::response_id(answers)
    } else {
        answers
            .first()
            .and_then(|a| a.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let prompt_token_ids = answers
        .first()
        .and_then(|a| a.get("prompt_token_ids"))
        .and_then(Value::as_array)
        .cloned();
    let token_ids = gathered(answers, "/choices/0/token_ids");
    let logprobs = gathered(answers, "/choices/0/logprobs/content");
    let model = request
        .value
        .as_ref()
        .and_then(|r| r.get("model"))
        .and_then(Value::as_str)
        .unwrap_or(&call.upstream.model)
        .to_owned();
    let (tokens_in, tokens_out, tokens_total) = usage.as_ref().map(tokens).unwrap_or_default();
    let (request, request_raw, request_truncated) = request.into_parts();
    let (response, response_raw, response_truncated) = response.into_parts();
    let started_at = unix_seconds(call.started_at);
    ModelCallRecord {
        model_call_id: format!("model-call-{}", uuid::Uuid::new_v4()),
        call_index: 0,
        runtime_id: call.route.runtime_id.clone(),
        invocation_id: call.invocation_id.clone(),
        client_session_id: call.invocation_id.clone(),
        model_role: call.upstream.role.clone(),
        model_ref: ModelServerRef {
            kind: ModelServerKind::ResponsesApiModels,
            name: call.upstream.role.clone(),
        },
        base_url: call.upstream.base_url.clone(),
        model,
        dialect: dialect(&call.path).to_owned(),
        method: call.method.clone(),
        path: call.path.clone(),
        started_at,
        completed_at: started_at + seen.latency.as_secs_f64(),
        request,
        request_raw,
        request_truncated,
        status_code: seen.status,
        response,
        response_events: events,
        response_raw,
        response_truncated,
        streamed: seen.streamed,
        chunks: seen.chunks,
        error: seen.error,
        time_to_first_byte_ms: seen.first_byte.map(millis),
        latency_ttft_ms: seen.first_token.map(millis),
        latency_total_ms: millis(seen.latency),
        usage,
        tokens_in,
        tokens_out,
        tokens_total,
        response_id,
        prompt_token_ids,
        token_ids,
        logprobs,
    }
}
