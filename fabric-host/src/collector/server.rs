//! Collector servers on the reactor: one loopback TCP listener per collector and its
//! connections (at most [`MAX_CONNECTIONS`] at once), driven by readiness events.
//!
//! Tokens: `TOKEN_BASE + slot * PER_SERVER + sub`, `sub` 0 for the listener and
//! `1..=MAX_CONNECTIONS` for connections; the range sits above the stream listeners'.

use std::io;
use std::sync::Arc;
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Registry, Token};
use serde_json::Value;

use super::MAX_RECORD_BYTES;
use super::control;
use super::http::{self, Answer, Endpoint, Framing, Request};
use super::hub::{AttachError, Hub, Pop, Put};
use crate::loopback;
use crate::slots::{SlotKey, Slots, TokenRange};
use crate::stream::Chunked;

/// First token owned by collector servers.
const TOKEN_BASE: usize = (1 << (usize::BITS - 2)) | (1 << (usize::BITS - 3));
const PER_SERVER: usize = 256;
/// Connections one collector serves at once; more are closed on accept.
pub(crate) const MAX_CONNECTIONS: usize = 128;
/// How long a connection may take to send its request head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an answered connection is drained before it is closed.
const LINGER: Duration = Duration::from_secs(2);
/// Bytes one connection may read per readiness event before others get a turn.
const READ_BUDGET: usize = 1024 * 1024;
/// Output a stream connection buffers before it waits for the socket.
const STREAM_BUFFER: usize = 256 * 1024;

/// Whether a token belongs to a collector server.
pub(crate) fn owns(token: Token) -> bool {
    TOKENS.owns(token)
}

const TOKENS: TokenRange = TokenRange::new(TOKEN_BASE, PER_SERVER);

/// Identifies one server (slot + generation).
pub(crate) type ServerKey = SlotKey;

/// What the reactor needs to serve one collector.
#[derive(Debug)]
pub(crate) struct Spec {
    pub listener: std::net::TcpListener,
    pub token: String,
    pub hub: Arc<Hub>,
    pub put_timeout: Duration,
}

/// Commands from the collector's owner and in-process consumers.
#[derive(Debug)]
pub(crate) enum Command {
    Open {
        spec: Box<Spec>,
        reply: SyncSender<io::Result<ServerKey>>,
    },
    /// Queues changed outside the reactor (a consumer made room, a deregistration):
    /// retry blocked publishers and write streams.
    Resume(ServerKey),
    /// Close the listener and every connection.
    Close(ServerKey),
}

/// A POST /v1/atof being read: a routed record waiting for queue room, if any
/// (request id, record text).
#[derive(Debug, Default)]
struct Atof {
    pending: Option<(String, String)>,
}

#[derive(Debug)]
enum Phase {
    Head,
    /// Reading a control endpoint's body.
    Control,
    Atof(Box<Atof>),
    /// Writing a registration's records (the request id).
    Stream(String),
    /// A final answer is queued or written; reading only drains.
    Closing,
}

#[derive(Debug)]
struct Body {
    framing: Framing,
    chunked: Chunked,
    done: bool,
}

impl Body {
    fn new(framing: Framing) -> Body {
        Body {
            framing,
            chunked: Chunked::default(),
            done: framing == Framing::Length(0),
        }
    }

    /// Moves body bytes from `input` to `out`; `Err` on malformed chunking.
    fn feed(&mut self, input: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<bool, ()> {
        if self.done || input.is_empty() {
            return Ok(false);
        }
        match &mut self.framing {
            Framing::Length(remaining) => {
                let take = (*remaining).min(input.len());
                out.extend(input.drain(..take));
                *remaining -= take;
                self.done = *remaining == 0;
                Ok(take > 0)
            }
            Framing::Chunked => {
                let used = self.chunked.decode(input, out).map_err(|_| ())?;
                input.drain(..used);
                self.done = self.chunked.is_done();
                Ok(used > 0)
            }
        }
    }
}

#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    phase: Phase,
    input: Vec<u8>,
    body: Option<Body>,
    /// Decoded body bytes not consumed yet (a control body, or ATOF lines).
    data: Vec<u8>,
    out: Vec<u8>,
    deadline: Option<Instant>,
    /// The registration whose stream this connection holds (detached when it goes).
    attached: Option<String>,
    write_shut: bool,
}

#[derive(Debug)]
struct Server {
    listener: TcpListener,
    token: String,
    hub: Arc<Hub>,
    put_timeout: Duration,
    conns: Vec<Option<Conn>>,
}

/// Every collector server of the reactor.
#[derive(Debug, Default)]
pub(crate) struct Servers {
    slots: Slots<Server>,
    /// Servers whose queues changed: their streams and blocked publishers are driven
    /// again on the next loop iteration.
    again: Vec<usize>,
}

impl Servers {
    /// Whether work is left for the next loop iteration without waiting.
    pub(crate) fn has_work(&self) -> bool {
        !self.again.is_empty()
    }

    /// The earliest connection deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .values()
            .flat_map(|server| server.conns.iter().flatten())
            .filter_map(|conn| conn.deadline)
            .min()
    }

    pub(crate) fn command(&mut self, registry: &Registry, command: Command) {
        match command {
            Command::Open { spec, reply } => {
                let _ = reply.send(self.open(registry, *spec));
            }
            Command::Resume(key) => {
                if self.slots.live(key) {
                    self.settle(registry, key.slot);
                }
            }
            Command::Close(key) => {
                if self.slots.live(key) {
                    self.remove(registry, key.slot);
                }
            }
        }
    }

    fn open(&mut self, registry: &Registry, spec: Spec) -> io::Result<ServerKey> {
        loopback::open(
            &mut self.slots,
            registry,
            TOKENS,
            spec.listener,
            |listener| Server {
                listener,
                token: spec.token,
                hub: spec.hub,
                put_timeout: spec.put_timeout,
                conns: (0..MAX_CONNECTIONS).map(|_| None).collect(),
            },
        )
    }

    fn remove(&mut self, registry: &Registry, slot: usize) {
        let Some(mut server) = self.slots.take(slot) else {
            return;
        };
        let streams = server
            .conns
            .iter_mut()
            .flatten()
            .map(|conn| &mut conn.stream);
        loopback::close(registry, &mut server.listener, streams);
        self.again.retain(|s| *s != slot);
    }

    /// Handles one readiness event.
    pub(crate) fn on_ready(&mut self, registry: &Registry, token: Token) {
        let (slot, sub) = TOKENS.split(token);
        if self.slots.get(slot).is_none() {
            return; // stale event of a closed server
        }
        if sub == 0 {
            self.accept(registry, slot);
        } else if sub <= MAX_CONNECTIONS {
            self.drive(registry, slot, sub - 1);
        }
    }

    /// Drives the servers whose queues changed.
    pub(crate) fn run_again(&mut self, registry: &Registry) {
        let mut slots = std::mem::take(&mut self.again);
        slots.sort_unstable();
        slots.dedup();
        for slot in slots {
            self.settle(registry, slot);
        }
    }

    /// Drives every stream and blocked publisher of a server once.
    fn settle(&mut self, registry: &Registry, slot: usize) {
        for index in 0..MAX_CONNECTIONS {
            let waiting = matches!(
                self.slots.get(slot),
                Some(server) if server.conns[index].as_ref().is_some_and(|c| matches!(
                    &c.phase,
                    Phase::Stream(_) | Phase::Atof(_)
                ))
            );
            if waiting {
                self.drive(registry, slot, index);
            }
        }
    }

    /// Expires header, backpressure and linger deadlines.
    pub(crate) fn fire(&mut self, registry: &Registry, now: Instant) {
        for slot in 0..self.slots.bound() {
            for index in 0..MAX_CONNECTIONS {
                let Some(server) = self.slots.get_mut(slot) else {
                    break;
                };
                let hub = Arc::clone(&server.hub);
                let Some(conn) = server.conns[index].as_mut() else {
                    continue;
                };
                if conn.deadline.is_none_or(|d| d > now) {
                    continue;
                }
                conn.deadline = None;
                match &mut conn.phase {
                    Phase::Atof(atof) if atof.pending.is_some() => {
                        // Blocked by backpressure too long: the record is dropped.
                        atof.pending = None;
                        hub.lock().stats.records_dropped_backpressure += 1;
                        self.drive(registry, slot, index);
                    }
                    _ => self.drop_conn(registry, slot, index),
                }
            }
        }
    }

    fn accept(&mut self, registry: &Registry, slot: usize) {
        loop {
            let Some(server) = self.slots.get_mut(slot) else {
                return;
            };
            let Some((index, stream)) =
                loopback::accept(&server.listener, &server.conns, registry, TOKENS, slot)
            else {
                return;
            };
            server.conns[index] = Some(Conn {
                stream,
                phase: Phase::Head,
                input: Vec::new(),
                body: None,
                data: Vec::new(),
                out: Vec::new(),
                deadline: Some(Instant::now() + HEADER_TIMEOUT),
                attached: None,
                write_shut: false,
            });
            self.drive(registry, slot, index);
        }
    }

    fn drop_conn(&mut self, registry: &Registry, slot: usize, index: usize) {
        let Some(server) = self.slots.get_mut(slot) else {
            return;
        };
        if let Some(mut conn) = server.conns[index].take() {
            let _ = registry.deregister(&mut conn.stream);
            if let Some(request_id) = conn.attached.take() {
                server.hub.lock().detach(&request_id);
            }
        }
    }

    fn drive(&mut self, registry: &Registry, slot: usize, index: usize) {
        let Some(server) = self.slots.get_mut(slot) else {
            return;
        };
        let Server {
            token,
            hub,
            put_timeout,
            conns,
            ..
        } = server;
        let Some(conn) = conns[index].as_mut() else {
            return;
        };
        let mut ctx = Ctx {
            token,
            hub,
            put_timeout: *put_timeout,
            changed: false,
        };
        let step = step(&mut ctx, conn);
        if ctx.changed {
            self.again.push(slot);
        }
        match step {
            Step::Wait => {}
            Step::Again => self.again.push(slot),
            Step::Drop => self.drop_conn(registry, slot, index),
        }
    }
}

/// What a connection step needs from its server.
struct Ctx<'a> {
    token: &'a str,
    hub: &'a Hub,
    put_timeout: Duration,
    /// A queue gained or lost records: other connections may proceed.
    changed: bool,
}

enum Step {
    Wait,
    Again,
    Drop,
}

fn respond(conn: &mut Conn, answer: &Answer) {
    conn.out.extend_from_slice(&answer.bytes());
    conn.phase = Phase::Closing;
    conn.deadline = Some(Instant::now() + LINGER);
}

/// Writes pending output; `Err` when the peer is gone.
fn flush(conn: &mut Conn) -> io::Result<()> {
    let closing = matches!(conn.phase, Phase::Closing);
    loopback::flush(
        &mut conn.stream,
        &mut conn.out,
        closing,
        &mut conn.write_shut,
    )
}

/// Reads what the socket has: `Ok(Some(true))` at EOF, `Ok(None)` when the budget is used.
fn read_some(conn: &mut Conn, budget: &mut usize) -> io::Result<Option<bool>> {
    let keep = matches!(conn.phase, Phase::Head | Phase::Control | Phase::Atof(_));
    loopback::read_some(&mut conn.stream, &mut conn.input, keep, budget)
}

/// What one pass over a connection's phase decided.
enum Progress {
    /// Keep going (the phase changed or made progress).
    Continue,
    /// Needs more bytes from the socket.
    Read,
    /// Waits for an event (socket room, queue room, a record).
    Wait,
}

fn step(ctx: &mut Ctx<'_>, conn: &mut Conn) -> Step {
    let mut budget = READ_BUDGET;
    loop {
        if flush(conn).is_err() {
            return Step::Drop;
        }
        let progress = match &mut conn.phase {
            Phase::Closing => Progress::Read,
            Phase::Head => head_step(ctx, conn),
            Phase::Control => control_step(ctx, conn),
            Phase::Atof(_) => atof_step(ctx, conn),
            Phase::Stream(_) => stream_step(ctx, conn),
        };
        match progress {
            Progress::Continue => continue,
            Progress::Wait => {
                if flush(conn).is_err() {
                    return Step::Drop;
                }
                return Step::Wait;
            }
            Progress::Read => {
                if flush(conn).is_err() {
                    return Step::Drop;
                }
            }
        }
        match read_some(conn, &mut budget) {
            Ok(Some(false)) => {}
            Ok(Some(true)) => {
                return match conn.phase {
                    Phase::Closing if !conn.out.is_empty() => Step::Wait,
                    _ => Step::Drop,
                };
            }
            Ok(None) => return Step::Again,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
            Err(_) => return Step::Drop,
        }
    }
}

fn head_step(ctx: &mut Ctx<'_>, conn: &mut Conn) -> Progress {
    let request = match http::parse_head(&conn.input, ctx.token) {
        Ok(Some(request)) => request,
        Ok(None) => return Progress::Read,
        Err(answer) => {
            respond(conn, &answer);
            return Progress::Continue;
        }
    };
    conn.input.drain(..request.head_len);
    conn.deadline = None;
    if request.endpoint != Endpoint::Healthz && !request.authorized {
        respond(conn, &Answer::unauthorized());
        return Progress::Continue;
    }
    conn.body = Some(Body::new(request.framing));
    let reads_body = matches!(request.endpoint, Endpoint::Register | Endpoint::Atof);
    if reads_body && request.expect_continue {
        conn.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    conn.phase = match request.endpoint {
        Endpoint::Atof => Phase::Atof(Box::default()),
        Endpoint::Register => Phase::Control,
        _ => {
            let answer = answer_now(ctx, conn, &request);
            if let Some(answer) = answer {
                respond(conn, &answer);
            }
            return Progress::Continue;
        }
    };
    Progress::Continue
}

/// Answers the endpoints without a body; `None` when the connection became a stream.
fn answer_now(ctx: &mut Ctx<'_>, conn: &mut Conn, request: &Request) -> Option<Answer> {
    match &request.endpoint {
        Endpoint::Healthz => Some(Answer::text(200, "ok")),
        Endpoint::Stats => {
            let stats = ctx.hub.lock().stats.clone();
            Some(Answer::json(200, &serde_json::to_value(stats).ok()?))
        }
        Endpoint::Stream(request_id) => {
            if let Some(answer) = control::check_registration_token(request) {
                return Some(answer);
            }
            if request.query("registration_token").is_some() {
                // Registration tokens belong to the Pi correlation mode, never granted.
                return Some(Answer::detail(404, "request_id is not registered"));
            }
            match ctx.hub.lock().attach(request_id) {
                Err(AttachError::Unknown) => {
                    Some(Answer::detail(404, "request_id is not registered"))
                }
                Err(AttachError::Attached) => Some(Answer::detail(
                    409,
                    "request_id already has an attached stream",
                )),
                Ok(()) => {
                    conn.out.extend_from_slice(http::stream_head());
                    conn.attached = Some(request_id.clone());
                    conn.phase = Phase::Stream(request_id.clone());
                    None
                }
            }
        }
        Endpoint::Deregister(request_id) => {
            let (answer, changed) = control::deregister(ctx.hub, request, request_id);
            ctx.changed |= changed;
            Some(answer)
        }
        Endpoint::Register | Endpoint::Atof => None,
    }
}

/// Moves body bytes from the socket input to `data`; `Err` answers a malformed body.
fn feed(conn: &mut Conn) -> Result<bool, Answer> {
    let Some(body) = conn.body.as_mut() else {
        return Ok(false);
    };
    body.feed(&mut conn.input, &mut conn.data)
        .map_err(|()| Answer::text(400, "Bad Request"))
}

fn body_done(conn: &Conn) -> bool {
    conn.body.as_ref().is_none_or(|b| b.done)
}

fn control_step(ctx: &mut Ctx<'_>, conn: &mut Conn) -> Progress {
    if let Err(answer) = feed(conn) {
        respond(conn, &answer);
        return Progress::Continue;
    }
    if conn.data.len() > http::MAX_CONTROL_BODY {
        respond(conn, &Answer::detail(413, "Request body is too large"));
        return Progress::Continue;
    }
    if !body_done(conn) {
        return Progress::Read;
    }
    let body = std::mem::take(&mut conn.data);
    let answer = control::register(ctx.hub, &body);
    respond(conn, &answer);
    Progress::Continue
}

/// POST /v1/atof: routes every complete line; a record that finds its queue full holds the
/// connection (no more reading) until room appears or the put timeout drops it.
fn atof_step(ctx: &mut Ctx<'_>, conn: &mut Conn) -> Progress {
    loop {
        let Phase::Atof(atof) = &mut conn.phase else {
            return Progress::Continue;
        };
        if let Some((request_id, text)) = &atof.pending {
            let put = ctx.hub.lock().put(request_id, text);
            match put {
                Put::Queued => {
                    atof.pending = None;
                    conn.deadline = None;
                    ctx.changed = true;
                    ctx.hub.notify();
                }
                Put::Gone => {
                    atof.pending = None;
                    conn.deadline = None;
                }
                Put::Full => {
                    ctx.hub.set_blocked();
                    if conn.deadline.is_none() {
                        conn.deadline = Some(Instant::now() + ctx.put_timeout);
                    }
                    return Progress::Wait;
                }
            }
        }
        if let Some(newline) = conn.data.iter().position(|&b| b == b'\n') {
            if newline > MAX_RECORD_BYTES {
                return too_large(ctx, conn);
            }
            let line: Vec<u8> = conn.data.drain(..=newline).collect();
            emit(ctx, conn, &line[..newline]);
            continue;
        }
        if conn.data.len() > MAX_RECORD_BYTES {
            return too_large(ctx, conn);
        }
        if body_done(conn) {
            if !conn.data.is_empty() {
                let line = std::mem::take(&mut conn.data);
                emit(ctx, conn, &line);
                continue;
            }
            respond(conn, &Answer::empty(200));
            return Progress::Continue;
        }
        match feed(conn) {
            Err(answer) => {
                respond(conn, &answer);
                return Progress::Continue;
            }
            Ok(true) => continue,
            Ok(false) => return Progress::Read,
        }
    }
}

fn too_large(ctx: &mut Ctx<'_>, conn: &mut Conn) -> Progress {
    ctx.hub.lock().stats.records_too_large += 1;
    conn.data.clear();
    respond(conn, &Answer::detail(413, "ATOF record is too large"));
    Progress::Continue
}

/// Routes one line: blank lines are skipped, lines that are not a JSON object are counted
/// and dropped, a routed record is queued (or left pending when its queue is full).
fn emit(ctx: &mut Ctx<'_>, conn: &mut Conn, line: &[u8]) {
    let stripped = http::strip(line);
    if stripped.is_empty() {
        return;
    }
    let mut routes = ctx.hub.lock();
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
    if let Phase::Atof(atof) = &mut conn.phase {
        atof.pending = Some((request_id, text));
    }
}

/// GET /v1/stream/{id}: writes queued records as NDJSON chunks, ends with the last chunk
/// when the registration is deregistered and delivered; a peer's EOF detaches.
fn stream_step(ctx: &mut Ctx<'_>, conn: &mut Conn) -> Progress {
    let Phase::Stream(request_id) = &conn.phase else {
        return Progress::Continue;
    };
    let request_id = request_id.clone();
    while conn.out.len() < STREAM_BUFFER {
        let popped = ctx.hub.lock().pop(&request_id);
        match popped {
            Pop::Record(record) => {
                http::chunk(&record, &mut conn.out);
                ctx.changed = true;
            }
            Pop::Empty => break,
            Pop::End => {
                conn.out.extend_from_slice(http::LAST_CHUNK);
                if let Some(id) = conn.attached.take() {
                    ctx.hub.lock().detach(&id);
                }
                conn.phase = Phase::Closing;
                conn.deadline = Some(Instant::now() + LINGER);
                return Progress::Continue;
            }
        }
    }
    // Reads only to notice the peer going away.
    Progress::Read
}
