//! The adapter side: a health listener for Rust adapter hosts.
//!
//! [`spawn`] listens on a unix-domain socket inside `FABRIC_HOME` (the default; the
//! directory is private, so other users cannot even connect) or on `127.0.0.1:0`
//! ([`Transport::Tcp`], or when the socket cannot be bound), writes `health.endpoint.json`
//! under `FABRIC_HOME` (atomic, 0600) and answers authenticated check requests by calling
//! the adapter's probe for each level in order (see [`crate::wire`] for the protocol).
//!
//! One poll thread accepts every connection and reads first lines without blocking: at most
//! [`MAX_PENDING`] connections wait for their first line (the oldest is closed when another
//! arrives) and each gets [`REQUEST_READ_TIMEOUT`]. Only requests that carry a valid MAC
//! reach a worker thread ([`MAX_CONNECTIONS`] at once), so connections that never
//! authenticate cannot take the capacity real checks need, and a stalled probe never blocks
//! other checks. Unauthenticated, malformed or replayed requests are dropped without an
//! answer.

use std::collections::{HashSet, VecDeque};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use fabric_config::health::{CheckObservation, CheckOutcome, HealthLevel, reason};
use serde_json::{Map, Value, json};

use crate::accept::{self, Bound};
use crate::clock;
use crate::conn::{Stream, with_unix_path, write_all};
use crate::error::Error;
use crate::wire::{self, EndpointAddr, EndpointFile, Secret};

/// Authenticated requests served at the same time (worker threads); more are closed.
/// Unauthenticated connections never take one of these.
pub const MAX_CONNECTIONS: usize = 32;
/// Connections waiting for their first line; when one more arrives the oldest is closed.
pub const MAX_PENDING: usize = 128;
/// Time a client gets to send its request line after connecting.
pub const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(1);
/// Authenticated nonces remembered for replay detection.
pub const NONCE_MEMORY: usize = 8192;
/// Evidence source id the listener uses for observations it makes itself.
pub const LISTENER_SOURCE_ID: &str = "fabric:health_listener";
/// Environment variable choosing the transport of [`spawn`]: `tcp` forces loopback TCP;
/// unset, empty or `unix` means a unix-domain socket (TCP when it cannot be bound).
pub const TRANSPORT_ENV: &str = "FABRIC_HEALTH_TRANSPORT";

/// How the listener is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A unix-domain socket (mode 0600) inside `FABRIC_HOME`; falls back to TCP when the
    /// socket cannot be bound (e.g. a file system without socket support).
    Unix,
    /// Loopback TCP on `127.0.0.1:0`.
    Tcp,
}

impl Transport {
    /// [`TRANSPORT_ENV`]: `tcp` → [`Transport::Tcp`], anything else → [`Transport::Unix`].
    pub fn from_env() -> Transport {
        match std::env::var(TRANSPORT_ENV) {
            Ok(v) if v.eq_ignore_ascii_case("tcp") => Transport::Tcp,
            _ => Transport::Unix,
        }
    }
}

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
/// directory must exist), on the transport [`Transport::from_env`] picks. The endpoint file
/// is written before this returns and removed when the handle is stopped or dropped.
pub fn spawn(fabric_home: &Path, probe: impl Probe) -> Result<ListenerHandle, Error> {
    spawn_with(fabric_home, Transport::from_env(), probe)
}

/// [`spawn`] on an explicit transport.
pub fn spawn_with(
    fabric_home: &Path,
    transport: Transport,
    probe: impl Probe,
) -> Result<ListenerHandle, Error> {
    let secret = Secret::random().map_err(|source| Error::Random { source })?;
    let pid = std::process::id();
    let (bound, addr, endpoint) = match transport {
        Transport::Unix => match bind_unix(fabric_home) {
            Ok((listener, path)) => {
                let endpoint = EndpointFile::unix(&path, pid, &secret);
                (Bound::Unix(listener), EndpointAddr::Unix(path), endpoint)
            }
            Err(_) => bind_tcp(pid, &secret)?,
        },
        Transport::Tcp => bind_tcp(pid, &secret)?,
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
    // On a failure from here on, the bound socket file must not stay behind.
    let forget_socket = |error: Error| {
        if let EndpointAddr::Unix(socket) = &addr {
            let _ = fs::remove_file(socket);
        }
        error
    };
    let bind_error = |source| forget_socket(Error::Bind { source });
    let poll = mio::Poll::new().map_err(bind_error)?;
    let waker = mio::Waker::new(poll.registry(), accept::WAKE).map_err(bind_error)?;
    let worker = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("fabric-health".into())
        .spawn(move || accept::run(poll, &bound, &worker))
        .map_err(|source| forget_socket(Error::Thread { source }))?;
    let mut handle = ListenerHandle {
        shared,
        thread: Some(thread),
        waker,
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

/// Binds `fabric_home/health-<random>.sock` (mode 0600).
fn bind_unix(fabric_home: &Path) -> std::io::Result<(UnixListener, PathBuf)> {
    let suffix = hex::encode(&wire::random_bytes()?[..8]);
    let home = fs::canonicalize(fabric_home)?;
    let path = home.join(format!("health-{suffix}.sock"));
    let listener = with_unix_path(&path, |p| UnixListener::bind(p))?;
    let done = fs::set_permissions(&path, fs::Permissions::from_mode(0o600))
        .and_then(|()| listener.set_nonblocking(true));
    if let Err(error) = done {
        let _ = fs::remove_file(&path);
        return Err(error);
    }
    Ok((listener, path))
}

fn bind_tcp(pid: u32, secret: &Secret) -> Result<(Bound, EndpointAddr, EndpointFile), Error> {
    let bind_error = |source| Error::Bind { source };
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(bind_error)?;
    listener.set_nonblocking(true).map_err(bind_error)?;
    let addr = listener.local_addr().map_err(bind_error)?;
    let endpoint = EndpointFile::tcp(addr, pid, secret);
    Ok((Bound::Tcp(listener), EndpointAddr::Tcp(addr), endpoint))
}

/// A running listener. Dropping it stops the listener and removes the endpoint file.
#[derive(Debug)]
pub struct ListenerHandle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    waker: mio::Waker,
    addr: EndpointAddr,
    path: PathBuf,
    endpoint: EndpointFile,
}

impl ListenerHandle {
    /// The bound loopback port (`None` on a unix socket).
    pub fn port(&self) -> Option<u16> {
        match self.addr {
            EndpointAddr::Tcp(addr) => Some(addr.port()),
            EndpointAddr::Unix(_) => None,
        }
    }

    /// Where the listener is reached.
    pub fn addr(&self) -> &EndpointAddr {
        &self.addr
    }

    /// The endpoint file this listener wrote.
    pub fn endpoint_path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting, removes the endpoint file (and the socket) and joins the accept
    /// thread. Probes still running on worker threads finish on their own; their answers
    /// are still sent.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.shared.stopping.store(true, Ordering::SeqCst);
        remove_if_ours(&self.path, &self.endpoint);
        if let EndpointAddr::Unix(socket) = &self.addr {
            let _ = fs::remove_file(socket);
        }
        if self.waker.wake().is_ok() {
            let _ = thread.join();
        }
    }
}

impl Drop for ListenerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

pub(crate) struct Shared {
    secret: Secret,
    pid: u32,
    probe: Box<dyn Fn(HealthLevel, Duration) -> ProbeOutcome + Send + Sync>,
    pub(crate) stopping: AtomicBool,
    pub(crate) active: AtomicUsize,
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

/// An authenticated request.
pub(crate) struct Request {
    nonce: String,
    level: HealthLevel,
    budget: Duration,
}

/// Evaluates an authenticated request and writes the signed answer.
pub(crate) fn serve_authenticated(
    shared: &Shared,
    mut stream: Stream,
    request: Request,
    received: Instant,
) {
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

pub(crate) fn authenticate(shared: &Shared, line: &[u8]) -> Option<Request> {
    let body = wire::open(&shared.secret, line).ok()?;
    let now_ms = clock::unix_ms(SystemTime::now());
    let (request, issued_at_ms) = decode_request(&body, now_ms)?;
    let mut nonces = shared.nonces.lock().unwrap_or_else(|e| e.into_inner());
    if !nonces.insert(&request.nonce, issued_at_ms) {
        return None;
    }
    Some(request)
}

/// Checks an authenticated request body (kind, version, nonce, level, budget, freshness
/// against `now_ms`) and returns the request with its issue time.
pub(crate) fn decode_request(body: &Map<String, Value>, now_ms: u64) -> Option<(Request, u64)> {
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
    if now_ms.abs_diff(issued_at_ms) > wire::FRESHNESS_WINDOW_MS {
        return None;
    }
    let request = Request {
        nonce: nonce.to_owned(),
        level,
        budget: Duration::from_millis(budget_ms),
    };
    Some((request, issued_at_ms))
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
