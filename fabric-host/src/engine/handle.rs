//! The command/handle side: what callers use to talk to the reactor thread.

use std::io;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use fabric_config::Stage;
use mio::{Poll, Waker};

use crate::error::HostError;
use crate::sys;

use super::{
    Cmd, HostInit, HostKey, Notify, Reactor, Responder, SPIN, StopOutcome, StopPolicy, WAKER,
};

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
pub(super) static WAITERS: AtomicUsize = AtomicUsize::new(0);

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

    /// Sends a collector server command.
    pub(crate) fn collector(&self, command: crate::collector::Command) -> Result<(), String> {
        self.send(Cmd::Collector(command))
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
