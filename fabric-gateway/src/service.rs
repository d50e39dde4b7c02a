//! The gateway as a [`Service`] of the HTTP driver: checks the path token, reads the
//! request, applies the budgets, hands the call to a worker and streams its answer back.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use fabric_reactor::http::{
    ChunkedError, Ending, OnBody, OnHead, Produce, Reject, Reply, Request, Service, Turn,
};

use crate::budget;
use crate::forward::{self, Call};
use crate::route::{Route, Routes};
use crate::server::Waker;
use fabric_reactor::http::Outbox;

/// The largest request body forwarded (bytes).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// How long a request body may send nothing.
const BODY_IDLE: Duration = Duration::from_secs(30);

/// Headers not passed on: hop-by-hop, framing (the client re-frames), and
/// `accept-encoding` (answers are asked for uncompressed, so records are readable).
const DROPPED_HEADERS: [&str; 8] = [
    "host",
    "connection",
    "keep-alive",
    "content-length",
    "transfer-encoding",
    "expect",
    "accept-encoding",
    "proxy-connection",
];

/// The gateway's service: the route table and the workers' way to wake the server.
#[derive(Debug)]
pub(crate) struct GatewayService {
    routes: Arc<Routes>,
    waker: Arc<OnceLock<Waker>>,
}

impl GatewayService {
    pub(crate) fn new(routes: Arc<Routes>, waker: Arc<OnceLock<Waker>>) -> GatewayService {
        GatewayService { routes, waker }
    }
}

/// A harness connection: the request being read, then the answer being forwarded. A kept
/// connection carries one call after another: each head starts a new one.
#[derive(Debug, Default)]
pub(crate) struct GatewayConn {
    call: Option<Call>,
    exchange: Option<Arc<Outbox>>,
}

/// A whole JSON answer after which the connection closes.
pub(crate) fn json_answer(line: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn status(line: &str, body: &str) -> Reply {
    Reply::close(json_answer(line, body))
}

fn not_found() -> Reply {
    status(
        "404 Not Found",
        r#"{"error":{"message":"not found","type":"not_found"}}"#,
    )
}

/// `/<token>/<role>/<rest>` → (token, role, `/<rest>`).
fn split_target(path: &str) -> Option<(&str, &str, &str)> {
    let path = path.strip_prefix('/')?;
    let (token, after) = path.split_once('/')?;
    let (role, rest) = match after.split_once('/') {
        Some((role, _)) => (role, &after[role.len()..]),
        None => (after, ""),
    };
    Some((token, role, rest))
}

impl Service for GatewayService {
    type Conn = GatewayConn;

    fn on_head(&mut self, conn: &mut GatewayConn, request: &Request, _turn: &mut Turn) -> OnHead {
        // The previous call's answer on a kept connection was written whole.
        conn.call = None;
        conn.exchange = None;
        let Some((token, role, rest)) = split_target(request.path()) else {
            return OnHead::Reply(not_found());
        };
        let Some(route) = self.routes.find(token) else {
            return OnHead::Reply(not_found());
        };
        let Some(upstream) = route.upstream(role).cloned() else {
            return OnHead::Reply(not_found());
        };
        let headers = request
            .headers()
            .filter(|(name, _)| !DROPPED_HEADERS.iter().any(|d| name.eq_ignore_ascii_case(d)))
            .map(|(name, value)| (name.to_owned(), value.to_vec()))
            .collect();
        conn.call = Some(Call {
            route,
            upstream,
            method: request.method().to_owned(),
            path: rest.to_owned(),
            query: request.query().to_owned(),
            headers,
            body: Vec::new(),
            started: Instant::now(),
            started_at: SystemTime::now(),
            invocation_id: None,
            // The answer is re-framed chunked, which only HTTP/1.1 reads.
            keep_alive: request.minor_version() >= 1 && request.is_persistent(),
        });
        OnHead::Body {
            continue_first: request.expects_continue(),
            idle: Some(BODY_IDLE),
        }
    }

    fn on_body(
        &mut self,
        conn: &mut GatewayConn,
        data: &mut Vec<u8>,
        complete: bool,
        turn: &mut Turn,
    ) -> OnBody {
        let Some(call) = conn.call.as_mut() else {
            return OnBody::Reply(not_found());
        };
        call.body.append(data);
        if call.body.len() > MAX_REQUEST_BYTES {
            return OnBody::Reply(status(
                "413 Payload Too Large",
                r#"{"error":{"message":"request body over 64 MiB","type":"invalid_request_error"}}"#,
            ));
        }
        if !complete {
            return OnBody::Read;
        }
        let Some(mut call) = conn.call.take() else {
            return OnBody::Read;
        };
        let route: &Route = &call.route;
        match route.admit() {
            Err(over) => OnBody::Reply(Reply::close(budget::refusal(&call.path, &over))),
            Ok(admitted) => {
                call.invocation_id = admitted.invocation_id;
                let Some(waker) = self.waker.get().copied() else {
                    return OnBody::Reply(not_found());
                };
                let exchange = Arc::new(Outbox::default());
                conn.exchange = Some(Arc::clone(&exchange));
                // The worker writes the answer to the harness itself while the socket takes
                // it: no hand-off to the reactor on the answer's way.
                turn.answer_through(&exchange);
                forward::submit(call, exchange, waker);
                OnBody::Stream(Vec::new())
            }
        }
    }

    fn produce(
        &mut self,
        conn: &mut GatewayConn,
        out: &mut Vec<u8>,
        room: usize,
        turn: &mut Turn,
    ) -> Produce {
        match &conn.exchange {
            Some(exchange) => exchange.take(out, room, turn),
            None => Produce::Done,
        }
    }

    fn on_body_error(
        &mut self,
        _conn: &mut GatewayConn,
        _error: ChunkedError,
        _turn: &mut Turn,
    ) -> Vec<u8> {
        status(
            "400 Bad Request",
            r#"{"error":{"message":"malformed chunked body","type":"invalid_request_error"}}"#,
        )
        .bytes
    }

    fn on_deadline(&mut self, _conn: &mut GatewayConn, _turn: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn reject(&self, _why: Reject) -> Option<Vec<u8>> {
        Some(
            status(
                "400 Bad Request",
                r#"{"error":{"message":"malformed request","type":"invalid_request_error"}}"#,
            )
            .bytes,
        )
    }

    fn on_close(&mut self, conn: GatewayConn, _ending: Ending) {
        if let Some(exchange) = conn.exchange {
            exchange.abandon();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_target;

    #[test]
    fn targets_split_into_token_role_and_rest() {
        assert_eq!(
            split_target("/t0k/default/chat/completions"),
            Some(("t0k", "default", "/chat/completions"))
        );
        assert_eq!(split_target("/t0k/default"), Some(("t0k", "default", "")));
        assert_eq!(split_target("/t0k"), None);
        assert_eq!(split_target("chat"), None);
    }
}
