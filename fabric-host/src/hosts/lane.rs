//! The caller's own lane to a host's stdin: a request line is written by the calling thread
//! when the pipe takes it, instead of being handed to the reactor thread to write. That
//! saves one thread crossing per request (the reactor's wake-up before the host even sees
//! the line); the reactor still reads the answer, keeps the deadline and writes whatever
//! the pipe did not take.
//!
//! Rules that keep the byte stream and the reactor's view in order:
//!
//! * One request per host at a time: [`Lane::claim`] (an atomic flag) is taken before a
//!   request is sent and released when its [`Responder`](super::Responder) answers or is
//!   dropped, so a second concurrent call is `runtime_busy` before anything is written.
//! * Every write to the pipe happens under the gate's lock, by the caller (only while
//!   [`Gate::direct`]: the pipe is open, no stop began and the reactor has nothing queued)
//!   or by the reactor (after it marked the gate `reactor_writes` under the same lock).
//!   Whoever hands bytes to the reactor marks the gate first, so the order of the bytes is
//!   the order of the lock.
//! * The caller queues the request's bookkeeping for the reactor (`Handle::post_quiet`)
//!   and marks the lane [`Lane::expecting`] before it writes the line, under the lock. The
//!   reactor runs queued commands before it handles readiness, but a read already under
//!   way can meet a fast answer first: a line that arrives with no pending request while
//!   the lane is expecting is kept (`HostEntry::early`) and answers the request as soon as
//!   its bookkeeping runs.
//! * A stop marks the gate `closing` (under the lock, before the stop is posted): no direct
//!   write follows a stop request. The reactor closes the pipe only through [`Stdin`]'s
//!   drop, which first takes the descriptor out of the gate, so a caller never writes to a
//!   closed (or reused) descriptor.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use fabric_reactor::sys;
use mio::event::Source;
use mio::unix::pipe;
use mio::{Interest, Registry, Token};

/// The shared state of one host's stdin (see the module docs).
#[derive(Debug)]
pub(crate) struct Lane {
    busy: AtomicBool,
    /// A request line was written by its caller and the reactor has not registered it yet.
    expecting: AtomicBool,
    gate: Mutex<Gate>,
}

/// Who may write to the pipe now.
#[derive(Debug)]
pub(crate) struct Gate {
    /// The pipe's descriptor while it is open.
    fd: Option<RawFd>,
    /// A stop began (or the host is terminal): no more direct writes.
    closing: bool,
    /// The reactor has bytes to write (a partly written line): callers go through it.
    reactor_writes: bool,
}

impl Lane {
    fn new(fd: RawFd) -> Arc<Lane> {
        Arc::new(Lane {
            busy: AtomicBool::new(false),
            expecting: AtomicBool::new(false),
            gate: Mutex::new(Gate {
                fd: Some(fd),
                closing: false,
                reactor_writes: false,
            }),
        })
    }

    /// Takes the host's one request slot; `false` when a request is in flight.
    pub(crate) fn claim(&self) -> bool {
        self.busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Frees the request slot (the request was answered, failed or abandoned).
    pub(crate) fn release(&self) {
        self.busy.store(false, Ordering::Release);
    }

    /// Marks a request written by its caller, not yet registered by the reactor.
    pub(crate) fn expect(&self) {
        self.expecting.store(true, Ordering::Release);
    }

    /// Whether a caller's request is written and not yet registered (see the module docs).
    pub(crate) fn expecting(&self) -> bool {
        self.expecting.load(Ordering::Acquire)
    }

    /// The reactor registered the caller's request.
    pub(crate) fn registered(&self) {
        self.expecting.store(false, Ordering::Release);
    }

    /// The gate, for a write decision and the write itself.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Gate> {
        self.gate.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// No direct write from now on (a stop began, or the host is terminal).
    pub(crate) fn close_for_stop(&self) {
        self.lock().closing = true;
    }
}

impl Gate {
    /// Whether the caller may write a request line itself.
    pub(crate) fn direct(&self) -> bool {
        self.fd.is_some() && !self.closing && !self.reactor_writes
    }

    /// The reactor takes over the writes (it has bytes queued).
    pub(crate) fn hand_to_reactor(&mut self) {
        self.reactor_writes = true;
    }

    /// The reactor wrote everything it had: callers may write again.
    pub(crate) fn reactor_flushed(&mut self) {
        self.reactor_writes = false;
    }

    /// Writes as much of `line` as the pipe takes now without blocking: the bytes written
    /// (fewer than `line.len()` when it is full or failed; the reactor then writes the rest
    /// and reports a failure). Only while [`Gate::direct`].
    pub(crate) fn write(&mut self, line: &[u8]) -> usize {
        let Some(fd) = self.fd.filter(|_| !self.closing && !self.reactor_writes) else {
            return 0;
        };
        let mut written = 0;
        while written < line.len() {
            match sys::write_pipe_without_sigpipe(fd, &line[written..]) {
                Ok(0) => break,
                Ok(n) => written += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        written
    }
}

/// A host's stdin as the reactor holds it: the pipe and its lane. Dropping it takes the
/// descriptor out of the lane before the pipe closes.
#[derive(Debug)]
pub(crate) struct Stdin {
    pipe: pipe::Sender,
    lane: Arc<Lane>,
}

impl Stdin {
    /// Wraps the (non-blocking) pipe and makes its lane.
    pub(crate) fn new(pipe: pipe::Sender) -> Stdin {
        let lane = Lane::new(pipe.as_raw_fd());
        Stdin { pipe, lane }
    }

    /// The lane the host's callers write through.
    pub(crate) fn lane(&self) -> &Arc<Lane> {
        &self.lane
    }
}

impl std::ops::Deref for Stdin {
    type Target = pipe::Sender;
    fn deref(&self) -> &pipe::Sender {
        &self.pipe
    }
}

impl std::ops::DerefMut for Stdin {
    fn deref_mut(&mut self) -> &mut pipe::Sender {
        &mut self.pipe
    }
}

impl Drop for Stdin {
    fn drop(&mut self) {
        let mut gate = self.lane.lock();
        gate.fd = None;
        gate.closing = true;
        // The pipe itself closes after this, once no caller can reach its descriptor.
    }
}

impl Source for Stdin {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.pipe.register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.pipe.reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        self.pipe.deregister(registry)
    }
}
