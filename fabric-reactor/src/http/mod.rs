//! The loopback HTTP/1.1 connection driver: every HTTP endpoint the core serves (the OpenAI
//! stream listener, the Relay collector, and later ones) is a [`Service`] driven by
//! [`Servers`], a reactor tenant. The driver owns the transport; a service owns only what
//! its requests mean.
//!
//! What the driver does for every service:
//! - accepts on loopback listeners into a fixed number of connection slots per server
//!   ([`Limits::capacity`]), shedding under pressure as the health listener does: a new
//!   connection that finds the untrusted share full closes the **oldest untrusted** one (a
//!   connection still sending its head, or idle between keep-alive requests), so
//!   [`Limits::reserved`] slots are always left for peers that passed the service's checks
//!   (trusted: their request was accepted); with every slot taken, the oldest untrusted
//!   (then the oldest idle) connection goes first; with every slot busy with a trusted
//!   request, a request whose body has **stalled** (nothing received for
//!   [`Limits::body_stall`] while the driver was reading it) is shed, taken from the peer
//!   address holding the most connections, longest stalled first (per-peer fairness: one
//!   peer holding slots with bodies that never come cannot lock others out). Only when
//!   every slot serves a request that is making progress (or paused by its service) is the
//!   newcomer closed unanswered;
//! - reads request heads with a size bound ([`MAX_HEAD_BYTES`], 64 headers) and a deadline
//!   ([`Limits::head_timeout`]); parses them with `httparse` into a [`Request`];
//! - reads bodies framed by `Content-Length` or chunked transfer coding, with the
//!   inactivity deadline the service chose, and pauses reading while the service applies
//!   backpressure ([`OnBody::Pause`], resumed by [`Servers::resume`]);
//! - answers a `HEAD` request with the head of the service's answer only (status line and
//!   headers, `content-length` as for `GET`), for every service;
//! - writes interim `100 Continue`, replies, and streamed answers ([`Service::produce`]);
//!   keeps a connection for the next request when the reply (or a streamed answer that
//!   ends with [`Produce::DoneKeepAlive`]) allows it, closing it after
//!   [`Limits::keep_alive_idle`] without one; drains a closing connection for
//!   [`Limits::linger`] so the peer reads the answer instead of a reset;
//! - bounds the bytes one connection reads per readiness event ([`Limits::read_budget`]) so
//!   one busy peer cannot starve the others.
//!
//! Tokens compared against a request's `Authorization` header use [`constant_time_eq`].

mod body;
mod chunked;
mod conn;
#[doc(hidden)]
pub mod fuzz;
mod head;
mod outbox;
#[cfg(test)]
mod produce_tests;
mod server;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use body::Framing;
pub use chunked::{Chunked, ChunkedError};
pub use head::{MAX_HEAD_BYTES, MAX_HEADERS, Request};
pub use outbox::{OUTBOX_CAPACITY, Outbox, Pushed};
pub use server::{ServerKey, Servers};

/// The interim answer to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// The bounds of one server's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once (at most [`Limits::MAX_CAPACITY`]).
    pub capacity: usize,
    /// Slots untrusted connections may never take (kept for accepted requests).
    pub reserved: usize,
    /// How long a connection may take to send a complete head. Default 10 s.
    pub head_timeout: Duration,
    /// How long a closing connection is drained after its answer. Default 2 s.
    pub linger: Duration,
    /// How long a kept-alive connection may wait for its next request. Default 5 s.
    pub keep_alive_idle: Duration,
    /// Bytes one connection reads per readiness event. Default 1 MiB.
    pub read_budget: usize,
    /// Output a streamed answer buffers before waiting for the socket. Default 256 KiB.
    pub stream_buffer: usize,
    /// How long an accepted request's body must have sent nothing before its connection
    /// may be shed for a newcomer when every slot is taken. Default 1 s.
    pub body_stall: Duration,
}

impl Limits {
    /// The most connections one server can hold.
    pub const MAX_CAPACITY: usize = 4095;

    /// `capacity` connections with `reserved` of them kept for trusted peers, and the
    /// default timeouts and budgets.
    pub const fn new(capacity: usize, reserved: usize) -> Limits {
        Limits {
            capacity,
            reserved,
            head_timeout: Duration::from_secs(10),
            linger: Duration::from_secs(2),
            keep_alive_idle: Duration::from_secs(5),
            read_budget: 1024 * 1024,
            stream_buffer: 256 * 1024,
            body_stall: Duration::from_secs(1),
        }
    }
}

/// A final answer: its bytes, and whether the connection may carry another request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The whole response (status line, headers, body).
    pub bytes: Vec<u8>,
    /// Keep the connection for the next request (when the request's body was read whole).
    pub keep_alive: bool,
}

impl Reply {
    /// An answer after which the connection closes.
    pub fn close(bytes: Vec<u8>) -> Reply {
        Reply {
            bytes,
            keep_alive: false,
        }
    }
}

/// What a service does with a request head.
#[derive(Debug)]
pub enum OnHead {
    /// Answer now; the connection stays untrusted.
    Reply(Reply),
    /// The request is accepted (the connection is trusted from now on): read its body.
    /// `continue_first` writes [`CONTINUE`] first; `idle` drops the connection when no body
    /// byte arrives for that long while the service waits for input (an inactivity
    /// deadline: a body may stream for as long as bytes keep coming; `None`: the service's
    /// own lifetime bounds it).
    Body {
        /// Write `100 Continue` before reading.
        continue_first: bool,
        /// Inactivity deadline of the body.
        idle: Option<Duration>,
    },
    /// The request is accepted (trusted): write this response head, then what
    /// [`Service::produce`] gives (the connection is kept after it only when `produce` ends
    /// with [`Produce::DoneKeepAlive`] and the request has no body). For a `HEAD` request
    /// only the head is written and the connection closes (the service's
    /// [`Service::on_close`] follows).
    Stream(Vec<u8>),
}

/// What a service does with the body bytes so far.
#[derive(Debug)]
pub enum OnBody {
    /// More input is needed (the driver reads and decodes, then calls again).
    Read,
    /// Stop reading until [`Servers::resume`]; at `until` (if any) [`Service::on_deadline`]
    /// is called.
    Pause(Option<Instant>),
    /// The final answer.
    Reply(Reply),
    /// The body was read whole: write this response head (it may be empty when
    /// [`Service::produce`] writes the head itself, once it knows it), then what
    /// [`Service::produce`] gives; the connection closes after it unless `produce` ends
    /// with [`Produce::DoneKeepAlive`] (a forwarding service answers only once its upstream
    /// answered). For a `HEAD` request as [`OnHead::Stream`].
    Stream(Vec<u8>),
}

/// What [`Service::produce`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Produce {
    /// Nothing more now: call again after [`Servers::resume`].
    Wait,
    /// The answer is complete: close once it is written.
    Done,
    /// The answer is complete and delimits itself (a `content-length` or a chunked body
    /// with its last chunk): once it is written the connection waits for the next request,
    /// exactly as after a keep-alive [`Reply`] (the per-connection state is kept, as there).
    /// The connection closes instead when the request's body was not read whole, the
    /// request was `HEAD`, or bytes the peer sent ahead while the answer streamed were more
    /// than [`MAX_HEAD_BYTES`] (they were not kept). A service answers this only when the
    /// request allows it (HTTP/1.1 without `Connection: close`, see
    /// [`Request::is_persistent`]).
    DoneKeepAlive,
}

/// Why the driver rejects a connection by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// The head is not HTTP/1.x, or its framing headers are invalid.
    Malformed,
    /// The head is over [`MAX_HEAD_BYTES`] or [`MAX_HEADERS`].
    TooLarge,
    /// No complete head within [`Limits::head_timeout`].
    HeadTimeout,
}

/// How a connection ended, for [`Service::on_close`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// After its last answer (or with nothing in progress).
    Done,
    /// The peer closed or reset the connection while a request body or streamed answer was
    /// in progress.
    PeerClosed,
    /// The driver dropped it: a deadline, an eviction, a write failure.
    Dropped,
    /// Its server was closed by the owner ([`Servers::close`]).
    ServerClosed,
}

/// Changes a service call made that other connections of the same server may act on.
#[derive(Debug, Default)]
pub struct Turn {
    wake: bool,
    through: Option<Arc<Outbox>>,
}

impl Turn {
    /// Drive the server's paused and streaming connections again (a queue changed).
    pub fn wake_server(&mut self) {
        self.wake = true;
    }

    /// The streamed answer this call begins ([`OnHead::Stream`], [`OnBody::Stream`]) is
    /// passed through `outbox`: once the driver has written the head (and any interim
    /// answer) it lets the worker write to the socket directly, until the socket does not
    /// take a write whole (see [`Outbox`]). The service still ends the answer from
    /// [`Service::produce`] ([`Outbox::take`]), and abandons the outbox when the
    /// connection closes ([`Service::on_close`], [`Outbox::abandon`]): the outbox then
    /// lets go of its handle on the socket, which closes.
    pub fn answer_through(&mut self, outbox: &Arc<Outbox>) {
        self.through = Some(Arc::clone(outbox));
    }
}

/// One HTTP endpoint's meaning. One value per server (listener); `Conn` is its state per
/// connection. Called on the reactor thread only.
pub trait Service: std::fmt::Debug + Send + 'static {
    /// Per-connection state (reset for each new connection).
    type Conn: std::fmt::Debug + Default + Send;

    /// A complete head arrived on a connection.
    fn on_head(&mut self, conn: &mut Self::Conn, request: &Request, turn: &mut Turn) -> OnHead;

    /// The decoded body so far is in `data` (the service consumes what it uses);
    /// `complete` once the framing says the body ended.
    fn on_body(
        &mut self,
        conn: &mut Self::Conn,
        data: &mut Vec<u8>,
        complete: bool,
        turn: &mut Turn,
    ) -> OnBody;

    /// More of a streamed answer: append up to about `room` bytes to `out` (what is left
    /// of [`Limits::stream_buffer`]).
    fn produce(
        &mut self,
        _conn: &mut Self::Conn,
        _out: &mut Vec<u8>,
        _room: usize,
        _turn: &mut Turn,
    ) -> Produce {
        Produce::Done
    }

    /// The request's chunked framing is broken: the answer (the connection closes).
    fn on_body_error(
        &mut self,
        conn: &mut Self::Conn,
        error: ChunkedError,
        turn: &mut Turn,
    ) -> Vec<u8>;

    /// The deadline of an [`OnBody::Pause`] passed.
    fn on_deadline(&mut self, conn: &mut Self::Conn, turn: &mut Turn) -> OnBody;

    /// What to answer a connection the driver rejects (`None`: close it unanswered).
    fn reject(&self, why: Reject) -> Option<Vec<u8>>;

    /// The connection is gone.
    fn on_close(&mut self, _conn: Self::Conn, _ending: Ending) {}
}

/// 32 random bytes, hex: a bearer token for a loopback server (never logged or recorded).
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| format!("no random token: {error}"))?;
    Ok(hex::encode(bytes))
}

/// Compares two byte strings in time independent of where they differ (bearer tokens).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &byte) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ byte);
    }
    diff == 0
}
