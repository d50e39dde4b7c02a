//! Invocations collected later: [`Runtime::begin_invoke`] sends one and returns at once; a
//! hook tells the caller when the answer arrived; [`Runtime::finish_invoke`] then builds the
//! RunResult without waiting for the host. This is how an event loop invokes without a
//! thread of its own (the C ABI's `fabric_runtime_invoke_begin`).

use fabric_config::result::RunResult;
use fabric_config::{RunRequest, Stage};

use super::{Runtime, Started};
use crate::error::HostError;
use crate::hosts::Notify;

/// An invocation that was sent and whose answer is not collected yet. The runtime stays
/// busy until it is passed to [`Runtime::finish_invoke`]; dropping it instead leaves the
/// runtime busy for good, so an abandoned invocation must still be finished.
#[derive(Debug)]
#[must_use = "finish the invocation with Runtime::finish_invoke"]
pub struct PendingInvoke {
    started: Started,
}

impl Runtime {
    /// Checks and sends one invocation without waiting for the answer. `notify` runs once,
    /// on the reactor thread, as soon as the answer (or a terminal error: crash, timeout)
    /// is available; it must only signal (it runs among every host's I/O). Neither the
    /// caller nor the reactor spins for the answer.
    ///
    /// Errors (the runtime is untouched and `notify` never runs): as [`Runtime::invoke`]
    /// before anything is sent: `runtime_busy`, `runtime_stopped`, `runtime_failed`,
    /// request checks, `request_too_large`, a host already terminal.
    pub fn begin_invoke(
        &self,
        request: RunRequest,
        notify: Notify,
    ) -> Result<PendingInvoke, HostError> {
        self.claim(Stage::Invoke, false)?;
        let ids = Self::invocation_ids(&request);
        match self.begin_invocation(request, ids, None, Some(notify)) {
            Ok(started) => Ok(PendingInvoke { started }),
            Err(error) => {
                self.settle(&Err(error.clone()), None);
                Err(error)
            }
        }
    }

    /// Collects an invocation [`Runtime::begin_invoke`] sent: the same result as
    /// [`Runtime::invoke`], and the runtime is free again. Blocks until the answer arrived
    /// when called before the hook ran; after it ran only the result is built (its files
    /// written; `git` runs here when workspace collection is on).
    pub fn finish_invoke(&self, pending: PendingInvoke) -> Result<RunResult, HostError> {
        let outcome = self.finish_invocation(pending.started);
        self.settle(&outcome, None);
        outcome
    }
}
