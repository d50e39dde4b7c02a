//! The bytes of one forwarded answer between the worker that reads the endpoint and the
//! reactor that writes them to the harness: a bounded buffer (the worker waits while the
//! harness reads slowly) and a wake-up of the gateway server for each push.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use fabric_reactor::http::Produce;

/// Bytes buffered for one harness connection before the worker waits.
const BUFFER_BYTES: usize = 1024 * 1024;

#[derive(Debug, Default)]
struct Flow {
    out: Vec<u8>,
    done: bool,
    /// The harness connection is gone: the worker stops reading.
    gone: bool,
}

/// One answer in flight.
#[derive(Debug, Default)]
pub(crate) struct Exchange {
    flow: Mutex<Flow>,
    room: Condvar,
}

impl Exchange {
    fn lock(&self) -> MutexGuard<'_, Flow> {
        self.flow.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues bytes for the harness (waiting while the buffer is full); `false` once the
    /// harness is gone.
    pub(crate) fn push(&self, bytes: &[u8]) -> bool {
        let mut flow = self.lock();
        while flow.out.len() >= BUFFER_BYTES && !flow.gone {
            flow = self.room.wait(flow).unwrap_or_else(PoisonError::into_inner);
        }
        if flow.gone {
            return false;
        }
        flow.out.extend_from_slice(bytes);
        true
    }

    /// No more bytes will come.
    pub(crate) fn finish(&self) {
        self.lock().done = true;
    }

    /// The harness connection closed.
    pub(crate) fn abandon(&self) {
        self.lock().gone = true;
        self.room.notify_all();
    }

    /// Moves up to `room` queued bytes into `out` (the reactor side).
    pub(crate) fn take(&self, out: &mut Vec<u8>, room: usize) -> Produce {
        let mut flow = self.lock();
        let n = flow.out.len().min(room);
        out.extend(flow.out.drain(..n));
        self.room.notify_all();
        if flow.done && flow.out.is_empty() {
            Produce::Done
        } else {
            Produce::Wait
        }
    }
}
