//! Stream listeners on the reactor: one loopback TCP listener per streaming invocation and
//! its (at most eight) connections, driven by readiness events. No thread per stream.
//!
//! Tokens: `TOKEN_BASE + slot * 16 + sub`, `sub` 0 for the listener and 1..=8 for
//! connections (host tokens stay far below `TOKEN_BASE`).

use std::io;
use std::sync::Arc;
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Registry, Token};

use super::http::{self, Chunked, Fault, Head, Status};
use super::records::{Accepted, Identity, Records};
use super::shared::Shared;
use crate::loopback;
use crate::slots::{SlotKey, Slots, TokenRange};

/// First token owned by stream listeners.
const TOKEN_BASE: usize = 1 << (usize::BITS - 2);
const PER_LISTENER: usize = 16;
/// Connections one listener serves at once; more are closed on accept.
pub(crate) const MAX_CONNECTIONS: usize = 8;
/// How long a connection may take to send its request head.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a rejected connection is drained before it is closed (so the client reads the
/// answer instead of a reset).
const LINGER: Duration = Duration::from_secs(2);
/// Bytes one connection may read per readiness event before others get a turn.
const READ_BUDGET: usize = 1024 * 1024;

/// Whether a token belongs to a stream listener.
pub(crate) fn owns(token: Token) -> bool {
    TOKENS.owns(token)
}

const TOKENS: TokenRange = TokenRange::new(TOKEN_BASE, PER_LISTENER);

/// Identifies one listener (slot + generation).
pub(crate) type ListenerKey = SlotKey;

/// What the reactor needs to serve one stream.
#[derive(Debug)]
pub(crate) struct Spec {
    pub listener: std::net::TcpListener,
    pub token: String,
    pub identity: Identity,
    pub shared: Arc<Shared>,
}

/// Commands from consumers.
#[derive(Debug)]
pub(crate) enum Command {
    Open {
        spec: Box<Spec>,
        reply: SyncSender<io::Result<ListenerKey>>,
    },
    /// The consumer made room in a full queue: read again.
    Resume(ListenerKey),
    /// Close the listener and every connection.
    Close(ListenerKey),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Body,
    /// A final answer is queued or written; reading only drains.
    Closing,
}

#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    phase: Phase,
    input: Vec<u8>,
    body: Vec<u8>,
    chunked: Chunked,
    out: Vec<u8>,
    deadline: Option<Instant>,
    claimed: bool,
    write_shut: bool,
}

#[derive(Debug)]
struct Entry {
    listener: TcpListener,
    token: String,
    records: Records,
    shared: Arc<Shared>,
    conns: Vec<Option<Conn>>,
}

/// Every open stream listener of the reactor.
#[derive(Debug, Default)]
pub(crate) struct Listeners {
    slots: Slots<Entry>,
    /// Connections that hit their read budget and must be driven again without an event.
    again: Vec<(usize, usize)>,
}

impl Listeners {
    /// Whether work is left for the next loop iteration without waiting.
    pub(crate) fn has_work(&self) -> bool {
        !self.again.is_empty()
    }

    /// The earliest connection deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .values()
            .flat_map(|entry| entry.conns.iter().flatten())
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
                    for index in 0..MAX_CONNECTIONS {
                        self.drive(registry, key.slot, index);
                    }
                }
            }
            Command::Close(key) => {
                if self.slots.live(key) {
                    self.remove(registry, key.slot);
                }
            }
        }
    }

    fn open(&mut self, registry: &Registry, spec: Spec) -> io::Result<ListenerKey> {
        loopback::open(
            &mut self.slots,
            registry,
            TOKENS,
            spec.listener,
            |listener| Entry {
                listener,
                token: spec.token,
                records: Records::new(spec.identity),
                shared: spec.shared,
                conns: (0..MAX_CONNECTIONS).map(|_| None).collect(),
            },
        )
    }

    fn remove(&mut self, registry: &Registry, slot: usize) {
        let Some(mut entry) = self.slots.take(slot) else {
            return;
        };
        let streams = entry
            .conns
            .iter_mut()
            .flatten()
            .map(|conn| &mut conn.stream);
        loopback::close(registry, &mut entry.listener, streams);
        self.again.retain(|(s, _)| *s != slot);
    }

    /// Handles one readiness event.
    pub(crate) fn on_ready(&mut self, registry: &Registry, token: Token) {
        let (slot, sub) = TOKENS.split(token);
        if self.slots.get(slot).is_none() {
            return; // stale event of a closed listener
        }
        if sub == 0 {
            self.accept(registry, slot);
        } else if sub <= MAX_CONNECTIONS {
            self.drive(registry, slot, sub - 1);
        }
    }

    /// Drives the connections that ran out of read budget last time.
    pub(crate) fn run_again(&mut self, registry: &Registry) {
        for (slot, index) in std::mem::take(&mut self.again) {
            self.drive(registry, slot, index);
        }
    }

    /// Expires header and linger deadlines.
    pub(crate) fn fire(&mut self, registry: &Registry, now: Instant) {
        for slot in 0..self.slots.bound() {
            for index in 0..MAX_CONNECTIONS {
                let Some(entry) = self.slots.get_mut(slot) else {
                    break;
                };
                let Some(conn) = entry.conns[index].as_mut() else {
                    continue;
                };
                if conn.deadline.is_none_or(|d| d > now) {
                    continue;
                }
                match conn.phase {
                    Phase::Head => {
                        respond(conn, http::BAD_REQUEST);
                        conn.deadline = Some(now + LINGER);
                        self.drive(registry, slot, index);
                    }
                    _ => self.drop_conn(registry, slot, index),
                }
            }
        }
    }

    fn accept(&mut self, registry: &Registry, slot: usize) {
        loop {
            let Some(entry) = self.slots.get_mut(slot) else {
                return;
            };
            let Some((index, stream)) =
                loopback::accept(&entry.listener, &entry.conns, registry, TOKENS, slot)
            else {
                return;
            };
            entry.conns[index] = Some(Conn {
                stream,
                phase: Phase::Head,
                input: Vec::new(),
                body: Vec::new(),
                chunked: Chunked::default(),
                out: Vec::new(),
                deadline: Some(Instant::now() + HEADER_TIMEOUT),
                claimed: false,
                write_shut: false,
            });
            self.drive(registry, slot, index);
        }
    }

    fn drop_conn(&mut self, registry: &Registry, slot: usize, index: usize) {
        let Some(entry) = self.slots.get_mut(slot) else {
            return;
        };
        if let Some(mut conn) = entry.conns[index].take() {
            let _ = registry.deregister(&mut conn.stream);
            if conn.claimed {
                let mut state = entry.shared.lock();
                if !state.completed {
                    state.fail("OpenAI stream connection closed before completion", None);
                    state.completed = true;
                }
                drop(state);
                entry.shared.notify();
            }
        }
    }

    /// Does everything a connection can do now: write pending output, read, parse, queue.
    fn drive(&mut self, registry: &Registry, slot: usize, index: usize) {
        let Some(entry) = self.slots.get_mut(slot) else {
            return;
        };
        let Entry {
            token,
            records,
            shared,
            conns,
            ..
        } = entry;
        let Some(conn) = conns[index].as_mut() else {
            return;
        };
        let mut parts = Parts {
            token,
            records,
            shared,
        };
        match step(&mut parts, conn) {
            Step::Wait => {}
            Step::Again => self.again.push((slot, index)),
            Step::Drop => self.drop_conn(registry, slot, index),
        }
    }
}

/// The parts of an entry a connection step needs (the connection is borrowed separately).
struct Parts<'a> {
    token: &'a str,
    records: &'a mut Records,
    shared: &'a Shared,
}

enum Step {
    /// Wait for the next readiness event or deadline.
    Wait,
    /// Read budget used up: drive again on the next loop iteration.
    Again,
    /// The connection is finished: close it.
    Drop,
}

fn respond(conn: &mut Conn, status: Status) {
    conn.out.extend_from_slice(&status.response());
    if status.0 != 100 {
        conn.phase = Phase::Closing;
        conn.deadline = Some(Instant::now() + LINGER);
    }
}

/// Writes pending output; `Err` when the peer is gone.
fn flush(conn: &mut Conn) -> io::Result<()> {
    let closing = conn.phase == Phase::Closing;
    loopback::flush(
        &mut conn.stream,
        &mut conn.out,
        closing,
        &mut conn.write_shut,
    )
}

/// Reads what the socket has (up to the budget); `Ok(true)` at EOF.
fn read_some(conn: &mut Conn, budget: &mut usize) -> io::Result<Option<bool>> {
    let keep = conn.phase != Phase::Closing;
    loopback::read_some(&mut conn.stream, &mut conn.input, keep, budget)
}

fn step(parts: &mut Parts<'_>, conn: &mut Conn) -> Step {
    let mut budget = READ_BUDGET;
    loop {
        if flush(conn).is_err() {
            return Step::Drop;
        }
        match conn.phase {
            Phase::Closing => match read_some(conn, &mut budget) {
                Ok(Some(true)) => {
                    return if conn.out.is_empty() {
                        Step::Drop
                    } else {
                        Step::Wait
                    };
                }
                Ok(Some(false)) => continue,
                Ok(None) => return Step::Again,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
                Err(_) => return Step::Drop,
            },
            Phase::Head => match http::check_head(&conn.input, parts.token) {
                Ok(Head::Accepted(end)) => {
                    let mut state = parts.shared.lock();
                    if state.claimed {
                        drop(state);
                        respond(conn, http::CONFLICT);
                        continue;
                    }
                    state.claimed = true;
                    drop(state);
                    conn.claimed = true;
                    conn.input.drain(..end);
                    conn.phase = Phase::Body;
                    conn.deadline = None;
                    respond(conn, http::CONTINUE);
                    continue;
                }
                Ok(Head::Partial) => {}
                Err(fault) => {
                    respond(conn, fault.status);
                    continue;
                }
            },
            Phase::Body => match body_step(parts, conn) {
                Ok(BodyStep::Paused) => return Step::Wait,
                Ok(BodyStep::Finished) => {
                    respond(conn, http::OK);
                    complete(parts.shared, None);
                    continue;
                }
                Ok(BodyStep::NeedInput) => {}
                Err(fault) => {
                    let status = fault.status;
                    complete(parts.shared, Some(fault));
                    respond(conn, status);
                    continue;
                }
            },
        }
        // Head or body need more bytes.
        match read_some(conn, &mut budget) {
            Ok(Some(false)) => {}
            Ok(Some(true)) => {
                if conn.claimed && conn.phase == Phase::Body {
                    let mut state = parts.shared.lock();
                    state.connection_closed = true;
                    state.fail("OpenAI stream connection closed before completion", None);
                    state.completed = true;
                    drop(state);
                    parts.shared.notify();
                }
                conn.claimed = false;
                return Step::Drop;
            }
            Ok(None) => return Step::Again,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
            Err(_) => {
                if conn.claimed && conn.phase == Phase::Body {
                    let mut state = parts.shared.lock();
                    state.connection_closed = true;
                    drop(state);
                }
                return Step::Drop;
            }
        }
    }
}

/// Marks the claimed connection finished, with its fault if any.
fn complete(shared: &Shared, fault: Option<Fault>) {
    let mut state = shared.lock();
    if let Some(fault) = fault {
        state.fail(fault.message, Some(fault.status.0));
    }
    state.completed = true;
    drop(state);
    shared.notify();
}

enum BodyStep {
    /// The queue is full: stop reading until the consumer makes room.
    Paused,
    /// Decoded everything available; more input is needed.
    NeedInput,
    /// The last chunk arrived after a valid end record.
    Finished,
}

/// Checks and queues every complete record, then decodes more of the body.
fn body_step(parts: &mut Parts<'_>, conn: &mut Conn) -> Result<BodyStep, Fault> {
    let mut queued = false;
    let result = (|| loop {
        while let Some(line) = parts.records.next_line(&mut conn.body)? {
            match parts.records.check(&line)? {
                None => {}
                Some(Accepted::Chunk(json)) => {
                    let mut state = parts.shared.lock();
                    if !state.discard {
                        state.queued_bytes += json.len();
                        state.queue.push_back(json);
                        queued = true;
                        if state.full() {
                            state.paused = true;
                            return Ok(BodyStep::Paused);
                        }
                    }
                }
                Some(Accepted::End) => {
                    parts.shared.lock().ended = true;
                    queued = true;
                }
            }
        }
        if conn.chunked.is_done() {
            if !conn.body.trim_ascii().is_empty() {
                // A last record without its newline.
                conn.body.push(b'\n');
                continue;
            }
            if !parts.records.ended() {
                return Err(Fault::bad("OpenAI stream ended without an end record"));
            }
            return Ok(BodyStep::Finished);
        }
        if conn.input.is_empty() {
            return Ok(BodyStep::NeedInput);
        }
        let used = conn.chunked.decode(&conn.input, &mut conn.body)?;
        conn.input.drain(..used);
        if used == 0 {
            return Ok(BodyStep::NeedInput);
        }
    })();
    if queued {
        parts.shared.notify();
    }
    result
}
