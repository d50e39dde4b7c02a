//! The OpenAI stream's NDJSON records: line framing with the 1 MiB record bound, identity,
//! sequence and chunk checks (upstream's order and answers). Pure code.

use fabric_config::stream::{OPENAI_STREAM_RECORD_LIMIT, OpenAiChunk, OpenAiStreamRecord};
use serde::Deserialize;
use serde_json::Value;

use super::http::{Fault, TOO_LARGE};

/// Who a record must belong to.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub runtime_id: String,
    pub invocation_id: String,
    pub request_id: String,
}

/// What an accepted record carries.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Accepted {
    /// A checked chunk (its JSON text).
    Chunk(String),
    /// The end record.
    End,
}

/// Checks the records of one stream in order.
#[derive(Debug)]
pub(crate) struct Records {
    identity: Identity,
    expected: u64,
    ended: bool,
    max_record: usize,
}

impl Records {
    pub(crate) fn new(identity: Identity) -> Records {
        Records {
            identity,
            expected: 0,
            ended: false,
            max_record: OPENAI_STREAM_RECORD_LIMIT,
        }
    }

    /// Whether the end record was accepted.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Takes the next complete line out of `body` and checks it. `Ok(None)`: no complete
    /// line yet (a partial record over the bound is already a 413), or a blank line.
    pub(crate) fn next_line(&mut self, body: &mut Vec<u8>) -> Result<Option<Line>, Fault> {
        let Some(newline) = body.iter().position(|&b| b == b'\n') else {
            // A record exactly at the bound may wait for the LF of its CRLF.
            let pending_crlf = body.len() == self.max_record + 1 && body.ends_with(b"\r");
            if body.len() > self.max_record && !pending_crlf {
                return Err(self.too_large());
            }
            return Ok(None);
        };
        let line: Vec<u8> = body.drain(..=newline).collect();
        Ok(Some(Line(line)))
    }

    /// Checks one line (as returned by [`Records::next_line`]); `Ok(None)` for a blank line.
    pub(crate) fn check(&mut self, line: &Line) -> Result<Option<Accepted>, Fault> {
        let mut payload = &line.0[..line.0.len().saturating_sub(1)];
        if payload.ends_with(b"\r") {
            payload = &payload[..payload.len() - 1];
        }
        if payload.len() > self.max_record {
            return Err(self.too_large());
        }
        let stripped = payload.trim_ascii();
        if stripped.is_empty() {
            return Ok(None);
        }
        let value: Value = serde_json::from_slice(stripped)
            .map_err(|_| Fault::bad("OpenAI stream record is not valid JSON"))?;
        let Some(record) = value.as_object() else {
            return Err(Fault::bad("OpenAI stream record must be a mapping"));
        };
        let text = |key: &str| record.get(key).and_then(Value::as_str);
        if text("runtime_id") != Some(self.identity.runtime_id.as_str()) {
            return Err(Fault::bad("OpenAI stream runtime ID does not match"));
        }
        if text("request_id") != Some(self.identity.request_id.as_str()) {
            return Err(Fault::bad("OpenAI stream request ID does not match"));
        }
        match text("invocation_id") {
            None | Some("") => return Err(Fault::bad("OpenAI stream invocation ID is missing")),
            Some(id) if id != self.identity.invocation_id => {
                return Err(Fault::bad("OpenAI stream invocation ID does not match"));
            }
            Some(_) => {}
        }
        if record.get("sequence").and_then(Value::as_u64) != Some(self.expected) {
            return Err(Fault::bad("OpenAI stream record sequence is not monotonic"));
        }
        self.expected += 1;
        let kind = text("type");
        // Decoded from a borrow: no copy of the record per line.
        let shape = OpenAiStreamRecord::deserialize(&value);
        match kind {
            Some("chunk") => {
                let Ok(OpenAiStreamRecord {
                    chunk: Some(chunk), ..
                }) = shape
                else {
                    return Err(Fault::bad("OpenAI stream chunk record shape is invalid"));
                };
                if self.ended {
                    return Err(Fault::bad("OpenAI stream emitted a chunk after end"));
                }
                OpenAiChunk::check(&chunk).map_err(Fault::bad)?;
                Ok(Some(Accepted::Chunk(chunk.to_string())))
            }
            Some("end") => {
                if self.ended || !matches!(shape, Ok(OpenAiStreamRecord { chunk: None, .. })) {
                    return Err(Fault::bad("OpenAI stream end record is invalid"));
                }
                self.ended = true;
                Ok(Some(Accepted::End))
            }
            _ => Err(Fault::bad("OpenAI stream record has an unknown type")),
        }
    }

    fn too_large(&self) -> Fault {
        Fault::new(
            TOO_LARGE,
            format!("OpenAI stream record exceeds {} bytes", self.max_record),
        )
    }
}

/// One complete NDJSON line (with its `\n`).
#[derive(Debug)]
pub(crate) struct Line(Vec<u8>);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn records() -> Records {
        Records::new(Identity {
            runtime_id: "r".into(),
            invocation_id: "i".into(),
            request_id: "q".into(),
        })
    }

    fn line(value: Value) -> Line {
        let mut text = value.to_string().into_bytes();
        text.push(b'\n');
        Line(text)
    }

    fn chunk_record(sequence: u64) -> Value {
        json!({"type": "chunk", "sequence": sequence, "runtime_id": "r", "invocation_id": "i",
               "request_id": "q", "chunk": {"id": "c", "object": "chat.completion.chunk",
               "created": 1, "model": "m", "choices": []}})
    }

    fn end_record(sequence: u64) -> Value {
        json!({"type": "end", "sequence": sequence, "runtime_id": "r", "invocation_id": "i",
               "request_id": "q"})
    }

    #[test]
    fn a_stream_is_chunks_then_one_end() {
        let mut r = records();
        assert!(matches!(
            r.check(&line(chunk_record(0))),
            Ok(Some(Accepted::Chunk(_)))
        ));
        assert_eq!(r.check(&Line(b" \r\n".to_vec())), Ok(None));
        assert_eq!(r.check(&line(end_record(1))), Ok(Some(Accepted::End)));
        assert!(r.ended());
        let after = r.check(&line(chunk_record(2))).unwrap_err();
        assert!(after.message.contains("after end"), "{after:?}");
    }

    #[test]
    fn faults_name_the_rule() {
        let cases = [
            (chunk_record(1), "sequence"),
            (
                {
                    let mut v = chunk_record(0);
                    v["runtime_id"] = json!("x");
                    v
                },
                "runtime ID",
            ),
            (
                {
                    let mut v = chunk_record(0);
                    v["invocation_id"] = json!("other");
                    v
                },
                "invocation ID does not match",
            ),
            (
                {
                    let mut v = chunk_record(0);
                    v["extra"] = json!(1);
                    v
                },
                "chunk record shape",
            ),
            (
                {
                    let mut v = chunk_record(0);
                    v["chunk"]["id"] = json!("");
                    v
                },
                "event id",
            ),
            (
                {
                    let mut v = end_record(0);
                    v["chunk"] = json!({});
                    v
                },
                "end record is invalid",
            ),
            (
                {
                    let mut v = end_record(0);
                    v["type"] = json!("other");
                    v
                },
                "unknown type",
            ),
        ];
        for (value, message) in cases {
            let fault = records().check(&line(value)).unwrap_err();
            assert_eq!(fault.status.0, 400);
            assert!(fault.message.contains(message), "{message}: {fault:?}");
        }
        let fault = records().check(&Line(b"{nope\n".to_vec())).unwrap_err();
        assert!(fault.message.contains("not valid JSON"));
    }

    #[test]
    fn records_over_the_bound_are_413() {
        let mut r = records();
        r.max_record = 8;
        let mut body = b"123456789".to_vec();
        assert_eq!(r.next_line(&mut body).unwrap_err().status.0, 413);
        let mut body = b"12345678\r".to_vec();
        assert!(r.next_line(&mut body).unwrap().is_none());
        body.extend_from_slice(b"\n");
        let line = r.next_line(&mut body).unwrap().unwrap();
        assert!(body.is_empty());
        // Exactly at the bound: not too large (it is simply not JSON).
        assert_eq!(r.check(&line).unwrap_err().status.0, 400);
    }
}
