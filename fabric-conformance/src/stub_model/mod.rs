//! The stub model server: a loopback endpoint speaking OpenAI Chat Completions and
//! Responses and Anthropic Messages, answering scripted replies (text, tool calls, HTTP
//! errors, malformed bodies), whole or streamed (`"stream": true`), and logging every
//! request. `fabric stub-model serve` runs one; `fabric adapters check --model-stub` points a
//! harness's `models.*.base_url` at one so its target can run (and fail) without a model.
//!
//! It is a [`Service`](fabric_reactor::http::Service) of the reactor's HTTP driver: no
//! thread or HTTP stack of its own.

mod anthropic;
mod api;
mod log;
mod openai;
mod service;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fabric_reactor::http::ServerKey;
use fabric_reactor::{EngineError, Handle, Registration};

/// The reply script (a `fabric-config` type: it crosses the C ABI in a ConformanceRequest).
pub use fabric_config::stub_model::{
    DEFAULT_TEXT, StubModelError as ErrorReply, StubModelReply as ScriptReply,
    StubModelScript as Script, StubModelToolCall as ToolCall,
};
pub use log::RequestLog;
use service::{LIMITS, Shared, StubService, Stubs};

static STUBS: Registration<Stubs> = Registration::new();

fn stubs() -> Result<Handle<Stubs>, EngineError> {
    STUBS.get_or_register(Stubs::default)
}

/// A running stub model server. Closing (or dropping) it closes the listener and every
/// connection.
#[derive(Debug)]
pub struct StubModel {
    key: ServerKey,
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    closed: AtomicBool,
}

impl StubModel {
    /// Serves `script` on `listen` (a loopback address; port 0 for any free port), logging
    /// requests to `log`. Errors: a non-loopback address, a bind failure, no reactor.
    pub fn start(listen: SocketAddr, script: Script, log: RequestLog) -> Result<StubModel, String> {
        if !listen.ip().is_loopback() {
            return Err(format!(
                "the stub model server listens on loopback only, not {listen}"
            ));
        }
        let engine = stubs().map_err(|error| error.reason().to_owned())?;
        let listener = std::net::TcpListener::bind(listen)
            .map_err(|error| format!("cannot listen on {listen}: {error}"))?;
        let addr = listener.local_addr().map_err(|error| error.to_string())?;
        let shared = Arc::new(Mutex::new(Shared {
            script,
            requests: 0,
            log,
        }));
        let service = StubService {
            shared: Arc::clone(&shared),
        };
        let key = engine
            .call(move |servers, cx| servers.open(cx, listener, LIMITS, service))
            .map_err(|error| error.reason().to_owned())?
            .map_err(|error| format!("cannot watch the stub model listener: {error}"))?;
        Ok(StubModel {
            key,
            addr,
            shared,
            closed: AtomicBool::new(false),
        })
    }

    /// `http://<addr>/v1`: what a harness's `base_url` is set to (OpenAI clients append
    /// `/chat/completions` or `/responses`, Anthropic ones `/messages`; a base without
    /// `/v1` works as well).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Model requests answered so far.
    pub fn requests(&self) -> u64 {
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
    }

    /// Closes the listener and every connection. Idempotent.
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(engine) = STUBS.get() {
            let key = self.key;
            let _ = engine.call(move |servers, cx| servers.close(cx, key));
        }
    }
}

impl Drop for StubModel {
    fn drop(&mut self) {
        self.close();
    }
}
