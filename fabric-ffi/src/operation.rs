//! Non-blocking operations: the object behind a `fabric_operation` handle.
//!
//! An operation is begun by a `..._begin` entry point and completes on the core's own
//! threads: an invocation on the reactor (its answer arrives through the host's pipes and a
//! hook marks the operation ready), a run, start or stop on the completion pool (a few
//! reusable workers, see [`pool`]). Completion makes the operation's readiness socket
//! readable (created when first asked for) and queues its handle on its completion queue
//! (if it was begun with one); `fabric_operation_take` then hands the outcome over without
//! waiting.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use fabric_config::Stage;
use fabric_host::{Notify, PendingInvoke, Runtime};

use crate::error::FfiError;

pub(crate) mod pool;
pub(crate) mod queue;

use queue::{CompletionQueue, socket_pair};

/// What a finished operation produced, before it is handed out.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A document (the blocking twin's `*out`): status and JSON.
    Json(Result<String, FfiError>),
    /// A started runtime, registered (and its handle issued) only when taken, so an
    /// abandoned start never leaks a handle: dropping it terminates its host.
    Runtime(Result<Box<Runtime>, FfiError>),
}

#[derive(Debug)]
enum State {
    /// An invocation whose answer is awaited on the reactor.
    Invoking {
        runtime: Arc<Runtime>,
        pending: Box<PendingInvoke>,
    },
    /// Work queued on or running in the completion pool.
    Working,
    /// Finished; not taken yet.
    Done(Outcome),
    /// Taken or cancelled: nothing more to hand out.
    Over,
}

/// One non-blocking operation (see the module documentation).
#[derive(Debug)]
pub(crate) struct Operation {
    state: Mutex<State>,
    /// Set once the outcome can be taken without waiting.
    ready: AtomicBool,
    /// Set by cancel/free: the outcome is dropped when it arrives.
    abandoned: AtomicBool,
    /// `(reader, writer)`, made on the first `ready_fd`: the caller watches the reader;
    /// completion writes one byte to the writer.
    socket: OnceLock<(UnixStream, UnixStream)>,
    /// The completion queue this operation reports to, with its own handle.
    queue: OnceLock<(Arc<CompletionQueue>, u64)>,
    /// Set once the handle was queued (it is queued at most once).
    queued: AtomicBool,
}

/// The registered handle object.
#[derive(Debug)]
pub(crate) struct OperationObject {
    pub(crate) operation: Arc<Operation>,
}

impl Drop for OperationObject {
    fn drop(&mut self) {
        // The handle is gone: whatever is still running finishes and is dropped.
        self.operation.cancel();
    }
}

/// The registered completion queue object.
#[derive(Debug)]
pub(crate) struct QueueObject {
    pub(crate) queue: Arc<CompletionQueue>,
}

/// What `take` hands out.
#[derive(Debug)]
pub(crate) enum Taken {
    /// Not finished yet.
    NotReady,
    /// Already taken, or cancelled.
    Over,
    Outcome(Outcome),
}

impl Operation {
    /// A new operation (its readiness socket is made when asked for).
    pub(crate) fn new() -> Arc<Operation> {
        Arc::new(Operation {
            state: Mutex::new(State::Working),
            ready: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            socket: OnceLock::new(),
            queue: OnceLock::new(),
            queued: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The descriptor the caller watches (owned by the operation; made on first use).
    pub(crate) fn ready_fd(&self, stage: Stage) -> Result<RawFd, FfiError> {
        if let Some((reader, _)) = self.socket.get() {
            return Ok(reader.as_raw_fd());
        }
        let pair = socket_pair(stage, "operation")?;
        // A racing caller keeps the first pair.
        let _ = self.socket.set(pair);
        let Some((reader, writer)) = self.socket.get() else {
            return Err(FfiError::internal_panic(stage));
        };
        // Finished before the socket existed: readable at once.
        if self.ready.load(Ordering::SeqCst) || self.abandoned.load(Ordering::SeqCst) {
            let _ = (&*writer).write(&[1]);
        }
        Ok(reader.as_raw_fd())
    }

    /// Reports to `queue` under the handle `id` (once, right after registration). An
    /// operation that finished already is queued at once.
    pub(crate) fn watch(&self, queue: Arc<CompletionQueue>, id: u64) {
        let _ = self.queue.set((queue, id));
        if self.ready.load(Ordering::SeqCst) || self.abandoned.load(Ordering::SeqCst) {
            self.wake();
        }
    }

    fn signal(&self) {
        self.ready.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Makes the socket readable (one byte keeps it so until the operation is freed; a
    /// reader may drain it, `take` does not depend on it) and queues the handle once.
    fn wake(&self) {
        if let Some((_, writer)) = self.socket.get() {
            let _ = (&*writer).write(&[1]);
        }
        if let Some((queue, id)) = self.queue.get()
            && !self.queued.swap(true, Ordering::SeqCst)
        {
            queue.push(*id);
        }
    }

    /// The hook an invocation's reactor answer runs: mark ready; an abandoned invocation
    /// is finished on the pool (the runtime must become free again).
    pub(crate) fn invoke_hook(self: &Arc<Self>) -> Notify {
        let operation = Arc::clone(self);
        Arc::new(move || {
            operation.signal();
            if operation.abandoned.load(Ordering::SeqCst) {
                operation.finish_abandoned();
            }
        })
    }

    /// Installs the invocation that [`Operation::invoke_hook`] reports on. An answer that
    /// already arrived (the hook ran first) is handled as if it came now.
    pub(crate) fn set_invoking(self: &Arc<Self>, runtime: Arc<Runtime>, pending: PendingInvoke) {
        let pending = Box::new(pending);
        *self.lock() = State::Invoking { runtime, pending };
        if self.abandoned.load(Ordering::SeqCst) && self.ready.load(Ordering::SeqCst) {
            self.finish_abandoned();
        }
    }

    /// Records the outcome of pool work and signals (dropped at once when abandoned).
    pub(crate) fn complete(&self, outcome: Outcome) {
        {
            let mut state = self.lock();
            if self.abandoned.load(Ordering::SeqCst) {
                *state = State::Over;
            } else {
                *state = State::Done(outcome);
            }
        }
        self.signal();
    }

    /// Hands the outcome over once (never waits for the work).
    pub(crate) fn take(&self) -> Taken {
        if self.abandoned.load(Ordering::SeqCst) {
            return Taken::Over;
        }
        if !self.ready.load(Ordering::SeqCst) {
            return Taken::NotReady;
        }
        let mut state = self.lock();
        match std::mem::replace(&mut *state, State::Over) {
            State::Done(outcome) => Taken::Outcome(outcome),
            State::Invoking { runtime, pending } => {
                drop(state);
                // The answer is in (the hook ran): this builds the result without waiting.
                let result = runtime.finish_invoke(*pending);
                Taken::Outcome(Outcome::Json(
                    result
                        .map_err(FfiError::from)
                        .and_then(|result| crate::boundary::to_json(Stage::Invoke, &result)),
                ))
            }
            State::Working => {
                *state = State::Working;
                Taken::NotReady
            }
            State::Over => Taken::Over,
        }
    }

    /// Abandons the operation: its outcome is dropped when it arrives (nothing running is
    /// interrupted); the readiness socket becomes readable. Idempotent.
    pub(crate) fn cancel(&self) {
        if self.abandoned.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut state = self.lock();
        let finish = match std::mem::replace(&mut *state, State::Over) {
            State::Invoking { runtime, pending } => {
                if self.ready.load(Ordering::SeqCst) {
                    Some((runtime, pending))
                } else {
                    // The hook finishes it when the answer arrives.
                    *state = State::Invoking { runtime, pending };
                    None
                }
            }
            State::Working => {
                *state = State::Working;
                None
            }
            // A finished start's runtime is dropped here (its host is terminated).
            State::Done(_) | State::Over => None,
        };
        drop(state);
        if let Some((runtime, pending)) = finish {
            pool::spawn(Box::new(move || drop(runtime.finish_invoke(*pending))));
        }
        self.wake();
    }

    /// An abandoned invocation whose answer arrived: finish it on the pool.
    fn finish_abandoned(&self) {
        let mut state = self.lock();
        if let State::Invoking { .. } = &*state
            && let State::Invoking { runtime, pending } =
                std::mem::replace(&mut *state, State::Over)
        {
            drop(state);
            pool::spawn(Box::new(move || drop(runtime.finish_invoke(*pending))));
        }
    }
}
