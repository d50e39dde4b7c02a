//! Completion queues: one descriptor for many operations. An operation begun with a queue
//! pushes its handle onto the queue when it finishes; the queue's socket becomes readable
//! when the queue goes from empty to non-empty. An event loop watches one descriptor for
//! all its operations (one `add_reader`, one libuv handle) instead of one per call.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, MutexGuard};

use fabric_config::Stage;
use fabric_host::HostError;

use crate::error::FfiError;

/// The object behind a `fabric_completion_queue` handle.
#[derive(Debug)]
pub(crate) struct CompletionQueue {
    ready: Mutex<VecDeque<u64>>,
    reader: UnixStream,
    writer: UnixStream,
}

impl CompletionQueue {
    pub(crate) fn new(stage: Stage) -> Result<CompletionQueue, FfiError> {
        let (reader, writer) = socket_pair(stage, "completion queue")?;
        Ok(CompletionQueue {
            ready: Mutex::new(VecDeque::new()),
            reader,
            writer,
        })
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<u64>> {
        self.ready.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.reader.as_raw_fd()
    }

    /// Queues a finished operation's handle; the first one after the queue was emptied
    /// makes the socket readable.
    pub(crate) fn push(&self, operation: u64) {
        let mut ready = self.lock();
        ready.push_back(operation);
        if ready.len() == 1 {
            let _ = (&self.writer).write(&[1]);
        }
    }

    /// The next finished operation, if any. Drains the socket when the queue is empty, so
    /// the socket is readable exactly while something is queued or was queued since.
    pub(crate) fn next(&self) -> Option<u64> {
        let mut ready = self.lock();
        let next = ready.pop_front();
        if ready.is_empty() {
            let mut sink = [0u8; 64];
            while matches!((&self.reader).read(&mut sink), Ok(n) if n > 0) {}
        }
        next
    }
}

/// A non-blocking socket pair (reader, writer).
pub(crate) fn socket_pair(stage: Stage, what: &str) -> Result<(UnixStream, UnixStream), FfiError> {
    let unavailable = |error: std::io::Error| {
        FfiError::from(HostError::EngineUnavailable {
            stage,
            reason: format!("cannot create the {what}'s readiness socket: {error}"),
        })
    };
    let (reader, writer) = UnixStream::pair().map_err(unavailable)?;
    reader.set_nonblocking(true).map_err(unavailable)?;
    writer.set_nonblocking(true).map_err(unavailable)?;
    Ok((reader, writer))
}
