//! The readiness descriptor of a running batch, so an event loop waits for it without a
//! thread: a non-blocking socket pair made on first use; the caller watches the reader.
//!
//! A zero-timeout pull that found nothing (or a push that found the queue full) *arms* it;
//! the next change worth another try (a finished line, a freed queue slot, the end) writes
//! one byte if armed. So a busy batch writes nothing, and a caller that drains the
//! descriptor, retries, and waits again never misses a change: a change either happened
//! before the retry looked (the retry sees it) or after the arming (it writes the byte).

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use fabric_config::{ErrorInfo, Stage, codes};

#[derive(Debug, Default)]
pub(crate) struct Ready {
    /// `(reader, writer)`.
    pair: OnceLock<(UnixStream, UnixStream)>,
    armed: AtomicBool,
}

fn pair() -> std::io::Result<(UnixStream, UnixStream)> {
    let (reader, writer) = UnixStream::pair()?;
    reader.set_nonblocking(true)?;
    writer.set_nonblocking(true)?;
    Ok((reader, writer))
}

impl Ready {
    /// The reader's descriptor (owned here; made on the first call; readable at once).
    pub(crate) fn fd(&self) -> Result<RawFd, ErrorInfo> {
        if self.pair.get().is_none() {
            let made = pair().map_err(|error| {
                ErrorInfo::new(
                    Stage::Invoke,
                    codes::ENGINE_UNAVAILABLE,
                    format!("cannot create the batch's readiness socket: {error}"),
                )
            })?;
            // A racing caller keeps the first pair.
            let _ = self.pair.set(made);
            self.armed.store(true, Ordering::SeqCst);
            self.wake();
        }
        match self.pair.get() {
            Some((reader, _)) => Ok(reader.as_raw_fd()),
            None => Err(ErrorInfo::new(
                Stage::Invoke,
                codes::ENGINE_UNAVAILABLE,
                "the batch's readiness socket is missing",
            )),
        }
    }

    /// A caller found nothing to do: the next change writes a byte.
    pub(crate) fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Something changed: one byte when armed (a full socket already reads as ready).
    pub(crate) fn wake(&self) {
        if let Some((_, writer)) = self.pair.get()
            && self.armed.swap(false, Ordering::SeqCst)
        {
            let _ = (&*writer).write(&[1]);
        }
    }
}
