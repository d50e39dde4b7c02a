//! The Relay ATOF collector: a loopback HTTP server on the reactor that publishers (Relay
//! `stream` sinks in adapters) post ATOF records to, and that routes each record to the
//! registered request it belongs to (docs/telemetry.md, "Streaming ATOF records").
//!
//! Endpoints (wire-compatible with upstream's collector app): `GET /healthz`,
//! `POST /v1/register`, `GET /v1/stream/{request_id}` (NDJSON), `DELETE
//! /v1/deregister-request/{request_id}?remove_queue=`, `POST /v1/atof`, and `GET
//! /v1/stats` (ours: the counters). Every endpoint but `/healthz` needs the bearer token.
//! In-process consumers read a registration's queue directly ([`Collector::attach`]).

mod control;
mod http;
mod hub;
mod service;

use fabric_config::codes;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fabric_config::Stage;
use fabric_reactor::http::{ServerKey, new_token};
use fabric_reactor::{EngineError, Handle, Registration};

pub use hub::{CollectorStats, QUEUE_MAX_BYTES, QUEUE_MAX_RECORDS};

use crate::StreamNext;
use crate::error::RelayError;
use hub::{AttachError, Bounds, Hub, Pop, RegisterError};
use service::{CollectorService, Collectors, LIMITS};

/// A collector's service without a listener (fuzzing, `crate::fuzz`): registrations `r`
/// and `s`, a cap of 3, the smallest memory budget.
pub(crate) fn fuzz_service(
    token: &str,
    put_timeout: Duration,
) -> (CollectorService, Arc<Hub>, fabric_reactor::http::Limits) {
    let hub = Arc::new(Hub::new(Bounds {
        memory_budget: MIN_MEMORY_BUDGET,
        max_registrations: 3,
    }));
    for id in ["r", "s"] {
        let _ = hub.lock().register(id);
    }
    let service = CollectorService {
        token: token.to_owned(),
        hub: Arc::clone(&hub),
        put_timeout,
        atof_idle: ATOF_BODY_IDLE,
    };
    (service, hub, LIMITS)
}

/// Every collector of the process: one reactor tenant.
static COLLECTORS: Registration<Collectors> = Registration::new();

fn collectors() -> Result<Handle<Collectors>, EngineError> {
    COLLECTORS.get_or_register(Collectors::default)
}

/// Largest ATOF record (one NDJSON line) `/v1/atof` accepts; a longer one is a 413.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;
/// How long a record waits for room in a full queue (or a publisher for the memory
/// budget) before it is dropped (and counted), or the request refused with 503.
pub const PUT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default memory budget of one collector: queued records, records being received or
/// waiting for room, and remembered scopes, together (64 MiB).
pub const MEMORY_BUDGET: usize = 64 * 1024 * 1024;
/// Smallest memory budget accepted (one largest record).
pub const MIN_MEMORY_BUDGET: usize = MAX_RECORD_BYTES;
/// Default maximum of live registrations of one collector.
pub const MAX_REGISTRATIONS: usize = 1024;
/// Default inactivity deadline of a `POST /v1/atof` body: a publisher that sends no byte
/// for this long is disconnected (a body may stream for as long as bytes keep coming).
pub const ATOF_BODY_IDLE: Duration = Duration::from_secs(300);

/// How to start a collector.
#[derive(Debug, Clone)]
pub struct CollectorOptions {
    /// Where to listen (port 0: any free port).
    pub listen: SocketAddr,
    /// The bearer token (`None`: 32 random bytes, hex).
    pub token: Option<String>,
    /// See [`PUT_TIMEOUT`].
    pub put_timeout: Duration,
    /// Bytes the collector may hold, at least [`MIN_MEMORY_BUDGET`]. Default
    /// [`MEMORY_BUDGET`]. A routed record that does not fit waits as for a full queue;
    /// a publisher whose partial record does not fit waits, then is answered 503
    /// `collector_memory_full`.
    pub memory_budget: usize,
    /// Live registrations held at most (at least 1); one more is answered 503
    /// `collector_registrations_full`. Default [`MAX_REGISTRATIONS`].
    pub max_registrations: usize,
    /// Inactivity deadline of a publisher's body (above 0). Default [`ATOF_BODY_IDLE`].
    pub body_idle: Duration,
}

impl CollectorOptions {
    /// 127.0.0.1, any free port, a fresh token, the default bounds and timeouts.
    pub fn loopback() -> CollectorOptions {
        CollectorOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            put_timeout: PUT_TIMEOUT,
            memory_budget: MEMORY_BUDGET,
            max_registrations: MAX_REGISTRATIONS,
            body_idle: ATOF_BODY_IDLE,
        }
    }

    /// The first option out of range, named (`memory_budget`, `max_registrations`,
    /// `put_timeout`, `body_idle`).
    pub fn check(&self) -> Result<(), String> {
        if self.memory_budget < MIN_MEMORY_BUDGET {
            return Err(format!(
                "memory_budget must be at least {MIN_MEMORY_BUDGET} bytes (one largest record)"
            ));
        }
        if self.max_registrations == 0 {
            return Err("max_registrations must be at least 1".into());
        }
        for (name, value) in [
            ("put_timeout", self.put_timeout),
            ("body_idle", self.body_idle),
        ] {
            if value.is_zero() {
                return Err(format!("{name} must be above 0"));
            }
        }
        Ok(())
    }
}

/// A running collector. Closing (or dropping) it closes the listener and every connection.
#[derive(Debug)]
pub struct Collector {
    hub: Arc<Hub>,
    key: ServerKey,
    addr: SocketAddr,
    token: String,
    closed: AtomicBool,
}

fn start_failed(message: String) -> RelayError {
    RelayError::collector(Stage::Start, codes::COLLECTOR_START_FAILED, message)
}

fn request_failed(message: String) -> RelayError {
    RelayError::collector(Stage::Invoke, codes::COLLECTOR_REQUEST_FAILED, message)
}

impl Collector {
    /// Binds the listener and serves it on the reactor. Errors: `collector_start_failed`.
    pub fn start(options: &CollectorOptions) -> Result<Collector, RelayError> {
        options.check().map_err(start_failed)?;
        let engine = collectors().map_err(|error| start_failed(error.reason().to_owned()))?;
        let listener = std::net::TcpListener::bind(options.listen).map_err(|error| {
            start_failed(format!(
                "cannot listen on {} for the ATOF collector: {error}",
                options.listen
            ))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|error| start_failed(error.to_string()))?;
        let token = match &options.token {
            Some(token) => token.clone(),
            None => new_token().map_err(start_failed)?,
        };
        let hub = Arc::new(Hub::new(Bounds {
            memory_budget: options.memory_budget,
            max_registrations: options.max_registrations,
        }));
        let service = CollectorService {
            token: token.clone(),
            hub: Arc::clone(&hub),
            put_timeout: options.put_timeout,
            atof_idle: options.body_idle,
        };
        let key = engine
            .call(move |servers, cx| servers.open(cx, listener, LIMITS, service))
            .map_err(|error| start_failed(error.reason().to_owned()))?
            .map_err(|error| start_failed(format!("cannot watch the collector: {error}")))?;
        Ok(Collector {
            hub,
            key,
            addr,
            token,
            closed: AtomicBool::new(false),
        })
    }

    /// `http://<addr>` (publishers post to `<base>/v1/atof`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bearer token (a secret: never log it).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The counters so far.
    pub fn stats(&self) -> CollectorStats {
        self.hub.lock().snapshot()
    }

    /// Registers a request id (as `POST /v1/register`). Errors: `collector_request_failed`
    /// (already registered), `collector_registrations_full` (at `max_registrations`).
    pub fn register(&self, request_id: &str) -> Result<(), RelayError> {
        self.hub
            .lock()
            .register(request_id)
            .map_err(|error| match error {
                RegisterError::Full(_) => RelayError::collector(
                    Stage::Invoke,
                    codes::COLLECTOR_REGISTRATIONS_FULL,
                    error.detail(),
                ),
                RegisterError::Duplicate(_) => request_failed(error.detail()),
            })
    }

    /// Attaches the in-process consumer of a registration (as `GET /v1/stream/{id}`).
    /// Errors: `collector_request_failed` (unknown, or a stream is attached).
    pub fn attach(&self, request_id: &str) -> Result<RecordReader, RelayError> {
        self.hub
            .lock()
            .attach(request_id)
            .map_err(|error| match error {
                AttachError::Unknown => request_failed("request_id is not registered".into()),
                AttachError::Attached => {
                    request_failed("request_id already has an attached stream".into())
                }
            })?;
        Ok(RecordReader {
            hub: Arc::clone(&self.hub),
            key: self.key,
            request_id: request_id.to_owned(),
        })
    }

    /// Stops routing to a request (as `DELETE /v1/deregister-request/{id}`): with
    /// `remove_queue` its queue is dropped and its stream ends now, otherwise the stream
    /// ends once the queue is delivered.
    pub fn deregister(&self, request_id: &str, remove_queue: bool) {
        self.hub.lock().deregister(request_id, remove_queue);
        self.hub.notify();
        self.resume();
    }

    /// Asks the reactor to retry blocked publishers and write streams.
    fn resume(&self) {
        resume(self.key);
    }

    /// Closes the listener and every connection. Idempotent.
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(engine) = COLLECTORS.get() {
            let key = self.key;
            let _ = engine.post(move |servers, cx| servers.close(cx, key));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.close();
    }
}

/// The in-process consumer of one registration's records (JSON text, in arrival order).
/// Dropping it detaches (the registration keeps collecting until it is deregistered).
#[derive(Debug)]
pub struct RecordReader {
    hub: Arc<Hub>,
    key: ServerKey,
    request_id: String,
}

impl RecordReader {
    /// The next record, waiting at most `timeout` (`None`: until one arrives or the
    /// registration is deregistered and delivered).
    pub fn next(&self, timeout: Option<Duration>) -> StreamNext {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut routes = self.hub.lock();
        loop {
            match routes.pop(&self.request_id) {
                Pop::Record(record) => {
                    drop(routes);
                    if self.hub.take_blocked() {
                        resume(self.key);
                    }
                    return StreamNext::Item(record);
                }
                Pop::End => return StreamNext::End,
                Pop::Empty => {}
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return StreamNext::Timeout;
            }
            routes = self.hub.wait_until(routes, deadline);
        }
    }

    /// Calls `watcher` after every change of the collector's queues (`None`: no more).
    pub fn set_watcher(&self, watcher: Option<Arc<dyn Fn() + Send + Sync>>) {
        self.hub.set_watcher(watcher);
    }

    /// The request id this reader consumes.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }
}

/// Asks the reactor to retry a collector's blocked publishers and write its streams.
fn resume(key: ServerKey) {
    if let Some(engine) = COLLECTORS.get() {
        let _ = engine.post(move |servers, cx| servers.resume(cx, key));
    }
}

impl Drop for RecordReader {
    fn drop(&mut self) {
        self.hub.lock().detach(&self.request_id);
    }
}
