//! The runtime server's socket: exclusive ownership (`fabric.lock`), the `fabric.unclean`
//! marker, a private (0600) unix socket accepted on the core's reactor (the [`Acceptors`]
//! tenant), and one std thread per connection reading one bounded request line and writing
//! one response line, at most [`MAX_CONNECTIONS`] at once (one more is answered
//! `host_busy` and closed by the accepting thread). What a request means is the
//! [`Handler`]'s business.

use fabric_config::codes;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use fabric_config::bridge::{
    BridgeStage, Failure, LOCK_FILE, MAX_CONNECTIONS, Operation, READ_SECONDS, REQUEST_LIMIT,
    Response, UNCLEAN_FILE,
};
use fabric_reactor::beneath::{Beneath, Refusal};
use fabric_reactor::sys;

use super::accept::{Acceptors, accept_tenant};

/// What the runtime server does with requests: the core behind the socket.
pub trait Handler: Send + Sync + 'static {
    /// Serves one request line.
    fn handle_line(&self, line: &[u8]) -> Response;
    /// Stops accepting work and stops what is idle; says whether cleanup is confirmed.
    fn shutdown(&self) -> ShutdownOutcome;
}

/// What shutdown found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownOutcome {
    /// Every runtime was idle and is stopped.
    Clean {
        /// Whether any runtime was ever started (the `fabric.unclean` marker stays).
        used: bool,
    },
    /// A runtime was busy (or a stop did not end its host): cleanup is unconfirmed.
    Unconfirmed,
}

/// Why the server could not start or shut down: a registered code and the OS detail.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct ServeError {
    /// `host_lock_held`, `cleanup_unconfirmed`, `path_refused` (`tmp`, `workspace` or
    /// `artifacts` is a link or not a directory) or `host_unavailable` (an OS failure).
    pub code: &'static str,
    /// What happened (paths and OS errors only).
    pub detail: String,
}

impl ServeError {
    fn io(what: &str, path: &Path, error: &io::Error) -> ServeError {
        ServeError {
            code: codes::HOST_UNAVAILABLE,
            detail: format!("{what} {}: {error}", path.display()),
        }
    }
}

/// File identity, so the server removes only the socket and marker it created.
type Identity = (u64, u64, i64);

fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.dev(), meta.ino(), meta.ctime_nsec()))
}

/// Wakes a running [`Server`] so that it shuts down (signal handlers, tests).
#[derive(Debug, Clone, Default)]
pub struct Stopper {
    stopping: Arc<(Mutex<bool>, Condvar)>,
}

impl Stopper {
    /// Asks the server to stop accepting and shut down.
    pub fn stop(&self) {
        let (stopping, changed) = &*self.stopping;
        *stopping.lock().unwrap_or_else(|p| p.into_inner()) = true;
        changed.notify_all();
    }

    fn wait(&self) {
        let (stopping, changed) = &*self.stopping;
        let mut stopped = stopping.lock().unwrap_or_else(|p| p.into_inner());
        while !*stopped {
            stopped = changed.wait(stopped).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A bound runtime server: holds the lock, the marker and the listening socket.
#[derive(Debug)]
pub struct Server<H> {
    handler: Arc<H>,
    listener: UnixListener,
    socket: PathBuf,
    socket_identity: Option<Identity>,
    marker: PathBuf,
    marker_identity: Option<Identity>,
    _lock: File,
    stopper: Stopper,
}

impl<H: Handler> Server<H> {
    /// Takes ownership of `socket`'s directory (the base dir): locks `fabric.lock` (another
    /// server: `host_lock_held`), refuses when `fabric.unclean` exists
    /// (`cleanup_unconfirmed`), creates `tmp/`, `workspace/`, `artifacts/` (0700) when
    /// missing, binds the socket with mode 0600 (replacing a stale socket, never another
    /// file) and writes the marker. `handler` is made with the directory (the base dir of
    /// what the server runs).
    pub fn bind(socket: &Path, handler: impl FnOnce(&Path) -> H) -> Result<Server<H>, ServeError> {
        let dir = match socket.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&lock_path)
            .map_err(|e| ServeError::io("cannot open", &lock_path, &e))?;
        match sys::try_lock_exclusive(&lock) {
            Ok(true) => {}
            Ok(false) => {
                return Err(ServeError {
                    code: codes::HOST_LOCK_HELD,
                    detail: format!(
                        "{} is locked by another runtime server",
                        lock_path.display()
                    ),
                });
            }
            Err(e) => return Err(ServeError::io("cannot lock", &lock_path, &e)),
        }
        let meta = lock
            .metadata()
            .map_err(|e| ServeError::io("cannot stat", &lock_path, &e))?;
        if !meta.is_file() {
            return Err(ServeError::io(
                "not a regular file:",
                &lock_path,
                &io::Error::from(io::ErrorKind::InvalidInput),
            ));
        }
        use std::os::unix::fs::PermissionsExt;
        let _ = lock.set_permissions(std::fs::Permissions::from_mode(0o600));
        let marker = dir.join(UNCLEAN_FILE);
        if std::fs::symlink_metadata(&marker).is_ok() {
            return Err(ServeError {
                code: codes::CLEANUP_UNCONFIRMED,
                detail: format!(
                    "{} exists: an earlier server used this sandbox; replace the sandbox",
                    marker.display()
                ),
            });
        }
        // Code in the sandbox may have replaced one of them with a link (to a directory of
        // this machine's user, when the sandbox shares its filesystem): refused, never used.
        let base = Beneath::open(&dir).map_err(|e| ServeError::io("cannot open", &dir, &e))?;
        for sub in ["tmp", "workspace", "artifacts"] {
            let path = dir.join(sub);
            match base.create_dir_all(Path::new(sub), 0o700) {
                Ok(_) => {}
                Err(Refusal::Io(e)) => return Err(ServeError::io("cannot create", &path, &e)),
                Err(refusal) => {
                    return Err(ServeError {
                        code: codes::PATH_REFUSED,
                        detail: format!("{} refused: {refusal}", path.display()),
                    });
                }
            }
        }
        if let Ok(meta) = std::fs::symlink_metadata(socket) {
            if !meta.file_type().is_socket() {
                return Err(ServeError::io(
                    "occupied by a non-socket file:",
                    socket,
                    &io::Error::from(io::ErrorKind::AlreadyExists),
                ));
            }
            std::fs::remove_file(socket)
                .map_err(|e| ServeError::io("cannot remove", socket, &e))?;
        }
        // The socket is private from the instant it exists.
        let previous = sys::set_umask(0o177);
        let bound = UnixListener::bind(socket);
        sys::set_umask(previous);
        let listener = bound.map_err(|e| ServeError::io("cannot bind", socket, &e))?;
        let socket_identity = identity(socket);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&marker)
            .map_err(|e| ServeError::io("cannot create", &marker, &e))?;
        let marker_identity = identity(&marker);
        listener
            .set_nonblocking(true)
            .map_err(|e| ServeError::io("cannot configure", socket, &e))?;
        Ok(Server {
            handler: Arc::new(handler(&dir)),
            listener,
            socket: socket.to_path_buf(),
            socket_identity,
            marker,
            marker_identity,
            _lock: lock,
            stopper: Stopper::default(),
        })
    }

    /// A handle that stops [`Server::run`].
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// The request handler (shared with the connection threads).
    pub fn handler(&self) -> &Arc<H> {
        &self.handler
    }

    /// Accepts connections (on the core's reactor) until stopped, then shuts down: stops
    /// accepting, removes the socket it created, lets the handler stop what is idle, and
    /// removes the marker only when nothing was ever started and cleanup is confirmed.
    pub fn run(self) -> Result<ShutdownOutcome, ServeError> {
        let unavailable = |reason: &str| ServeError {
            code: codes::HOST_UNAVAILABLE,
            detail: format!("cannot watch {}: {reason}", self.socket.display()),
        };
        let acceptors = accept_tenant().map_err(|error| unavailable(error.reason()))?;
        let listener = self
            .listener
            .try_clone()
            .map_err(|error| unavailable(&error.to_string()))?;
        let handler = Arc::clone(&self.handler);
        let active = Arc::new(AtomicUsize::new(0));
        let on_accept = move |stream: UnixStream| accept(&handler, &active, stream);
        let key = acceptors
            .call(move |acceptors: &mut Acceptors, cx| {
                acceptors.open(cx, listener, Box::new(on_accept))
            })
            .map_err(|error| unavailable(error.reason()))?
            .map_err(|error| unavailable(&error.to_string()))?;
        self.stopper.wait();
        let _ = acceptors.call(move |acceptors, cx| acceptors.close(cx, key));
        if identity(&self.socket) == self.socket_identity {
            let _ = std::fs::remove_file(&self.socket);
        }
        let outcome = self.handler.shutdown();
        if outcome == (ShutdownOutcome::Clean { used: false })
            && identity(&self.marker) == self.marker_identity
        {
            let _ = std::fs::remove_file(&self.marker);
        }
        Ok(outcome)
    }
}

/// Serves one accepted connection on a thread of its own, or refuses it when
/// [`MAX_CONNECTIONS`] are being served.
fn accept<H: Handler>(handler: &Arc<H>, active: &Arc<AtomicUsize>, stream: UnixStream) {
    if active.load(Ordering::Acquire) >= MAX_CONNECTIONS {
        refuse_busy(stream);
        return;
    }
    let handler = Arc::clone(handler);
    let slot = Slot::take(active);
    // Out of threads: the dropped stream (and slot) tell the client (host_unavailable or
    // invalid_response on its side); nothing was dispatched.
    let _ = std::thread::Builder::new()
        .name("fabric-bridge-conn".into())
        .spawn(move || {
            let _slot = slot;
            serve_connection(&*handler, stream);
        });
}

/// One of the [`MAX_CONNECTIONS`] serving slots, given back when dropped (also when the
/// connection's thread unwinds or was never spawned).
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(active: &Arc<AtomicUsize>) -> Slot {
        active.fetch_add(1, Ordering::AcqRel);
        Slot(Arc::clone(active))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers a connection beyond [`MAX_CONNECTIONS`] on the accepting thread without waiting
/// for it: what the client already sent is drained (so closing does not reset the
/// connection), the refusal names the request's operation when a whole line had arrived
/// ("unknown" otherwise; the bridge client accepts either), then the socket is closed.
fn refuse_busy(mut stream: UnixStream) {
    let _ = stream.set_nonblocking(true);
    let mut received = Vec::new();
    let mut chunk = [0u8; 65536];
    while received.len() <= REQUEST_LIMIT {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let operation = received
        .iter()
        .position(|b| *b == b'\n')
        .and_then(|end| serde_json::from_slice::<serde_json::Value>(&received[..end]).ok())
        .and_then(|request| {
            let name = request.get("operation")?.as_str()?.to_owned();
            Operation::ALL
                .iter()
                .any(|known| known.as_str() == name)
                .then_some(name)
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let refusal = Response::failed(
        &operation,
        &Failure::new(codes::HOST_BUSY, BridgeStage::Transport),
    );
    let _ = stream.write_all(&refusal.encode());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// Reads one request line (≤ 512 KiB, within 10 s), serves it, writes the response line.
fn serve_connection<H: Handler>(handler: &H, mut stream: UnixStream) {
    let _ = stream.set_nonblocking(false);
    let response = match read_request(&mut stream) {
        Ok(line) => handler.handle_line(&line),
        Err(failure) => Response::failed("unknown", &failure),
    };
    let _ = stream.set_write_timeout(Some(Duration::from_secs(READ_SECONDS)));
    let _ = stream.write_all(&response.encode());
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn read_request(stream: &mut UnixStream) -> Result<Vec<u8>, Failure> {
    let deadline = Instant::now() + Duration::from_secs(READ_SECONDS);
    let mut line = Vec::with_capacity(4096);
    let mut chunk = [0u8; 65536];
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(Failure::invalid("request line (10 s read deadline)"));
        }
        let _ = stream.set_read_timeout(Some(remaining));
        let want = (REQUEST_LIMIT + 1 - line.len()).min(chunk.len());
        match stream.read(&mut chunk[..want]) {
            Ok(0) => {
                return Err(Failure::invalid(
                    "request line (no newline before end of input)",
                ));
            }
            Ok(n) => {
                let start = line.len();
                line.extend_from_slice(&chunk[..n]);
                if let Some(at) = line[start..].iter().position(|b| *b == b'\n') {
                    line.truncate(start + at + 1);
                    if line.len() > REQUEST_LIMIT {
                        return Err(Failure::new(codes::REQUEST_TOO_LARGE, BridgeStage::Request));
                    }
                    return Ok(line);
                }
                if line.len() > REQUEST_LIMIT {
                    return Err(Failure::new(codes::REQUEST_TOO_LARGE, BridgeStage::Request));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Failure::invalid("request line (10 s read deadline)"));
            }
            Err(_) => return Err(Failure::invalid("request line")),
        }
    }
}
