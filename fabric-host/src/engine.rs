//! The process-wide reactor: one thread running `mio::Poll` over every host's pipes.
//!
//! Callers never touch the reactor's state. They send a [`Cmd`] over a channel, wake the
//! reactor through its [`Waker`] (`Token(0)`), and block on a one-shot reply channel.
//! Tokens of host sources come from a slab: `1 + slot * 4 + kind`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use fabric_config::Stage;
use mio::unix::SourceFd;
use mio::unix::pipe;
use mio::{Events, Interest, Poll, Registry, Token, Waker};

use crate::error::{Diagnostics, HostError, ProtocolViolation};
use crate::procfs::{self, ProcStat};
use crate::stderr::StderrSink;
use crate::sys;

/// The waker's fixed token.
const WAKER: Token = Token(0);
const KIND_STDIN: usize = 0;
const KIND_STDOUT: usize = 1;
const KIND_STDERR: usize = 2;
const KIND_PIDFD: usize = 3;
/// Longest poll sleep when no deadline is due (housekeeping cadence).
const MAX_POLL: Duration = Duration::from_secs(1);
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

/// Identifies one host in the reactor's slab (slot + generation).
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
}

/// Everything the reactor needs to own a freshly spawned host.
#[derive(Debug)]
pub(crate) struct HostInit {
    pub child: Child,
    pub stdin: pipe::Sender,
    pub stdout: pipe::Receiver,
    pub stderr: pipe::Receiver,
    pub pidfd: Option<OwnedFd>,
    pub sink: Arc<StderrSink>,
    pub max_line: usize,
}

type Reply<T> = SyncSender<T>;

/// A hook the reactor calls right after a request's answer (or terminal error) was sent to
/// its waiting caller.
pub(crate) type Notify = Arc<dyn Fn() + Send + Sync>;

/// Where a request's answer goes: the caller's channel, then the optional hook.
struct Responder {
    channel: Reply<Result<Vec<u8>, HostError>>,
    notify: Option<Notify>,
}

impl Responder {
    fn send(self, answer: Result<Vec<u8>, HostError>) -> Result<(), ()> {
        let sent = self.channel.send(answer).map_err(|_| ());
        if let Some(notify) = self.notify {
            notify();
        }
        sent
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
enum Cmd {
    Add {
        init: Box<HostInit>,
        reply: Reply<io::Result<HostKey>>,
    },
    Request {
        key: HostKey,
        line: Vec<u8>,
        stage: Stage,
        timeout: Duration,
        spin: bool,
        reply: Responder,
    },
    /// A stream listener command (see `stream::listener`).
    Stream(crate::stream::Command),
    Stop {
        key: HostKey,
        line: Option<Vec<u8>>,
        policy: StopPolicy,
        reply: Reply<StopOutcome>,
    },
    Release {
        key: HostKey,
        line: Option<Vec<u8>>,
    },
    Stats {
        reply: Reply<EngineStats>,
    },
    /// Process shutdown: stop every host (and every host added later) with `policy`.
    StopAll {
        policy: StopPolicy,
    },
    /// SIGKILL to every host group and its recorded escaped descendants, at once.
    KillAll,
    /// How many host leaders have not exited yet.
    Running {
        reply: Reply<usize>,
    },
}

/// Counters of the process-wide reactor (for monitoring and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineStats {
    /// Hosts the reactor tracks (running, or finished but not yet released).
    pub hosts: usize,
    /// Deadline-heap entries (including not yet compacted ones of finished operations).
    pub timers: usize,
    /// Children that outlived `SIGKILL`'s wait and are reaped in the background.
    pub unreaped: usize,
}

/// Reads the reactor's counters (starts the reactor if it is not running yet).
pub fn engine_stats() -> Result<EngineStats, HostError> {
    let engine = Engine::global().map_err(|reason| HostError::EngineUnavailable {
        stage: Stage::Invoke,
        reason,
    })?;
    let (reply, wait) = mpsc::sync_channel(1);
    let unavailable = |reason: String| HostError::EngineUnavailable {
        stage: Stage::Invoke,
        reason,
    };
    engine.send(Cmd::Stats { reply }).map_err(unavailable)?;
    wait.recv()
        .map_err(|_| unavailable("the reactor thread has exited".into()))
}

/// A request in flight: its response line or terminal error arrives on `wait`.
#[derive(Debug)]
pub(crate) struct PendingReply {
    stage: Stage,
    spin: bool,
    wait: Receiver<Result<Vec<u8>, HostError>>,
}

/// Callers currently waiting for a response.
static WAITERS: AtomicUsize = AtomicUsize::new(0);

impl PendingReply {
    /// Blocks until the response line (or a terminal error) arrives.
    ///
    /// When this is the only waiting caller of a host that answered its last request within
    /// [`SPIN`] (`spin`), it first polls for up to [`SPIN`]: a fast host
    /// answers within that window, and a blocked thread's wake-up (on a virtual machine
    /// often longer than the whole exchange) is saved. With several callers waiting the
    /// CPU is better left to the hosts, so they block at once.
    pub(crate) fn wait(self) -> Result<Vec<u8>, HostError> {
        let gone = || HostError::EngineUnavailable {
            stage: self.stage,
            reason: "the reactor thread has exited".into(),
        };
        let alone = WAITERS.fetch_add(1, AtomicOrdering::AcqRel) == 0;
        let result = (|| {
            if alone && self.spin {
                let began = Instant::now();
                loop {
                    match self.wait.try_recv() {
                        Ok(result) => return result,
                        Err(TryRecvError::Disconnected) => return Err(gone()),
                        Err(TryRecvError::Empty) => {}
                    }
                    if began.elapsed() >= SPIN {
                        break;
                    }
                    // Yield rather than burn: a host that needs this CPU gets it.
                    std::thread::yield_now();
                }
            }
            self.wait.recv().map_err(|_| gone())?
        })();
        WAITERS.fetch_sub(1, AtomicOrdering::AcqRel);
        result
    }
}

/// The process-wide engine: a command channel and the reactor's waker.
#[derive(Debug)]
pub(crate) struct Engine {
    commands: Sender<Cmd>,
    waker: Waker,
}

static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();

impl Engine {
    /// The process-wide engine, created (with its reactor thread) on first use.
    pub(crate) fn global() -> Result<&'static Engine, String> {
        ENGINE
            .get_or_init(|| Engine::spawn().map_err(|error| error.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn spawn() -> io::Result<Engine> {
        // Every host costs four descriptors on the reactor; a low soft limit would cap
        // the number of runtimes long before memory does.
        let _ = sys::raise_open_file_limit(65_536);
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let (commands, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("fabric-reactor".into())
            .spawn(move || {
                let _ = sys::block_sigpipe_in_this_thread();
                Reactor::new(poll).run(receiver)
            })?;
        Ok(Engine { commands, waker })
    }

    fn send(&self, cmd: Cmd) -> Result<(), String> {
        self.commands
            .send(cmd)
            .map_err(|_| "the reactor thread has exited".to_owned())?;
        self.waker.wake().map_err(|error| error.to_string())
    }

    /// Hands a spawned host to the reactor.
    pub(crate) fn add(&self, init: HostInit) -> Result<HostKey, String> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.send(Cmd::Add {
            init: Box::new(init),
            reply,
        })?;
        match wait.recv() {
            Ok(Ok(key)) => Ok(key),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("the reactor thread has exited".into()),
        }
    }

    /// Sends one request line; the response is collected with [`PendingReply::wait`], so
    /// the caller can do other work while the host processes the request.
    /// `spin`: the host is expected to answer within [`SPIN`] (it did last time), so the
    /// reactor and a lone waiting caller poll briefly instead of sleeping.
    pub(crate) fn request_begin(
        &self,
        key: HostKey,
        line: Vec<u8>,
        stage: Stage,
        timeout: Duration,
        spin: bool,
        notify: Option<Notify>,
    ) -> Result<PendingReply, HostError> {
        let (channel, wait) = mpsc::sync_channel(1);
        self.send(Cmd::Request {
            key,
            line,
            stage,
            timeout,
            spin,
            reply: Responder { channel, notify },
        })
        .map_err(|reason| HostError::EngineUnavailable { stage, reason })?;
        Ok(PendingReply { stage, spin, wait })
    }

    /// Stops a host: optional graceful request line, then SIGTERM/SIGKILL to its group;
    /// always reaps. Returns within the policy's total bound.
    pub(crate) fn stop(
        &self,
        key: HostKey,
        line: Option<Vec<u8>>,
        policy: StopPolicy,
    ) -> Result<StopOutcome, HostError> {
        let (reply, wait) = mpsc::sync_channel(1);
        let unavailable = |reason: String| HostError::EngineUnavailable {
            stage: Stage::Stop,
            reason,
        };
        self.send(Cmd::Stop {
            key,
            line,
            policy,
            reply,
        })
        .map_err(unavailable)?;
        wait.recv()
            .map_err(|_| unavailable("the reactor thread has exited".into()))
    }

    /// Sends a stream listener command.
    pub(crate) fn stream(&self, command: crate::stream::Command) -> Result<(), String> {
        self.send(Cmd::Stream(command))
    }

    /// Forgets a host; if it still runs it is stopped (gracefully when `line` is a `stop`
    /// request) and reaped in the background.
    pub(crate) fn release(&self, key: HostKey, line: Option<Vec<u8>>) {
        let _ = self.send(Cmd::Release { key, line });
    }

    /// The engine when it was started, without starting it.
    pub(crate) fn running() -> Option<&'static Engine> {
        ENGINE.get().and_then(|engine| engine.as_ref().ok())
    }

    /// Starts stopping every host without a `stop` request (stdin closed, `SIGTERM` to the
    /// group at once, `SIGKILL` after `policy.term_wait`); hosts added later are stopped
    /// as soon as they arrive. For process shutdown (`cleanup::shutdown`).
    pub(crate) fn stop_all(&self, policy: StopPolicy) -> Result<(), String> {
        self.send(Cmd::StopAll { policy })
    }

    /// `SIGKILL` to every host's process group and recorded escaped descendants.
    pub(crate) fn kill_all(&self) -> Result<(), String> {
        self.send(Cmd::KillAll)
    }

    /// How many host leaders have not exited yet.
    pub(crate) fn running_hosts(&self) -> Result<usize, String> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.send(Cmd::Running { reply })?;
        wait.recv()
            .map_err(|_| "the reactor thread has exited".to_owned())
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
}

#[derive(Debug)]
struct HostEntry {
    generation: u64,
    pid: i32,
    child: Child,
    stdin: Option<pipe::Sender>,
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
    op_seq: u64,
    latched: Option<HostError>,
    stopping: Option<Stopping>,
    stopped: bool,
    released: bool,
    escaped: Vec<ProcStat>,
}

impl HostEntry {
    fn diagnostics(&self) -> Diagnostics {
        Diagnostics {
            pid: u32::try_from(self.pid).ok(),
            exit: self.status.map(describe_exit),
            stderr_tail: self.sink.tail(),
            operation_stderr: String::new(),
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

struct Reactor {
    poll: Poll,
    slots: Vec<Option<Box<HostEntry>>>,
    generations: Vec<u64>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<Timer>>,
    buf: Vec<u8>,
    /// Sources that hit their read budget and must be read again without a new edge.
    again: Vec<Token>,
    /// Children that survived SIGKILL's wait; reaped when they finally exit.
    graveyard: Vec<Child>,
    last_housekeeping: Instant,
    /// After sending a request for a lone waiting caller, poll without sleeping until
    /// then (see [`SPIN`]).
    spin_until: Option<Instant>,
    /// Loopback listeners of streaming invocations.
    streams: crate::stream::Listeners,
    /// Set by `StopAll`: the process is shutting down and every host is stopped with it.
    shutdown: Option<StopPolicy>,
}

fn token(slot: usize, kind: usize) -> Token {
    Token(1 + slot * 4 + kind)
}

fn untoken(token: Token) -> (usize, usize) {
    let raw = token.0 - 1;
    (raw / 4, raw % 4)
}

impl Reactor {
    fn new(poll: Poll) -> Reactor {
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
            shutdown: None,
        }
    }

    fn run(mut self, commands: Receiver<Cmd>) {
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
                if crate::stream::owns(event.token()) {
                    self.streams.on_ready(self.poll.registry(), event.token());
                    continue;
                }
                again.push(event.token());
            }
            self.streams.run_again(self.poll.registry());
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
            if self.last_housekeeping.elapsed() >= MAX_POLL {
                self.housekeeping();
            }
        }
    }

    fn poll_timeout(&mut self) -> Duration {
        if !self.again.is_empty() || self.streams.has_work() {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let timeout = self.host_poll_timeout(now);
        match self.streams.next_deadline() {
            Some(at) => timeout.min(at.saturating_duration_since(now)),
            None => timeout,
        }
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

    fn entry(&mut self, key: HostKey) -> Option<&mut HostEntry> {
        match self.slots.get_mut(key.slot) {
            Some(Some(entry)) if entry.generation == key.generation => Some(entry),
            _ => None,
        }
    }

    fn schedule(&mut self, slot: usize, at: Instant, seq: u64, kind: TimerKind) {
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

    fn live_keys(&self) -> Vec<HostKey> {
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

    fn stop_all(&mut self, policy: StopPolicy) {
        self.shutdown = Some(policy);
        for key in self.live_keys() {
            // A host already stopping keeps its stop (and its bound).
            self.begin_stop(key, None, policy, None);
        }
    }

    fn kill_all(&mut self) {
        for key in self.live_keys() {
            let Some(entry) = self.entry(key) else {
                continue;
            };
            if entry.escaped.is_empty()
                && let Ok(pid) = u32::try_from(entry.pid)
            {
                entry.escaped = procfs::descendants(Path::new("/proc"), pid);
            }
            let _ = sys::signal_group(entry.pid, sys::SIGKILL);
            kill_escaped(&entry.escaped);
        }
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

    fn begin_stop(
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
                });
            }
            return;
        }
        // Remember every descendant while the tree is still intact: one that leaves the
        // group (setsid) later is still ended together with the group.
        if !entry.exited {
            if let Ok(pid) = u32::try_from(entry.pid) {
                entry.escaped = procfs::descendants(Path::new("/proc"), pid);
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
        });
        entry.op_seq += 1;
        let seq = entry.op_seq;
        if entry.exited {
            self.finish_stop(slot);
            return;
        }
        let poll_exit = entry.pidfd.is_none();
        if graceful {
            if let Some(mut line) = line {
                line.push(b'\n');
                entry.write_buf.extend_from_slice(&line);
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

    // ----- readiness ------------------------------------------------------------------

    fn on_ready(&mut self, token: Token) {
        let (slot, kind) = untoken(token);
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

    fn slot_entry(&mut self, slot: usize) -> Option<&mut HostEntry> {
        self.slots.get_mut(slot).and_then(|e| e.as_deref_mut())
    }

    fn flush_stdin(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        let Some(stdin) = entry.stdin.as_mut() else {
            entry.write_buf.clear();
            entry.write_pos = 0;
            return;
        };
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
        entry.write_buf.clear();
        entry.write_pos = 0;
        if entry.write_buf.capacity() > KEEP_LINE_CAPACITY {
            entry.write_buf = Vec::new();
        }
        if let Some(error) = failure {
            let mut stdin = entry.stdin.take();
            if let Some(stdin) = stdin.as_mut() {
                let _ = self.poll.registry().deregister(stdin);
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
                let _ = self.poll.registry().deregister(&mut stdin);
            }
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
                        self.again.push(token(slot, KIND_STDOUT));
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
            let mut line: Vec<u8> = entry.line.drain(..=end).collect();
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
        if self
            .slot_entry(slot)
            .is_some_and(|e| e.pending.is_some() || e.stopping.is_some())
        {
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
            }
            return;
        }
        if let Some(pending) = entry.pending.take() {
            let _ = pending.reply.send(Ok(line));
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
            let _ = self.poll.registry().deregister(&mut stdout);
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
                        let _ = self.poll.registry().deregister(&mut stderr);
                    }
                    return;
                }
                Ok(n) => {
                    entry.sink.push(&self.buf[..n]);
                    budget = budget.saturating_sub(n);
                    if budget == 0 {
                        self.again.push(token(slot, KIND_STDERR));
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
    fn on_exit(&mut self, slot: usize) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        entry.exited = true;
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
            let _ = self
                .poll
                .registry()
                .deregister(&mut SourceFd(&fd.as_raw_fd()));
        }
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if let Some(mut stdin) = entry.stdin.take() {
            let _ = self.poll.registry().deregister(&mut stdin);
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
    fn fail_terminal(&mut self, slot: usize, error: HostError) {
        let Some(entry) = self.slot_entry(slot) else {
            return;
        };
        if entry.latched.is_none() {
            entry.latched = Some(error.clone());
        }
        if let Some(pending) = entry.pending.take() {
            let _ = pending.reply.send(Err(error));
        }
        // The stdout stream cannot be trusted any more; closing it also unblocks a host
        // that keeps writing.
        if let Some(mut stdout) = entry.stdout.take() {
            let _ = self.poll.registry().deregister(&mut stdout);
        }
        if let Some(entry) = self.slot_entry(slot) {
            entry.line = Vec::new();
            entry.scanned = 0;
        }
    }

    // ----- timers ---------------------------------------------------------------------

    fn fire_timers(&mut self) {
        let now = Instant::now();
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

    fn compact_timers(&mut self) {
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

    fn on_stop_phase(&mut self, slot: usize, seq: u64) {
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
                    });
                }
                let released = entry.released;
                if released {
                    self.remove(slot);
                }
            }
        }
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

    fn finish_stop(&mut self, slot: usize) {
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
            });
        }
        if entry.released {
            self.remove(slot);
        }
    }

    fn remove(&mut self, slot: usize) {
        let Some(mut entry) = self.slots.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let registry = self.poll.registry();
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

    fn housekeeping(&mut self) {
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

fn current_stage(entry: &HostEntry) -> Stage {
    if entry.stopping.is_some() {
        return Stage::Stop;
    }
    entry.pending.as_ref().map_or(Stage::Invoke, |p| p.stage)
}

/// SIGKILLs descendants that left the host's group, if they are still the same processes.
fn kill_escaped(escaped: &[ProcStat]) {
    for stat in escaped {
        if let Some(now) = procfs::read_stat(Path::new("/proc"), stat.pid)
            && now.start_time == stat.start_time
            && let Ok(pid) = i32::try_from(stat.pid)
        {
            let _ = sys::signal_process(pid, sys::SIGKILL);
        }
    }
}
