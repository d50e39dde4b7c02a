//! Relay ATOF records (`harness.settings.atof`): when the runtime's Relay config has a
//! `nemo-fabric-stream` sink (`type: "stream"`), every invocation posts a root scope start,
//! `marks` mark records and the scope end to the sink URL, shaped as `nemo_relay`'s stream
//! sink emits them. The scope start's metadata carries `nemo_fabric_request_id` (and the
//! invocation and runtime ids), which is how a collector routes the invocation's records;
//! marks name the scope as `parent_uuid`.
//!
//! Transport `ndjson` (the default): one chunked HTTP/1.1 POST per invocation, one record
//! per chunk, written as it is produced (`delay_ms` apart: a slow producer). Transport
//! `http_post`: one POST per record. The sink's `headers` are sent as they are and its
//! `header_env` headers with the values of the named variables (an unset variable sends
//! no header). The sink's `timeout_millis` is not applied: a write blocked by collector
//! backpressure waits up to 60 s (`IO_TIMEOUT`), longer than the collectors' 30 s
//! per-record limit, so a stalled consumer is seen at the collector. Only `http://` URLs:
//! this adapter is a test double for loopback collectors and has no TLS client.
//!
//! Faults (`fault`): `oversize` (the first mark is padded past 1 MiB and sent in a POST of
//! its own, so its rejection does not end the invocation's stream), `wrong_request_id` (the
//! scope start names a request nobody registered), `no_correlation` (the scope start has no
//! `nemo_fabric_request_id`), `bad_token` (every `headers`/`header_env` header is sent
//! with a wrong value). Telemetry never fails the turn: what happened is reported in `output.atof`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::settings::{self, Invalid};

/// The sink name a collector owns.
pub const STREAM_SINK: &str = "nemo-fabric-stream";
const IO_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_DELAY_MS: u64 = 600_000;
const MAX_MARKS: u64 = 10_000_000;
const MAX_PAYLOAD_BYTES: u64 = 4 * 1024 * 1024;
const MAX_CHILD_SCOPES: u64 = 10_000;
/// One byte over the collectors' per-record limit (1 MiB).
const OVERSIZE_BYTES: usize = 1024 * 1024 + 1;

/// Injected faults (see the module docs).
pub const FAULTS: &[&str] = &[
    "oversize",
    "wrong_request_id",
    "no_correlation",
    "bad_token",
];

/// What to emit: `harness.settings.atof`, overridden per request by
/// `request.context.scripted_atof`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtofSettings {
    /// Emit when a stream sink is configured (default true).
    pub enabled: bool,
    /// Mark records between the scope start and end (default 1).
    pub marks: u64,
    /// Milliseconds between records (default 0).
    pub delay_ms: u64,
    /// Bytes of padding in each mark's `data.padding` (default 0).
    pub payload_bytes: u64,
    /// Tool scopes (category `tool`, a `tool_call_id` in the profile) after the marks
    /// (default 0).
    pub tools: u64,
    /// LLM scopes (category `llm`, a `model_call_id` in the metadata) after the tools
    /// (default 0).
    pub model_calls: u64,
    /// A fault to inject.
    pub fault: Option<String>,
}

impl Default for AtofSettings {
    fn default() -> Self {
        AtofSettings {
            enabled: true,
            marks: 1,
            delay_ms: 0,
            payload_bytes: 0,
            tools: 0,
            model_calls: 0,
            fault: None,
        }
    }
}

impl AtofSettings {
    /// Applies the members of `value` (an object) on top of `self`.
    pub fn merged(mut self, value: &Value, path: &str) -> Result<AtofSettings, Invalid> {
        for (key, item) in settings::object(value, path)? {
            let path = format!("{path}.{key}");
            let bounded = |max: u64| settings::uint(item, &path, 0, max);
            match key.as_str() {
                "enabled" => self.enabled = settings::boolean(item, &path)?,
                "marks" => self.marks = bounded(MAX_MARKS)?,
                "delay_ms" => self.delay_ms = bounded(MAX_DELAY_MS)?,
                "payload_bytes" => self.payload_bytes = bounded(MAX_PAYLOAD_BYTES)?,
                "tools" => self.tools = bounded(MAX_CHILD_SCOPES)?,
                "model_calls" => self.model_calls = bounded(MAX_CHILD_SCOPES)?,
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

/// How records travel to the sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// One chunked POST per invocation.
    Ndjson,
    /// One POST per record.
    HttpPost,
}

/// The `nemo-fabric-stream` sink of the runtime's Relay config.
#[derive(Debug, Clone)]
pub struct Sink {
    host: String,
    port: u16,
    path: String,
    transport: Transport,
    /// `(header, value)` pairs of the sink's static `headers`.
    headers: Vec<(String, String)>,
    /// `(header, variable)` pairs; values are read from the environment when sending.
    header_env: Vec<(String, String)>,
}

/// Finds the `nemo-fabric-stream` sink in the Relay config file written by the core
/// (`{relay: {config: <plugin config or observability config>}}`). `Ok(None)` when there
/// is no enabled ATOF stream sink of that name.
pub fn sink_from_file(path: &Path) -> Result<Option<Sink>, String> {
    let text =
        std::fs::read(path).map_err(|_| "the Relay config file cannot be read".to_owned())?;
    let wrapper: Value = serde_json::from_slice(&text)
        .map_err(|_| "the Relay config file is not JSON".to_owned())?;
    let config = wrapper.pointer("/relay/config").unwrap_or(&Value::Null);
    // A plugin config lists components; a bare observability config is one component.
    let observability: Vec<&Value> = match config.get("components").and_then(Value::as_array) {
        Some(components) => components
            .iter()
            .filter(|c| c.get("kind").and_then(Value::as_str) == Some("observability"))
            .filter(|c| c.get("enabled").and_then(Value::as_bool) != Some(false))
            .filter_map(|c| c.get("config"))
            .collect(),
        None => vec![config],
    };
    let mut found = None;
    for config in observability {
        let Some(atof) = config.get("atof") else {
            continue;
        };
        if atof.get("enabled").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        for sink in atof
            .get("sinks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if sink.get("name").and_then(Value::as_str) != Some(STREAM_SINK)
                || sink.get("type").and_then(Value::as_str) != Some("stream")
            {
                continue;
            }
            if found.is_some() {
                return Err(format!(
                    "the Relay config has more than one {STREAM_SINK} sink"
                ));
            }
            found = Some(parse_sink(sink)?);
        }
    }
    Ok(found)
}

fn parse_sink(sink: &Value) -> Result<Sink, String> {
    let url = sink.get("url").and_then(Value::as_str).unwrap_or_default();
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!(
            "the {STREAM_SINK} sink url must be http:// (fabric.scripted has no TLS client)"
        ));
    };
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().ok()),
        None => (authority, Some(80)),
    };
    let (Some(port), false) = (port, host.is_empty() || authority.contains('@')) else {
        return Err(format!(
            "the {STREAM_SINK} sink url has no usable host and port"
        ));
    };
    let transport = match sink.get("transport").and_then(Value::as_str) {
        None | Some("ndjson") => Transport::Ndjson,
        Some("http_post") => Transport::HttpPost,
        Some(_) => return Err(format!("the {STREAM_SINK} sink transport is not supported")),
    };
    let pairs = |key: &str| -> Result<Vec<(String, String)>, String> {
        let mut pairs = Vec::new();
        if let Some(map) = sink.get(key).and_then(Value::as_object) {
            for (header, value) in map {
                let value = value.as_str().unwrap_or_default();
                if header.is_empty()
                    || header.contains([':', '\r', '\n', ' '])
                    || value.is_empty()
                    || value.contains(['\r', '\n'])
                {
                    return Err(format!("the {STREAM_SINK} sink {key} is malformed"));
                }
                pairs.push((header.clone(), value.to_owned()));
            }
        }
        Ok(pairs)
    };
    let (headers, header_env) = (pairs("headers")?, pairs("header_env")?);
    Ok(Sink {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port,
        path: path.to_owned(),
        transport,
        headers,
        header_env,
    })
}

/// The identities of one invocation.
#[derive(Debug, Clone, Copy)]
pub struct Ids<'a> {
    pub runtime_id: &'a str,
    pub invocation_id: &'a str,
    pub request_id: &'a str,
}

/// One invocation's records in flight: the scope start is sent by [`Emission::begin`].
#[derive(Debug)]
pub struct Emission {
    sink: Sink,
    settings: AtofSettings,
    scope_uuid: String,
    metadata: Map<String, Value>,
    connection: Option<Connection>,
    sent: u64,
    statuses: Vec<u16>,
    error: Option<&'static str>,
    oversize_status: Option<Value>,
}

impl Emission {
    /// Opens the transport and sends the root scope start.
    pub fn begin(sink: &Sink, settings: &AtofSettings, ids: Ids<'_>, input: &Value) -> Emission {
        let mut metadata = Map::new();
        let request_id = if settings.fault("wrong_request_id") {
            Some(format!(
                "request-unregistered-{}",
                uuid::Uuid::new_v4().simple()
            ))
        } else if settings.fault("no_correlation") {
            None
        } else {
            Some(ids.request_id.to_owned())
        };
        if let Some(request_id) = request_id {
            metadata.insert("nemo_fabric_request_id".into(), request_id.into());
        }
        metadata.insert("nemo_fabric_invocation_id".into(), ids.invocation_id.into());
        metadata.insert("nemo_fabric_runtime_id".into(), ids.runtime_id.into());
        let mut emission = Emission {
            sink: sink.clone(),
            settings: settings.clone(),
            scope_uuid: uuid::Uuid::new_v4().to_string(),
            metadata,
            connection: None,
            sent: 0,
            statuses: Vec::new(),
            error: None,
            oversize_status: None,
        };
        if emission.sink.transport == Transport::Ndjson {
            match Connection::open(&emission.sink, &emission.settings, None) {
                Ok(connection) => emission.connection = Some(connection),
                Err(()) => emission.error = Some("could not connect to the ATOF sink"),
            }
        }
        let start = emission.scope_record("start", json!({"input": input}), Map::new());
        emission.send(&start);
        emission
    }

    /// Sends the marks and the scope end; returns what goes into `output.atof`.
    pub fn finish(mut self, succeeded: bool, response: &str) -> Value {
        for index in 0..self.settings.marks {
            if self.settings.delay_ms > 0 {
                std::thread::sleep(Duration::from_millis(self.settings.delay_ms));
            }
            let mut data = json!({"index": index, "of": self.settings.marks});
            if self.settings.payload_bytes > 0 {
                let bytes = usize::try_from(self.settings.payload_bytes).unwrap_or(0);
                data["padding"] = json!("x".repeat(bytes));
            }
            let oversize = index == 0 && self.settings.fault("oversize");
            if oversize {
                data["padding"] = json!("x".repeat(OVERSIZE_BYTES));
            }
            let mark = json!({
                "atof_version": "0.1", "kind": "mark", "name": "scripted.progress",
                "category": null, "category_profile": null, "data": data, "data_schema": null,
                "metadata": null, "uuid": uuid::Uuid::new_v4().to_string(),
                "parent_uuid": self.scope_uuid, "propagation_root_uuid": self.scope_uuid,
                "timestamp": now(),
            });
            if oversize {
                // Its own POST: a collector answers 413 and drops it; the stream goes on.
                let status = post_once(&self.sink, &self.settings, &line(&mark));
                self.oversize_status = Some(status.map_or(Value::Null, Value::from));
                continue;
            }
            self.send(&mark);
        }
        let invocation = self
            .metadata
            .get("nemo_fabric_invocation_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        for index in 0..self.settings.tools {
            let profile = json!({"tool_call_id": format!("{invocation}-call-{index}")});
            let (start, end) = (json!({"index": index}), json!({"result": index}));
            self.child_scope("tool", "scripted.tool", profile, Value::Null, start, end);
        }
        for index in 0..self.settings.model_calls {
            let profile = json!({"model_name": "scripted-model"});
            let metadata = json!({"model_call_id": format!("{invocation}-model-{index}")});
            let end = json!({"index": index});
            self.child_scope("llm", "scripted.model", profile, metadata, Value::Null, end);
        }
        if self.settings.delay_ms > 0 && self.settings.marks > 0 {
            std::thread::sleep(Duration::from_millis(self.settings.delay_ms));
        }
        let mut extra = Map::new();
        let status = if succeeded { "OK" } else { "ERROR" };
        extra.insert("otel.status_code".into(), status.into());
        let end = self.scope_record("end", json!({"response": response}), extra);
        self.send(&end);
        if let Some(connection) = self.connection.take() {
            match connection.finish() {
                Some(status) => self.statuses.push(status),
                None => self.error = self.error.or(Some("the ATOF sink sent no answer")),
            }
        }
        let mut report = json!({"sent": self.sent, "http_statuses": self.statuses});
        if let Some(status) = self.oversize_status {
            report["oversize_http_status"] = status;
        }
        if let Some(error) = self.error {
            report["error"] = error.into();
        }
        report
    }

    /// Sends the start and end records of one scope under the root scope.
    fn child_scope(
        &mut self,
        category: &str,
        name: &str,
        profile: Value,
        metadata: Value,
        start: Value,
        end: Value,
    ) {
        let uuid = uuid::Uuid::new_v4().to_string();
        for (phase, data) in [("start", start), ("end", end)] {
            let record = json!({
                "atof_version": "0.1", "kind": "scope", "scope_category": phase, "name": name,
                "category": category, "category_profile": profile, "attributes": [],
                "data": data, "data_schema": null, "metadata": metadata, "uuid": uuid,
                "parent_uuid": self.scope_uuid, "propagation_root_uuid": self.scope_uuid,
                "timestamp": now(),
            });
            self.send(&record);
        }
    }

    fn scope_record(&self, category: &str, data: Value, extra: Map<String, Value>) -> Value {
        let mut metadata = self.metadata.clone();
        metadata.extend(extra);
        json!({
            "atof_version": "0.1", "kind": "scope", "scope_category": category,
            "name": "scripted-request", "category": "agent", "category_profile": null,
            "attributes": [], "data": data, "data_schema": null, "metadata": metadata,
            "uuid": self.scope_uuid, "parent_uuid": null,
            "propagation_root_uuid": self.scope_uuid, "timestamp": now(),
        })
    }

    fn send(&mut self, record: &Value) {
        let bytes = line(record);
        match self.sink.transport {
            Transport::HttpPost => match post_once(&self.sink, &self.settings, &bytes) {
                Some(status) => {
                    self.sent += 1;
                    if self.statuses.last() != Some(&status) {
                        self.statuses.push(status);
                    }
                }
                None => self.error = Some("the ATOF sink refused a record"),
            },
            Transport::Ndjson => {
                let Some(connection) = self.connection.as_mut() else {
                    return;
                };
                if connection.chunk(&bytes).is_ok() {
                    self.sent += 1;
                } else {
                    // The collector answered early (e.g. 413) or went away.
                    if let Some(connection) = self.connection.take() {
                        if let Some(status) = connection.status() {
                            self.statuses.push(status);
                        }
                    }
                    self.error = Some("the ATOF sink closed the stream");
                }
            }
        }
    }
}

fn line(record: &Value) -> Vec<u8> {
    let mut bytes = record.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// RFC 3339 UTC with nanoseconds, as `nemo_relay` stamps records.
pub(crate) fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// One POST with a `Content-Length` body; the answer's status.
fn post_once(sink: &Sink, settings: &AtofSettings, body: &[u8]) -> Option<u16> {
    let mut connection = Connection::open(sink, settings, Some(body.len())).ok()?;
    if connection.writer.write_all(body).is_err() {
        // An early answer (413) may still be readable.
        return connection.status();
    }
    connection.status()
}

/// One open POST to the sink.
#[derive(Debug)]
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    /// Connects and sends the request head: chunked when `length` is `None`.
    fn open(sink: &Sink, settings: &AtofSettings, length: Option<usize>) -> Result<Connection, ()> {
        let address = (sink.host.as_str(), sink.port)
            .to_socket_addrs()
            .map_err(|_| ())?
            .next()
            .ok_or(())?;
        let stream = TcpStream::connect_timeout(&address, CONNECT_TIMEOUT).map_err(|_| ())?;
        stream.set_read_timeout(Some(IO_TIMEOUT)).map_err(|_| ())?;
        stream.set_write_timeout(Some(IO_TIMEOUT)).map_err(|_| ())?;
        let _ = stream.set_nodelay(true);
        let mut writer = stream.try_clone().map_err(|_| ())?;
        let (content_type, framing) = match length {
            Some(n) => ("application/json", format!("Content-Length: {n}")),
            None => (
                "application/x-ndjson",
                "Transfer-Encoding: chunked".to_owned(),
            ),
        };
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: {content_type}\r\n{framing}\r\nAccept: */*\r\nConnection: close\r\n",
            path = sink.path,
            host = sink.host,
            port = sink.port,
        );
        let static_headers = sink.headers.iter().map(|(h, v)| (h, Some(v.clone())));
        let env_headers = sink
            .header_env
            .iter()
            .map(|(h, variable)| (h, std::env::var(variable).ok()));
        for (header, value) in static_headers.chain(env_headers) {
            let value = if settings.fault("bad_token") {
                Some("Bearer wrong-token".to_owned())
            } else {
                value
            };
            if let Some(value) = value.filter(|v| !v.contains(['\r', '\n'])) {
                head.push_str(&format!("{header}: {value}\r\n"));
            }
        }
        head.push_str("\r\n");
        writer.write_all(head.as_bytes()).map_err(|_| ())?;
        Ok(Connection {
            reader: BufReader::new(stream),
            writer,
        })
    }

    fn chunk(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut framed = format!("{:X}\r\n", bytes.len()).into_bytes();
        framed.extend_from_slice(bytes);
        framed.extend_from_slice(b"\r\n");
        self.writer.write_all(&framed)
    }

    /// Sends the last chunk and reads the answer.
    fn finish(mut self) -> Option<u16> {
        let _ = self.writer.write_all(b"0\r\n\r\n");
        self.status()
    }

    /// Reads the response head and returns its status.
    fn status(mut self) -> Option<u16> {
        let mut line = String::new();
        self.reader.read_line(&mut line).ok()?;
        line.split(' ').nth(1)?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, config: Value) -> std::path::PathBuf {
        let path = dir.join("relay-config.json");
        std::fs::write(&path, json!({"relay": {"config": config}}).to_string()).unwrap();
        path
    }

    #[test]
    fn finds_the_stream_sink_in_a_plugin_or_bare_config() {
        let dir = tempfile::tempdir().unwrap();
        let atof = json!({"enabled": true, "sinks": [
            {"type": "file", "name": STREAM_SINK},
            {"type": "stream", "name": STREAM_SINK, "url": "http://127.0.0.1:4100/v1/atof",
             "transport": "ndjson", "header_env": {"Authorization": "TOKEN_VAR"}}]});
        let plugin = json!({"version": 1, "components": [
            {"kind": "observability", "enabled": true, "config": {"version": 4, "atof": atof}}]});
        for config in [plugin, json!({"atof": atof})] {
            let sink = sink_from_file(&write(dir.path(), config)).unwrap().unwrap();
            assert_eq!((sink.host.as_str(), sink.port), ("127.0.0.1", 4100));
            assert_eq!(sink.path, "/v1/atof");
            assert_eq!(sink.transport, Transport::Ndjson);
            assert_eq!(
                sink.header_env,
                [("Authorization".into(), "TOKEN_VAR".into())]
            );
        }
    }

    #[test]
    fn no_sink_when_atof_is_off_or_the_sink_is_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let other = json!({"type": "stream", "name": "mine", "url": "http://127.0.0.1:1/x"});
        for atof in [
            json!({"enabled": false, "sinks": [{"type": "stream", "name": STREAM_SINK, "url": "http://127.0.0.1:1/"}]}),
            json!({"enabled": true, "sinks": [other]}),
        ] {
            let path = write(dir.path(), json!({"atof": atof}));
            assert!(sink_from_file(&path).unwrap().is_none());
        }
        assert!(
            sink_from_file(&write(dir.path(), json!({})))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn unusable_sinks_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        for (sink, reason) in [
            (json!({"url": "https://127.0.0.1:4100/v1/atof"}), "TLS"),
            (json!({"url": "http://user@127.0.0.1:1/"}), "host"),
            (json!({"url": "http://127.0.0.1:x/"}), "host"),
            (
                json!({"url": "http://127.0.0.1:1/", "transport": "grpc"}),
                "transport",
            ),
            (
                json!({"url": "http://127.0.0.1:1/", "header_env": {"A:B": "V"}}),
                "header_env",
            ),
            (
                json!({"url": "http://127.0.0.1:1/", "headers": {"A": "x\r\ny"}}),
                "headers",
            ),
        ] {
            let mut sink = sink;
            sink["type"] = json!("stream");
            sink["name"] = json!(STREAM_SINK);
            let path = write(
                dir.path(),
                json!({"atof": {"enabled": true, "sinks": [sink]}}),
            );
            let error = sink_from_file(&path).unwrap_err();
            assert!(error.contains(reason), "{error}");
        }
        assert!(sink_from_file(&dir.path().join("missing.json")).is_err());
    }

    #[test]
    fn settings_merge_and_name_bad_fields() {
        let settings = AtofSettings::default()
            .merged(
                &json!({"marks": 5, "delay_ms": 2, "tools": 2, "model_calls": 3, "fault": "oversize"}),
                "p",
            )
            .unwrap();
        assert_eq!((settings.marks, settings.delay_ms), (5, 2));
        assert_eq!((settings.tools, settings.model_calls), (2, 3));
        assert!(settings.fault("oversize"));
        let error = AtofSettings::default()
            .merged(&json!({"fault": "nope"}), "p")
            .unwrap_err();
        assert_eq!(error.path, "p.fault");
        let error = AtofSettings::default()
            .merged(&json!({"marks": -1}), "p")
            .unwrap_err();
        assert_eq!(error.path, "p.marks");
        assert_eq!(
            AtofSettings::default()
                .merged(&json!({"x": 1}), "p")
                .unwrap_err()
                .path,
            "p.x"
        );
    }
}
