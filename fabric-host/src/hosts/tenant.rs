//! The tenant side: what the reactor calls ([`Tenant`]), and the operations callers send
//! through [`handle`](super::handle).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::{Duration, Instant};

use fabric_config::Stage;
use fabric_reactor::{Context, Tenant};
use mio::unix::SourceFd;
use mio::{Interest, Registry};

use crate::error::HostError;

use super::handle::{EngineStats, WAITERS};
use super::{
    COMPACT_TIMERS_AT, EOF_GRACE, HOUSEKEEPING, HostEntry, HostInit, HostKey, Hosts, KIND_PIDFD,
    KIND_STDERR, KIND_STDIN, KIND_STDOUT, Pending, READ_CHUNK, Responder, SPIN, StopPolicy, Timer,
    TimerKind, sub_token,
};

impl Tenant for Hosts {
    fn on_ready(&mut self, _cx: &mut Context<'_>, sub: usize) {
        self.ready.push(sub);
    }

    fn run_again(&mut self, _cx: &mut Context<'_>) {
        if self.ready.is_empty() && self.again.is_empty() {
            return;
        }
        let mut subs = std::mem::take(&mut self.ready);
        subs.append(&mut self.again);
        subs.sort_unstable();
        subs.dedup();
        for sub in subs {
            self.on_source(sub);
        }
    }

    fn fire(&mut self, _cx: &mut Context<'_>, now: Instant) {
        self.fire_timers(now);
        if now.saturating_duration_since(self.last_housekeeping) >= HOUSEKEEPING {
            self.housekeeping();
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let housekeeping = self.last_housekeeping + HOUSEKEEPING;
        Some(match self.timers.peek() {
            Some(Reverse(timer)) => timer.at.min(housekeeping),
            None => housekeeping,
        })
    }

    fn has_work(&self) -> bool {
        !self.again.is_empty() || !self.ready.is_empty()
    }

    /// A lone caller waits for a fast host: stay awake briefly instead of paying a wake-up
    /// for the response. Never with several callers (the hosts need the CPU).
    fn spinning(&mut self, now: Instant) -> bool {
        if let Some(until) = self.spin_until {
            if now < until && WAITERS.load(AtomicOrdering::Acquire) <= 1 {
                return true;
            }
            self.spin_until = None;
        }
        false
    }
}

impl Hosts {
    /// The tenant, built on the reactor thread at registration.
    pub(super) fn new(cx: &mut Context<'_>) -> io::Result<Hosts> {
        Ok(Hosts {
            registry: cx.registry().try_clone()?,
            tokens: cx.tokens(),
            slots: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            buf: vec![0; READ_CHUNK],
            ready: Vec::new(),
            again: Vec::new(),
            graveyard: Vec::new(),
            last_housekeeping: Instant::now(),
            spin_until: None,
            shutdown: None,
        })
    }

    pub(super) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(super) fn entry(&mut self, key: HostKey) -> Option<&mut HostEntry> {
        match self.slots.get_mut(key.slot) {
            Some(Some(entry)) if entry.generation == key.generation => Some(entry),
            _ => None,
        }
    }

    pub(super) fn schedule(&mut self, slot: usize, at: Instant, seq: u64, kind: TimerKind) {
        // Finished operations leave their (long) deadlines behind; drop them before the
        // heap grows past a small multiple of what can still fire.
        if self.timers.len() >= COMPACT_TIMERS_AT.max(self.slots.len() * 8) {
            self.compact_timers();
        }
        let generation = self.generations[slot];
        self.timers.push(Reverse(Timer {
            at,
            slot,
            generation,
            seq,
            kind,
        }));
    }

    // ----- operations (called through the handle) --------------------------------------

    pub(super) fn add_host(&mut self, init: HostInit) -> io::Result<HostKey> {
        let result = self.add(init);
        if let (Ok(key), Some(policy)) = (&result, self.shutdown) {
            self.begin_stop(*key, None, policy, None);
        }
        result
    }

    pub(super) fn send_request(
        &mut self,
        key: HostKey,
        line: Vec<u8>,
        stage: Stage,
        timeout: Duration,
        spin: bool,
        reply: Responder,
    ) {
        self.request(key, line, stage, timeout, reply);
        if spin && WAITERS.load(AtomicOrdering::Acquire) <= 1 {
            self.spin_until = Some(Instant::now() + SPIN);
        }
    }

    pub(super) fn stats(&self) -> EngineStats {
        EngineStats {
            hosts: self.slots.iter().filter(|s| s.is_some()).count(),
            timers: self.timers.len(),
            unreaped: self.graveyard.len(),
        }
    }

    pub(super) fn running(&self) -> usize {
        self.slots.iter().flatten().filter(|e| !e.exited).count()
    }

    /// Hosts whose stop has begun and not ended (exit, reap and after-exit work pending).
    pub(super) fn stopping(&self) -> usize {
        self.slots
            .iter()
            .flatten()
            .filter(|e| e.stopping.is_some())
            .count()
    }

    pub(super) fn live_keys(&self) -> Vec<HostKey> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(slot, entry)| match entry {
                Some(entry) if !entry.exited => Some(HostKey {
                    slot,
                    generation: entry.generation,
                }),
                _ => None,
            })
            .collect()
    }

    fn add(&mut self, init: HostInit) -> io::Result<HostKey> {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                self.generations.push(0);
                self.slots.len() - 1
            }
        };
        self.generations[slot] += 1;
        let generation = self.generations[slot];
        let HostInit {
            child,
            mut stdin,
            mut stdout,
            mut stderr,
            pidfd,
            sink,
            max_line,
        } = init;
        let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
        let registered = (|| -> io::Result<()> {
            stdin.set_nonblocking(true)?;
            stdout.set_nonblocking(true)?;
            stderr.set_nonblocking(true)?;
            let registry = self.registry();
            registry.register(
                &mut stdin,
                self.tokens.token(sub_token(slot, KIND_STDIN)),
                Interest::WRITABLE,
            )?;
            registry.register(
                &mut stdout,
                self.tokens.token(sub_token(slot, KIND_STDOUT)),
                Interest::READABLE,
            )?;
            registry.register(
                &mut stderr,
                self.tokens.token(sub_token(slot, KIND_STDERR)),
                Interest::READABLE,
            )?;
            if let Some(fd) = &pidfd {
                registry.register(
                    &mut SourceFd(&fd.as_raw_fd()),
                    self.tokens.token(sub_token(slot, KIND_PIDFD)),
                    Interest::READABLE,
                )?;
            }
            Ok(())
        })();
        let entry = Box::new(HostEntry {
            generation,
            pid,
            child,
            stdin: Some(stdin),
            write_buf: Vec::new(),
            write_pos: 0,
            close_stdin_after_flush: false,
            stdout: Some(stdout),
            line: Vec::new(),
            scanned: 0,
            max_line,
            stderr: Some(stderr),
            sink,
            pidfd,
            exited: false,
            status: None,
            pending: None,
            early: None,
            op_seq: 0,
            latched: None,
            stopping: None,
            stopped: false,
            released: false,
            escaped: Vec::new(),
        });
        self.slots[slot] = Some(entry);
        let key = HostKey { slot, generation };
        if let Err(error) = registered {
            // Never leave a child behind: terminate and reap it in the background.
            self.release(key, None);
            return Err(error);
        }
        // Without a pidfd an idle host's exit is noticed by stdout EOF or housekeeping;
        // stops poll faster (see begin_stop).
        Ok(key)
    }

    fn request(
        &mut self,
        key: HostKey,
        mut line: Vec<u8>,
        stage: Stage,
        timeout: Duration,
        reply: Responder,
    ) {
        let at = Instant::now() + timeout;
        if !self.register_pending(key, stage, timeout, at, reply) {
            return;
        }
        let Some(entry) = self.entry(key) else {
            return;
        };
        line.push(b'\n');
        if let Some(stdin) = &entry.stdin {
            stdin.lane().lock().hand_to_reactor();
        }
        entry.queue_line(line);
        self.flush_stdin(key.slot);
    }

    /// A request whose line the caller wrote itself (`lane.rs`): only its answer and
    /// deadline are the reactor's.
    pub(super) fn expect(
        &mut self,
        key: HostKey,
        stage: Stage,
        timeout: Duration,
        at: Instant,
        reply: Responder,
    ) {
        let Some(entry) = self.entry(key) else {
            let _ = reply.send(Err(HostError::RuntimeStopped { stage }));
            return;
        };
        if let Some(stdin) = &entry.stdin {
            stdin.lane().registered();
        }
        // The answer came before this bookkeeping ran (see `lane.rs`).
        if let Some(line) = entry.early.take() {
            let _ = reply.send(Ok(line));
            return;
        }
        self.register_pending(key, stage, timeout, at, reply);
    }

    /// The part of a request line the host's pipe did not take from the caller: written
    /// next, before anything else (the lane sends every other line through the reactor
    /// until this one is out).
    pub(super) fn write_rest(&mut self, key: HostKey, line: Vec<u8>) {
        if let Some(entry) = self.entry(key) {
            entry.queue_line(line);
            self.flush_stdin(key.slot);
        }
    }

    /// Checks that `key` can take a request and makes `reply` its pending operation with
    /// its deadline at `at`; otherwise answers `reply` with why not (`false`).
    fn register_pending(
        &mut self,
        key: HostKey,
        stage: Stage,
        timeout: Duration,
        at: Instant,
        reply: Responder,
    ) -> bool {
        let Some(entry) = self.entry(key) else {
            let _ = reply.send(Err(HostError::RuntimeStopped { stage }));
            return false;
        };
        if entry.stopping.is_some() || entry.stopped {
            let _ = reply.send(Err(HostError::RuntimeStopped { stage }));
            return false;
        }
        if let Some(error) = &entry.latched {
            let _ = reply.send(Err(error.clone().at_stage(stage)));
            return false;
        }
        if entry.pending.is_some() {
            let _ = reply.send(Err(HostError::RuntimeBusy { stage }));
            return false;
        }
        if entry.exited || entry.stdin.is_none() {
            let error = HostError::HostCrashed {
                stage,
                diagnostics: entry.diagnostics(),
            };
            entry.latched = Some(error.clone());
            entry.close_lane();
            let _ = reply.send(Err(error));
            return false;
        }
        entry.pending = Some(Pending {
            stage,
            timeout,
            reply,
        });
        entry.op_seq += 1;
        let seq = entry.op_seq;
        // The host's stdout already ended (a caller's own write, `lane.rs`, can be answered
        // by EOF before this bookkeeping runs): no answer can come, so the request ends as
        // one pending at the EOF would, after the grace that lets the exit show.
        let stdout_ended = entry.stdout.is_none();
        self.schedule(key.slot, at, seq, TimerKind::Operation);
        if stdout_ended {
            self.schedule(
                key.slot,
                Instant::now() + EOF_GRACE,
                seq,
                TimerKind::EofGrace,
            );
        }
        true
    }

    /// Forgets a host once it is stopped; a running one is stopped in the background
    /// (gracefully when `line` is a `stop` request).
    pub(super) fn release(&mut self, key: HostKey, line: Option<Vec<u8>>) {
        let Some(entry) = self.entry(key) else {
            return;
        };
        entry.released = true;
        if entry.stopped {
            self.remove(key.slot);
        } else if entry.stopping.is_none() {
            self.begin_stop(key, line, StopPolicy::default(), None);
        }
    }
}
