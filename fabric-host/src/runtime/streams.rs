//! Streaming turns of a runtime: the native OpenAI stream and the Relay ATOF stream. The
//! streams themselves (`crate::stream`) know no runtime: they collect the outcome and
//! release the runtime through [`Turn`], the runtime's side of one streaming invocation.

use fabric_config::codes;
use std::sync::{Arc, Mutex};

use fabric_config::{RunRequest, RunResult, Stage};
use fabric_relay::streaming::StreamCollector;

use super::Runtime;
use super::invocation::{Started, StreamSend};
use crate::error::HostError;
use crate::stream::{AtofOpened, AtofStream, OpenAiStream, Opened, StreamOwner, capability_error};

/// The runtime's side of one streaming invocation (see [`StreamOwner`]).
#[derive(Debug)]
struct Turn {
    runtime: Arc<Runtime>,
    started: Mutex<Option<Started>>,
}

impl Turn {
    fn boxed(runtime: &Arc<Runtime>, started: Started) -> Box<dyn StreamOwner> {
        Box::new(Turn {
            runtime: Arc::clone(runtime),
            started: Mutex::new(Some(started)),
        })
    }
}

impl StreamOwner for Turn {
    fn finish(&self) -> Option<Result<RunResult, HostError>> {
        let started = self
            .started
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()?;
        Some(self.runtime.finish_invocation(started))
    }

    fn settle(&self, outcome: &Result<RunResult, HostError>, failure: Option<&str>) {
        self.runtime.settle(outcome, failure);
    }

    fn stopped(&self) -> bool {
        self.runtime.stopping_or_stopped()
    }

    fn collector(&self) -> Option<&StreamCollector> {
        self.runtime.relay_stream().map(|relay| &relay.collector)
    }
}

impl Runtime {
    /// Starts one invocation that streams native OpenAI chunks (see [`OpenAiStream`]).
    ///
    /// Errors (the runtime is untouched): `openai_streaming_unavailable` (capability
    /// error: the adapter does not claim streaming), `runtime_busy` (a turn or another
    /// stream is active), `runtime_stopped`, `runtime_failed`; request checks as
    /// [`Runtime::invoke`]. Failures of the invocation itself are reported by the stream.
    pub fn invoke_openai_stream(
        self: &Arc<Self>,
        request: RunRequest,
    ) -> Result<OpenAiStream, HostError> {
        let stage = Stage::Invoke;
        self.refuse_remote_stream()?;
        if !self.supports_openai_streaming() {
            return Err(HostError::Capability {
                stage,
                code: codes::OPENAI_STREAMING_UNAVAILABLE,
                message: "the selected adapter does not support native OpenAI streaming".into(),
            });
        }
        self.claim(stage, true)?;
        let opened = self.open_openai_stream(request);
        if let Err(error) = &opened {
            self.settle(&Err(error.clone()), None);
        }
        opened
    }

    fn open_openai_stream(
        self: &Arc<Self>,
        request: RunRequest,
    ) -> Result<OpenAiStream, HostError> {
        let (invocation_id, request_id) = Runtime::invocation_ids(&request);
        let opened = Opened::open(self.runtime_id(), &invocation_id, &request_id)?;
        let send = StreamSend {
            sink: &opened.sink,
            notify: opened.answered_hook(),
        };
        match self.begin_invocation(request, (invocation_id, request_id), Some(send), None) {
            Ok(started) => Ok(opened.into_stream(Turn::boxed(self, started))),
            Err(error) => {
                opened.close();
                Err(error)
            }
        }
    }

    /// Starts one invocation whose Relay ATOF records stream to the caller (see
    /// [`AtofStream`]).
    ///
    /// Errors (the runtime is untouched): `streaming_unavailable` (capability: the runtime
    /// was not started with `streaming`), `runtime_busy`, `runtime_stopped`,
    /// `runtime_failed`, `collector_request_failed` (the collector refused the
    /// registration or the stream); request checks as [`Runtime::invoke`].
    pub fn invoke_stream(self: &Arc<Self>, request: RunRequest) -> Result<AtofStream, HostError> {
        let stage = Stage::Invoke;
        self.refuse_remote_stream()?;
        let Some(relay) = self.relay_stream() else {
            return Err(capability_error());
        };
        self.claim(stage, true)?;
        let (invocation_id, request_id) = Runtime::invocation_ids(&request);
        let opened = match AtofOpened::open(
            &relay.collector,
            self.runtime_id(),
            &invocation_id,
            &request_id,
        ) {
            Ok(opened) => opened,
            Err(error) => {
                self.settle(&Err(error.clone()), None);
                return Err(error);
            }
        };
        let notify = opened.answered_hook();
        match self.begin_invocation_notify(request, (invocation_id, request_id), notify) {
            Ok(started) => Ok(opened.into_stream(Turn::boxed(self, started))),
            Err(error) => {
                opened.abort(&relay.collector);
                self.settle(&Err(error.clone()), None);
                Err(error)
            }
        }
    }
}
