//! The reactor loop, its bookkeeping, and the commands it serves.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use fabric_config::Stage;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry};

use crate::error::HostError;

use super::handle::{EngineStats, WAITERS};
use super::{
    COMPACT_TIMERS_AT, Cmd, HostEntry, HostInit, HostKey, KIND_PIDFD, KIND_STDERR, KIND_STDIN,
    KIND_STDOUT, MAX_POLL, Pending, READ_CHUNK, Reactor, Responder, SPIN, StopPolicy, Timer,
    TimerKind, WAKER, token,
};

impl Reactor {
    pub(super) fn new(poll: Poll) -> Reactor {
        Reactor {
            poll,
            slots: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            buf: vec![0; READ_CHUNK],
            again: Vec::new(),
            graveyard: Vec::new(),
            last_housekeeping: Instant::now(),
            spin_until: None,
            streams: crate::stream::Listeners::default(),
            collectors: crate::collector::Servers::default(),
            shutdown: None,
        }
    }

    pub(super) fn run(mut self, commands: Receiver<Cmd>) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = self.poll_timeout();
            if let Err(error) = self.poll.poll(&mut events, Some(timeout))
                && error.kind() != io::ErrorKind::Interrupted
            {
                // epoll_wait failing for another reason is not recoverable by retrying
                // hot; back off briefly and keep serving deadlines.
                std::thread::sleep(Duration::from_millis(10));
            }
            let mut again = std::mem::take(&mut self.again);
            for event in events.iter() {
                if event.token() == WAKER {
                    continue;
                }
                if crate::collector::owns(event.token()) {
                    self.collectors
                        .on_ready(self.poll.registry(), event.token());
                    continue;
                }
                if crate::stream::owns(event.token()) {
                    self.streams.on_ready(self.poll.registry(), event.token());
                    continue;
                }
                again.push(event.token());
            }
            self.streams.run_again(self.poll.registry());
            self.collectors.run_again(self.poll.registry());
            again.sort_unstable_by_key(|t| t.0);
            again.dedup();
            for token in again {
                self.on_ready(token);
            }
            loop {
                match commands.try_recv() {
                    Ok(cmd) => self.on_command(cmd),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            self.fire_timers();
            self.streams.fire(self.poll.registry(), Instant::now());
            self.collectors.fire(self.poll.registry(), Instant::now());
            if self.last_housekeeping.elapsed() >= MAX_POLL {
                self.housekeeping();
            }
        }
    }

    fn poll_timeout(&mut self) -> Duration {
        if !self.again.is_empty() || self.streams.has_work() || self.collectors.has_work() {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let timeout = self.host_poll_timeout(now);
        [
            self.streams.next_deadline(),
            self.collectors.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .fold(timeout, |timeout, at| {
            timeout.min(at.saturating_duration_since(now))
        })
    }

    fn host_poll_timeout(&mut self, now: Instant) -> Duration {
        // A lone caller waits for a fast host: stay awake briefly instead of paying a
        // wake-up for the response. Never with several callers (the hosts need the CPU).
        if let Some(until) = self.spin_until {
            if now < until && WAITERS.load(AtomicOrdering::Acquire) <= 1 {
                std::thread::yield_now();
                return Duration::ZERO;
            }
            self.spin_until = None;
        }
        match self.timers.peek() {
            Some(Reverse(timer)) => timer.at.saturating_duration_since(now).min(MAX_POLL),
            None => MAX_POLL,
        }
    }

    fn registry(&self) -> &Registry {
        self.poll.registry()
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

    // ----- commands -------------------------------------------------------------------

    fn on_command(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Add { init, reply } => {
                let result = self.add(*init);
                if let (Ok(key), Some(policy)) = (&result, self.shutdown) {
                    self.begin_stop(*key, None, policy, None);
                }
                let _ = reply.send(result);
            }
            Cmd::Request {
                key,
                line,
                stage,
                timeout,
                spin,
                reply,
            } => {
                self.request(key, line, stage, timeout, reply);
                if spin && WAITERS.load(AtomicOrdering::Acquire) <= 1 {
                    self.spin_until = Some(Instant::now() + SPIN);
                }
            }
            Cmd::Stop {
                key,
                line,
                policy,
                reply,
            } => self.begin_stop(key, line, policy, Some(reply)),
            Cmd::Release { key, line } => self.release(key, line),
            Cmd::Stream(command) => self.streams.command(self.poll.registry(), command),
            Cmd::Collector(command) => self.collectors.command(self.poll.registry(), command),
            Cmd::Stats { reply } => {
                let _ = reply.send(EngineStats {
                    hosts: self.slots.iter().filter(|s| s.is_some()).count(),
                    timers: self.timers.len(),
                    unreaped: self.graveyard.len(),
                });
            }
            Cmd::StopAll { policy } => self.stop_all(policy),
            Cmd::KillAll => self.kill_all(),
            Cmd::Running { reply } => {
                let running = self.slots.iter().flatten().filter(|e| !e.exited).count();
                let _ = reply.send(running);
            }
        }
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
            registry.register(&mut stdin, token(slot, KIND_STDIN), Interest::WRITABLE)?;
            registry.register(&mut stdout, token(slot, KIND_STDOUT), Interest::READABLE)?;
            registry.register(&mut stderr, token(slot, KIND_STDERR), Interest::READABLE)?;
            if let Some(fd) = &pidfd {
                registry.register(
                    &mut SourceFd(&fd.as_raw_fd()),
                    token(slot, KIND_PIDFD),
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
        let Some(entry) = self.entry(key) else {
            let _ = reply.send(Err(HostError::RuntimeStopped { stage }));
            return;
        };
        if entry.stopping.is_some() || entry.stopped {
            let _ = reply.send(Err(HostError::RuntimeStopped { stage }));
            return;
        }
        if let Some(error) = &entry.latched {
            let _ = reply.send(Err(error.clone().at_stage(stage)));
            return;
        }
        if entry.pending.is_some() {
            let _ = reply.send(Err(HostError::RuntimeBusy { stage }));
            return;
        }
        if entry.exited || entry.stdin.is_none() {
            let error = HostError::HostCrashed {
                stage,
                diagnostics: entry.diagnostics(),
            };
            entry.latched = Some(error.clone());
            let _ = reply.send(Err(error));
            return;
        }
        line.push(b'\n');
        entry.write_buf.extend_from_slice(&line);
        entry.pending = Some(Pending {
            stage,
            timeout,
            reply,
        });
        entry.op_seq += 1;
        let seq = entry.op_seq;
        let at = Instant::now() + timeout;
        self.schedule(key.slot, at, seq, TimerKind::Operation);
        self.flush_stdin(key.slot);
    }

    /// Forgets a host once it is stopped; a running one is stopped in the background
    /// (gracefully when `line` is a `stop` request).
    fn release(&mut self, key: HostKey, line: Option<Vec<u8>>) {
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
