//! The reply script of the stub model server (`fabric stub-model serve --script`, `fabric
//! adapters check --model-stub-script`, `ConformanceRequest.model_stub`): what it answers,
//! in order. Replies are taken one per model request (whatever its API); after the last, the
//! last one repeats. The server itself is `fabric_conformance::stub_model`.
//!
//! ```json
//! {"replies": [
//!   {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
//!   {"text": "done"},
//!   {"error": {"status": 500, "message": "overloaded"}},
//!   {"raw": "not json at all"}
//! ]}
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The text answered when no script is given.
pub const DEFAULT_TEXT: &str = "stub reply";

/// A whole script: at least one reply in a script file; as `ConformanceRequest.model_stub`,
/// no reply (`{}`) means every call is answered "stub reply".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StubModelScript {
    /// The replies, in order (the last repeats).
    #[serde(default)]
    pub replies: Vec<StubModelReply>,
}

/// One scripted answer: a message (text and/or tool calls), an HTTP error, or a raw body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StubModelReply {
    /// The assistant's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls the assistant asks for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<StubModelToolCall>,
    /// Answer this HTTP error instead (in the API's error shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<StubModelError>,
    /// Answer this body verbatim with status 200 (malformed model output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

/// A tool call of a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StubModelToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments (a JSON object). Default `{}`.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

/// A scripted HTTP error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StubModelError {
    /// The status (400 to 599). Default 500.
    #[serde(default = "server_error")]
    pub status: u16,
    /// The error's message.
    pub message: String,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn server_error() -> u16 {
    500
}

impl StubModelScript {
    /// One text reply per item (`--reply`), or [`DEFAULT_TEXT`] when there is none.
    pub fn texts(texts: &[String]) -> StubModelScript {
        let texts: Vec<&str> = if texts.is_empty() {
            vec![DEFAULT_TEXT]
        } else {
            texts.iter().map(String::as_str).collect()
        };
        StubModelScript {
            replies: texts
                .into_iter()
                .map(|text| StubModelReply {
                    text: Some(text.to_owned()),
                    ..StubModelReply::default()
                })
                .collect(),
        }
    }

    /// Decodes and checks a script; the error names the field (`replies[1].error.status`).
    pub fn parse(text: &str) -> Result<StubModelScript, String> {
        let mut decoder = serde_json::Deserializer::from_str(text);
        let script: StubModelScript =
            serde_path_to_error::deserialize(&mut decoder).map_err(|error| {
                let path = error.path().to_string();
                let inner = error.into_inner();
                if path == "." {
                    format!("the script is not a reply script: {inner}")
                } else {
                    format!("invalid script at `{path}`: {inner}")
                }
            })?;
        script.check()?;
        Ok(script)
    }

    /// A script given inline (`ConformanceRequest.model_stub`): no reply means every call
    /// is answered [`DEFAULT_TEXT`]; otherwise checked as [`StubModelScript::parse`] does.
    pub fn inline(self) -> Result<StubModelScript, String> {
        if self.replies.is_empty() {
            return Ok(StubModelScript::texts(&[]));
        }
        self.check()?;
        Ok(self)
    }

    fn check(&self) -> Result<(), String> {
        if self.replies.is_empty() {
            return Err("invalid script at `replies`: it must hold at least one reply".into());
        }
        for (index, reply) in self.replies.iter().enumerate() {
            let message = reply.text.is_some() || !reply.tool_calls.is_empty();
            let kinds = usize::from(message)
                + usize::from(reply.error.is_some())
                + usize::from(reply.raw.is_some());
            if kinds != 1 {
                return Err(format!(
                    "invalid script at `replies[{index}]`: give exactly one of text and/or \
                     tool_calls, error, raw"
                ));
            }
            if let Some(error) = &reply.error
                && !(400..=599).contains(&error.status)
            {
                return Err(format!(
                    "invalid script at `replies[{index}].error.status`: it must be 400 to 599"
                ));
            }
            for (call, tool) in reply.tool_calls.iter().enumerate() {
                if !tool.arguments.is_object() {
                    return Err(format!(
                        "invalid script at `replies[{index}].tool_calls[{call}].arguments`: \
                         it must be a JSON object"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The reply to the request numbered `seq` (from 0): the last one repeats.
    pub fn reply(&self, seq: u64) -> (usize, &StubModelReply) {
        let last = self.replies.len() - 1;
        let index = usize::try_from(seq).map_or(last, |seq| seq.min(last));
        (index, &self.replies[index])
    }
}

#[cfg(test)]
mod tests {
    use super::StubModelScript as Script;

    #[test]
    fn errors_name_the_field() {
        let error = Script::parse(r#"{"replies": [{"text": "a"}, {"txt": "b"}]}"#).unwrap_err();
        assert!(error.contains("replies[1]"), "{error}");
        let error = Script::parse(r#"{"replies": [{"error": {"status": 200, "message": "x"}}]}"#)
            .unwrap_err();
        assert!(error.contains("replies[0].error.status"), "{error}");
        let error = Script::parse(r#"{"replies": [{"text": "a", "raw": "b"}]}"#).unwrap_err();
        assert!(error.contains("replies[0]"), "{error}");
        assert!(Script::parse(r#"{"replies": []}"#).is_err());
    }

    #[test]
    fn the_last_reply_repeats() {
        let script = Script::texts(&["a".into(), "b".into()]);
        assert_eq!(script.reply(0).0, 0);
        assert_eq!(script.reply(1).0, 1);
        assert_eq!(script.reply(7).0, 1);
        assert_eq!(Script::texts(&[]).replies.len(), 1);
    }
}
