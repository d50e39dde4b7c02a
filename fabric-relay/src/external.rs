//! The client side of an external ATOF collector (`launch_collector: false`): register,
//! read the NDJSON stream on a thread of its own, deregister — blocking HTTP/1.1 over a
//! plain TCP connection (`http` URLs; `https` needs TLS, which the core does not speak).

use fabric_config::codes;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use fabric_config::relay_collector::STREAM_SINK_NAME;
use fabric_config::{FabricConfig, Stage};
use serde_json::Value;

use crate::StreamNext;
use crate::error::RelayError;

/// How long one control request (register, deregister) may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(30);

/// An external collector named by the config's `nemo-fabric-stream` sink.
pub struct ExternalCollector {
    /// `scheme://host:port/path` without a trailing slash.
    pub base_url: String,
    /// The sink as configured (its URL is replaced in the runtime's copy).
    pub sink: Value,
    authority: String,
    path: String,
    /// Header lines (values are secrets: never logged).
    headers: Vec<(String, String)>,
}

impl std::fmt::Debug for ExternalCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalCollector")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

fn request_failed(message: String) -> RelayError {
    RelayError::Collector {
        stage: Stage::Invoke,
        code: codes::COLLECTOR_REQUEST_FAILED,
        message,
    }
}

impl ExternalCollector {
    /// Reads the (already checked) sink. Errors: `collector_start_failed` for an `https`
    /// URL.
    pub fn from_config(config: &FabricConfig) -> Result<ExternalCollector, RelayError> {
        let value = serde_json::to_value(config).unwrap_or(Value::Null);
        let sink = value
            .pointer("/relay/observability/atof/sinks")
            .and_then(Value::as_array)
            .and_then(|sinks| {
                sinks
                    .iter()
                    .find(|s| s.get("name").and_then(Value::as_str) == Some(STREAM_SINK_NAME))
            })
            .cloned()
            .unwrap_or(Value::Null);
        let start_failed = |message: &str| RelayError::Collector {
            stage: Stage::Start,
            code: codes::COLLECTOR_START_FAILED,
            message: message.to_owned(),
        };
        let url = sink.get("url").and_then(Value::as_str).unwrap_or_default();
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(start_failed(
                "the nemo-fabric-stream collector URL must be http:// (the core does not speak TLS)",
            ));
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], rest[slash..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let mut headers = Vec::new();
        if let Some(fixed) = sink.get("headers").and_then(Value::as_object) {
            for (name, value) in fixed {
                headers.push((name.clone(), value.as_str().unwrap_or_default().to_owned()));
            }
        }
        if let Some(from_env) = sink.get("header_env").and_then(Value::as_object) {
            for (name, variable) in from_env {
                let variable = variable.as_str().unwrap_or_default();
                let value = std::env::var(variable).unwrap_or_default();
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                headers.push((name.clone(), value));
            }
        }
        let (base_url, authority, path) = (
            format!("http://{authority}{path}"),
            authority.to_owned(),
            path.to_owned(),
        );
        Ok(ExternalCollector {
            base_url,
            sink,
            authority,
            path,
            headers,
        })
    }

    fn connect(&self, timeout: Option<Duration>) -> Result<TcpStream, RelayError> {
        let stream = TcpStream::connect(&self.authority).map_err(|error| {
            request_failed(format!(
                "cannot reach the ATOF collector at {}: {error}",
                self.base_url
            ))
        })?;
        let _ = stream.set_read_timeout(timeout);
        let _ = stream.set_write_timeout(Some(CONTROL_TIMEOUT));
        Ok(stream)
    }

    fn head(&self, method: &str, path: &str, body: &[u8]) -> Vec<u8> {
        let mut head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.path, self.authority
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() {
            head.push_str("Content-Type: application/json\r\n");
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        bytes
    }

    /// One control request; `Err` unless the collector answers `expected`.
    fn control(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        expected: u16,
    ) -> Result<(), RelayError> {
        let mut stream = self.connect(Some(CONTROL_TIMEOUT))?;
        let io = |error: std::io::Error| {
            request_failed(format!("ATOF collector {method} {path}: {error}"))
        };
        stream
            .write_all(&self.head(method, path, body))
            .map_err(io)?;
        let mut reader = BufReader::new(stream);
        let status = read_head(&mut reader).map_err(io)?;
        if status != expected {
            let mut rest = Vec::new();
            let _ = reader.take(4096).read_to_end(&mut rest);
            let detail =
                serde_json::from_slice::<Value>(rest.rsplit(|&b| b == b'\n').next().unwrap_or(&[]))
                    .ok()
                    .and_then(|v| v.get("detail").and_then(Value::as_str).map(str::to_owned));
            return Err(request_failed(format!(
                "ATOF collector returned HTTP {status} for {method} {path}; expected HTTP {expected}{}",
                detail.map(|d| format!(": {d}")).unwrap_or_default()
            )));
        }
        Ok(())
    }

    pub fn register(&self, request_id: &str) -> Result<(), RelayError> {
        let body = serde_json::json!({"request_id": request_id}).to_string();
        self.control("POST", "/v1/register", body.as_bytes(), 201)
    }

    pub fn deregister(&self, request_id: &str, remove_queue: bool) -> Result<(), RelayError> {
        let path = format!(
            "/v1/deregister-request/{}?remove_queue={remove_queue}",
            encode(request_id)
        );
        self.control("DELETE", &path, b"", 204)
    }

    /// Opens `GET /v1/stream/{id}` and reads it on a thread into an [`ExternalReader`].
    pub fn open_stream(&self, request_id: &str) -> Result<ExternalReader, RelayError> {
        let path = format!("/v1/stream/{}", encode(request_id));
        let mut stream = self.connect(None)?;
        let io =
            |error: std::io::Error| request_failed(format!("ATOF collector GET {path}: {error}"));
        stream
            .write_all(&self.head("GET", &path, b""))
            .map_err(io)?;
        let mut reader = BufReader::new(stream.try_clone().map_err(io)?);
        let status = read_head(&mut reader).map_err(io)?;
        if status != 200 {
            return Err(request_failed(format!(
                "ATOF collector returned HTTP {status} for GET {path}; expected HTTP 200"
            )));
        }
        let shared = Arc::new(Feed::default());
        let feed = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("fabric-atof-stream".into())
            .spawn(move || feed.run(reader))
            .map_err(io)?;
        Ok(ExternalReader {
            feed: shared,
            stream,
        })
    }
}

/// Percent-encodes a path segment.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Reads a response head; the status code.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<u16> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("not an HTTP response"))?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            return Ok(status);
        }
    }
}

#[derive(Default)]
struct FeedState {
    records: VecDeque<String>,
    ended: bool,
    /// A waiting `next` returns `Timeout` once (the consumer has something to check).
    interrupted: bool,
    error: Option<String>,
    watcher: Option<Arc<dyn Fn() + Send + Sync>>,
}

#[derive(Default)]
struct Feed {
    state: Mutex<FeedState>,
    changed: Condvar,
}

impl Feed {
    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, change: impl FnOnce(&mut FeedState)) {
        let mut state = self.lock();
        change(&mut state);
        let watcher = state.watcher.clone();
        drop(state);
        self.changed.notify_all();
        if let Some(watcher) = watcher {
            watcher();
        }
    }

    /// Reads the chunked NDJSON body until the last chunk, EOF or an error.
    fn run(&self, mut reader: BufReader<TcpStream>) {
        let mut pending = Vec::new();
        let outcome = (|| -> std::io::Result<()> {
            loop {
                let mut size = String::new();
                if reader.read_line(&mut size)? == 0 {
                    return Err(std::io::Error::other(
                        "the collector closed the stream early",
                    ));
                }
                let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| std::io::Error::other("malformed chunk"))?;
                if size == 0 {
                    return Ok(());
                }
                let mut data = vec![0; size + 2];
                reader.read_exact(&mut data)?;
                pending.extend_from_slice(&data[..size]);
                while let Some(newline) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=newline).collect();
                    let text = String::from_utf8_lossy(&line).trim().to_owned();
                    if !text.is_empty() {
                        self.push(|state| state.records.push_back(text));
                    }
                }
            }
        })();
        self.push(|state| {
            state.ended = true;
            if let Err(error) = outcome {
                state.error = Some(error.to_string());
            }
        });
    }
}

/// The records of an external collector's stream, read by a thread.
pub struct ExternalReader {
    feed: Arc<Feed>,
    stream: TcpStream,
}

impl std::fmt::Debug for ExternalReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalReader").finish_non_exhaustive()
    }
}

impl ExternalReader {
    pub fn next(&self, timeout: Option<Duration>) -> Result<StreamNext, RelayError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut state = self.feed.lock();
        loop {
            if let Some(record) = state.records.pop_front() {
                return Ok(StreamNext::Item(record));
            }
            if std::mem::take(&mut state.interrupted) {
                return Ok(StreamNext::Timeout);
            }
            if state.ended {
                return match &state.error {
                    Some(error) => Err(request_failed(format!(
                        "ATOF collector stream failed: {error}"
                    ))),
                    None => Ok(StreamNext::End),
                };
            }
            let now = Instant::now();
            match deadline {
                Some(deadline) if now >= deadline => return Ok(StreamNext::Timeout),
                Some(deadline) => {
                    state = self
                        .feed
                        .changed
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                None => {
                    state = self
                        .feed
                        .changed
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner())
                }
            }
        }
    }

    /// A function that interrupts this reader (for the host's answer hook).
    pub fn poker(&self) -> Arc<dyn Fn() + Send + Sync> {
        let feed = Arc::clone(&self.feed);
        Arc::new(move || feed.push(|state| state.interrupted = true))
    }

    /// Makes a waiting (or the next) `next` return `Timeout` once.
    pub fn interrupt(&self) {
        self.feed.push(|state| state.interrupted = true);
    }

    pub fn set_watcher(&self, watcher: Arc<dyn Fn() + Send + Sync>) {
        self.feed.lock().watcher = Some(watcher);
    }
}

impl Drop for ExternalReader {
    fn drop(&mut self) {
        // Ends the reading thread (its blocking read returns).
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
