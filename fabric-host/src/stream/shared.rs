//! The state one stream's listener (on the reactor thread) and its consumer (any thread)
//! share: the bounded item queue, how the transport ended, whether the host answered.

use std::collections::VecDeque;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{MutexGuard, OnceLock};

use fabric_reactor::watched::Watched;
use std::time::Instant;

/// Most items queued before the listener stops reading (backpressure on the adapter).
pub(crate) const QUEUE_MAX_ITEMS: usize = 1024;
/// Most item bytes queued before the listener stops reading.
pub(crate) const QUEUE_MAX_BYTES: usize = 16 * 1024 * 1024;

/// A transport failure of the stream (it fails the stream with
/// `openai_stream_protocol_error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TransportError {
    /// Safe message (never a value).
    pub message: String,
    /// The HTTP status the listener answered, when it answered.
    pub http_status: Option<u16>,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub queue: VecDeque<String>,
    pub queued_bytes: usize,
    /// The listener stopped reading because the queue was full.
    pub paused: bool,
    /// A connection passed the head checks (the one connection of this stream).
    pub claimed: bool,
    /// The end record was accepted.
    pub ended: bool,
    /// The claimed connection finished (answered, failed or closed).
    pub completed: bool,
    /// The claimed connection was closed by the adapter before completion.
    pub connection_closed: bool,
    /// The first transport failure.
    pub error: Option<TransportError>,
    /// Items are dropped instead of queued (the consumer closed or is draining).
    pub discard: bool,
    /// The consumer closed the stream.
    pub closed: bool,
    /// The adapter host answered the invocation.
    pub answered: bool,
    /// When the host's answer was noticed (for the completion wait).
    pub answered_at: Option<Instant>,
}

impl State {
    /// Whether the queue is at one of its bounds.
    pub(crate) fn full(&self) -> bool {
        self.queue.len() >= QUEUE_MAX_ITEMS || self.queued_bytes >= QUEUE_MAX_BYTES
    }

    /// Records the first transport failure.
    pub(crate) fn fail(&mut self, message: impl Into<String>, http_status: Option<u16>) {
        if self.error.is_none() {
            self.error = Some(TransportError {
                message: message.into(),
                http_status,
            });
        }
    }
}

/// The shared state and the condition variable its changes are announced on; and, once a
/// consumer asked for it, the readiness socket a change is also announced on (one byte, only
/// while a consumer is armed: see [`Shared::arm`]).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    state: Watched<State>,
    /// The write end of the readiness socket pair (non-blocking).
    signal: OnceLock<UnixStream>,
    /// A zero-timeout pull found nothing: the next change writes one byte.
    armed: AtomicBool,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Wakes every waiting consumer, and the readiness socket when armed.
    pub(crate) fn notify(&self) {
        self.state.notify_all();
        if self.armed.swap(false, Ordering::SeqCst) {
            self.signal_now();
        }
    }

    /// Makes the readiness socket readable (a full buffer is readable already).
    pub(crate) fn signal_now(&self) {
        if let Some(mut writer) = self.signal.get() {
            let _ = writer.write(&[1]);
        }
    }

    /// Arms the readiness socket before a zero-timeout pull looks at the state, so a change
    /// after the look is never missed. No-op without a socket.
    pub(crate) fn arm(&self) {
        if self.signal.get().is_some() {
            self.armed.store(true, Ordering::SeqCst);
        }
    }

    /// Cancels [`Shared::arm`] (a pull found items).
    pub(crate) fn disarm(&self) {
        self.armed.store(false, Ordering::SeqCst);
    }

    /// Installs the write end of the readiness socket (once).
    pub(crate) fn set_signal(&self, writer: UnixStream) -> bool {
        self.signal.set(writer).is_ok()
    }

    /// Waits for a change until `deadline` (spurious wake-ups are the caller's loop's job).
    pub(crate) fn wait_until<'a>(
        &self,
        guard: MutexGuard<'a, State>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, State> {
        self.state.wait_until(guard, deadline)
    }
}
