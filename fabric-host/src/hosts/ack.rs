//! Stops that answer their caller at the host's acknowledgement.
//!
//! The contract's host exits after answering `stop`; what happens after that answer (the
//! interpreter's shutdown, the reap) is the core's business, not the caller's. A stop begun
//! with [`Hosts::begin_stop_until_ack`] replies as soon as the host's answer to `stop`
//! arrives; the reactor keeps the stop going in the background exactly as for a waited
//! stop (the grace period, then `SIGTERM` and `SIGKILL` to the group and its escaped
//! descendants, the reap), and runs the stop's [`AfterExit`] action once the host has
//! exited (or the stop gave up on it). A stop that is never acknowledged (no answer, a
//! host that crashed, a terminal host) replies at the end, as a waited stop does.

use std::time::Instant;

use super::{HostKey, Hosts, Reply, StopOutcome, StopPolicy};

/// Work that must wait for the host's exit (e.g. removing its temporary FABRIC_HOME). Run
/// once: when the stop that carries it ends (the host exited, or even `SIGKILL` did not
/// end it within the bound), or when the reactor drops it.
pub(crate) struct AfterExit(Option<Box<dyn FnOnce() + Send>>);

impl AfterExit {
    pub(crate) fn new(action: impl FnOnce() + Send + 'static) -> AfterExit {
        AfterExit(Some(Box::new(action)))
    }
}

impl Drop for AfterExit {
    fn drop(&mut self) {
        if let Some(action) = self.0.take() {
            action();
        }
    }
}

impl std::fmt::Debug for AfterExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfterExit")
            .field("pending", &self.0.is_some())
            .finish()
    }
}

/// A stop that replies at the acknowledgement; kept on the stop until it ends.
#[derive(Debug)]
pub(super) struct Ack {
    /// Dropped (run) with the stop, after the exit.
    _after_exit: Option<AfterExit>,
}

impl Hosts {
    /// [`Hosts::begin_stop`], replying on `reply` once the host answers `stop` instead of
    /// once it exited; `after_exit` runs when the stop ends.
    pub(super) fn begin_stop_until_ack(
        &mut self,
        key: HostKey,
        line: Vec<u8>,
        policy: StopPolicy,
        reply: Reply<StopOutcome>,
        after_exit: Option<AfterExit>,
    ) {
        self.begin_stop(key, Some(line), policy, Some(reply));
        // The reactor thread runs this right after `begin_stop`: no answer can have been
        // read in between. A stop without a `stop` request (a terminal host) is never
        // acknowledged and replies at its end; one that already ended runs `after_exit`
        // (through its drop) here.
        if let Some(stopping) = self
            .entry(key)
            .and_then(|entry| entry.stopping.as_mut())
            .filter(|stopping| stopping.reply.is_some())
        {
            stopping.ack = Some(Ack {
                _after_exit: after_exit,
            });
        }
    }

    /// The host answered `stop` (its line is in the stop's `response`): a stop begun with
    /// [`Hosts::begin_stop_until_ack`] replies now; the escalation timers keep running.
    pub(super) fn on_stop_acknowledged(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        let Some(stopping) = entry.stopping.as_mut() else {
            return;
        };
        if stopping.ack.is_none() {
            return;
        }
        let Some(reply) = stopping.reply.take() else {
            return;
        };
        let _ = reply.send(StopOutcome {
            response: stopping.response.clone(),
            exit: None,
            escalation: stopping.escalation,
            exited_before: stopping.exited_before,
            graceful: stopping.graceful,
            elapsed: Instant::now().saturating_duration_since(stopping.started),
            error: None,
            // Known only after the exit, which this reply does not wait for.
            left_behind: Vec::new(),
        });
    }
}
