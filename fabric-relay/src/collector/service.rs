//! The collector as a loopback HTTP [`Service`]: what each endpoint's requests mean. The
//! transport (accept, heads, bodies, capacity, deadlines, keep-alive) is the reactor's HTTP
//! driver; this is the routing of records and the control endpoints' answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fabric_reactor::http::{
    ChunkedError, Limits, OnBody, OnHead, Produce, Reject, Reply, Request, Servers, Service, Turn,
};
use serde_json::Value;

use fabric_config::codes;

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

/// A connection's body buffer keeps at most this much spare capacity once drained.
const SPARE_CAPACITY: usize = 64 * 1024;

/// A partial record up to this size is buffered whatever the budget (one read's worth: the
/// driver has read it already); a longer one needs room in the budget.
const FREE_PARTIAL: usize = 64 * 1024;

/// One collector server: its token, routing state, backpressure timeout and the inactivity
/// deadline of publishers' bodies.
#[derive(Debug)]
pub(crate) struct CollectorService {
    pub(crate) token: String,
    pub(crate) hub: Arc<Hub>,
    pub(crate) put_timeout: Duration,
    pub(crate) atof_idle: Duration,
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
    /// record text), when its wait (or the wait for memory) ends, and whether the
    /// connection waits for the memory budget to read more of a partial record.
    Atof {
        pending: Option<(String, String)>,
        blocked_until: Option<Instant>,
        waiting_memory: bool,
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
    /// Bytes this connection holds (counted against the memory budget).
    held: usize,
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
                    waiting_memory: false,
                };
                // A Relay publisher may stream one body for a whole run: the deadline is
                // one of inactivity (no byte for `atof_idle`), never of the whole body.
                OnHead::Body {
                    continue_first,
                    idle: Some(self.atof_idle),
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
                let stats = self.hub.lock().snapshot();
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
            Mode::Atof { .. } => {
                let decision = self.atof(conn, data, complete, turn);
                if data.capacity() > SPARE_CAPACITY && data.len() < data.capacity() / 4 {
                    data.shrink_to(data.len().max(SPARE_CAPACITY));
                }
                self.account(conn, data.len());
                decision
            }
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
        let Mode::Atof {
            pending,
            blocked_until,
            waiting_memory,
        } = &mut conn.mode
        else {
            return OnBody::Read;
        };
        *blocked_until = None;
        if *waiting_memory {
            // The budget stayed full for the backpressure timeout: the request is refused.
            self.hub.lock().stats.requests_refused_memory += 1;
            self.account(conn, 0);
            let answer = Answer::code(
                503,
                "the collector's memory budget is full (memory_budget_bytes)",
                codes::COLLECTOR_MEMORY_FULL,
            );
            return OnBody::Reply(Reply::close(answer.bytes(false)));
        }
        if pending.take().is_some() {
            // Blocked by backpressure too long: the record is dropped.
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
        let mut routes = self.hub.lock();
        routes.hold(conn.held, 0);
        if let Some(request_id) = conn.attached {
            routes.detach(&request_id);
        }
    }
}

impl CollectorService {
    /// Counts what the connection holds now: `partial` bytes of its body buffer and the
    /// routed record waiting for room, if any.
    fn account(&self, conn: &mut CollectorConn, partial: usize) {
        let pending = match &conn.mode {
            Mode::Atof {
                pending: Some((_, text)),
                ..
            } => text.len(),
            _ => 0,
        };
        let now = partial + pending;
        if now != conn.held {
            self.hub.lock().hold(conn.held, now);
            conn.held = now;
        }
    }

    /// GET /v1/stream/{id}: attaches the connection to a registration's queue (`HEAD`:
    /// answers as `GET` would, without attaching).
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
        let attached = if request.method() == "HEAD" {
            self.hub.lock().can_attach(&request_id)
        } else {
            self.hub.lock().attach(&request_id)
        };
        match attached {
            Ok(()) if request.method() == "HEAD" => {
                OnHead::Reply(Reply::close(http::stream_head().to_vec()))
            }
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
                ..
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
                return self.read_more(conn, data);
            }
            if !data.is_empty() {
                let line = std::mem::take(data);
                self.emit(conn, &line);
                continue;
            }
            return OnBody::Reply(conn.answer(&Answer::empty(200)));
        }
    }

    /// More of a partial record may be read while it is short ([`FREE_PARTIAL`]) or the
    /// memory budget has room; otherwise the connection waits (backpressure) for at most
    /// the put timeout.
    fn read_more(&self, conn: &mut CollectorConn, data: &[u8]) -> OnBody {
        self.account(conn, data.len());
        let Mode::Atof {
            blocked_until,
            waiting_memory,
            ..
        } = &mut conn.mode
        else {
            return OnBody::Read;
        };
        if data.len() <= FREE_PARTIAL || self.hub.lock().may_buffer() {
            if *waiting_memory {
                *waiting_memory = false;
                *blocked_until = None;
            }
            return OnBody::Read;
        }
        self.hub.set_blocked();
        *waiting_memory = true;
        let until = *blocked_until.get_or_insert_with(|| Instant::now() + self.put_timeout);
        OnBody::Pause(Some(until))
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
