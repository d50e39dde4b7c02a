//! The bytes a worker thread produces for one connection, handed to the reactor thread as
//! the socket takes them: bounded (a worker waits while [`OUTBOX_CAPACITY`] bytes are
//! queued) and abandoned when the peer goes away. A service keeps one per answer in flight
//! and calls [`Outbox::take`] from its `produce`.
//!
//! **Written through.** A service that names the outbox to the driver
//! ([`Turn::answer_through`]) lets the worker write straight to the connection's socket
//! while neither the driver nor the queue holds a byte of the answer: a small answer, or
//! each chunk of a stream the peer reads as fast as it comes, then reaches the peer without
//! waking the reactor ([`Outbox::send`] says [`Pushed::Written`]). The first write the
//! socket does not take whole ends that: the rest is queued and the driver writes it, in
//! order, as the socket takes it.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::{Produce, Turn};

/// Bytes queued before a worker waits for the socket.
pub const OUTBOX_CAPACITY: usize = 1024 * 1024;

#[derive(Debug, Default)]
struct Queue {
    bytes: Vec<u8>,
    done: bool,
    /// The finished answer delimits itself: the connection may be kept.
    keep: bool,
    gone: bool,
    /// The connection's socket, while the worker may write to it directly: the driver holds
    /// none of the answer's bytes and none are queued.
    socket: Option<Arc<TcpStream>>,
    /// Workers waiting for room.
    waiting: usize,
}

/// What became of bytes a worker gave [`Outbox::send`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Written to the socket: the reactor need not be woken for them.
    Written,
    /// Queued for the reactor (wake it to pass them on).
    Queued,
    /// The peer is gone; nothing was kept.
    Gone,
}

/// One connection's answer in progress.
#[derive(Debug, Default)]
pub struct Outbox {
    queue: Mutex<Queue>,
    room: Condvar,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `bytes` (worker side), waiting while the queue is full; `false` once the peer
    /// is gone. Written through when the driver allows it (see [`Outbox::send`]).
    pub fn push(&self, bytes: &[u8]) -> bool {
        self.send(bytes) != Pushed::Gone
    }

    /// Passes `bytes` on (worker side): written straight to the socket while the outbox is
    /// written through and the socket takes them whole, else queued (waiting while the
    /// queue is full).
    pub fn send(&self, bytes: &[u8]) -> Pushed {
        self.send_locked(self.lock(), bytes).1
    }

    /// The answer's last bytes, passed on as by [`Outbox::send`], and its end, at once:
    /// once the peer has the bytes the driver finds the answer ended (when the peer's next
    /// request comes as soon as it read them, the connection is ready for it). `keep_alive`
    /// as [`Outbox::finish_keep_alive`], else as [`Outbox::finish`].
    pub fn finish_with(&self, bytes: &[u8], keep_alive: bool) -> Pushed {
        let (mut queue, pushed) = self.send_locked(self.lock(), bytes);
        queue.done = true;
        queue.keep = keep_alive;
        queue.socket = None;
        pushed
    }

    fn send_locked<'a>(
        &'a self,
        mut queue: MutexGuard<'a, Queue>,
        bytes: &[u8],
    ) -> (MutexGuard<'a, Queue>, Pushed) {
        while queue.bytes.len() >= OUTBOX_CAPACITY && !queue.gone {
            queue.waiting += 1;
            queue = self
                .room
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.waiting -= 1;
        }
        if queue.gone {
            return (queue, Pushed::Gone);
        }
        let mut rest = bytes;
        if let Some(socket) = queue.socket.as_deref() {
            let written = write_some(socket, rest);
            rest = &rest[written..];
            if rest.is_empty() {
                return (queue, Pushed::Written);
            }
            // The socket is full or failing: the driver writes the rest (and meets the
            // error, if any) in order.
            queue.socket = None;
        }
        queue.bytes.extend_from_slice(rest);
        (queue, Pushed::Queued)
    }

    /// The answer is complete: no more bytes will come (the connection closes after it).
    pub fn finish(&self) {
        let mut queue = self.lock();
        queue.done = true;
        queue.socket = None;
    }

    /// The answer is complete and delimits itself (a `content-length` body, or a chunked
    /// one with its last chunk): [`Outbox::take`] ends with [`Produce::DoneKeepAlive`], so
    /// the connection may carry the next request.
    pub fn finish_keep_alive(&self) {
        let mut queue = self.lock();
        queue.done = true;
        queue.keep = true;
        queue.socket = None;
    }

    /// The connection closed: a waiting worker stops.
    pub fn abandon(&self) {
        let mut queue = self.lock();
        queue.gone = true;
        queue.socket = None;
        drop(queue);
        self.room.notify_all();
    }

    /// The driver holds none of the answer's bytes: the worker may write to `socket` until
    /// the socket does not take a write whole (driver side; see [`Turn::answer_through`]).
    pub(super) fn write_through(&self, socket: Arc<TcpStream>) {
        let mut queue = self.lock();
        if queue.bytes.is_empty() && !queue.done && !queue.gone {
            queue.socket = Some(socket);
        }
    }

    /// Moves up to `room` queued bytes to `out` (on the reactor thread). When bytes are left
    /// over, the server is driven again next turn (`Turn::wake_server`): the worker may have
    /// queued its last bytes already, and a socket that took everything gives no new event.
    pub fn take(&self, out: &mut Vec<u8>, room: usize, turn: &mut Turn) -> Produce {
        let mut queue = self.lock();
        let take = room.min(queue.bytes.len());
        out.extend(queue.bytes.drain(..take));
        if take > 0 && queue.waiting > 0 {
            self.room.notify_all();
        }
        if !queue.bytes.is_empty() {
            turn.wake_server();
        }
        if queue.done && queue.bytes.is_empty() {
            if queue.keep {
                Produce::DoneKeepAlive
            } else {
                Produce::Done
            }
        } else {
            Produce::Wait
        }
    }
}

/// Writes what a non-blocking socket takes of `bytes` now: how many bytes it took (fewer
/// when it is full or failed; the driver's own write meets a failure again).
fn write_some(mut socket: &TcpStream, bytes: &[u8]) -> usize {
    let mut written = 0;
    while written < bytes.len() {
        match socket.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    written
}
