//! [`View`]: the listener on the reactor's HTTP driver, the index and its rescan thread.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use fabric_reactor::http::{Limits, ServerKey, Servers, new_token};
use fabric_reactor::{Handle, Registration};

use crate::error::ViewError;
use crate::index::Shared;
use crate::service::{ViewService, Waker};

/// Connections served at once, a quarter kept for requests that passed the token check.
const LIMITS: Limits = Limits::new(256, 64);

pub(crate) type ViewServers = Servers<ViewService>;

static SERVERS: Registration<ViewServers> = Registration::new();

/// What to serve and where.
#[derive(Debug, Clone)]
pub struct ViewOptions {
    /// Files and directories to index.
    pub paths: Vec<PathBuf>,
    /// A loopback address. Default `127.0.0.1:0` (any free port).
    pub listen: SocketAddr,
    /// How often the paths are scanned for changes. Default 1 s.
    pub rescan: Duration,
}

impl ViewOptions {
    /// Serves `paths` on `127.0.0.1:0`, rescanning every second.
    pub fn new(paths: Vec<PathBuf>) -> ViewOptions {
        ViewOptions {
            paths,
            listen: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)),
            rescan: Duration::from_secs(1),
        }
    }
}

/// A running `fabric view` server. Closing (or dropping) it closes the listener and every
/// connection and stops the rescans.
#[derive(Debug)]
pub struct View {
    key: ServerKey,
    addr: SocketAddr,
    token: String,
    shared: Arc<Shared>,
    scanner: Option<JoinHandle<()>>,
    closed: AtomicBool,
}

impl View {
    /// Indexes the paths once, then serves them. Errors: a non-loopback address, a path
    /// that cannot be read, a bind failure, no reactor.
    pub fn start(options: ViewOptions) -> Result<View, ViewError> {
        if !options.listen.ip().is_loopback() {
            return Err(ViewError::ListenRefused {
                listen: options.listen,
            });
        }
        let start = |reason: String| ViewError::Start { reason };
        let mut roots = Vec::new();
        for path in &options.paths {
            let root = std::fs::canonicalize(path).map_err(|error| ViewError::Path {
                path: path.display().to_string(),
                reason: error.to_string(),
            })?;
            roots.push((path.display().to_string(), root));
        }
        let token = new_token().map_err(start)?;
        let shared = Arc::new(Shared::new(roots));
        shared.rescan();
        let engine = SERVERS
            .get_or_register(ViewServers::default)
            .map_err(|error| start(error.reason().to_owned()))?;
        let listener = std::net::TcpListener::bind(options.listen)
            .map_err(|error| start(format!("cannot listen on {}: {error}", options.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|error| start(error.to_string()))?;
        let waker = Arc::new(OnceLock::new());
        let service = ViewService::new(token.clone(), Arc::clone(&shared), Arc::clone(&waker));
        let key = engine
            .call(move |servers, cx| servers.open(cx, listener, LIMITS, service))
            .map_err(|error| start(error.reason().to_owned()))?
            .map_err(|error| start(format!("cannot watch the listener: {error}")))?;
        let _ = waker.set(Waker::new(engine, key));
        let scanner = {
            let shared = Arc::clone(&shared);
            let every = options.rescan;
            std::thread::Builder::new()
                .name("fabric-view-scan".into())
                .spawn(move || shared.rescan_until_closed(every))
                .map_err(|error| start(format!("cannot start the rescan thread: {error}")))?
        };
        Ok(View {
            key,
            addr,
            token,
            shared,
            scanner: Some(scanner),
            closed: AtomicBool::new(false),
        })
    }

    /// `http://127.0.0.1:PORT/?token=TOKEN`: the page's address.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes the listener and every connection and stops the rescans. Idempotent.
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.shared.close();
        if let Some(engine) = SERVERS.get() {
            let key = self.key;
            let _ = engine.call(move |servers, cx| servers.close(cx, key));
        }
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.close();
        if let Some(scanner) = self.scanner.take() {
            let _ = scanner.join();
        }
    }
}

/// Wakes the server's waiting connections (a worker queued bytes).
pub(crate) fn wake(handle: &Handle<ViewServers>, key: ServerKey) {
    let _ = handle.post(move |servers, cx| servers.resume(cx, key));
}
