//! Deadline timers, host removal and housekeeping (graveyard reaping, exit polling).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::AsRawFd;
use std::time::Instant;

use mio::unix::SourceFd;

use crate::error::HostError;
use fabric_reactor::sys;

use super::{EXIT_POLL, Hosts, Timer, TimerKind, current_stage};

impl Hosts {
    // ----- timers ---------------------------------------------------------------------

    pub(super) fn fire_timers(&mut self, now: Instant) {
        while let Some(Reverse(timer)) = self.timers.peek().copied() {
            if timer.at > now {
                break;
            }
            self.timers.pop();
            let live = matches!(
                self.slots.get(timer.slot),
                Some(Some(entry)) if entry.generation == timer.generation
            );
            if !live {
                continue;
            }
            match timer.kind {
                TimerKind::Operation => self.on_operation_deadline(timer.slot, timer.seq),
                TimerKind::StopPhase => self.on_stop_phase(timer.slot, timer.seq),
                TimerKind::ExitPoll => self.on_exit_poll(timer.slot),
                TimerKind::EofGrace => self.on_eof_grace(timer.slot, timer.seq),
            }
        }
    }

    /// Whether a timer can still do something.
    fn timer_is_live(&self, timer: &Timer) -> bool {
        let Some(Some(entry)) = self.slots.get(timer.slot) else {
            return false;
        };
        if entry.generation != timer.generation {
            return false;
        }
        match timer.kind {
            TimerKind::Operation | TimerKind::EofGrace => {
                entry.op_seq == timer.seq && entry.pending.is_some()
            }
            TimerKind::StopPhase => entry.op_seq == timer.seq && entry.stopping.is_some(),
            TimerKind::ExitPoll => !entry.exited,
        }
    }

    pub(super) fn compact_timers(&mut self) {
        let timers = std::mem::take(&mut self.timers).into_vec();
        let live: Vec<Reverse<Timer>> = timers
            .into_iter()
            .filter(|Reverse(timer)| self.timer_is_live(timer))
            .collect();
        self.timers = BinaryHeap::from(live);
    }

    fn on_operation_deadline(&mut self, slot: usize, seq: u64) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.op_seq != seq || entry.stopping.is_some() {
            return;
        }
        let Some(pending) = entry.pending.as_ref() else {
            return;
        };
        let error = HostError::Timeout {
            stage: pending.stage,
            timeout_ms: u64::try_from(pending.timeout.as_millis()).unwrap_or(u64::MAX),
            diagnostics: entry.diagnostics(),
        };
        self.fail_terminal(slot, error);
    }

    fn on_eof_grace(&mut self, slot: usize, seq: u64) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.op_seq != seq || entry.pending.is_none() {
            return;
        }
        if !entry.exited && sys::has_exited(entry.pid).unwrap_or(false) {
            self.on_exit(slot);
            return;
        }
        let stage = current_stage(entry);
        let error = HostError::HostCrashed {
            stage,
            diagnostics: entry.diagnostics(),
        };
        self.fail_terminal(slot, error);
    }

    fn on_exit_poll(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.exited {
            return;
        }
        if sys::has_exited(entry.pid).unwrap_or(false) {
            self.on_exit(slot);
        } else {
            let at = Instant::now() + EXIT_POLL;
            self.schedule(slot, at, 0, TimerKind::ExitPoll);
        }
    }

    pub(super) fn remove(&mut self, slot: usize) {
        let Some(mut entry) = self.slots.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let registry = self.registry();
        if let Some(stdin) = entry.stdin.as_mut() {
            let _ = registry.deregister(stdin);
        }
        if let Some(stdout) = entry.stdout.as_mut() {
            let _ = registry.deregister(stdout);
        }
        if let Some(stderr) = entry.stderr.as_mut() {
            let _ = registry.deregister(stderr);
        }
        if let Some(fd) = &entry.pidfd {
            let _ = registry.deregister(&mut SourceFd(&fd.as_raw_fd()));
        }
        if entry.status.is_none() {
            match entry.child.try_wait() {
                Ok(Some(_)) | Err(_) => {}
                Ok(None) => self.graveyard.push(entry.child),
            }
        }
        self.free.push(slot);
    }

    pub(super) fn housekeeping(&mut self) {
        self.last_housekeeping = Instant::now();
        self.graveyard
            .retain_mut(|child| matches!(child.try_wait(), Ok(None)));
        // Hosts without a pidfd whose stdout is still open are polled here too.
        let slots: Vec<usize> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, entry)| match entry {
                Some(entry) if !entry.exited && entry.pidfd.is_none() => Some(slot),
                _ => None,
            })
            .collect();
        for slot in slots {
            if let Some(entry) = self.slot_entry(slot)
                && sys::has_exited(entry.pid).unwrap_or(false)
            {
                self.on_exit(slot);
            }
        }
    }
}
