//! The native OpenAI stream of one invocation ([`OpenAiStream`]): for each invocation the
//! core opens a loopback listener with a fresh port and token on the reactor (see
//! `listener`), the runtime sends `invoke_openai_stream` with the sink, and the adapter
//! POSTs chunked NDJSON records to it (docs/hosting.md, "Native OpenAI streaming").

use fabric_config::codes;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fabric_config::result::RunStatus;
use fabric_config::stream::{
    OPENAI_STREAM_HOST, OPENAI_STREAM_PROFILE, OPENAI_STREAM_PROTOCOL, OpenAiStreamSink,
    StreamInfo, StreamKind,
};
use fabric_config::{RunResult, Stage};
use fabric_reactor::http::{ServerKey, new_token};

use super::listener::{LIMITS, StreamService, listeners};
use super::records::Identity;
use super::shared::Shared;
use super::{BATCH_BYTES, COMPLETION_WAIT, PullStream, StreamBatch, StreamNext, StreamOwner};
use crate::error::HostError;
use crate::hosts::Notify;

/// A stream listener opened for one invocation, before the invocation is sent.
#[derive(Debug)]
pub(crate) struct Opened {
    listener: ServerKey,
    shared: Arc<Shared>,
    info: StreamInfo,
    /// Where the adapter posts (sent with `invoke_openai_stream`; holds the token).
    pub(crate) sink: OpenAiStreamSink,
}

impl Opened {
    /// Binds a loopback listener with a fresh port and token for the invocation
    /// `(runtime_id, invocation_id, request_id)` and serves it on the reactor.
    pub(crate) fn open(
        runtime_id: &str,
        invocation_id: &str,
        request_id: &str,
    ) -> Result<Opened, HostError> {
        let stage = Stage::Invoke;
        let unavailable = |reason: String| HostError::EngineUnavailable { stage, reason };
        let tenant = listeners().map_err(|error| unavailable(error.reason().to_owned()))?;
        let socket = std::net::TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
            .map_err(|error| unavailable(format!("cannot bind the stream listener: {error}")))?;
        let port = socket
            .local_addr()
            .map_err(|error| unavailable(error.to_string()))?
            .port();
        let token = new_token().map_err(unavailable)?;
        let shared = Arc::new(Shared::default());
        let identity = Identity {
            runtime_id: runtime_id.to_owned(),
            invocation_id: invocation_id.to_owned(),
            request_id: request_id.to_owned(),
        };
        let service = StreamService::new(token.clone(), identity, Arc::clone(&shared));
        let listener = tenant
            .call(move |servers, cx| servers.open(cx, socket, LIMITS, service))
            .map_err(|error| unavailable(error.reason().to_owned()))?
            .map_err(|error| unavailable(format!("cannot watch the stream listener: {error}")))?;
        let sink = OpenAiStreamSink {
            protocol_version: OPENAI_STREAM_PROTOCOL.into(),
            profile: OPENAI_STREAM_PROFILE.into(),
            host: OPENAI_STREAM_HOST.into(),
            port,
            token,
            runtime_id: runtime_id.to_owned(),
            invocation_id: invocation_id.to_owned(),
            request_id: request_id.to_owned(),
        };
        let info = StreamInfo {
            kind: StreamKind::OpenAiChunk,
            runtime_id: runtime_id.to_owned(),
            invocation_id: invocation_id.to_owned(),
            request_id: request_id.to_owned(),
            handle: None,
        };
        Ok(Opened {
            listener,
            shared,
            info,
            sink,
        })
    }

    /// What the host's answer runs: the stream learns that the invocation was answered.
    pub(crate) fn answered_hook(&self) -> Notify {
        let answered = Arc::clone(&self.shared);
        Arc::new(move || {
            let mut state = answered.lock();
            state.answered = true;
            state.answered_at = Some(Instant::now());
            drop(state);
            answered.notify();
        })
    }

    /// Closes the listener (the invocation could not be sent).
    pub(crate) fn close(self) {
        close_listener(self.listener);
    }

    /// The stream of the sent invocation, settled through `owner`.
    pub(crate) fn into_stream(self, owner: Box<dyn StreamOwner>) -> OpenAiStream {
        OpenAiStream {
            owner,
            shared: self.shared,
            listener: self.listener,
            info: self.info,
            finish: Mutex::new(Finish {
                outcome: None,
                finalized: None,
            }),
            ready: std::sync::OnceLock::new(),
        }
    }
}

fn close_listener(key: ServerKey) {
    if let Ok(tenant) = listeners() {
        let _ = tenant.post(move |servers, cx| servers.close(cx, key));
    }
}

fn resume_listener(key: ServerKey) {
    if let Ok(tenant) = listeners() {
        let _ = tenant.post(move |servers, cx| servers.resume(cx, key));
    }
}

/// A native OpenAI Chat Completions stream of one invocation (see [`PullStream`]).
///
/// Holds its runtime: the runtime stays busy (a second invocation or stream is a state
/// error) until the stream is read to the end, its result is taken, or it is closed or
/// dropped.
#[derive(Debug)]
pub struct OpenAiStream {
    owner: Box<dyn StreamOwner>,
    shared: Arc<Shared>,
    listener: ServerKey,
    info: StreamInfo,
    finish: Mutex<Finish>,
    /// The read end of the readiness socket, once asked for ([`PullStream::ready_fd`]).
    ready: std::sync::OnceLock<std::os::unix::net::UnixStream>,
}

#[derive(Debug)]
struct Finish {
    /// The invocation's own outcome, once collected.
    outcome: Option<Result<RunResult, HostError>>,
    /// The stream's final outcome (after the transport checks), once finalized.
    finalized: Option<Final>,
}

#[derive(Debug, Clone)]
struct Final {
    result: Result<RunResult, HostError>,
    /// The error `next` reports (a transport failure, or the invocation's error when the
    /// adapter dropped the connection).
    stream_error: Option<HostError>,
}

impl OpenAiStream {
    /// The stream's identity (owned copy, for reports that add the ABI handle).
    pub fn info_owned(&self) -> StreamInfo {
        self.info.clone()
    }

    fn lock_finish(&self) -> MutexGuard<'_, Finish> {
        self.finish.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Collects the invocation's outcome (waits for the host's answer).
    fn outcome(&self, finish: &mut Finish) -> Result<RunResult, HostError> {
        if finish.outcome.is_none() {
            finish.outcome = self.owner.finish();
        }
        finish
            .outcome
            .clone()
            .unwrap_or_else(|| Err(self.protocol("OpenAI stream has no outcome", None)))
    }

    fn protocol(&self, message: &str, http_status: Option<u16>) -> HostError {
        HostError::StreamProtocol {
            stage: Stage::Invoke,
            message: message.to_owned(),
            http_status,
        }
    }

    fn resume_if_paused(&self, paused: bool) {
        if paused {
            resume_listener(self.listener);
        }
    }

    /// Finishes the stream once: drops unread items, waits for the invocation and the
    /// transport, checks the result against the stream, releases the runtime.
    fn finalize(&self) -> Final {
        let mut finish = self.lock_finish();
        if let Some(done) = &finish.finalized {
            return done.clone();
        }
        let paused = {
            let mut state = self.shared.lock();
            state.discard = true;
            state.queue.clear();
            state.queued_bytes = 0;
            std::mem::take(&mut state.paused)
        };
        self.resume_if_paused(paused);
        let outcome = self.outcome(&mut finish);
        let wait_transport = match &outcome {
            Ok(result) => result.status == RunStatus::Succeeded || self.shared.lock().claimed,
            Err(_) => false,
        };
        let mut state = self.shared.lock();
        if wait_transport {
            let deadline = Instant::now() + COMPLETION_WAIT;
            while !state.completed && Instant::now() < deadline {
                state = self.shared.wait_until(state, Some(deadline));
            }
            if !state.completed {
                state.fail(
                    "OpenAI stream did not establish and complete its event channel",
                    None,
                );
            }
        }
        state.queue.clear();
        state.queued_bytes = 0;
        if state.error.is_none()
            && let Ok(result) = &outcome
        {
            let unproven = result.status == RunStatus::Succeeded && !state.ended;
            if unproven || result.invocation_id != self.info.invocation_id {
                state.fail(
                    "OpenAI stream invocation ID does not match its terminal result",
                    None,
                );
            }
        }
        let transport = state.error.clone();
        let connection_closed = state.connection_closed;
        drop(state);
        close_listener(self.listener);
        let protocol = transport.map(|t| self.protocol(&t.message, t.http_status));
        let stream_error = match (&outcome, protocol) {
            (Err(error), Some(_)) if connection_closed => Some(error.clone()),
            (_, Some(protocol)) => Some(protocol),
            (_, None) => None,
        };
        let result = match &stream_error {
            Some(error) => Err(error.clone()),
            None => outcome.clone(),
        };
        let failure = match (&stream_error, &outcome) {
            (Some(error), _) if error.code() == codes::OPENAI_STREAM_PROTOCOL_ERROR => {
                Some(codes::OPENAI_STREAM_PROTOCOL_ERROR)
            }
            (_, Err(error)) if error.code() == codes::LIFECYCLE_OPENAI_STREAM_UNSUPPORTED => {
                Some(codes::LIFECYCLE_OPENAI_STREAM_UNSUPPORTED)
            }
            _ => None,
        };
        self.owner.settle(&outcome, failure);
        let done = Final {
            result,
            stream_error,
        };
        finish.finalized = Some(done.clone());
        done
    }

    /// Takes up to `max` ready items (none once closed) without waiting.
    /// Ready items, at most `max` and `budget` bytes of text (the first one regardless
    /// when `at_least_one`).
    fn take_ready(&self, max: usize, budget: usize, at_least_one: bool) -> Vec<String> {
        let mut state = self.shared.lock();
        if state.closed {
            return Vec::new();
        }
        let mut count = 0;
        let mut bytes = 0;
        for item in state.queue.iter().take(max) {
            if !(at_least_one && count == 0) && bytes + item.len() > budget {
                break;
            }
            count += 1;
            bytes += item.len();
        }
        let items: Vec<String> = state.queue.drain(..count).collect();
        state.queued_bytes = state.queued_bytes.saturating_sub(bytes);
        let resume = state.paused && !state.full();
        if resume {
            state.paused = false;
        }
        drop(state);
        self.resume_if_paused(resume);
        items
    }

    /// A zero-timeout pull with nothing ready: the end once the stream is finished (never
    /// waits for another thread that is finishing it), else a timeout.
    fn poll_end(&self) -> Result<StreamBatch, HostError> {
        if self.shared.lock().closed {
            return Ok(StreamBatch::End);
        }
        let finalized = match self.finish.try_lock() {
            Ok(finish) => finish.finalized.clone(),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                poisoned.into_inner().finalized.clone()
            }
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        match finalized.map(|done| done.stream_error) {
            Some(Some(error)) => Err(error),
            Some(None) => Ok(StreamBatch::End),
            None => {
                let state = self.shared.lock();
                let finishing = state.ended || state.completed || state.answered;
                drop(state);
                if finishing {
                    // Only a waiting pull can finish the stream: say so on the socket.
                    self.shared.signal_now();
                }
                Ok(StreamBatch::Timeout)
            }
        }
    }

    /// Finalizes and turns the stream's error (if any) into `next`'s answer.
    fn end(&self) -> Result<StreamNext, HostError> {
        match self.finalize().stream_error {
            Some(error) => Err(error),
            None => Ok(StreamNext::End),
        }
    }
}

impl PullStream for OpenAiStream {
    fn info(&self) -> &StreamInfo {
        &self.info
    }

    fn next(&self, timeout: Option<Duration>) -> Result<StreamNext, HostError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let mut state = self.shared.lock();
            if state.closed {
                // The closing thread finishes the stream; a consumer it woke returns now.
                return Ok(StreamNext::End);
            }
            if let Some(item) = state.queue.pop_front() {
                state.queued_bytes = state.queued_bytes.saturating_sub(item.len());
                let resume = state.paused && !state.full();
                if resume {
                    state.paused = false;
                }
                drop(state);
                self.resume_if_paused(resume);
                return Ok(StreamNext::Item(item));
            }
            if state.ended || state.completed {
                drop(state);
                return self.end();
            }
            let mut wake_at = deadline;
            if state.answered {
                drop(state);
                let outcome = {
                    let mut finish = self.lock_finish();
                    self.outcome(&mut finish)
                };
                let claimed = self.shared.lock().claimed;
                match &outcome {
                    Err(_) => return self.end(),
                    Ok(result) if result.status != RunStatus::Succeeded && !claimed => {
                        return self.end();
                    }
                    Ok(_) => {}
                }
                state = self.shared.lock();
                if !state.queue.is_empty() || state.ended || state.completed || state.closed {
                    continue;
                }
                let completion = state.answered_at.unwrap_or_else(Instant::now) + COMPLETION_WAIT;
                if Instant::now() >= completion {
                    state.fail(
                        "OpenAI stream did not establish and complete its event channel",
                        None,
                    );
                    drop(state);
                    return self.end();
                }
                wake_at = Some(wake_at.map_or(completion, |d| d.min(completion)));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(StreamNext::Timeout);
            }
            drop(self.shared.wait_until(state, wake_at));
        }
    }

    fn next_batch(&self, max: usize, timeout: Option<Duration>) -> Result<StreamBatch, HostError> {
        let max = if max == 0 { usize::MAX } else { max };
        let poll = timeout == Some(Duration::ZERO);
        if poll {
            self.shared.arm();
        }
        let mut items = self.take_ready(max, BATCH_BYTES, true);
        if poll && !items.is_empty() {
            // The consumer comes back for more: no signal until it finds the queue empty.
            self.shared.disarm();
        }
        if items.is_empty() {
            if poll {
                return self.poll_end();
            }
            match self.next(timeout)? {
                StreamNext::Item(item) => items.push(item),
                StreamNext::End => return Ok(StreamBatch::End),
                StreamNext::Timeout => return Ok(StreamBatch::Timeout),
            }
            let budget = BATCH_BYTES.saturating_sub(items[0].len());
            items.extend(self.take_ready(max - 1, budget, false));
        }
        Ok(StreamBatch::Items(items))
    }

    fn ready_fd(&self) -> Result<std::os::fd::RawFd, HostError> {
        use std::os::fd::AsRawFd;
        if let Some(reader) = self.ready.get() {
            return Ok(reader.as_raw_fd());
        }
        let unavailable = |error: std::io::Error| HostError::EngineUnavailable {
            stage: Stage::Invoke,
            reason: format!("cannot create the stream's readiness socket: {error}"),
        };
        let (reader, writer) = std::os::unix::net::UnixStream::pair().map_err(unavailable)?;
        reader.set_nonblocking(true).map_err(unavailable)?;
        writer.set_nonblocking(true).map_err(unavailable)?;
        // A second caller racing this one keeps the first pair.
        if self.ready.set(reader).is_ok() {
            self.shared.set_signal(writer);
        }
        Ok(self.ready.get().map(AsRawFd::as_raw_fd).unwrap_or(-1))
    }

    fn result(&self) -> Result<RunResult, HostError> {
        self.finalize().result
    }

    fn settled(&self) -> bool {
        self.lock_finish().finalized.is_some()
    }

    fn close(&self) {
        {
            let mut state = self.shared.lock();
            state.closed = true;
            state.discard = true;
        }
        self.shared.notify();
        self.finalize();
    }
}

impl Drop for OpenAiStream {
    fn drop(&mut self) {
        // Never cancels the turn: waits for it (bounded by the invocation's deadline) so
        // the runtime is released in a known state.
        self.close();
    }
}
