//! The listener's accept loop: one mio poll thread that accepts every connection at once,
//! reads first lines without blocking, and hands only authenticated requests to worker
//! threads.
//!
//! Bounds (the denial-of-service defence, see `docs/health.md`):
//! - at most [`MAX_PENDING`] connections may wait for their first line; when one more
//!   arrives the oldest waiting one is closed. A real client writes its request right after
//!   connecting, so it is never the oldest for long, while idle connections age out first;
//! - a connection that has not sent a full first line within [`REQUEST_READ_TIMEOUT`] is
//!   closed;
//! - worker threads ([`MAX_CONNECTIONS`]) serve authenticated requests only, so capacity is
//!   reserved for peers that proved the secret; an unauthenticated line is closed on the
//!   poll thread without a byte.

use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read};
use std::net::TcpListener;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use crate::conn::Stream;
use crate::listener::{
    MAX_CONNECTIONS, MAX_PENDING, REQUEST_READ_TIMEOUT, Shared, authenticate, serve_authenticated,
};
use crate::wire;

pub(crate) const LISTENER: Token = Token(0);
pub(crate) const WAKE: Token = Token(1);
const FIRST_CONN_TOKEN: usize = 2;
/// Pause before retrying `accept` after an error such as EMFILE.
const ACCEPT_RETRY: Duration = Duration::from_millis(5);
/// Connections accepted per turn before pending first lines are read again, so a burst of
/// new connections cannot push a real client out before its line is read.
const ACCEPT_BURST: usize = 32;

/// A bound listening socket of either transport (non-blocking).
#[derive(Debug)]
pub(crate) enum Bound {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Bound {
    fn accept(&self) -> std::io::Result<Stream> {
        match self {
            Bound::Tcp(l) => l.accept().map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Stream::Tcp(s)
            }),
            Bound::Unix(l) => l.accept().map(|(s, _)| Stream::Unix(s)),
        }
    }

    fn raw_fd(&self) -> RawFd {
        match self {
            Bound::Tcp(l) => l.as_raw_fd(),
            Bound::Unix(l) => l.as_raw_fd(),
        }
    }
}

/// A connection that has not yet sent its request line.
struct Pending {
    stream: Stream,
    buf: Vec<u8>,
    accepted: Instant,
}

struct Loop<'a> {
    poll: Poll,
    bound: &'a Bound,
    shared: &'a Arc<Shared>,
    pending: HashMap<usize, Pending>,
    /// Tokens in accept order (entries for connections already gone are skipped).
    order: VecDeque<usize>,
    next_token: usize,
    /// `Some(pause)`: accept again after `pause` (zero after a burst, longer after errors).
    accept_again: Option<Duration>,
}

/// Runs until `shared.stopping` is set and the waker fires.
pub(crate) fn run(poll: Poll, bound: &Bound, shared: &Arc<Shared>) {
    let fd = bound.raw_fd();
    if poll
        .registry()
        .register(&mut SourceFd(&fd), LISTENER, Interest::READABLE)
        .is_err()
    {
        return;
    }
    let mut state = Loop {
        poll,
        bound,
        shared,
        pending: HashMap::new(),
        order: VecDeque::new(),
        next_token: FIRST_CONN_TOKEN,
        accept_again: None,
    };
    let mut events = Events::with_capacity(256);
    while !shared.stopping.load(Ordering::SeqCst) {
        let timeout = state.poll_timeout();
        if let Err(e) = state.poll.poll(&mut events, timeout)
            && e.kind() != ErrorKind::Interrupted
        {
            std::thread::sleep(ACCEPT_RETRY);
        }
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        for event in events.iter() {
            match event.token() {
                LISTENER => state.accept_all(),
                WAKE => {}
                Token(t) => state.read_pending(t),
            }
        }
        if state.accept_again.is_some() {
            state.accept_all();
        }
        state.expire();
    }
}

impl Loop<'_> {
    fn poll_timeout(&mut self) -> Option<Duration> {
        self.drop_gone_front();
        let first_line = self.order.front().map(|t| {
            (self.pending[t].accepted + REQUEST_READ_TIMEOUT)
                .saturating_duration_since(Instant::now())
        });
        match (first_line, self.accept_again) {
            (Some(t), Some(pause)) => Some(t.min(pause)),
            (None, pause) => pause,
            (t, None) => t,
        }
    }

    fn drop_gone_front(&mut self) {
        while let Some(t) = self.order.front() {
            if self.pending.contains_key(t) {
                break;
            }
            self.order.pop_front();
        }
    }

    fn accept_all(&mut self) {
        self.accept_again = None;
        for _ in 0..ACCEPT_BURST {
            match self.bound.accept() {
                Ok(stream) => self.admit(stream),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    // Out of descriptors (or a transient error): free the oldest waiting
                    // connection and try again shortly instead of spinning.
                    self.evict_oldest();
                    self.accept_again = Some(ACCEPT_RETRY);
                    return;
                }
            }
        }
        // More may be queued (edge-triggered: no new event for them): read first lines,
        // then accept again without waiting.
        self.accept_again = Some(Duration::ZERO);
    }

    fn admit(&mut self, stream: Stream) {
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        while self.pending.len() >= MAX_PENDING {
            self.evict_oldest();
        }
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1).max(FIRST_CONN_TOKEN);
        let fd = stream.as_raw_fd();
        if self
            .poll
            .registry()
            .register(&mut SourceFd(&fd), Token(token), Interest::READABLE)
            .is_err()
        {
            return;
        }
        self.pending.insert(
            token,
            Pending {
                stream,
                buf: Vec::new(),
                accepted: Instant::now(),
            },
        );
        self.order.push_back(token);
        // A real client has usually sent its line already: take it before anything else
        // can push this connection out.
        self.read_pending(token);
    }

    fn evict_oldest(&mut self) {
        self.drop_gone_front();
        if let Some(t) = self.order.pop_front() {
            self.close(t);
        }
    }

    fn close(&mut self, token: usize) -> Option<Pending> {
        let conn = self.pending.remove(&token)?;
        let fd = conn.stream.as_raw_fd();
        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        Some(conn)
    }

    fn expire(&mut self) {
        let now = Instant::now();
        loop {
            self.drop_gone_front();
            let Some(&t) = self.order.front() else { return };
            if now < self.pending[&t].accepted + REQUEST_READ_TIMEOUT {
                return;
            }
            self.order.pop_front();
            self.close(t);
        }
    }

    fn read_pending(&mut self, token: usize) {
        let mut chunk = [0u8; 4096];
        loop {
            let Some(conn) = self.pending.get_mut(&token) else {
                return;
            };
            match conn.stream.read(&mut chunk) {
                Ok(0) => {
                    self.close(token);
                    return;
                }
                Ok(n) => {
                    conn.buf.extend_from_slice(&chunk[..n]);
                    if let Some(pos) = conn.buf.iter().position(|&b| b == b'\n') {
                        let too_long = pos + 1 > wire::MAX_REQUEST_BYTES;
                        if let Some(conn) = self.close(token)
                            && !too_long
                        {
                            self.dispatch(conn, pos);
                        }
                        return;
                    }
                    if conn.buf.len() >= wire::MAX_REQUEST_BYTES {
                        self.close(token);
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.close(token);
                    return;
                }
            }
        }
    }

    /// Authenticates the first line on this thread; only an authenticated request takes a
    /// worker slot.
    fn dispatch(&mut self, conn: Pending, line_end: usize) {
        let Some(request) = authenticate(self.shared, &conn.buf[..line_end]) else {
            return;
        };
        let shared = self.shared;
        if shared.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        if conn.stream.set_nonblocking(false).is_err() {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let worker = Arc::clone(shared);
        let Pending {
            stream, accepted, ..
        } = conn;
        let spawned = std::thread::Builder::new()
            .name("fabric-health-conn".into())
            .spawn(move || {
                serve_authenticated(&worker, stream, request, accepted);
                worker.active.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
