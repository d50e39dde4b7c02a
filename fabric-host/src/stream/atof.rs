//! The Relay ATOF stream of one invocation (`Runtime::invoke_stream`): the raw ATOF
//! records the adapter's Relay published for the invocation's request id, read from the
//! runtime's collector (in-process for the embedded one, over HTTP for an external one),
//! then the RunResult.
//!
//! Order, as upstream's SDK: register the request id, attach the stream, send `invoke`.
//! When the host answers, the registration is deregistered without removing its queue, so
//! the stream delivers what was routed and then ends. `result` waits for the invocation and
//! releases the runtime but keeps unread records readable (as upstream's SDK: the result
//! does not finalize the stream); reading to the end, `close`, or a pull after the runtime
//! was stopped deregisters the request with its queue removed.

use fabric_config::codes;
use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use fabric_config::stream::{StreamInfo, StreamKind};
use fabric_config::{RunResult, Stage};
use fabric_relay::collector::RecordReader;
use fabric_relay::external::ExternalReader;
use fabric_relay::streaming::StreamCollector;

use super::{PullStream, StreamBatch, StreamNext, StreamOwner};
use crate::error::HostError;
use crate::hosts::Notify;

/// Where the records are read from.
#[derive(Debug)]
pub(crate) enum Source {
    Embedded(RecordReader),
    External(ExternalReader),
}

/// The readiness socket and the flags the host's answer and the consumer share.
#[derive(Debug, Default)]
struct Signal {
    /// The host answered the invocation.
    answered: AtomicBool,
    /// An external registration was deregistered after the answer.
    drained: AtomicBool,
    /// A zero-timeout pull found nothing: the next change writes one byte.
    armed: AtomicBool,
    writer: OnceLock<UnixStream>,
}

impl Signal {
    fn changed(&self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.signal_now();
        }
    }

    fn signal_now(&self) {
        if let Some(mut writer) = self.writer.get() {
            let _ = std::io::Write::write(&mut writer, &[1]);
        }
    }
}

#[derive(Debug, Default)]
struct Finish {
    finalized: Option<Result<RunResult, HostError>>,
}

/// A Relay ATOF record stream of one invocation (see [`PullStream`]). Holds its runtime:
/// the runtime stays busy until the stream is read to the end, its result is taken, or it
/// is closed or dropped.
#[derive(Debug)]
pub struct AtofStream {
    owner: Box<dyn StreamOwner>,
    source: Source,
    info: StreamInfo,
    signal: Arc<Signal>,
    finish: Mutex<Finish>,
    closed: AtomicBool,
    /// The registration was removed (its unread records are gone).
    released: AtomicBool,
    ready: OnceLock<UnixStream>,
}

/// The runtime was not started with Relay streaming (`streaming_unavailable`).
pub(crate) fn capability_error() -> HostError {
    HostError::Capability {
        stage: Stage::Invoke,
        code: codes::STREAMING_UNAVAILABLE,
        message: "streaming requires a runtime started with NeMo Relay telemetry and \
                  streaming=True"
            .into(),
    }
}

/// A registration and its reader opened for one invocation, before the invocation is
/// sent (see [`AtofOpened::open`]).
pub(crate) struct AtofOpened {
    source: Source,
    signal: Arc<Signal>,
    info: StreamInfo,
    notify: Notify,
}

impl std::fmt::Debug for AtofOpened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtofOpened")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl AtofOpened {
    /// Registers the request id with the runtime's collector and attaches its reader, as
    /// upstream's SDK orders it (register, attach, then `invoke`). Errors:
    /// `collector_request_failed`.
    pub(crate) fn open(
        collector: &StreamCollector,
        runtime_id: &str,
        invocation_id: &str,
        request_id: &str,
    ) -> Result<AtofOpened, HostError> {
        let signal = Arc::new(Signal::default());
        let source = match collector {
            StreamCollector::Embedded(collector) => collector
                .register(request_id)
                .and_then(|()| collector.attach(request_id))
                .map(Source::Embedded),
            StreamCollector::External(external) => external
                .register(request_id)
                .and_then(|()| match external.open_stream(request_id) {
                    Ok(reader) => Ok(reader),
                    Err(error) => {
                        let _ = external.deregister(request_id, true);
                        Err(error)
                    }
                })
                .map(Source::External),
        }?;
        let watch = Arc::clone(&signal);
        let watcher: Arc<dyn Fn() + Send + Sync> = Arc::new(move || watch.changed());
        let notify: Notify = match (collector, &source) {
            (StreamCollector::Embedded(collector), Source::Embedded(reader)) => {
                reader.set_watcher(Some(watcher));
                let collector = Arc::clone(collector);
                let answered = Arc::clone(&signal);
                let id = request_id.to_owned();
                Arc::new(move || {
                    answered.answered.store(true, Ordering::SeqCst);
                    // What was routed is delivered, then the stream ends.
                    collector.deregister(&id, false);
                })
            }
            (_, Source::External(reader)) => {
                reader.set_watcher(watcher);
                let answered = Arc::clone(&signal);
                let poke = reader.poker();
                Arc::new(move || {
                    answered.answered.store(true, Ordering::SeqCst);
                    poke();
                    answered.changed();
                })
            }
            (StreamCollector::External(_), Source::Embedded(_)) => {
                unreachable!("an external collector yields an external reader")
            }
        };
        Ok(AtofOpened {
            source,
            signal,
            info: StreamInfo {
                kind: StreamKind::AtofRecord,
                runtime_id: runtime_id.to_owned(),
                invocation_id: invocation_id.to_owned(),
                request_id: request_id.to_owned(),
                handle: None,
            },
            notify,
        })
    }

    /// What the host's answer runs.
    pub(crate) fn answered_hook(&self) -> Notify {
        Arc::clone(&self.notify)
    }

    /// Drops the registration (the invocation could not be sent).
    pub(crate) fn abort(self, collector: &StreamCollector) {
        release(collector, &self.info.request_id);
    }

    /// The stream of the sent invocation, settled through `owner`.
    pub(crate) fn into_stream(self, owner: Box<dyn StreamOwner>) -> AtofStream {
        AtofStream {
            owner,
            source: self.source,
            info: self.info,
            signal: self.signal,
            finish: Mutex::new(Finish::default()),
            closed: AtomicBool::new(false),
            released: AtomicBool::new(false),
            ready: OnceLock::new(),
        }
    }
}

/// Deregisters a request and drops its queue (errors of an external collector are
/// ignored: the request is gone either way for this runtime).
fn release(collector: &StreamCollector, request_id: &str) {
    match collector {
        StreamCollector::Embedded(collector) => collector.deregister(request_id, true),
        StreamCollector::External(external) => {
            let _ = external.deregister(request_id, true);
        }
    }
}

impl AtofStream {
    /// The stream's identity (owned copy, for reports that add the ABI handle).
    pub fn info_owned(&self) -> StreamInfo {
        self.info.clone()
    }

    fn lock_finish(&self) -> MutexGuard<'_, Finish> {
        self.finish.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn collector(&self) -> Option<&StreamCollector> {
        self.owner.collector()
    }

    /// Waits once for the invocation and releases the runtime; unread records stay
    /// readable (see [`AtofStream::release_records`]).
    fn outcome(&self) -> Result<RunResult, HostError> {
        let mut finish = self.lock_finish();
        if let Some(done) = &finish.finalized {
            return done.clone();
        }
        let outcome = self
            .owner
            .finish()
            .unwrap_or_else(|| Err(capability_error()));
        self.owner.settle(&outcome, None);
        finish.finalized = Some(outcome.clone());
        drop(finish);
        self.signal.signal_now();
        outcome
    }

    /// Removes the registration and its unread records, once.
    fn release_records(&self) {
        if self.released.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(collector) = self.collector() {
            release(collector, &self.info.request_id);
        }
        if let Source::Embedded(reader) = &self.source {
            reader.set_watcher(None);
        }
        self.signal.signal_now();
    }

    /// Finishes the stream: the records are released and the invocation waited for.
    fn finalize(&self) -> Result<RunResult, HostError> {
        self.release_records();
        self.outcome()
    }

    /// The result was taken and the runtime stopped since: unread records are discarded.
    fn stopped_after_result(&self) -> bool {
        self.lock_finish().finalized.is_some() && self.owner.stopped()
    }

    /// After the answer, an external registration is deregistered (queue kept) so its
    /// stream ends once delivered.
    fn drain_external(&self) -> Result<(), HostError> {
        if !self.signal.answered.load(Ordering::SeqCst)
            || self.signal.drained.swap(true, Ordering::SeqCst)
        {
            return Ok(());
        }
        match self.collector() {
            Some(StreamCollector::External(external)) => external
                .deregister(&self.info.request_id, false)
                .map_err(HostError::from),
            _ => Ok(()),
        }
    }

    fn end(&self) -> Result<StreamNext, HostError> {
        self.finalize().map(|_| StreamNext::End)
    }

    fn pull(&self, timeout: Option<Duration>) -> Result<StreamNext, HostError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if self.closed.load(Ordering::SeqCst) || self.released.load(Ordering::SeqCst) {
                return Ok(StreamNext::End);
            }
            if self.stopped_after_result() {
                self.release_records();
                return Ok(StreamNext::End);
            }
            let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let next = match &self.source {
                Source::Embedded(reader) => Ok(reader.next(remaining)),
                Source::External(reader) => {
                    if let Err(error) = self.drain_external() {
                        let _ = self.finalize();
                        return Err(error);
                    }
                    reader.next(remaining).map_err(HostError::from)
                }
            };
            match next {
                Ok(StreamNext::Item(record)) => return Ok(StreamNext::Item(record)),
                Ok(StreamNext::End) => return self.end(),
                Ok(StreamNext::Timeout) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(StreamNext::Timeout);
                    }
                }
                Err(error) => {
                    let _ = self.finalize();
                    return Err(error);
                }
            }
        }
    }
}

impl PullStream for AtofStream {
    fn info(&self) -> &StreamInfo {
        &self.info
    }

    fn next(&self, timeout: Option<Duration>) -> Result<StreamNext, HostError> {
        self.pull(timeout)
    }

    fn next_batch(&self, max: usize, timeout: Option<Duration>) -> Result<StreamBatch, HostError> {
        let max = if max == 0 { usize::MAX } else { max };
        let poll = timeout == Some(Duration::ZERO);
        if poll && self.ready.get().is_some() {
            self.signal.armed.store(true, Ordering::SeqCst);
        }
        let mut items = Vec::new();
        let first = self.pull(timeout)?;
        match first {
            StreamNext::Item(item) => items.push(item),
            StreamNext::End => return Ok(StreamBatch::End),
            StreamNext::Timeout => return Ok(StreamBatch::Timeout),
        }
        self.signal.armed.store(false, Ordering::SeqCst);
        let mut bytes = items[0].len();
        while items.len() < max && bytes < super::BATCH_BYTES {
            match self.pull(Some(Duration::ZERO))? {
                StreamNext::Item(item) => {
                    bytes += item.len();
                    items.push(item);
                }
                // The end is reported by the next pull.
                StreamNext::End | StreamNext::Timeout => break,
            }
        }
        Ok(StreamBatch::Items(items))
    }

    fn ready_fd(&self) -> Result<RawFd, HostError> {
        use std::os::fd::AsRawFd;
        if let Some(reader) = self.ready.get() {
            return Ok(reader.as_raw_fd());
        }
        let unavailable = |error: std::io::Error| HostError::EngineUnavailable {
            stage: Stage::Invoke,
            reason: format!("cannot create the stream's readiness socket: {error}"),
        };
        let (reader, writer) = UnixStream::pair().map_err(unavailable)?;
        reader.set_nonblocking(true).map_err(unavailable)?;
        writer.set_nonblocking(true).map_err(unavailable)?;
        if self.ready.set(reader).is_ok() {
            let _ = self.signal.writer.set(writer);
        }
        Ok(self.ready.get().map(AsRawFd::as_raw_fd).unwrap_or(-1))
    }

    fn result(&self) -> Result<RunResult, HostError> {
        self.outcome()
    }

    fn settled(&self) -> bool {
        self.lock_finish().finalized.is_some()
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        match (&self.source, self.collector()) {
            (Source::Embedded(_), Some(StreamCollector::Embedded(collector))) => {
                collector.deregister(&self.info.request_id, true);
            }
            (Source::External(reader), _) => reader.interrupt(),
            _ => {}
        }
        let _ = self.finalize();
    }
}

impl Drop for AtofStream {
    fn drop(&mut self) {
        // Never cancels the turn: waits for it so the runtime is released in a known state.
        self.close();
    }
}
