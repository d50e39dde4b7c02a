//! The OpenAI stream listener as a loopback HTTP [`Service`]: one server per streaming
//! invocation, whose first accepted request claims the stream and posts its NDJSON
//! records. The transport (accept, heads, chunked bodies, capacity, deadlines) is the
//! reactor's HTTP driver; this is the stream's checks and queue.

use std::sync::Arc;

use fabric_reactor::http::{
    ChunkedError, Ending, Limits, OnBody, OnHead, Reject, Reply, Request, Servers, Service, Turn,
};
use fabric_reactor::{EngineError, Handle, Registration};

use super::http::{self, Fault, Status};
use super::records::{Accepted, Identity, Records};
use super::shared::Shared;

/// Connections one listener serves at once (the adapter needs one), two of them kept for a
/// request that passed the head checks.
pub(crate) const LIMITS: Limits = Limits::new(8, 2);

/// Every stream listener of the process: one reactor tenant.
pub(crate) type Listeners = Servers<StreamService>;

static LISTENERS: Registration<Listeners> = Registration::new();

/// The listeners' tenant (registered on first use).
pub(crate) fn listeners() -> Result<Handle<Listeners>, EngineError> {
    LISTENERS.get_or_register(Listeners::default)
}

/// One stream's listener: its token, record checks and the queue its consumer reads.
#[derive(Debug)]
pub(crate) struct StreamService {
    token: String,
    records: Records,
    shared: Arc<Shared>,
}

impl StreamService {
    pub(crate) fn new(token: String, identity: Identity, shared: Arc<Shared>) -> StreamService {
        StreamService {
            token,
            records: Records::new(identity),
            shared,
        }
    }

    /// Marks the claimed connection finished, with its fault if any.
    fn complete(&self, fault: Option<&Fault>) {
        let mut state = self.shared.lock();
        if let Some(fault) = fault {
            state.fail(fault.message.clone(), Some(fault.status.0));
        }
        state.completed = true;
        drop(state);
        self.shared.notify();
    }

    /// A final answer for a fault of the claimed connection's body.
    fn fail(&self, fault: &Fault) -> Reply {
        self.complete(Some(fault));
        Reply::close(fault.status.response())
    }
}

/// Per-connection state: whether this connection claimed the stream.
#[derive(Debug, Default)]
pub(crate) struct StreamConn {
    claimed: bool,
}

fn answer(status: Status) -> Reply {
    Reply::close(status.response())
}

impl Service for StreamService {
    type Conn = StreamConn;

    fn on_head(&mut self, conn: &mut StreamConn, request: &Request, _turn: &mut Turn) -> OnHead {
        if let Err(fault) = http::check_head(request, &self.token) {
            return OnHead::Reply(answer(fault.status));
        }
        let mut state = self.shared.lock();
        if state.claimed {
            return OnHead::Reply(answer(http::CONFLICT));
        }
        state.claimed = true;
        drop(state);
        conn.claimed = true;
        // The invocation's own deadline bounds the body: no idle deadline of its own.
        OnHead::Body {
            continue_first: true,
            idle: None,
        }
    }

    /// Checks and queues every complete record; pauses while the queue is full.
    fn on_body(
        &mut self,
        _conn: &mut StreamConn,
        data: &mut Vec<u8>,
        complete: bool,
        _turn: &mut Turn,
    ) -> OnBody {
        let mut queued = false;
        let decision = loop {
            match self.next_record(data, &mut queued) {
                Ok(Some(paused)) => break paused,
                Ok(None) => {}
                Err(fault) => break OnBody::Reply(self.fail(&fault)),
            }
            if !complete {
                break OnBody::Read;
            }
            if !data.trim_ascii().is_empty() {
                // A last record without its newline.
                data.push(b'\n');
                continue;
            }
            if !self.records.ended() {
                let fault = Fault::bad("OpenAI stream ended without an end record");
                break OnBody::Reply(self.fail(&fault));
            }
            self.complete(None);
            break OnBody::Reply(answer(http::OK));
        };
        if queued {
            self.shared.notify();
        }
        decision
    }

    fn on_deadline(&mut self, _conn: &mut StreamConn, _turn: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn on_body_error(
        &mut self,
        _conn: &mut StreamConn,
        error: ChunkedError,
        _turn: &mut Turn,
    ) -> Vec<u8> {
        self.fail(&Fault::from(error)).bytes
    }

    fn reject(&self, _why: Reject) -> Option<Vec<u8>> {
        Some(http::BAD_REQUEST.response())
    }

    fn on_close(&mut self, conn: StreamConn, ending: Ending) {
        if !conn.claimed || ending == Ending::ServerClosed {
            return;
        }
        let mut state = self.shared.lock();
        if state.completed {
            return;
        }
        if ending == Ending::PeerClosed {
            state.connection_closed = true;
        }
        state.fail("OpenAI stream connection closed before completion", None);
        state.completed = true;
        drop(state);
        self.shared.notify();
    }
}

impl StreamService {
    /// Checks and queues the complete records in `data`: `Ok(Some(pause))` when the queue
    /// filled up, `Ok(None)` once no complete line is left.
    fn next_record(
        &mut self,
        data: &mut Vec<u8>,
        queued: &mut bool,
    ) -> Result<Option<OnBody>, Fault> {
        while let Some(line) = self.records.next_line(data)? {
            match self.records.check(&line)? {
                None => {}
                Some(Accepted::Chunk(json)) => {
                    let mut state = self.shared.lock();
                    if !state.discard {
                        state.queued_bytes += json.len();
                        state.queue.push_back(json);
                        *queued = true;
                        if state.full() {
                            state.paused = true;
                            return Ok(Some(OnBody::Pause(None)));
                        }
                    }
                }
                Some(Accepted::End) => {
                    self.shared.lock().ended = true;
                    *queued = true;
                }
            }
        }
        Ok(None)
    }
}
