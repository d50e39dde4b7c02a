//! Native OpenAI streaming (`invoke_openai_stream`): the reply is written to the core's
//! loopback listener as `chat.completion.chunk` records (chunked NDJSON over one HTTP/1.1
//! POST), in pieces of `chunk_chars` characters with `delay_ms` between them.
//!
//! Faults (`fault`) break the transport on purpose so every listener answer can be tested
//! from a real process: `bad_token` (401), `bad_path` (404), `not_chunked` (411),
//! `bad_content_type` (415), `bad_expect` (417), `second_connection` (a second POST while
//! the first is open: 409, reported in `output.stream_second_connection_status`), `gap`
//! (sequence skips a number: 400), `identity_mismatch` (wrong invocation id: 400),
//! `bad_json` (400), `bad_chunk` (a chunk with an empty id: 400), `oversize` (a record over
//! 1 MiB: 413), `missing_end` (no end record: 400), `close_early` (the connection is closed
//! mid-stream), `no_connect` (the reply is returned without ever connecting),
//! `two_completions` (every chunk after the first names another completion id, as if the
//! target ran twice in one turn: the transport accepts it, the conformance kit's
//! `streaming.one_turn` does not). A transport
//! the listener refused fails the invocation with `lifecycle_stream_transport_failed` and
//! `metadata.http_status`.

use fabric_config::codes;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::settings::{self, Invalid};
use crate::wire::LifecycleError;

const PROTOCOL: &str = "fabric.openai_stream/v1alpha1";
const PROFILE: &str = "openai.chat_completions.chunk/v1";
const HOST: &str = "127.0.0.1";
const IO_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_DELAY_MS: u64 = 600_000;

/// Transport faults (see the module docs).
pub const FAULTS: &[&str] = &[
    "bad_token",
    "bad_path",
    "not_chunked",
    "bad_content_type",
    "bad_expect",
    "second_connection",
    "gap",
    "identity_mismatch",
    "bad_json",
    "bad_chunk",
    "oversize",
    "missing_end",
    "close_early",
    "no_connect",
    "two_completions",
];

/// How to stream: `harness.settings.stream`, overridden per request by
/// `request.context.scripted_stream`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSettings {
    /// Whether `invoke_openai_stream` is implemented (false: `lifecycle_openai_stream_unsupported`).
    pub implemented: bool,
    /// Characters of the reply per chunk (at least 1).
    pub chunk_chars: usize,
    /// Milliseconds between chunks.
    pub delay_ms: u64,
    /// A transport fault to inject.
    pub fault: Option<String>,
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings {
            implemented: true,
            chunk_chars: 16,
            delay_ms: 0,
            fault: None,
        }
    }
}

impl StreamSettings {
    /// Applies the members of `value` (an object) on top of `self`.
    pub fn merged(mut self, value: &Value, path: &str) -> Result<StreamSettings, Invalid> {
        for (key, item) in settings::object(value, path)? {
            let path = format!("{path}.{key}");
            match key.as_str() {
                "implemented" => self.implemented = settings::boolean(item, &path)?,
                "chunk_chars" => {
                    let n = settings::uint(item, &path, 1, 1_000_000)?;
                    self.chunk_chars = usize::try_from(n).unwrap_or(1);
                }
                "delay_ms" => self.delay_ms = settings::uint(item, &path, 0, MAX_DELAY_MS)?,
                "fault" => self.fault = Some(settings::fault(item, &path, FAULTS)?),
                _ => return Err(settings::unknown_key(&path)),
            }
        }
        Ok(self)
    }

    fn fault(&self, name: &str) -> bool {
        self.fault.as_deref() == Some(name)
    }
}

/// The sink of the request, checked as upstream's common host does.
#[derive(Debug)]
pub struct Sink {
    port: u16,
    token: String,
    runtime_id: String,
    invocation_id: String,
    request_id: String,
}

fn sink_error(message: &str) -> LifecycleError {
    LifecycleError::new(codes::LIFECYCLE_INVALID_STREAM_SINK, message)
}

/// Reads `payload.stream` and checks it against `payload.runtime_context`.
pub fn sink(payload: &Map<String, Value>) -> Result<Sink, LifecycleError> {
    let (Some(Value::Object(sink)), Some(Value::Object(context))) =
        (payload.get("stream"), payload.get("runtime_context"))
    else {
        return Err(sink_error(
            "OpenAI stream invocation is missing its transport",
        ));
    };
    let text = |map: &Map<String, Value>, key: &str| {
        map.get(key).and_then(Value::as_str).map(str::to_owned)
    };
    if text(sink, "protocol_version").as_deref() != Some(PROTOCOL)
        || text(sink, "profile").as_deref() != Some(PROFILE)
        || text(sink, "host").as_deref() != Some(HOST)
    {
        return Err(sink_error(
            "OpenAI stream transport uses an unsupported protocol or endpoint",
        ));
    }
    let port = sink
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok());
    let token = text(sink, "token").filter(|t| !t.is_empty() && !t.contains(['\r', '\n']));
    let (Some(port), Some(token)) = (port.filter(|p| *p > 0), token) else {
        return Err(sink_error(
            "OpenAI stream transport credentials are invalid",
        ));
    };
    let mut ids = Vec::new();
    for key in ["runtime_id", "invocation_id", "request_id"] {
        match (text(sink, key), text(context, key)) {
            (Some(a), Some(b)) if a == b => ids.push(a),
            _ => {
                return Err(sink_error(
                    "OpenAI stream transport identity does not match the invocation",
                ));
            }
        }
    }
    let [runtime_id, invocation_id, request_id] = <[String; 3]>::try_from(ids).map_err(|_| {
        sink_error("OpenAI stream transport identity does not match the invocation")
    })?;
    Ok(Sink {
        port,
        token,
        runtime_id,
        invocation_id,
        request_id,
    })
}

fn transport(message: &str, status: Option<u16>) -> LifecycleError {
    let error = LifecycleError::new(codes::LIFECYCLE_STREAM_TRANSPORT_FAILED, message);
    match status {
        Some(status) => error.with_metadata("http_status", status),
        None => error,
    }
}

/// One open POST to the listener.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    /// Connects and sends the request head; `Err` carries the listener's answer when it was
    /// not `100 Continue`.
    fn open(sink: &Sink, settings: &StreamSettings) -> Result<Connection, LifecycleError> {
        let failed = |_| {
            transport(
                "Adapter could not connect to the OpenAI stream listener",
                None,
            )
        };
        let stream = TcpStream::connect((HOST, sink.port)).map_err(failed)?;
        stream.set_read_timeout(Some(IO_TIMEOUT)).map_err(failed)?;
        stream.set_write_timeout(Some(IO_TIMEOUT)).map_err(failed)?;
        let mut writer = stream.try_clone().map_err(failed)?;
        let path = if settings.fault("bad_path") {
            "/elsewhere"
        } else {
            "/openai-stream"
        };
        let token = if settings.fault("bad_token") {
            "wrong-token"
        } else {
            sink.token.as_str()
        };
        let content_type = if settings.fault("bad_content_type") {
            "application/json"
        } else {
            "application/x-ndjson"
        };
        let framing = if settings.fault("not_chunked") {
            "Content-Length: 0"
        } else {
            "Transfer-Encoding: chunked"
        };
        let expect = if settings.fault("bad_expect") {
            "nothing"
        } else {
            "100-continue"
        };
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: {content_type}\r\n{framing}\r\nExpect: {expect}\r\nConnection: close\r\n\r\n",
            port = sink.port
        );
        writer.write_all(head.as_bytes()).map_err(failed)?;
        let mut connection = Connection {
            reader: BufReader::new(stream),
            writer,
        };
        match connection.status() {
            Some(100) => Ok(connection),
            status => Err(transport(
                "OpenAI stream listener rejected the adapter connection",
                status,
            )),
        }
    }

    /// Reads one response head and returns its status.
    fn status(&mut self) -> Option<u16> {
        let mut line = String::new();
        self.reader.read_line(&mut line).ok()?;
        let status = line.split(' ').nth(1)?.parse().ok();
        loop {
            let mut header = String::new();
            match self.reader.read_line(&mut header) {
                Ok(0) | Err(_) => return status,
                Ok(_) if header == "\r\n" || header == "\n" => return status,
                Ok(_) => {}
            }
        }
    }

    fn chunk(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut framed = format!("{:X}\r\n", bytes.len()).into_bytes();
        framed.extend_from_slice(bytes);
        framed.extend_from_slice(b"\r\n");
        self.writer.write_all(&framed)
    }

    /// Sends the last chunk and reads the final answer.
    fn finish(mut self) -> Option<u16> {
        let _ = self.writer.write_all(b"0\r\n\r\n");
        self.status()
    }
}

/// Streams `text` to the sink with `settings`, then returns what to add to the output.
pub fn stream(
    sink: &Sink,
    settings: &StreamSettings,
    text: &str,
) -> Result<Map<String, Value>, LifecycleError> {
    let mut extra = Map::new();
    if settings.fault("no_connect") {
        return Ok(extra);
    }
    let mut connection = Connection::open(sink, settings)?;
    if settings.fault("second_connection") {
        let second = Connection::open(sink, &StreamSettings::default());
        let status = second
            .err()
            .and_then(|e| e.metadata.get("http_status").cloned());
        extra.insert(
            "stream_second_connection_status".into(),
            status.unwrap_or(Value::Null),
        );
    }
    let chars: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = chars
        .chunks(settings.chunk_chars)
        .map(|piece| piece.iter().collect())
        .collect();
    let mut sequence: u64 = 0;
    let lost = |_| transport("Adapter lost the OpenAI stream listener connection", None);
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for (index, piece) in pieces.iter().enumerate() {
        if index > 0 && settings.delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(settings.delay_ms));
        }
        let mut chunk = json!({
            "id": format!("chatcmpl-{}", sink.invocation_id),
            "object": "chat.completion.chunk",
            "created": created,
            "model": "fabric.scripted",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}],
        });
        if index == 0 {
            chunk["choices"][0]["delta"]["role"] = json!("assistant");
        } else if settings.fault("two_completions") {
            chunk["id"] = json!(format!("chatcmpl-{}-again", sink.invocation_id));
        }
        let faulted = match settings.fault.as_deref() {
            Some("gap") if index == 1 => {
                sequence += 1;
                true
            }
            Some("bad_chunk") => {
                chunk["id"] = json!("");
                true
            }
            Some("oversize") => {
                chunk["padding"] = json!("x".repeat(1024 * 1024 + 1));
                true
            }
            Some("identity_mismatch") => true,
            Some("bad_json") => {
                connection
                    .chunk(b"{\"type\": \"chunk\", not json\n")
                    .map_err(lost)?;
                return refused(connection);
            }
            Some("close_early") if index == 1 => {
                drop(connection);
                return Ok(extra);
            }
            _ => false,
        };
        let invocation_id = if settings.fault("identity_mismatch") {
            "invocation-someone-else"
        } else {
            sink.invocation_id.as_str()
        };
        let record = json!({
            "type": "chunk", "sequence": sequence, "runtime_id": sink.runtime_id,
            "invocation_id": invocation_id, "request_id": sink.request_id, "chunk": chunk,
        });
        let mut line = record.to_string().into_bytes();
        line.push(b'\n');
        if connection.chunk(&line).is_err() || faulted {
            return refused(connection);
        }
        sequence += 1;
    }
    if !settings.fault("missing_end") {
        let end = json!({
            "type": "end", "sequence": sequence, "runtime_id": sink.runtime_id,
            "invocation_id": sink.invocation_id, "request_id": sink.request_id,
        });
        let mut line = end.to_string().into_bytes();
        line.push(b'\n');
        connection.chunk(&line).map_err(lost)?;
    }
    match connection.finish() {
        Some(200) => Ok(extra),
        status => Err(transport(
            "OpenAI stream listener rejected the event stream",
            status,
        )),
    }
}

/// After a faulty record: the listener's answer, as the invocation's failure.
fn refused(mut connection: Connection) -> Result<Map<String, Value>, LifecycleError> {
    let status = connection.status();
    Err(transport(
        "OpenAI stream listener rejected the event stream",
        status,
    ))
}
