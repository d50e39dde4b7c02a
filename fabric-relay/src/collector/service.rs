//! The collector as a loopback HTTP [`Service`]: what each endpoint's requests mean. The
//! transport (accept, heads, bodies, capacity, deadlines, keep-alive) is the reactor's HTTP
//! driver; this is the routing of records and the control endpoints' answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fabric_reactor::http::{
    ChunkedError, Limits, OnBody, OnHead, Produce, Reject, Reply, Request, Servers, Service, Turn,
};
use serde_json::Value;

use super::MAX_RECORD_BYTES;
use super::control;
use super::http::{self, Answer, Endpoint};
use super::hub::{AttachError, Hub, Pop, Put};

/// The collector's servers, one reactor tenant.
pub(crate) type Collectors = Servers<CollectorService>;

/// Connections one collector serves at once, and how many of them only requests that
/// passed the bearer check may take.
pub(crate) const LIMITS: Limits = Limits::new(128, 32);

/// How long a control request's body may pause (a head without its body is dropped then).
const BODY_IDLE: Duration = Duration::from_secs(10);

/// One collector server: its token, routing state and backpressure timeout.
#[derive(Debug)]
pub(crate) struct CollectorService {
    pub(crate) token: String,
    pub(crate) hub: Arc<Hub>,
    pub(crate) put_timeout: Duration,
}

/// What a connection is doing.
#[derive(Debug, Default)]
pub(crate) enum Mode {
    /// Between requests.
    #[default]
    Idle,
    /// Reading a control endpoint's body.
    Control,
    /// A POST /v1/atof: a routed record waiting for queue room, if any (request id,
    /// record text), and when it started waiting.
    Atof {
        pending: Option<(String, String)>,
        blocked_until: Option<Instant>,
    },
    /// Writing a registration's records (the request id).
    Stream(String),
}

/// Per-connection state.
#[derive(Debug, Default)]
pub(crate) struct CollectorConn {
    mode: Mode,
    /// The registration whose stream this connection holds (detached when it goes).
    attached: Option<String>,
    /// The client asked to keep the connection (`Connection: keep-alive`).
    keep_alive: bool,
}

impl CollectorConn {
    fn answer(&self, answer: &Answer) -> Reply {
        Reply {
            bytes: answer.bytes(self.keep_alive),
            keep_alive: self.keep_alive,
        }
    }
}

impl Service for CollectorService {
    type Conn = CollectorConn;

    fn on_head(&mut self, conn: &mut CollectorConn, request: &Request, turn: &mut Turn) -> OnHead {
        conn.mode = Mode::Idle;
        let endpoint = match http::route(request.method(), request.path()) {
            Ok(endpoint) => endpoint,
            Err(answer) => return OnHead::Reply(Reply::close(answer.bytes(false))),
        };
        // A body the endpoint does not read is never parsed as the next request.
        let Some(framing) = request.framing() else {
            return OnHead::Reply(Reply::close(Answer::bad_request().bytes(false)));
        };
        let reads_body = matches!(endpoint, Endpoint::Register | Endpoint::Atof);
        conn.keep_alive = request.asks_keep_alive()
            && (reads_body || framing == fabric_reactor::http::Framing::Length(0));
        let authorized = request
            .header("authorization")
            .is_some_and(|value| http::bearer_matches(&value, &self.token));
        if endpoint != Endpoint::Healthz && !authorized {
            return OnHead::Reply(conn.answer(&Answer::unauthorized()));
        }
        let continue_first = reads_body && request.expects_continue();
        match endpoint {
            Endpoint::Atof => {
                conn.mode = Mode::Atof {
                    pending: None,
                    blocked_until: None,
                };
                // A Relay publisher may stream one body for a whole run: no idle deadline.
                OnHead::Body {
                    continue_first,
                    idle: None,
                }
            }
            Endpoint::Register => {
                conn.mode = Mode::Control;
                OnHead::Body {
                    continue_first,
                    idle: Some(BODY_IDLE),
                }
            }
            Endpoint::Healthz => OnHead::Reply(conn.answer(&Answer::text(200, "ok"))),
            Endpoint::Stats => {
                let stats = self.hub.lock().stats.clone();
                let value = serde_json::to_value(stats).unwrap_or(Value::Null);
                OnHead::Reply(conn.answer(&Answer::json(200, &value)))
            }
            Endpoint::Deregister(request_id) => {
                let query = http::parse_query(request.query());
                let (answer, changed) = control::deregister(&self.hub, &query, &request_id);
                if changed {
                    turn.wake_server();
                }
                OnHead::Reply(conn.answer(&answer))
            }
            Endpoint::Stream(request_id) => self.attach(conn, request, request_id),
        }
    }

    fn on_body(
        &mut self,
        conn: &mut CollectorConn,
        data: &mut Vec<u8>,
        complete: bool,
        turn: &mut Turn,
    ) -> OnBody {
        match conn.mode {
            Mode::Control => {
                if data.len() > http::MAX_CONTROL_BODY {
                    let answer = Answer::detail(413, "Request body is too large");
                    return OnBody::Reply(Reply::close(answer.bytes(false)));
                }
                if !complete {
                    return OnBody::Read;
                }
                let answer = control::register(&self.hub, data);
                data.clear();
                OnBody::Reply(conn.answer(&answer))
            }
            Mode::Atof { .. } => self.atof(conn, data, complete, turn),
            Mode::Idle | Mode::Stream(_) => OnBody::Reply(Reply::close(Vec::new())),
        }
    }

    fn produce(
        &mut self,
        conn: &mut CollectorConn,
        out: &mut Vec<u8>,
        room: usize,
        turn: &mut Turn,
    ) -> Produce {
        let Mode::Stream(request_id) = &conn.mode else {
            return Produce::Done;
        };
        let limit = out.len() + room;
        while out.len() < limit {
            let popped = self.hub.lock().pop(request_id);
            match popped {
                Pop::Record(record) => {
                    http::chunk(&record, out);
                    turn.wake_server();
                }
                Pop::Empty => return Produce::Wait,
                Pop::End => {
                    out.extend_from_slice(http::LAST_CHUNK);
                    if let Some(id) = conn.attached.take() {
                        self.hub.lock().detach(&id);
                    }
                    return Produce::Done;
                }
            }
        }
        Produce::Wait
    }

    fn on_deadline(&mut self, conn: &mut CollectorConn, _turn: &mut Turn) -> OnBody {
        if let Mode::Atof {
            pending,
            blocked_until,
        } = &mut conn.mode
            && pending.take().is_some()
        {
            // Blocked by backpressure too long: the record is dropped.
            *blocked_until = None;
            self.hub.lock().stats.records_dropped_backpressure += 1;
        }
        OnBody::Read
    }

    fn on_body_error(
        &mut self,
        _conn: &mut CollectorConn,
        _error: ChunkedError,
        _turn: &mut Turn,
    ) -> Vec<u8> {
        Answer::bad_request().bytes(false)
    }

    fn reject(&self, why: Reject) -> Option<Vec<u8>> {
        match why {
            Reject::Malformed | Reject::TooLarge => Some(Answer::bad_request().bytes(false)),
            // A head that never completes is closed unanswered (as upstream's server does).
            Reject::HeadTimeout => None,
        }
    }

    fn on_close(&mut self, conn: CollectorConn, _ending: fabric_reactor::http::Ending) {
        if let Some(request_id) = conn.attached {
            self.hub.lock().detach(&request_id);
        }
    }
}

impl CollectorService {
    /// GET /v1/stream/{id}: attaches the connection to a registration's queue.
    fn attach(&self, conn: &mut CollectorConn, request: &Request, request_id: String) -> OnHead {
        let query = http::parse_query(request.query());
        if let Some(answer) = control::check_registration_token(&query) {
            return OnHead::Reply(conn.answer(&answer));
        }
        if http::query(&query, "registration_token").is_some() {
            // Registration tokens belong to the Pi correlation mode, never granted.
            let answer = Answer::detail(404, "request_id is not registered");
            return OnHead::Reply(conn.answer(&answer));
        }
        match self.hub.lock().attach(&request_id) {
            Err(AttachError::Unknown) => {
                let answer = Answer::detail(404, "request_id is not registered");
                OnHead::Reply(conn.answer(&answer))
            }
            Err(AttachError::Attached) => {
                let answer = Answer::detail(409, "request_id already has an attached stream");
                OnHead::Reply(conn.answer(&answer))
            }
            Ok(()) => {
                conn.attached = Some(request_id.clone());
                conn.mode = Mode::Stream(request_id);
                OnHead::Stream(http::stream_head().to_vec())
            }
        }
    }

    /// POST /v1/atof: routes every complete line; a record that finds its queue full holds
    /// the connection (no more reading) until room appears or the put timeout drops it.
    fn atof(
        &self,
        conn: &mut CollectorConn,
        data: &mut Vec<u8>,
        complete: bool,
        turn: &mut Turn,
    ) -> OnBody {
        loop {
            let Mode::Atof {
                pending,
                blocked_until,
            } = &mut conn.mode
            else {
                return OnBody::Read;
            };
            if let Some((request_id, text)) = pending {
                let put = self.hub.lock().put(request_id, text);
                match put {
                    Put::Queued => {
                        *pending = None;
                        *blocked_until = None;
                        turn.wake_server();
                        self.hub.notify();
                    }
                    Put::Gone => {
                        *pending = None;
                        *blocked_until = None;
                    }
                    Put::Full => {
                        self.hub.set_blocked();
                        let until =
                            *blocked_until.get_or_insert_with(|| Instant::now() + self.put_timeout);
                        return OnBody::Pause(Some(until));
                    }
                }
            }
            if let Some(newline) = data.iter().position(|&b| b == b'\n') {
                if newline > MAX_RECORD_BYTES {
                    return self.too_large(data);
                }
                let line: Vec<u8> = data.drain(..=newline).collect();
                self.emit(conn, &line[..newline]);
                continue;
            }
            if data.len() > MAX_RECORD_BYTES {
                return self.too_large(data);
            }
            if !complete {
                return OnBody::Read;
            }
            if !data.is_empty() {
                let line = std::mem::take(data);
                self.emit(conn, &line);
                continue;
            }
            return OnBody::Reply(conn.answer(&Answer::empty(200)));
        }
    }

    fn too_large(&self, data: &mut Vec<u8>) -> OnBody {
        self.hub.lock().stats.records_too_large += 1;
        data.clear();
        let answer = Answer::detail(413, "ATOF record is too large");
        OnBody::Reply(Reply::close(answer.bytes(false)))
    }

    /// Routes one line: blank lines are skipped, lines that are not a JSON object are
    /// counted and dropped, a routed record is left pending for [`CollectorService::atof`].
    fn emit(&self, conn: &mut CollectorConn, line: &[u8]) {
        let stripped = line.trim_ascii();
        if stripped.is_empty() {
            return;
        }
        let mut routes = self.hub.lock();
        routes.stats.records_received += 1;
        let record = match serde_json::from_slice::<Value>(stripped) {
            Ok(record @ Value::Object(_)) => record,
            _ => {
                routes.stats.records_invalid += 1;
                return;
            }
        };
        let Some(request_id) = routes.route(&record) else {
            return;
        };
        drop(routes);
        let text = String::from_utf8_lossy(stripped).into_owned();
        if let Mode::Atof { pending, .. } = &mut conn.mode {
            *pending = Some((request_id, text));
        }
    }
}
