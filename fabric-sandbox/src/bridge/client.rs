//! The bridge client: one request line to the runtime server's socket, one validated
//! response line back. Every failure is a [`Response`] (`host_unavailable` when nothing was
//! sent; `invalid_response` with unknown effects once a start / invoke / stop was sent).

use fabric_config::codes;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fabric_config::bridge::{
    self, BridgeStage, CALL_SECONDS, DEFAULT_SOCKET, Effects, Failure, Operation, Request,
    Response, SOCKET_ENV, Status,
};
use serde_json::Value;

/// A client of one runtime server socket.
#[derive(Debug, Clone)]
pub struct Client {
    socket: PathBuf,
    timeout: Duration,
}

impl Client {
    /// A client of `socket` with the 320 s call deadline.
    pub fn new(socket: impl Into<PathBuf>) -> Client {
        Client {
            socket: socket.into(),
            timeout: Duration::from_secs(CALL_SECONDS),
        }
    }

    /// A client of `$FABRIC_HOST_SOCKET`, else `/sandbox/fabric.sock`.
    pub fn from_env() -> Client {
        Client::new(socket_from_env())
    }

    /// Sets the deadline of each call: connect, send and the complete response. Default
    /// 320 s.
    pub fn set_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.timeout = timeout;
        self
    }

    /// The socket path.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends `request` and returns the server's response, or the failure as a response.
    pub fn call(&self, request: &Request) -> Response {
        let operation = request.operation.as_str();
        let line = match request.encode() {
            Ok(line) => line,
            Err(failure) => return Response::failed(operation, &failure),
        };
        let deadline = Instant::now() + self.timeout;
        let limit = request.operation.response_limit();
        let mut stream = match UnixStream::connect(&self.socket) {
            Ok(stream) => stream,
            Err(_) => {
                return Response::failed(
                    operation,
                    &Failure::new(codes::HOST_UNAVAILABLE, BridgeStage::Transport),
                );
            }
        };
        let uncertain = || {
            let failure = Failure::new(codes::INVALID_RESPONSE, BridgeStage::Transport);
            let failure = if request.operation.has_effects() {
                failure.with_effects(None, Effects::Unknown)
            } else {
                failure
            };
            Response::failed(operation, &failure)
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() || stream.set_write_timeout(Some(remaining)).is_err() {
            return uncertain();
        }
        if stream.write_all(&line).is_err() {
            // A server at its connection limit may refuse before reading the request: its
            // `host_busy` answer is still readable.
            return match read_line(&mut stream, deadline, limit) {
                Ok(bytes) if is_busy(&bytes) => busy(operation),
                _ => uncertain(),
            };
        }
        let Ok(bytes) = read_line(&mut stream, deadline, limit) else {
            return uncertain();
        };
        match decode_response(&bytes, request.operation) {
            Some(response) => response,
            None if is_busy(&bytes) => busy(operation),
            None => uncertain(),
        }
    }
}

/// Whether `line` is a server's `host_busy` refusal (it names the request's operation, or
/// "unknown" when the server refused before a whole request line had arrived).
fn is_busy(line: &[u8]) -> bool {
    bridge::decode_strict(line)
        .ok()
        .and_then(|value| serde_json::from_value::<Response>(value).ok())
        .is_some_and(|response| {
            response.status == Status::Failed
                && response
                    .error
                    .is_some_and(|error| error.code == codes::HOST_BUSY)
        })
}

/// The `host_busy` refusal of `operation`: nothing was dispatched.
fn busy(operation: &str) -> Response {
    Response::failed(
        operation,
        &Failure::new(codes::HOST_BUSY, BridgeStage::Transport),
    )
}

/// `$FABRIC_HOST_SOCKET`, else `/sandbox/fabric.sock`.
pub fn socket_from_env() -> PathBuf {
    std::env::var_os(SOCKET_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_SOCKET), PathBuf::from)
}

/// One response line of at most `limit` bytes, newline included.
fn read_line(stream: &mut UnixStream, deadline: Instant, limit: usize) -> io::Result<Vec<u8>> {
    let mut line = Vec::with_capacity(8192);
    let mut chunk = [0u8; 65536];
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(remaining))?;
        let want = (limit + 1 - line.len()).min(chunk.len());
        match stream.read(&mut chunk[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                let start = line.len();
                line.extend_from_slice(&chunk[..n]);
                if let Some(at) = line[start..].iter().position(|b| *b == b'\n') {
                    line.truncate(start + at + 1);
                    if line.len() > limit {
                        return Err(io::ErrorKind::InvalidData.into());
                    }
                    return Ok(line);
                }
                if line.len() > limit {
                    return Err(io::ErrorKind::InvalidData.into());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A response line that has the envelope's shape for `operation`, else `None`.
pub fn decode_response(line: &[u8], operation: Operation) -> Option<Response> {
    let value = bridge::decode_strict(line).ok()?;
    let response: Response = serde_json::from_value(value).ok()?;
    if response.operation != operation.as_str()
        || (response.status == Status::Succeeded) != response.error.is_none()
    {
        return None;
    }
    if let Some(error) = &response.error {
        return fabric_config::codes::lookup(&error.code).map(|_| response);
    }
    let shape_ok = match operation {
        Operation::Start => {
            response.changed.is_some()
                && response
                    .result
                    .get("runtime_id")
                    .is_some_and(Value::is_string)
        }
        Operation::Invoke => response.changed.is_none() && response.result.is_object(),
        Operation::Stop => response.changed.is_some() && response.result.is_null(),
        Operation::Exec => response.changed.is_none() && response.result.is_object(),
        Operation::Check => {
            response.changed == Some(false)
                && response
                    .result
                    .get("schema_version")
                    .and_then(Value::as_str)
                    == Some(fabric_config::health::CHECK_REPORT_SCHEMA_VERSION)
        }
        Operation::Serve => false,
    };
    shape_ok.then_some(response)
}
