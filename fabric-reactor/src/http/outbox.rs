//! The bytes a worker thread produces for one connection, handed to the reactor thread as
//! the socket takes them: bounded (a worker waits while [`OUTBOX_CAPACITY`] bytes are
//! queued) and abandoned when the peer goes away. A service keeps one per answer in flight
//! and calls [`Outbox::take`] from its `produce`.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

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
    /// is gone.
    pub fn push(&self, bytes: &[u8]) -> bool {
        let mut queue = self.lock();
        while queue.bytes.len() >= OUTBOX_CAPACITY && !queue.gone {
            queue = self
                .room
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if queue.gone {
            return false;
        }
        queue.bytes.extend_from_slice(bytes);
        true
    }

    /// The answer is complete: no more bytes will come (the connection closes after it).
    pub fn finish(&self) {
        self.lock().done = true;
    }

    /// The answer is complete and delimits itself (a `content-length` body, or a chunked
    /// one with its last chunk): [`Outbox::take`] ends with [`Produce::DoneKeepAlive`], so
    /// the connection may carry the next request.
    pub fn finish_keep_alive(&self) {
        let mut queue = self.lock();
        queue.done = true;
        queue.keep = true;
    }

    /// The connection closed: a waiting worker stops.
    pub fn abandon(&self) {
        self.lock().gone = true;
        self.room.notify_all();
    }

    /// Moves up to `room` queued bytes to `out` (on the reactor thread). When bytes are left
    /// over, the server is driven again next turn (`Turn::wake_server`): the worker may have
    /// queued its last bytes already, and a socket that took everything gives no new event.
    pub fn take(&self, out: &mut Vec<u8>, room: usize, turn: &mut Turn) -> Produce {
        let mut queue = self.lock();
        let take = room.min(queue.bytes.len());
        out.extend(queue.bytes.drain(..take));
        if take > 0 {
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
