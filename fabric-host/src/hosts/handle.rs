//! The callers' side: what host handles use to reach the tenant on the reactor thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

use fabric_config::Stage;
use fabric_reactor::{EngineError, Handle, Registration};

use crate::error::HostError;

use super::lane::Lane;
use super::{
    AfterExit, HostInit, HostKey, Hosts, Notify, Responder, SPIN, StopOutcome, StopPolicy,
};

/// Requests with a deadline at most this far wake the reactor when they are sent (so the
/// timer is armed at once); later ones are picked up by its next wake-up, at the latest
/// the longest poll (1 s) later.
const QUIET_DEADLINE: Duration = Duration::from_secs(2);

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
    let unavailable = |error: EngineError| HostError::EngineUnavailable {
        stage: Stage::Invoke,
        reason: error.reason().to_owned(),
    };
    let hosts = HostsHandle::global().map_err(unavailable)?;
    hosts.0.call(|hosts, _| hosts.stats()).map_err(unavailable)
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

/// The host tenant, registered with the process-wide reactor on first use.
static HOSTS: Registration<Hosts> = Registration::new();

/// The way to the host tenant (cheap to copy).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostsHandle(Handle<Hosts>);

fn unavailable(stage: Stage) -> impl Fn(EngineError) -> HostError {
    move |error| HostError::EngineUnavailable {
        stage,
        reason: error.reason().to_owned(),
    }
}

impl HostsHandle {
    /// The host tenant, registered (and the reactor started) on first use.
    pub(crate) fn global() -> Result<HostsHandle, EngineError> {
        HOSTS.get_or_register_with(Hosts::new).map(HostsHandle)
    }

    /// The host tenant if it was registered, without starting anything.
    pub(crate) fn running() -> Option<HostsHandle> {
        HOSTS.get().map(HostsHandle)
    }

    /// Hands a spawned host to the reactor.
    pub(crate) fn add(&self, init: HostInit) -> Result<HostKey, String> {
        match self.0.call(move |hosts, _| hosts.add_host(init)) {
            Ok(Ok(key)) => Ok(key),
            Ok(Err(error)) => Err(error.to_string()),
            Err(error) => Err(error.reason().to_owned()),
        }
    }

    /// Sends one request line; the response is collected with [`PendingReply::wait`], so
    /// the caller can do other work while the host processes the request.
    /// `spin`: the host is expected to answer within [`SPIN`] (it did last time), so the
    /// reactor and a lone waiting caller poll briefly instead of sleeping.
    ///
    /// The line is written by this thread when the host's pipe takes it (`lane.rs`): the
    /// reactor is told about the request without being woken (unless the deadline is near)
    /// and wakes for the answer only. Otherwise (a stop began, the pipe is full or closed)
    /// the reactor writes it. A request while another is in flight is `runtime_busy`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn request_begin(
        &self,
        key: HostKey,
        lane: &Arc<Lane>,
        mut line: Vec<u8>,
        stage: Stage,
        timeout: Duration,
        spin: bool,
        notify: Option<Notify>,
    ) -> Result<PendingReply, HostError> {
        if !lane.claim() {
            return Err(HostError::RuntimeBusy { stage });
        }
        let (channel, wait) = mpsc::sync_channel(1);
        let reply = Responder {
            channel,
            notify,
            lane: Some(Arc::clone(lane)),
        };
        let pending = PendingReply { stage, spin, wait };
        let mut gate = lane.lock();
        if !gate.direct() {
            drop(gate);
            self.0
                .post(move |hosts, _| hosts.send_request(key, line, stage, timeout, spin, reply))
                .map_err(unavailable(stage))?;
            return Ok(pending);
        }
        let deadline = Instant::now() + timeout;
        lane.expect();
        let expect = move |hosts: &mut Hosts, _: &mut fabric_reactor::Context<'_>| {
            hosts.expect(key, stage, timeout, deadline, reply);
        };
        // Queued before the line is written, so the answer finds it (see `post_quiet`).
        // A deadline within the reactor's longest sleep needs its timer now: wake it.
        let queued = if timeout <= QUIET_DEADLINE {
            self.0.post(expect)
        } else {
            self.0.post_quiet(expect)
        };
        if let Err(error) = queued {
            // The closure (and its responder) was dropped: the request slot is free again.
            lane.registered();
            return Err(unavailable(stage)(error));
        }
        line.push(b'\n');
        let written = gate.write(&line);
        if written < line.len() {
            // The pipe is full (or failed): the reactor writes the rest, or reports why it
            // cannot, in order before anything else.
            gate.hand_to_reactor();
            line.drain(..written);
            drop(gate);
            self.0
                .post(move |hosts, _| hosts.write_rest(key, line))
                .map_err(unavailable(stage))?;
        }
        Ok(pending)
    }

    /// Stops a host: optional graceful request line, then SIGTERM/SIGKILL to its group;
    /// always reaps. Returns within the policy's total bound.
    pub(crate) fn stop(
        &self,
        key: HostKey,
        line: Option<Vec<u8>>,
        policy: StopPolicy,
    ) -> Result<StopOutcome, HostError> {
        self.stop_with(move |hosts, reply| hosts.begin_stop(key, line, policy, Some(reply)))
    }

    /// Like [`HostsHandle::stop`] with a `stop` request, but returns once the host answered
    /// it (`exit` is then unknown): the rest of the stop (grace, escalation, reap) goes on
    /// in the reactor, and `after_exit` runs when it ends. See `ack.rs`.
    pub(crate) fn stop_until_ack(
        &self,
        key: HostKey,
        line: Vec<u8>,
        policy: StopPolicy,
        after_exit: Option<AfterExit>,
    ) -> Result<StopOutcome, HostError> {
        self.stop_with(move |hosts, reply| {
            hosts.begin_stop_until_ack(key, line, policy, reply, after_exit);
        })
    }

    fn stop_with(
        &self,
        begin: impl FnOnce(&mut Hosts, SyncSender<StopOutcome>) + Send + 'static,
    ) -> Result<StopOutcome, HostError> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.0
            .post(move |hosts, _| begin(hosts, reply))
            .map_err(unavailable(Stage::Stop))?;
        wait.recv().map_err(|_| HostError::EngineUnavailable {
            stage: Stage::Stop,
            reason: "the reactor thread has exited".into(),
        })
    }

    /// Forgets a host; if it still runs it is stopped (gracefully when `line` is a `stop`
    /// request) and reaped in the background.
    pub(crate) fn release(&self, key: HostKey, line: Option<Vec<u8>>) {
        let _ = self.0.post(move |hosts, _| hosts.release(key, line));
    }

    /// Starts stopping every host without a `stop` request (stdin closed, `SIGTERM` to the
    /// group at once, `SIGKILL` after `policy.term_wait`); hosts added later are stopped
    /// as soon as they arrive. For process shutdown (`cleanup::shutdown`).
    pub(crate) fn stop_all(&self, policy: StopPolicy) -> Result<(), String> {
        self.0
            .post(move |hosts, _| hosts.stop_all(policy))
            .map_err(|error| error.reason().to_owned())
    }

    /// `SIGKILL` to every host's process group and recorded escaped descendants.
    pub(crate) fn kill_all(&self) -> Result<(), String> {
        self.0
            .post(|hosts, _| hosts.kill_all())
            .map_err(|error| error.reason().to_owned())
    }

    /// How many host leaders have not exited yet.
    pub(crate) fn running_hosts(&self) -> Result<usize, String> {
        self.0
            .call(|hosts, _| hosts.running())
            .map_err(|error| error.reason().to_owned())
    }

    /// How many hosts are between the start and the end of a stop.
    pub(crate) fn stopping_hosts(&self) -> Result<usize, String> {
        self.0
            .call(|hosts, _| hosts.stopping())
            .map_err(|error| error.reason().to_owned())
    }
}
