//! Host pipes as a reactor tenant: every adapter host's stdin, stdout, stderr and pidfd,
//! its pending request, its stop escalation and their deadlines.
//!
//! Callers never touch this state: [`handle`] sends closures to the tenant on the reactor
//! thread (`fabric_reactor::Handle`) and blocks on a one-shot reply channel. Sub-tokens of
//! host sources come from a slab: `slot * 4 + kind`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::ExitStatus;

use std::sync::Arc;
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

use fabric_config::Stage;
use fabric_reactor::Tokens;
use fabric_reactor::stderr::StderrSink;
use fabric_reactor::sys::{self, HostChild};
use fabric_stats::ProcStat;
use mio::Registry;
use mio::unix::pipe;

use crate::error::{Diagnostics, HostError};

mod ack;
mod handle;
mod lane;
mod readiness;
mod stop;
mod tenant;
mod timers;

pub(crate) use ack::AfterExit;
pub use handle::{EngineStats, engine_stats};
pub(crate) use handle::{HostsHandle, PendingReply};
pub(crate) use lane::{Lane, Stdin};

const KIND_STDIN: usize = 0;
const KIND_STDOUT: usize = 1;
const KIND_STDERR: usize = 2;
const KIND_PIDFD: usize = 3;
/// Housekeeping cadence (graveyard reaping, exit polling without pidfds).
const HOUSEKEEPING: Duration = Duration::from_secs(1);
/// Exit polling cadence when no pidfd is available.
const EXIT_POLL: Duration = Duration::from_millis(10);
/// How long a pending operation waits for the exit after stdout EOF.
const EOF_GRACE: Duration = Duration::from_millis(200);
/// How long a lone waiting caller polls for its response before blocking.
pub(crate) const SPIN: Duration = Duration::from_micros(200);
/// Read buffer shared by every host (the reactor is single-threaded).
const READ_CHUNK: usize = 64 * 1024;
/// Per-event read budget for one source before yielding to other hosts.
const READ_BUDGET: usize = 1024 * 1024;
/// Timer heap size that triggers dropping timers of finished operations.
const COMPACT_TIMERS_AT: usize = 4096;
/// Line buffers bigger than this are released after use (idle hosts stay small).
const KEEP_LINE_CAPACITY: usize = 16 * 1024;

/// Identifies one host in the tenant's slab (slot + generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostKey {
    slot: usize,
    generation: u64,
}

/// How a stop escalates. Each phase waits at most its duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopPolicy {
    /// Wait after sending `stop` (and closing stdin) before `SIGTERM` to the group. Default 2 s.
    pub grace: Duration,
    /// Wait after `SIGTERM` before `SIGKILL`. Default 1 s.
    pub term_wait: Duration,
    /// Wait after `SIGKILL` before giving up (the process is then reaped in the background).
    /// Default 1 s.
    pub kill_wait: Duration,
}

impl Default for StopPolicy {
    fn default() -> Self {
        StopPolicy {
            grace: Duration::from_secs(2),
            term_wait: Duration::from_secs(1),
            kill_wait: Duration::from_secs(1),
        }
    }
}

/// How far a stop had to escalate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Escalation {
    /// The host exited on its own (after `stop`/EOF, or before the stop began).
    None,
    /// The process group needed `SIGTERM`.
    Terminated,
    /// The process group needed `SIGKILL`.
    Killed,
}

impl Escalation {
    /// Stable spelling (`none`, `sigterm`, `sigkill`).
    pub fn as_str(self) -> &'static str {
        match self {
            Escalation::None => "none",
            Escalation::Terminated => "sigterm",
            Escalation::Killed => "sigkill",
        }
    }
}

/// What happened during a stop.
#[derive(Debug, Clone)]
pub(crate) struct StopOutcome {
    /// The host's raw response line to `stop`, if it sent one.
    pub response: Option<Vec<u8>>,
    /// How the host exited, if it was reaped.
    pub exit: Option<String>,
    /// Escalation used.
    pub escalation: Escalation,
    /// Whether the host had already exited before the stop began.
    pub exited_before: bool,
    /// Whether a `stop` request was sent (false: the host was terminal, busy or gone, and
    /// signals were the plan from the start).
    pub graceful: bool,
    /// Time spent.
    pub elapsed: Duration,
    /// Set when even `SIGKILL` did not end the host within the bound.
    pub error: Option<HostError>,
    /// Descendants of the host (recorded when the stop began) still alive when the host
    /// itself exited during the stop: the core then killed them.
    pub left_behind: Vec<ProcStat>,
}

/// Everything the reactor needs to own a freshly spawned host.
#[derive(Debug)]
pub(crate) struct HostInit {
    pub child: HostChild,
    pub stdin: Stdin,
    pub stdout: pipe::Receiver,
    pub stderr: pipe::Receiver,
    pub pidfd: Option<OwnedFd>,
    pub sink: Arc<StderrSink>,
    pub max_line: usize,
}

type Reply<T> = SyncSender<T>;

/// A hook the reactor calls right after a request's answer (or terminal error) was sent to
/// its waiting caller.
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// Where a request's answer goes: the caller's channel, then the optional hook. A
/// responder dropped without an answer (the reactor gave up on the request) still runs the
/// hook, so a caller waiting on it learns that the channel is closed.
struct Responder {
    channel: Reply<Result<Vec<u8>, HostError>>,
    notify: Option<Notify>,
    /// The host's lane, whose request slot is freed before the caller hears the answer.
    lane: Option<Arc<Lane>>,
}

impl Responder {
    fn send(mut self, answer: Result<Vec<u8>, HostError>) -> Result<(), ()> {
        if let Some(lane) = self.lane.take() {
            lane.release();
        }
        let sent = self.channel.send(answer).map_err(|_| ());
        if let Some(notify) = self.notify.take() {
            notify();
        }
        sent
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if let Some(lane) = self.lane.take() {
            lane.release();
        }
        if let Some(notify) = self.notify.take() {
            notify();
        }
    }
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder")
            .field("notify", &self.notify.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Pending {
    stage: Stage,
    timeout: Duration,
    reply: Responder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Grace,
    Term,
    Kill,
}

#[derive(Debug)]
struct Stopping {
    phase: Phase,
    policy: StopPolicy,
    started: Instant,
    reply: Option<Reply<StopOutcome>>,
    response: Option<Vec<u8>>,
    /// Whether a `stop` request was sent (only then is a line its response).
    graceful: bool,
    escalation: Escalation,
    exited_before: bool,
    /// See [`StopOutcome::left_behind`].
    left_behind: Vec<ProcStat>,
    /// Set when the caller is answered at the acknowledgement (`ack.rs`).
    ack: Option<ack::Ack>,
}

#[derive(Debug)]
struct HostEntry {
    generation: u64,
    pid: i32,
    child: HostChild,
    stdin: Option<Stdin>,
    write_buf: Vec<u8>,
    write_pos: usize,
    close_stdin_after_flush: bool,
    stdout: Option<pipe::Receiver>,
    line: Vec<u8>,
    scanned: usize,
    max_line: usize,
    stderr: Option<pipe::Receiver>,
    sink: Arc<StderrSink>,
    pidfd: Option<OwnedFd>,
    exited: bool,
    status: Option<ExitStatus>,
    pending: Option<Pending>,
    /// An answer that arrived before the reactor registered its request, which the caller
    /// wrote itself (`lane.rs`).
    early: Option<Vec<u8>>,
    op_seq: u64,
    latched: Option<HostError>,
    stopping: Option<Stopping>,
    stopped: bool,
    released: bool,
    escaped: Vec<ProcStat>,
}

impl HostEntry {
    /// Queues one request line (newline included) for stdin: moved in when nothing is
    /// waiting to be written (no copy, no buffer kept while idle), appended otherwise.
    fn queue_line(&mut self, line: Vec<u8>) {
        if self.write_pos >= self.write_buf.len() {
            self.write_buf = line;
            self.write_pos = 0;
        } else {
            self.write_buf.extend_from_slice(&line);
        }
    }

    /// No more direct writes by callers (the host is stopping or terminal).
    fn close_lane(&self) {
        if let Some(stdin) = &self.stdin {
            stdin.lane().close_for_stop();
        }
    }

    /// Whether a line with no pending request answers a request the caller wrote and the
    /// reactor has not registered yet.
    fn answers_unregistered(&self) -> bool {
        self.pending.is_none()
            && self.stopping.is_none()
            && self.early.is_none()
            && self.stdin.as_ref().is_some_and(|s| s.lane().expecting())
    }

    fn diagnostics(&self) -> Diagnostics {
        Diagnostics {
            pid: u32::try_from(self.pid).ok(),
            exit: self.status.map(describe_exit),
            stderr_tail: self.sink.tail(),
            operation_stderr: String::new(),
            left_behind: None,
        }
    }
}

/// Human description of an exit status (`exit code 3`, `signal 9`).
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "unknown".into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TimerKind {
    Operation,
    StopPhase,
    ExitPoll,
    EofGrace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Timer {
    at: Instant,
    slot: usize,
    generation: u64,
    seq: u64,
    kind: TimerKind,
}

/// Every host of the process: the tenant.
pub(crate) struct Hosts {
    /// The reactor's registry (a clone made at registration), for the pipes.
    registry: Registry,
    /// This tenant's tokens.
    tokens: Tokens,
    slots: Vec<Option<Box<HostEntry>>>,
    generations: Vec<u64>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<Timer>>,
    buf: Vec<u8>,
    /// Sources with a readiness event this turn (sub-tokens), handled in `run_again`.
    ready: Vec<usize>,
    /// Sources that hit their read budget and must be read again without a new edge.
    again: Vec<usize>,
    /// Children that survived SIGKILL's wait; reaped when they finally exit.
    graveyard: Vec<HostChild>,
    last_housekeeping: Instant,
    /// After sending a request for a lone waiting caller, poll without sleeping until
    /// then (see [`SPIN`]).
    spin_until: Option<Instant>,
    /// Set by `StopAll`: the process is shutting down and every host is stopped with it.
    shutdown: Option<StopPolicy>,
}

impl std::fmt::Debug for Hosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosts")
            .field("hosts", &self.slots.iter().flatten().count())
            .field("timers", &self.timers.len())
            .finish_non_exhaustive()
    }
}

fn sub_token(slot: usize, kind: usize) -> usize {
    slot * 4 + kind
}

fn split_sub(sub: usize) -> (usize, usize) {
    (sub / 4, sub % 4)
}

fn current_stage(entry: &HostEntry) -> Stage {
    if entry.stopping.is_some() {
        return Stage::Stop;
    }
    entry.pending.as_ref().map_or(Stage::Invoke, |p| p.stage)
}

/// SIGKILLs descendants that left the host's group, if they are still the same processes.
fn kill_escaped(escaped: &[ProcStat]) {
    for stat in escaped {
        if let Some(now) = fabric_stats::procs::read_stat(Path::new("/proc"), stat.pid)
            && now.start_time == stat.start_time
            && let Ok(pid) = i32::try_from(stat.pid)
        {
            let _ = sys::signal_process(pid, sys::SIGKILL);
        }
    }
}
