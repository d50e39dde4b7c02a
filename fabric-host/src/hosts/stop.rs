//! Stopping hosts: graceful `stop`, `SIGTERM`/`SIGKILL` escalation, process shutdown.

use std::path::Path;
use std::time::{Duration, Instant};

use fabric_config::Stage;
use fabric_stats::ProcStat;

use crate::error::HostError;
use fabric_reactor::sys;

use super::{
    EXIT_POLL, Escalation, HostKey, Hosts, Phase, Reply, StopOutcome, StopPolicy, Stopping,
    TimerKind, describe_exit, kill_escaped,
};

impl Hosts {
    pub(super) fn stop_all(&mut self, policy: StopPolicy) {
        self.shutdown = Some(policy);
        for key in self.live_keys() {
            // A host already stopping keeps its stop (and its bound).
            self.begin_stop(key, None, policy, None);
        }
    }

    pub(super) fn kill_all(&mut self) {
        for key in self.live_keys() {
            let Some(entry) = self.entry(key) else {
                continue;
            };
            if entry.escaped.is_empty()
                && let Ok(pid) = u32::try_from(entry.pid)
            {
                entry.escaped = fabric_stats::procs::descendants(Path::new("/proc"), pid);
            }
            let _ = sys::signal_group(entry.pid, sys::SIGKILL);
            kill_escaped(&entry.escaped);
        }
    }

    pub(super) fn begin_stop(
        &mut self,
        key: HostKey,
        line: Option<Vec<u8>>,
        policy: StopPolicy,
        reply: Option<Reply<StopOutcome>>,
    ) {
        let slot = key.slot;
        let Some(entry) = self.entry(key) else {
            if let Some(reply) = reply {
                let _ = reply.send(StopOutcome {
                    response: None,
                    exit: None,
                    escalation: Escalation::None,
                    exited_before: true,
                    graceful: false,
                    elapsed: Duration::ZERO,
                    error: None,
                    left_behind: Vec::new(),
                });
            }
            return;
        };
        if entry.stopped || entry.stopping.is_some() {
            // A second stop: report what is known without disturbing the first one.
            if let Some(reply) = reply {
                let _ = reply.send(StopOutcome {
                    response: None,
                    exit: entry.status.map(describe_exit),
                    escalation: Escalation::None,
                    exited_before: true,
                    graceful: false,
                    elapsed: Duration::ZERO,
                    error: None,
                    left_behind: Vec::new(),
                });
            }
            return;
        }
        // Remember every descendant while the tree is still intact: one that leaves the
        // group (setsid) later is still ended together with the group.
        if !entry.exited {
            if let Ok(pid) = u32::try_from(entry.pid) {
                entry.escaped = fabric_stats::procs::descendants(Path::new("/proc"), pid);
            }
        }
        let now = Instant::now();
        let exited_before = entry.exited;
        // A call in flight cannot be interleaved with `stop` (the host answers in order and
        // may take its full deadline): it is failed, and the group is signalled at once.
        let had_pending = entry.pending.is_some();
        if let Some(pending) = entry.pending.take() {
            let _ = pending.reply.send(Err(HostError::RuntimeStopped {
                stage: pending.stage,
            }));
        }
        let graceful = line.is_some()
            && !had_pending
            && entry.latched.is_none()
            && entry.stdin.is_some()
            && !entry.exited;
        entry.stopping = Some(Stopping {
            phase: if graceful { Phase::Grace } else { Phase::Term },
            policy,
            started: now,
            reply,
            response: None,
            graceful,
            escalation: Escalation::None,
            exited_before,
            left_behind: Vec::new(),
            ack: None,
        });
        entry.op_seq += 1;
        let seq = entry.op_seq;
        if entry.exited {
            self.finish_stop(slot);
            return;
        }
        let poll_exit = entry.pidfd.is_none();
        // Callers write no request line after a stop began (`lane.rs`).
        entry.close_lane();
        if graceful {
            // An empty line is no request at all: stdin is only closed (an EOF stop).
            if let Some(mut line) = line.filter(|line| !line.is_empty()) {
                line.push(b'\n');
                entry.queue_line(line);
            }
            entry.close_stdin_after_flush = true;
            self.schedule(slot, now + policy.grace, seq, TimerKind::StopPhase);
            self.flush_stdin(slot);
        } else {
            // No usable protocol channel: close stdin and go straight to SIGTERM.
            entry.stdin = None;
            let _ = sys::signal_group(entry.pid, sys::SIGTERM);
            if let Some(stopping) = &mut entry.stopping {
                stopping.escalation = Escalation::Terminated;
            }
            self.schedule(slot, now + policy.term_wait, seq, TimerKind::StopPhase);
        }
        if poll_exit {
            self.schedule(slot, now + EXIT_POLL, 0, TimerKind::ExitPoll);
        }
    }

    pub(super) fn on_stop_phase(&mut self, slot: usize, seq: u64) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.op_seq != seq || entry.exited {
            return;
        }
        let pid = entry.pid;
        let Some(stopping) = entry.stopping.as_mut() else {
            return;
        };
        let now = Instant::now();
        match stopping.phase {
            Phase::Grace => {
                stopping.phase = Phase::Term;
                stopping.escalation = Escalation::Terminated;
                let wait = stopping.policy.term_wait;
                entry.stdin = None;
                let _ = sys::signal_group(pid, sys::SIGTERM);
                self.schedule(slot, now + wait, seq, TimerKind::StopPhase);
            }
            Phase::Term => {
                stopping.phase = Phase::Kill;
                stopping.escalation = Escalation::Killed;
                let wait = stopping.policy.kill_wait;
                let _ = sys::signal_group(pid, sys::SIGKILL);
                kill_escaped(&entry.escaped);
                self.schedule(slot, now + wait, seq, TimerKind::StopPhase);
            }
            Phase::Kill => {
                // Not even SIGKILL ended it in time (uninterruptible sleep?): give up
                // waiting, report it, and keep reaping in the background.
                let elapsed = stopping.started.elapsed();
                let error = HostError::TerminationFailed {
                    stage: Stage::Stop,
                    timeout_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                    diagnostics: entry.diagnostics(),
                };
                let Some(stopping) = entry.stopping.take() else {
                    return;
                };
                entry.stopped = true;
                if let Some(reply) = stopping.reply {
                    let _ = reply.send(StopOutcome {
                        response: stopping.response,
                        exit: None,
                        escalation: stopping.escalation,
                        exited_before: stopping.exited_before,
                        graceful: stopping.graceful,
                        elapsed,
                        error: Some(error),
                        left_behind: stopping.left_behind,
                    });
                }
                let released = entry.released;
                if released {
                    self.remove(slot);
                }
            }
        }
    }

    pub(super) fn finish_stop(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        let Some(stopping) = entry.stopping.take() else {
            return;
        };
        entry.stopped = true;
        if let Some(reply) = stopping.reply {
            let _ = reply.send(StopOutcome {
                response: stopping.response,
                exit: entry.status.map(describe_exit),
                escalation: stopping.escalation,
                exited_before: stopping.exited_before,
                graceful: stopping.graceful,
                elapsed: stopping.started.elapsed(),
                error: None,
                left_behind: stopping.left_behind,
            });
        }
        if entry.released {
            self.remove(slot);
        }
    }
}

/// The processes of a stopping host that are still alive as its leader exits: the
/// descendants recorded when the stop began (`escaped`; the host is a subreaper, so a
/// double-forked grandchild is one of them) that are still the same processes. One stat
/// read per recorded descendant (no process-table scan on the reactor thread). Read before
/// the core kills them, so a stop can report what the adapter left behind.
pub(super) fn left_behind(escaped: &[ProcStat]) -> Vec<ProcStat> {
    let root = Path::new("/proc");
    escaped
        .iter()
        .filter(|stat| {
            fabric_stats::procs::read_stat(root, stat.pid)
                .is_some_and(|now| now.start_time == stat.start_time && !now.is_exited())
        })
        .copied()
        .collect()
}
