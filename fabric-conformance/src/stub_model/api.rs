//! The model APIs the stub answers, and one answer's body in each (whole or as an SSE
//! stream sent in one response).

use serde_json::{Value, json};

use super::ScriptReply;
use super::{anthropic, openai};

/// Which API a request path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// OpenAI `POST …/chat/completions`.
    ChatCompletions,
    /// OpenAI `POST …/responses`.
    Responses,
    /// Anthropic `POST …/messages`.
    Messages,
}

impl Api {
    /// The API of a request path (a base URL's prefix such as `/v1` is allowed).
    pub(crate) fn of_path(path: &str) -> Option<Api> {
        let path = path.trim_end_matches('/');
        if path.ends_with("/chat/completions") {
            Some(Api::ChatCompletions)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else if path.ends_with("/messages") {
            Some(Api::Messages)
        } else {
            None
        }
    }

    /// Its name in the request log.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Api::ChatCompletions => "chat_completions",
            Api::Responses => "responses",
            Api::Messages => "messages",
        }
    }

    /// An error body in this API's shape.
    pub(crate) fn error_body(self, status: u16, message: &str) -> String {
        let kind = if status < 500 {
            "invalid_request_error"
        } else {
            "api_error"
        };
        match self {
            Api::Messages => json!({"type": "error", "error": {"type": kind, "message": message}}),
            Api::ChatCompletions | Api::Responses => json!({
                "error": {"message": message, "type": kind, "param": null, "code": null}
            }),
        }
        .to_string()
    }
}

/// An answer's status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn json(status: u16, body: String) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body,
        }
    }
}

/// What one reply looks like to the renderers: ids, the model echoed, the parts.
#[derive(Debug)]
pub(crate) struct Turn<'a> {
    /// The request's number (ids are unique per server).
    pub(crate) seq: u64,
    /// The `model` of the request (echoed back).
    pub(crate) model: &'a str,
    pub(crate) reply: &'a ScriptReply,
}

impl Turn<'_> {
    /// The text split in up to two pieces (a stream of more than one delta).
    pub(crate) fn text_pieces(&self) -> Vec<&str> {
        let Some(text) = self.reply.text.as_deref() else {
            return Vec::new();
        };
        let mut middle = text.len() / 2;
        while !text.is_char_boundary(middle) {
            middle += 1;
        }
        let (head, tail) = text.split_at(middle);
        [head, tail].into_iter().filter(|p| !p.is_empty()).collect()
    }

    /// A tool call's arguments as JSON text.
    pub(crate) fn arguments(arguments: &Value) -> String {
        arguments.to_string()
    }
}

/// The answer to a request of `api` whose body is `request`, with the scripted `reply`.
pub(crate) fn answer(api: Api, request: &Value, seq: u64, reply: &ScriptReply) -> Answer {
    if let Some(error) = &reply.error {
        return Answer::json(error.status, api.error_body(error.status, &error.message));
    }
    if let Some(raw) = &reply.raw {
        return Answer::json(200, raw.clone());
    }
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("stub-model");
    let turn = Turn { seq, model, reply };
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let body = match (api, stream) {
        (Api::ChatCompletions, false) => openai::chat_completion(&turn).to_string(),
        (Api::ChatCompletions, true) => {
            let usage = request
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                == Some(true);
            openai::chat_stream(&turn, usage)
        }
        (Api::Responses, false) => openai::response(&turn, "completed").to_string(),
        (Api::Responses, true) => openai::responses_stream(&turn),
        (Api::Messages, false) => anthropic::message(&turn).to_string(),
        (Api::Messages, true) => anthropic::stream(&turn),
    };
    Answer {
        status: 200,
        content_type: if stream {
            "text/event-stream"
        } else {
            "application/json"
        },
        body,
    }
}

/// Server-sent events: `data:` lines (with `event:` lines when named), then `[DONE]` for
/// chat completions.
pub(crate) fn sse(events: &[(Option<&str>, Value)], done: bool) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    }
    if done {
        out.push_str("data: [DONE]\n\n");
    }
    out
}
