//! Per-host I/O on readiness: stdin writes, stdout lines, stderr, exits.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::time::Instant;

use fabric_config::Stage;
use mio::unix::SourceFd;

use crate::error::{HostError, ProtocolViolation};
use fabric_reactor::sys;

use super::{
    EOF_GRACE, EXIT_POLL, HostEntry, Hosts, KEEP_LINE_CAPACITY, KIND_STDERR, KIND_STDIN,
    KIND_STDOUT, READ_BUDGET, TimerKind, current_stage, kill_escaped, split_sub, sub_token,
};

impl Hosts {
    // ----- readiness ------------------------------------------------------------------

    /// Handles readiness of one host source (`slot * 4 + kind`).
    pub(super) fn on_source(&mut self, sub: usize) {
        let (slot, kind) = split_sub(sub);
        if !matches!(self.slots.get(slot), Some(Some(_))) {
            return; // stale event for a removed host
        }
        match kind {
            KIND_STDIN => self.flush_stdin(slot),
            KIND_STDOUT => self.read_stdout(slot),
            KIND_STDERR => self.read_stderr(slot),
            _ => self.on_pidfd(slot),
        }
    }

    pub(super) fn slot_entry(&mut self, slot: usize) -> Option<&mut HostEntry> {
        self.slots.get_mut(slot).and_then(|e| e.as_deref_mut())
    }

    pub(super) fn flush_stdin(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        let Some(stdin) = entry.stdin.as_mut() else {
            entry.write_buf.clear();
            entry.write_pos = 0;
            return;
        };
        let queued = entry.write_pos < entry.write_buf.len();
        let mut failure: Option<io::Error> = None;
        while entry.write_pos < entry.write_buf.len() {
            match stdin.write(&entry.write_buf[entry.write_pos..]) {
                Ok(0) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => entry.write_pos += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        // Written: an idle host keeps no buffer (the next request line is moved in).
        entry.write_buf = Vec::new();
        entry.write_pos = 0;
        if let Some(error) = failure {
            let mut stdin = entry.stdin.take();
            if let Some(stdin) = stdin.as_mut() {
                let _ = self.registry().deregister(stdin);
            }
            let Some(entry) = self.slot_entry(slot) else {
                return;
            };
            if let Some(pending) = entry.pending.take() {
                let stage = pending.stage;
                let error = if error.kind() == io::ErrorKind::BrokenPipe {
                    HostError::HostCrashed {
                        stage,
                        diagnostics: entry.diagnostics(),
                    }
                } else {
                    HostError::HostIo {
                        stage,
                        reason: error.to_string(),
                        diagnostics: entry.diagnostics(),
                    }
                };
                entry.latched = Some(error.clone());
                let _ = pending.reply.send(Err(error));
            }
            return;
        }
        if entry.close_stdin_after_flush {
            // Closing stdin after `stop` also ends hosts that only react to EOF.
            if let Some(mut stdin) = entry.stdin.take() {
                let _ = self.registry().deregister(&mut stdin);
            }
        } else if let Some(stdin) = entry.stdin.as_ref().filter(|_| queued) {
            // Everything queued is out: callers write their request lines again.
            stdin.lane().lock().reactor_flushed();
        }
    }

    fn read_stdout(&mut self, slot: usize) {
        let mut budget = READ_BUDGET;
        loop {
            let Some(entry) = self.slots.get_mut(slot).and_then(|e| e.as_deref_mut()) else {
                return;
            };
            let Some(stdout) = entry.stdout.as_mut() else {
                return;
            };
            match stdout.read(&mut self.buf) {
                Ok(0) => {
                    self.on_stdout_eof(slot);
                    return;
                }
                Ok(n) => {
                    entry.line.extend_from_slice(&self.buf[..n]);
                    self.process_lines(slot);
                    budget = budget.saturating_sub(n);
                    if budget == 0 {
                        self.again.push(sub_token(slot, KIND_STDOUT));
                        return;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                Err(error) => {
                    let stage = entry.pending.as_ref().map_or(Stage::Invoke, |p| p.stage);
                    let error = HostError::HostIo {
                        stage,
                        reason: error.to_string(),
                        diagnostics: entry.diagnostics(),
                    };
                    self.fail_terminal(slot, error);
                    return;
                }
            }
        }
    }

    /// Splits complete lines out of the stdout buffer and routes them.
    fn process_lines(&mut self, slot: usize) {
        loop {
            let Some(entry) = self.slot_entry(slot) else {
                return;
            };
            if entry.stdout.is_none() {
                return;
            }
            let newline = entry.line[entry.scanned..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| entry.scanned + i);
            let Some(end) = newline else {
                entry.scanned = entry.line.len();
                if entry.line.len() > entry.max_line {
                    let stage = current_stage(entry);
                    let error = HostError::Protocol {
                        stage,
                        violation: ProtocolViolation::LineTooLong,
                        diagnostics: entry.diagnostics(),
                    };
                    self.fail_terminal(slot, error);
                }
                return;
            };
            if end > entry.max_line {
                let stage = current_stage(entry);
                let error = HostError::Protocol {
                    stage,
                    violation: ProtocolViolation::LineTooLong,
                    diagnostics: entry.diagnostics(),
                };
                self.fail_terminal(slot, error);
                return;
            }
            // The usual case, one whole line in the buffer, moves it out without a copy
            // and leaves an idle host no buffer; a line followed by more is split off.
            let mut line: Vec<u8> = if end + 1 == entry.line.len() {
                std::mem::take(&mut entry.line)
            } else {
                entry.line.drain(..=end).collect()
            };
            line.pop(); // '\n'
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            entry.scanned = 0;
            if entry.line.is_empty() && entry.line.capacity() > KEEP_LINE_CAPACITY {
                entry.line = Vec::new();
            }
            self.route_line(slot, line);
        }
    }

    fn route_line(&mut self, slot: usize, line: Vec<u8>) {
        if self.slot_entry(slot).is_some_and(|e| {
            e.pending.is_some() || e.stopping.is_some() || e.answers_unregistered()
        }) {
            // A host writes its diagnostics (a traceback) to stderr before its answer on
            // stdout: read what is already in the pipe before completing, so the
            // per-invocation `stderr.txt` and a failed outcome's cause both carry it.
            self.read_stderr(slot);
        }
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if let Some(stopping) = &mut entry.stopping {
            // Only the first line after a `stop` request answers it; anything else (a late
            // answer to an abandoned request) is dropped.
            if stopping.graceful && stopping.response.is_none() {
                stopping.response = Some(line);
                self.on_stop_acknowledged(slot);
            }
            return;
        }
        if let Some(pending) = entry.pending.take() {
            let _ = pending.reply.send(Ok(line));
            return;
        }
        if entry.answers_unregistered() {
            entry.early = Some(line);
            return;
        }
        if entry.latched.is_none() {
            let error = HostError::Protocol {
                stage: Stage::Invoke,
                violation: ProtocolViolation::UnexpectedOutput,
                diagnostics: entry.diagnostics(),
            };
            self.fail_terminal(slot, error);
        }
    }

    fn on_stdout_eof(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if let Some(mut stdout) = entry.stdout.take() {
            let _ = self.registry().deregister(&mut stdout);
        }
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        entry.line = Vec::new();
        if entry.exited {
            return; // on_exit is draining the pipes and will settle the pending operation
        }
        if sys::has_exited(entry.pid).unwrap_or(false) {
            self.on_exit(slot);
            return;
        }
        if entry.pending.is_some() {
            // The kernel closes a dying process's pipes before it becomes a zombie: give
            // the exit a moment to show up so the error can say how the host ended.
            let seq = entry.op_seq;
            self.schedule(slot, Instant::now() + EOF_GRACE, seq, TimerKind::EofGrace);
        }
        if let Some(entry) = self.slot_entry(slot)
            && entry.pidfd.is_none()
            && !entry.exited
        {
            let at = Instant::now() + EXIT_POLL;
            self.schedule(slot, at, 0, TimerKind::ExitPoll);
        }
    }

    fn read_stderr(&mut self, slot: usize) {
        let mut budget = READ_BUDGET;
        loop {
            let Some(entry) = self.slots.get_mut(slot).and_then(|e| e.as_deref_mut()) else {
                return;
            };
            let Some(stderr) = entry.stderr.as_mut() else {
                return;
            };
            match stderr.read(&mut self.buf) {
                Ok(0) => {
                    entry.sink.flush();
                    if let Some(mut stderr) = entry.stderr.take() {
                        let _ = self.registry().deregister(&mut stderr);
                    }
                    return;
                }
                Ok(n) => {
                    entry.sink.push(&self.buf[..n]);
                    budget = budget.saturating_sub(n);
                    if budget == 0 {
                        self.again.push(sub_token(slot, KIND_STDERR));
                        return;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    fn on_pidfd(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if !entry.exited {
            self.on_exit(slot);
        }
    }

    /// The host leader exited (it is a zombie until reaped here, so its pid and pgid stay
    /// reserved while the rest of its group is killed).
    pub(super) fn on_exit(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        entry.exited = true;
        if entry.stopping.is_some() {
            let left = super::stop::left_behind(&entry.escaped);
            if let Some(stopping) = entry.stopping.as_mut() {
                stopping.left_behind = left;
            }
        }
        let _ = sys::signal_group(entry.pid, sys::SIGKILL);
        kill_escaped(&entry.escaped);
        // Everything the host wrote before exiting is in the pipes: route it first.
        self.read_stdout(slot);
        self.read_stderr(slot);
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        entry.sink.flush();
        if let Ok(Some(status)) = entry.child.try_wait() {
            entry.status = Some(status);
        }
        if let Some(fd) = entry.pidfd.take() {
            let _ = self.registry().deregister(&mut SourceFd(&fd.as_raw_fd()));
        }
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if let Some(mut stdin) = entry.stdin.take() {
            let _ = self.registry().deregister(&mut stdin);
        }
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.stopping.is_some() {
            self.finish_stop(slot);
            return;
        }
        let stage = current_stage(entry);
        let error = HostError::HostCrashed {
            stage,
            diagnostics: entry.diagnostics(),
        };
        self.fail_terminal(slot, error);
    }

    /// Latches a terminal error, fails the pending operation and stops reading stdout.
    pub(super) fn fail_terminal(&mut self, slot: usize, error: HostError) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.latched.is_none() {
            entry.latched = Some(error.clone());
        }
        entry.close_lane();
        if let Some(pending) = entry.pending.take() {
            let _ = pending.reply.send(Err(error));
        }
        // The stdout stream cannot be trusted any more; closing it also unblocks a host
        // that keeps writing.
        if let Some(mut stdout) = entry.stdout.take() {
            let _ = self.registry().deregister(&mut stdout);
        }
        if let Some(entry) = self.slot_entry(slot) {
            entry.line = Vec::new();
            entry.scanned = 0;
        }
    }
}
