//! Pull streams: the documents a stream yields (`fabric_stream_next`), the identity of an
//! open stream, and the native OpenAI stream's wire (the sink the core sends to the adapter
//! and the NDJSON records the adapter writes back).
//!
//! A pull stream yields one JSON document per item; its kind ([`StreamKind`]) says which.
//! The native OpenAI stream yields [`OpenAiChunk`]s (`chat.completion.chunk` objects exactly
//! as the adapter emitted them); its terminal RunResult is read separately.
//!
//! ```
//! use fabric_config::stream::{OpenAiChunk, OpenAiStreamRecord, RecordType};
//!
//! let line = r#"{"type":"chunk","sequence":0,"runtime_id":"runtime-1",
//!   "invocation_id":"invocation-1","request_id":"request-1",
//!   "chunk":{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",
//!            "choices":[{"index":0,"delta":{"content":"Hi"}}]}}"#;
//! let record: OpenAiStreamRecord = serde_json::from_str(line).unwrap();
//! assert_eq!(record.record_type, RecordType::Chunk);
//! let chunk = OpenAiChunk::check(record.chunk.as_ref().unwrap()).unwrap();
//! assert_eq!(chunk.text(), "Hi");
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::JsonObject;

/// `stream.protocol_version` of the OpenAI stream sink.
pub const OPENAI_STREAM_PROTOCOL: &str = "fabric.openai_stream/v1alpha1";
/// `stream.profile` of the OpenAI stream sink (also the [`StreamKind`] of its items).
pub const OPENAI_STREAM_PROFILE: &str = "openai.chat_completions.chunk/v1";
/// The only host the OpenAI stream listener binds.
pub const OPENAI_STREAM_HOST: &str = "127.0.0.1";
/// The HTTP path the adapter POSTs its records to.
pub const OPENAI_STREAM_PATH: &str = "/openai-stream";
/// Largest record line, in bytes (without its line terminator).
pub const OPENAI_STREAM_RECORD_LIMIT: usize = 1024 * 1024;
/// The `object` discriminator of every chunk.
pub const OPENAI_CHUNK_OBJECT: &str = "chat.completion.chunk";

/// What the items of a pull stream are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum StreamKind {
    /// Native OpenAI Chat Completions chunks ([`OpenAiChunk`]).
    #[serde(rename = "openai.chat_completions.chunk/v1")]
    OpenAiChunk,
    /// Raw NeMo Relay ATOF records (JSON objects, as the adapter's Relay published them).
    #[serde(rename = "relay.atof.record")]
    AtofRecord,
}

/// Identity of an open pull stream (`fabric_runtime_invoke_openai_stream`'s `*out`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StreamInfo {
    /// What the stream's items are.
    pub kind: StreamKind,
    /// Runtime id.
    pub runtime_id: String,
    /// Invocation id (the terminal RunResult carries the same).
    pub invocation_id: String,
    /// Request id.
    pub request_id: String,
    /// The C ABI handle of this stream, when it was returned through the ABI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
}

/// One `chat.completion.chunk` (OpenAI Chat Completions streaming), as the adapter emitted
/// it. Members beyond the checked ones are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenAiChunk {
    /// Completion id: a string with a non-whitespace character.
    pub id: String,
    /// Always `chat.completion.chunk`.
    pub object: String,
    /// Unix time in seconds (unsigned 64-bit).
    pub created: u64,
    /// Model name: a string with a non-whitespace character.
    pub model: String,
    /// Choice deltas (may be empty).
    pub choices: Vec<OpenAiChunkChoice>,
    /// Usage object or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<JsonObject>,
    /// Any other members, unchanged.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One choice of an [`OpenAiChunk`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenAiChunkChoice {
    /// Choice index (unsigned 32-bit).
    pub index: u32,
    /// The increment.
    pub delta: OpenAiChunkDelta,
    /// Why generation stopped, or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Log probabilities object or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<JsonObject>,
    /// Any other members, unchanged.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The increment of one choice.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenAiChunkDelta {
    /// Text increment, or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Refusal increment, or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Role, or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Legacy function call increment (object), or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_call: Option<JsonObject>,
    /// Tool call increments (objects), or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<JsonObject>>,
    /// Any other members, unchanged.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl OpenAiChunk {
    /// Checks a chunk value against the chunk rules: `object` is `chat.completion.chunk`,
    /// `id` and `model` are strings with a non-whitespace character, `created` is an
    /// unsigned 64-bit integer, every choice has a u32 `index` and a `delta` object whose
    /// `content`/`refusal`/`role` are strings or null, `function_call` an object or null,
    /// `tool_calls` a list of objects or null; `finish_reason` a string or null,
    /// `logprobs` and `usage` objects or null. The error says which rule failed (never a
    /// value).
    pub fn check(value: &Value) -> Result<OpenAiChunk, String> {
        let Some(object) = value.as_object() else {
            return Err("OpenAI stream event must be a chat.completion.chunk mapping".into());
        };
        if object.get("object").and_then(Value::as_str) != Some(OPENAI_CHUNK_OBJECT) {
            return Err("OpenAI stream event must be a chat.completion.chunk mapping".into());
        }
        let non_blank = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.trim().is_empty())
        };
        if !non_blank("id") {
            return Err("OpenAI stream event id must be a non-empty string containing a non-whitespace character".into());
        }
        if !non_blank("model") {
            return Err("OpenAI stream event model must be a non-empty string containing a non-whitespace character".into());
        }
        if object.get("created").and_then(Value::as_u64).is_none() {
            return Err("OpenAI stream event created must be an unsigned 64-bit integer".into());
        }
        let Some(choices) = object.get("choices").and_then(Value::as_array) else {
            return Err("OpenAI stream event choices must be a list".into());
        };
        for choice in choices {
            check_choice(choice)?;
        }
        if !null_or(object.get("usage"), Value::is_object) {
            return Err("OpenAI stream event usage must be a mapping or null".into());
        }
        serde_json::from_value(value.clone()).map_err(|_| {
            "OpenAI stream event does not match the chat.completion.chunk shape".to_owned()
        })
    }

    /// The concatenated `delta.content` of every choice (empty when none).
    pub fn text(&self) -> String {
        self.choices
            .iter()
            .filter_map(|choice| choice.delta.content.as_deref())
            .collect()
    }
}

fn null_or(value: Option<&Value>, accept: fn(&Value) -> bool) -> bool {
    value.is_none_or(|v| v.is_null() || accept(v))
}

fn check_choice(choice: &Value) -> Result<(), String> {
    let Some(choice) = choice.as_object() else {
        return Err("OpenAI stream choices must be mappings".into());
    };
    let index_ok = choice
        .get("index")
        .and_then(Value::as_u64)
        .is_some_and(|i| u32::try_from(i).is_ok());
    if !index_ok {
        return Err("OpenAI stream choice index must be an unsigned 32-bit integer".into());
    }
    let Some(delta) = choice.get("delta").and_then(Value::as_object) else {
        return Err("OpenAI stream choice delta must be a mapping".into());
    };
    for name in ["content", "refusal", "role"] {
        if !null_or(delta.get(name), Value::is_string) {
            return Err(format!(
                "OpenAI stream choice delta {name} must be a string or null"
            ));
        }
    }
    if !null_or(delta.get("function_call"), Value::is_object) {
        return Err("OpenAI stream choice delta function_call must be a mapping or null".into());
    }
    let tool_calls_ok = null_or(delta.get("tool_calls"), |v| {
        v.as_array()
            .is_some_and(|items| items.iter().all(Value::is_object))
    });
    if !tool_calls_ok {
        return Err(
            "OpenAI stream choice delta tool_calls must be a list of mappings or null".into(),
        );
    }
    if !null_or(choice.get("finish_reason"), Value::is_string) {
        return Err("OpenAI stream choice finish_reason must be a string or null".into());
    }
    if !null_or(choice.get("logprobs"), Value::is_object) {
        return Err("OpenAI stream choice logprobs must be a mapping or null".into());
    }
    Ok(())
}

/// The OpenAI stream sink: `payload.stream` of an `invoke_openai_stream` lifecycle request.
/// The token is a secret: it is never logged or written to the invocation record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenAiStreamSink {
    /// Always `fabric.openai_stream/v1alpha1`.
    pub protocol_version: String,
    /// Always `openai.chat_completions.chunk/v1`.
    pub profile: String,
    /// Always `127.0.0.1`.
    pub host: String,
    /// The listener's port (fresh per invocation).
    pub port: u16,
    /// Bearer token of this invocation's listener (fresh per invocation).
    pub token: String,
    /// Runtime id (equals `runtime_context.runtime_id`).
    pub runtime_id: String,
    /// Invocation id (equals `runtime_context.invocation_id`).
    pub invocation_id: String,
    /// Request id (equals `runtime_context.request_id`).
    pub request_id: String,
}

/// The kind of an [`OpenAiStreamRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordType {
    /// Carries one chunk.
    Chunk,
    /// The last record of a stream (exactly one).
    End,
}

/// One NDJSON record the adapter writes to the OpenAI stream listener: `chunk` records with
/// `sequence` counting from 0 without gaps, then exactly one `end` record (which has no
/// `chunk`). Unknown members are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenAiStreamRecord {
    /// `chunk` or `end`.
    #[serde(rename = "type")]
    pub record_type: RecordType,
    /// Position of this record in the stream, from 0.
    pub sequence: u64,
    /// Runtime id of the invocation.
    pub runtime_id: String,
    /// Invocation id of the invocation.
    pub invocation_id: String,
    /// Request id of the invocation.
    pub request_id: String,
    /// The chunk (`chunk` records only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk() -> Value {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": "a", "role": null}, "finish_reason": null}],
               "system_fingerprint": "x"})
    }

    #[test]
    fn chunk_rules() {
        assert_eq!(OpenAiChunk::check(&chunk()).unwrap().text(), "a");
        assert!(
            OpenAiChunk::check(&json!({"id": "c", "object": "chat.completion.chunk",
            "created": 0, "model": "m", "choices": []}))
            .is_ok()
        );
        let cases: &[(&str, Value, &str)] = &[
            (
                "object",
                json!("chat.completion"),
                "chat.completion.chunk mapping",
            ),
            ("id", json!(" "), "event id"),
            ("model", json!(1), "event model"),
            ("created", json!(-1), "created"),
            ("created", json!(true), "created"),
            ("created", json!(1.5), "created"),
            ("choices", json!({}), "choices must be a list"),
            ("choices", json!([1]), "choices must be mappings"),
            (
                "choices",
                json!([{"index": 4294967296u64, "delta": {}}]),
                "index",
            ),
            (
                "choices",
                json!([{"index": 0, "delta": []}]),
                "delta must be a mapping",
            ),
            (
                "choices",
                json!([{"index": 0, "delta": {"content": 1}}]),
                "delta content",
            ),
            (
                "choices",
                json!([{"index": 0, "delta": {"tool_calls": [1]}}]),
                "tool_calls",
            ),
            (
                "choices",
                json!([{"index": 0, "delta": {}, "finish_reason": 1}]),
                "finish_reason",
            ),
            (
                "choices",
                json!([{"index": 0, "delta": {}, "logprobs": []}]),
                "logprobs",
            ),
            ("usage", json!([]), "usage"),
        ];
        for (key, value, message) in cases {
            let mut bad = chunk();
            bad[*key] = value.clone();
            let error = OpenAiChunk::check(&bad).expect_err(key);
            assert!(error.contains(message), "{key}: {error}");
        }
    }

    #[test]
    fn records_reject_unknown_members() {
        let end = json!({"type": "end", "sequence": 3, "runtime_id": "r",
                         "invocation_id": "i", "request_id": "q"});
        let record: OpenAiStreamRecord = serde_json::from_value(end.clone()).unwrap();
        assert_eq!(record.record_type, RecordType::End);
        let mut extra = end;
        extra["more"] = json!(1);
        assert!(serde_json::from_value::<OpenAiStreamRecord>(extra).is_err());
    }
}
