//! The adapter side: a health listener for Rust adapter hosts.
//!
//! [`spawn`] binds `127.0.0.1:0` on its own thread, writes `health.endpoint.json` under
//! `FABRIC_HOME` (atomic, 0600) and answers authenticated check requests by calling the
//! adapter's probe for each level in order (see [`crate::wire`] for the protocol). Each
//! connection is served on its own short-lived thread, so a stalled probe never blocks other
//! checks; at most [`MAX_CONNECTIONS`] are served at once and further connections are closed.
//! Unauthenticated, malformed or replayed requests are dropped without an answer.

use std::collections::{HashSet, VecDeque};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use fabric_config::health::{CheckObservation, CheckOutcome, HealthLevel, reason};
use serde_json::{Map, json};

use crate::clock;
use crate::conn::{read_line, write_all};
use crate::error::Error;
use crate::wire::{self, EndpointFile, Secret};

/// Connections served at the same time; more are closed at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Time a client gets to send its request line after connecting.
pub const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Authenticated nonces remembered for replay detection.
pub const NONCE_MEMORY: usize = 8192;
/// Evidence source id the listener uses for observations it makes itself.
pub const LISTENER_SOURCE_ID: &str = "fabric:health_listener";

/// What a probe found for one level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOutcome {
    /// The observation's outcome.
    pub outcome: CheckOutcome,
    /// Snake_case reason (`[a-z][a-z0-9_]*`, ≤ 64 bytes); `None` when passed.
    pub reason: Option<String>,
    /// Fixed evidence source id (`[A-Za-z0-9._:/-]+`, ≤ 128 bytes), e.g. `scripted:process`.
    pub source_id: String,
}

impl ProbeOutcome {
    /// A passing observation.
    pub fn passed(source_id: impl Into<String>) -> Self {
        ProbeOutcome {
            outcome: CheckOutcome::Passed,
            reason: None,
            source_id: source_id.into(),
        }
    }

    /// A concrete failure.
    pub fn failed(source_id: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::with(CheckOutcome::Failed, source_id, reason)
    }

    /// The probe could not establish the result.
    pub fn unknown(source_id: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::with(CheckOutcome::Unknown, source_id, reason)
    }

    /// The adapter does not implement this level.
    pub fn unsupported(source_id: impl Into<String>) -> Self {
        Self::with(
            CheckOutcome::Unsupported,
            source_id,
            reason::UNSUPPORTED_LEVEL,
        )
    }

    fn with(outcome: CheckOutcome, source_id: impl Into<String>, why: impl Into<String>) -> Self {
        ProbeOutcome {
            outcome,
            reason: Some(why.into()),
            source_id: source_id.into(),
        }
    }

    fn is_valid(&self) -> bool {
        wire::valid_source_id(&self.source_id)
            && self.reason.as_deref().is_none_or(wire::valid_reason)
    }
}

/// The adapter's probe: called with the level to observe and the remaining budget, which it
/// should honour (a probe that returns after the budget is reported as `probe_timeout`).
pub trait Probe: Fn(HealthLevel, Duration) -> ProbeOutcome + Send + Sync + 'static {}
impl<F: Fn(HealthLevel, Duration) -> ProbeOutcome + Send + Sync + 'static> Probe for F {}

/// Path of the endpoint file under `fabric_home`.
pub fn endpoint_path(fabric_home: &Path) -> PathBuf {
    fabric_home.join(wire::ENDPOINT_FILE_NAME)
}

/// Starts a health listener for the runtime whose `FABRIC_HOME` is `fabric_home` (the
/// directory must exist). The endpoint file is written before this returns and removed when
/// the handle is stopped or dropped.
pub fn spawn(fabric_home: &Path, probe: impl Probe) -> Result<ListenerHandle, Error> {
    let secret = Secret::random().map_err(|source| Error::Random { source })?;
    let listener =
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|source| Error::Bind { source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| Error::Bind { source })?;
    let pid = std::process::id();
    let endpoint = EndpointFile {
        schema_version: wire::ENDPOINT_SCHEMA_VERSION.to_owned(),
        host: Ipv4Addr::LOCALHOST.to_string(),
        port: addr.port(),
        pid,
        secret: secret.to_hex(),
    };
    let path = endpoint_path(fabric_home);
    let shared = Arc::new(Shared {
        secret,
        pid,
        probe: Box::new(probe),
        stopping: AtomicBool::new(false),
        active: AtomicUsize::new(0),
        nonces: Mutex::new(NonceSet::default()),
    });
    let worker = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("fabric-health".into())
        .spawn(move || accept_loop(&listener, &worker))
        .map_err(|source| Error::Thread { source })?;
    let mut handle = ListenerHandle {
        shared,
        thread: Some(thread),
        addr,
        path,
        endpoint,
    };
    let text = serde_json::to_string(&handle.endpoint).expect("endpoint serializes");
    if let Err(error) = write_private_atomic(&handle.path, text.as_bytes()) {
        handle.shutdown();
        return Err(error);
    }
    Ok(handle)
}

/// A running listener. Dropping it stops the listener and removes the endpoint file.
#[derive(Debug)]
pub struct ListenerHandle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
    path: PathBuf,
    endpoint: EndpointFile,
}

impl ListenerHandle {
    /// The bound loopback port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The endpoint file this listener wrote.
    pub fn endpoint_path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting, removes the endpoint file and joins the accept thread. Probes still
    /// running on connection threads finish on their own; their answers are still sent.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.shared.stopping.store(true, Ordering::SeqCst);
        remove_if_ours(&self.path, &self.endpoint);
        // Wake the blocking accept; if that fails the thread exits on its next connection.
        if TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok() {
            let _ = thread.join();
        }
    }
}

impl Drop for ListenerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

struct Shared {
    secret: Secret,
    pid: u32,
    probe: Box<dyn Fn(HealthLevel, Duration) -> ProbeOutcome + Send + Sync>,
    stopping: AtomicBool,
    active: AtomicUsize,
    nonces: Mutex<NonceSet>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Authenticated nonces seen recently. When full, the oldest is forgotten and its issue time
/// becomes a floor: requests issued at or before the floor are refused, so a forgotten nonce
/// cannot be replayed.
#[derive(Debug, Default)]
struct NonceSet {
    seen: HashSet<String>,
    order: VecDeque<(String, u64)>,
    floor_ms: u64,
}

impl NonceSet {
    fn insert(&mut self, nonce: &str, issued_at_ms: u64) -> bool {
        if issued_at_ms <= self.floor_ms || self.seen.contains(nonce) {
            return false;
        }
        if self.order.len() >= NONCE_MEMORY
            && let Some((old, at)) = self.order.pop_front()
        {
            self.seen.remove(&old);
            self.floor_ms = self.floor_ms.max(at);
        }
        self.seen.insert(nonce.to_owned());
        self.order.push_back((nonce.to_owned(), issued_at_ms));
        true
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else {
            // Out of descriptors or a transient error: back off briefly instead of spinning.
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        if shared.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let worker = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("fabric-health-conn".into())
            .spawn(move || {
                serve_one(&worker, stream);
                worker.active.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// An authenticated request.
struct Request {
    nonce: String,
    level: HealthLevel,
    budget: Duration,
}

fn serve_one(shared: &Shared, mut stream: TcpStream) {
    let received = Instant::now();
    let _ = stream.set_nodelay(true);
    let Ok(line) = read_line(
        &mut stream,
        wire::MAX_REQUEST_BYTES,
        received + REQUEST_READ_TIMEOUT,
    ) else {
        return;
    };
    let Some(request) = authenticate(shared, &line) else {
        return;
    };
    let deadline = received + request.budget;
    let observations = evaluate(&*shared.probe, request.level, deadline);
    let mut body = Map::new();
    body.insert("kind".into(), json!(wire::RESPONSE_KIND));
    body.insert("v".into(), json!(wire::PROTOCOL_VERSION));
    body.insert("nonce".into(), json!(request.nonce));
    body.insert("pid".into(), json!(shared.pid));
    body.insert(
        "observations".into(),
        serde_json::to_value(&observations).expect("observations serialize"),
    );
    let line = wire::seal(&shared.secret, body);
    // The client stops listening at its deadline; a little grace covers clock granularity.
    let _ = write_all(
        &mut stream,
        line.as_bytes(),
        deadline + Duration::from_millis(100),
    );
}

fn authenticate(shared: &Shared, line: &[u8]) -> Option<Request> {
    let body = wire::open(&shared.secret, line).ok()?;
    if body.get("kind")?.as_str()? != wire::REQUEST_KIND
        || body.get("v")?.as_u64()? != wire::PROTOCOL_VERSION
    {
        return None;
    }
    let nonce = body.get("nonce")?.as_str()?;
    let level = HealthLevel::parse(body.get("level")?.as_str()?)?;
    let budget_ms = body.get("budget_ms")?.as_u64()?;
    let issued_at_ms = body.get("issued_at_ms")?.as_u64()?;
    if !wire::valid_nonce(nonce) || budget_ms == 0 || budget_ms > wire::MAX_BUDGET_MS {
        return None;
    }
    let now_ms = clock::unix_ms(SystemTime::now());
    if now_ms.abs_diff(issued_at_ms) > wire::FRESHNESS_WINDOW_MS {
        return None;
    }
    let mut nonces = shared.nonces.lock().unwrap_or_else(|e| e.into_inner());
    if !nonces.insert(nonce, issued_at_ms) {
        return None;
    }
    Some(Request {
        nonce: nonce.to_owned(),
        level,
        budget: Duration::from_millis(budget_ms),
    })
}

/// Runs the probe for each level up to `level`, stopping at the first non-pass or the deadline.
pub(crate) fn evaluate(
    probe: &(dyn Fn(HealthLevel, Duration) -> ProbeOutcome + Send + Sync),
    level: HealthLevel,
    deadline: Instant,
) -> Vec<CheckObservation> {
    let mut out = Vec::with_capacity(3);
    for &each in level.cumulative() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            out.push(listener_observation(each, reason::PROBE_TIMEOUT));
            break;
        }
        let found = match catch_unwind(AssertUnwindSafe(|| probe(each, left))) {
            Ok(found) if found.is_valid() => found,
            _ => ProbeOutcome::unknown(LISTENER_SOURCE_ID, reason::PROBE_ERROR),
        };
        if Instant::now() > deadline {
            out.push(listener_observation(each, reason::PROBE_TIMEOUT));
            break;
        }
        let passed = found.outcome == CheckOutcome::Passed;
        out.push(CheckObservation {
            level: each,
            outcome: found.outcome,
            reason: found.reason,
            source_id: found.source_id,
            observed_at: clock::rfc3339(SystemTime::now()),
        });
        if !passed {
            break;
        }
    }
    out
}

fn listener_observation(level: HealthLevel, why: &str) -> CheckObservation {
    CheckObservation {
        level,
        outcome: CheckOutcome::Unknown,
        reason: Some(why.to_owned()),
        source_id: LISTENER_SOURCE_ID.to_owned(),
        observed_at: clock::rfc3339(SystemTime::now()),
    }
}

/// Writes `bytes` to `path` through a 0600 temporary sibling and a rename.
fn write_private_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let suffix =
        hex::encode(&wire::random_bytes().map_err(|source| Error::Random { source })?[..8]);
    let tmp = dir.join(format!(".{}.{suffix}.tmp", wire::ENDPOINT_FILE_NAME));
    let fail = |p: &Path| {
        let p = p.to_path_buf();
        move |source| Error::EndpointFile { path: p, source }
    };
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(source) = written {
        let _ = fs::remove_file(&tmp);
        return Err(fail(&tmp)(source));
    }
    fs::rename(&tmp, path).map_err(|source| {
        let _ = fs::remove_file(&tmp);
        fail(path)(source)
    })
}

/// Removes the endpoint file unless another listener has replaced it since.
fn remove_if_ours(path: &Path, ours: &EndpointFile) {
    let Ok(text) = fs::read(path) else { return };
    if serde_json::from_slice::<EndpointFile>(&text).is_ok_and(|found| found == *ours) {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_set_rejects_repeats_and_forgotten_ones() {
        let mut set = NonceSet::default();
        assert!(set.insert("a", 10));
        assert!(!set.insert("a", 11));
        for i in 0..NONCE_MEMORY {
            assert!(set.insert(&format!("n{i}"), 20 + i as u64));
        }
        // "a" was forgotten: the floor now refuses anything issued at or before 10.
        assert!(!set.insert("a", 10));
        assert!(set.insert("fresh", 1_000_000));
    }

    #[test]
    fn evaluate_stops_at_first_non_pass() {
        let probe = |level: HealthLevel, _: Duration| match level {
            HealthLevel::Live => ProbeOutcome::passed("t:live"),
            _ => ProbeOutcome::failed("t:active", "not_active"),
        };
        let got = evaluate(
            &probe,
            HealthLevel::Ready,
            Instant::now() + Duration::from_secs(1),
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].outcome, CheckOutcome::Failed);
        assert_eq!(got[1].reason.as_deref(), Some("not_active"));
    }

    #[test]
    fn evaluate_maps_panics_and_bad_ids_to_probe_error() {
        let panicking = |_: HealthLevel, _: Duration| -> ProbeOutcome { panic!("probe bug") };
        let got = evaluate(
            &panicking,
            HealthLevel::Live,
            Instant::now() + Duration::from_secs(1),
        );
        assert_eq!(got[0].reason.as_deref(), Some(reason::PROBE_ERROR));
        let bad = |_: HealthLevel, _: Duration| ProbeOutcome::failed("bad id", "Nope");
        let got = evaluate(
            &bad,
            HealthLevel::Live,
            Instant::now() + Duration::from_secs(1),
        );
        assert_eq!(got[0].outcome, CheckOutcome::Unknown);
        assert_eq!(got[0].source_id, LISTENER_SOURCE_ID);
    }
}
