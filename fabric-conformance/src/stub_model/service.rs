//! The stub model server as a [`Service`] of the reactor's HTTP driver: routes a request to
//! its API, answers the next scripted reply, logs the request.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use fabric_reactor::http::{
    ChunkedError, Limits, OnBody, OnHead, Reject, Reply, Request, Servers, Service, Turn,
};
use serde_json::{Value, json};

use super::Script;
use super::api::{self, Answer, Api};
use super::log::RequestLog;

/// Every stub server of the process, one reactor tenant.
pub(crate) type Stubs = Servers<StubService>;

/// Connections one stub serves at once (harnesses open a few each), with slots kept for
/// accepted requests.
pub(crate) const LIMITS: Limits = Limits::new(64, 16);

/// How long a request body may pause.
const BODY_IDLE: Duration = Duration::from_secs(30);

/// The largest request body read (bytes).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// What the server's handle and its service share: the script, the request count, the log.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) script: Script,
    pub(crate) requests: u64,
    pub(crate) log: RequestLog,
}

/// One stub server.
#[derive(Debug)]
pub(crate) struct StubService {
    pub(crate) shared: Arc<Mutex<Shared>>,
}

/// A request being read.
#[derive(Debug, Default)]
pub(crate) struct StubConn {
    request: Option<(String, String, Api)>,
    body: Vec<u8>,
    keep_alive: bool,
}

fn reply(answer: &Answer, keep_alive: bool) -> Reply {
    let reason = match answer.status {
        200 => "OK",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        s if s < 500 => "Bad Request",
        _ => "Server Error",
    };
    let bytes = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: {}\r\ncontent-length: {}\r\n\
         cache-control: no-cache\r\n{}\r\n{}",
        answer.status,
        answer.content_type,
        answer.body.len(),
        if keep_alive {
            ""
        } else {
            "connection: close\r\n"
        },
        answer.body
    )
    .into_bytes();
    Reply { bytes, keep_alive }
}

fn plain_error(status: u16, message: &str) -> Reply {
    reply(
        &Answer::json(
            status,
            json!({"error": {"message": message, "type": "invalid_request_error"}}).to_string(),
        ),
        false,
    )
}

impl StubService {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A complete request: its answer, and its log line.
    fn answer(&self, method: &str, path: &str, api: Api, body: &[u8], keep_alive: bool) -> Reply {
        let mut shared = self.lock();
        let seq = shared.requests;
        shared.requests += 1;
        let decoded: Option<Value> = serde_json::from_slice(body).ok();
        let (index, answer) = match &decoded {
            Some(request) if request.is_object() => {
                let (index, scripted) = shared.script.reply(seq);
                (Some(index), api::answer(api, request, seq, scripted))
            }
            _ => (
                None,
                Answer::json(
                    400,
                    api.error_body(400, "the request body is not a JSON object"),
                ),
            ),
        };
        let logged_body =
            decoded.unwrap_or_else(|| Value::String(String::from_utf8_lossy(body).into_owned()));
        let request = decoded_fields(&logged_body);
        shared.log.write(&json!({
            "seq": seq,
            "method": method,
            "path": path,
            "api": api.name(),
            "model": request.0,
            "stream": request.1,
            "reply": index,
            "status": answer.status,
            "body": logged_body,
        }));
        reply(&answer, keep_alive)
    }
}

/// The `model` and `stream` of a decoded request.
fn decoded_fields(body: &Value) -> (Value, bool) {
    (
        body.get("model").cloned().unwrap_or(Value::Null),
        body.get("stream").and_then(Value::as_bool) == Some(true),
    )
}

impl Service for StubService {
    type Conn = StubConn;

    fn on_head(&mut self, conn: &mut StubConn, request: &Request, _turn: &mut Turn) -> OnHead {
        let path = request.path();
        if request.method() == "GET" && path.trim_end_matches('/').ends_with("/models") {
            let body = json!({"object": "list", "data": [
                {"id": "stub-model", "object": "model", "created": 0, "owned_by": "fabric"}
            ]});
            let answer = Answer::json(200, body.to_string());
            return OnHead::Reply(reply(&answer, request.asks_keep_alive()));
        }
        let Some(api) = Api::of_path(path) else {
            return OnHead::Reply(plain_error(404, "not found"));
        };
        if request.method() != "POST" {
            return OnHead::Reply(plain_error(404, "not found (model calls are POST)"));
        }
        conn.request = Some((request.method().to_owned(), path.to_owned(), api));
        conn.body.clear();
        conn.keep_alive = request.asks_keep_alive();
        OnHead::Body {
            continue_first: request.expects_continue(),
            idle: Some(BODY_IDLE),
        }
    }

    fn on_body(
        &mut self,
        conn: &mut StubConn,
        data: &mut Vec<u8>,
        complete: bool,
        _turn: &mut Turn,
    ) -> OnBody {
        conn.body.append(data);
        if conn.body.len() > MAX_BODY {
            return OnBody::Reply(plain_error(413, "request body over 32 MiB"));
        }
        if !complete {
            return OnBody::Read;
        }
        let Some((method, path, api)) = conn.request.take() else {
            return OnBody::Reply(plain_error(404, "not found"));
        };
        let body = std::mem::take(&mut conn.body);
        OnBody::Reply(self.answer(&method, &path, api, &body, conn.keep_alive))
    }

    fn on_body_error(
        &mut self,
        _conn: &mut StubConn,
        _error: ChunkedError,
        _turn: &mut Turn,
    ) -> Vec<u8> {
        plain_error(400, "malformed chunked body").bytes
    }

    fn on_deadline(&mut self, _conn: &mut StubConn, _turn: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn reject(&self, _why: Reject) -> Option<Vec<u8>> {
        Some(plain_error(400, "malformed request").bytes)
    }
}
