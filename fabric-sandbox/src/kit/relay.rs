//! Byte relays between a TCP loopback port and a unix socket: how the container provider's
//! `network: {"mode": "loopback", "allow_ports": [...]}` lets a container without any
//! network reach chosen ports of the host's loopback (docs/sandbox.md, "The container
//! provider").
//!
//! Two halves, one per side of the bind mount that the container and the host share:
//! inside the container, [`Relay::tcp_to_unix`] listens on `127.0.0.1:PORT` and carries each
//! connection to the unix socket `PORT.sock` of the loopback directory; on the host,
//! [`Relay::unix_to_tcp`] listens on that socket and carries each connection to
//! `127.0.0.1:PORT`. A port that is not allow-listed has neither half, so nothing in the
//! container answers on it, and the container still has no network interface besides its
//! own loopback. One thread accepts; each connection gets two copying threads (one per
//! direction) that end when either side closes.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

/// The loopback directory's name, beside the runtime server's socket.
pub const LOOPBACK_DIR: &str = "loopback";

/// The variable that names the allow-listed ports (comma-separated) to the container's
/// `fabric-agent-ctl serve`.
pub const LOOPBACK_PORTS_VAR: &str = "FABRIC_LOOPBACK_PORTS";

/// The unix socket of `port` in the loopback directory `dir`.
pub fn socket_path(dir: &Path, port: u16) -> PathBuf {
    dir.join(format!("{port}.sock"))
}

/// One stream of either kind, with what a relay needs of it.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(stream) => Stream::Tcp(stream.try_clone()?),
            Stream::Unix(stream) => Stream::Unix(stream.try_clone()?),
        })
    }

    fn shutdown(&self, how: Shutdown) {
        let _ = match self {
            Stream::Tcp(stream) => stream.shutdown(how),
            Stream::Unix(stream) => stream.shutdown(how),
        };
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.read(buf),
            Stream::Unix(stream) => stream.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.write(buf),
            Stream::Unix(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where a relay listens.
enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

impl Listener {
    fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Tcp(listener) => listener.accept().map(|(s, _)| Stream::Tcp(s)),
            Listener::Unix(listener, _) => listener.accept().map(|(s, _)| Stream::Unix(s)),
        }
    }

    /// A connection to itself, which wakes a blocked `accept` (for `stop`).
    fn poke(&self) {
        let _ = match self {
            Listener::Tcp(listener) => listener
                .local_addr()
                .and_then(|addr| TcpStream::connect(addr).map(drop)),
            Listener::Unix(_, path) => UnixStream::connect(path).map(drop),
        };
    }
}

/// Where a relay carries each connection.
#[derive(Clone)]
enum Target {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl Target {
    fn connect(&self) -> io::Result<Stream> {
        match self {
            Target::Tcp(addr) => TcpStream::connect(addr).map(Stream::Tcp),
            Target::Unix(path) => UnixStream::connect(path).map(Stream::Unix),
        }
    }
}

/// A listening relay; [`Relay::stop`] (or dropping it) stops accepting. Connections in
/// flight end when their peers close.
pub struct Relay {
    listener: Arc<Listener>,
    stopped: Arc<AtomicBool>,
    accepting: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let listening = match &*self.listener {
            Listener::Tcp(listener) => format!("{:?}", listener.local_addr().ok()),
            Listener::Unix(_, path) => path.display().to_string(),
        };
        f.debug_struct("Relay")
            .field("listening", &listening)
            .finish()
    }
}

impl Relay {
    /// Listens on `127.0.0.1:port` and carries each connection to the unix socket `socket`
    /// (the container's half).
    pub fn tcp_to_unix(port: u16, socket: &Path) -> io::Result<Relay> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        Ok(Relay::start(
            Listener::Tcp(listener),
            Target::Unix(socket.to_owned()),
        ))
    }

    /// Listens on the unix socket `socket` (replacing a stale file there) and carries each
    /// connection to `127.0.0.1:port` (the host's half).
    pub fn unix_to_tcp(socket: &Path, port: u16) -> io::Result<Relay> {
        match std::fs::remove_file(socket) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        let listener = UnixListener::bind(socket)?;
        Ok(Relay::start(
            Listener::Unix(listener, socket.to_owned()),
            Target::Tcp(SocketAddr::from(([127, 0, 0, 1], port))),
        ))
    }

    fn start(listener: Listener, target: Target) -> Relay {
        let listener = Arc::new(listener);
        let stopped = Arc::new(AtomicBool::new(false));
        let accepting = {
            let (listener, stopped) = (Arc::clone(&listener), Arc::clone(&stopped));
            thread::spawn(move || accept_loop(&listener, &target, &stopped))
        };
        Relay {
            listener,
            stopped,
            accepting: Some(accepting),
        }
    }

    /// Stops accepting and waits for the accepting thread; a unix listener's socket file is
    /// removed.
    pub fn stop(&mut self) {
        let Some(accepting) = self.accepting.take() else {
            return;
        };
        self.stopped.store(true, Ordering::SeqCst);
        self.listener.poke();
        let _ = accepting.join();
        if let Listener::Unix(_, path) = &*self.listener {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &Listener, target: &Target, stopped: &AtomicBool) {
    loop {
        let accepted = listener.accept();
        if stopped.load(Ordering::SeqCst) {
            return;
        }
        let Ok(inbound) = accepted else {
            // A transient accept failure (e.g. out of descriptors): try the next one.
            thread::sleep(std::time::Duration::from_millis(10));
            continue;
        };
        let target = target.clone();
        thread::spawn(move || {
            // A target that does not answer closes the inbound connection (it sees EOF).
            if let Ok(outbound) = target.connect() {
                splice(inbound, outbound);
            }
        });
    }
}

/// Copies both ways until both directions ended; each end of a direction is passed on as a
/// half close.
fn splice(a: Stream, b: Stream) {
    let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else {
        return;
    };
    let forward = thread::spawn(move || pump(a, b));
    pump(b2, a2);
    let _ = forward.join();
}

fn pump(mut from: Stream, mut to: Stream) {
    let _ = io::copy(&mut from, &mut to);
    to.shutdown(Shutdown::Write);
    from.shutdown(Shutdown::Read);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_crosses_both_halves_and_stop_frees_the_socket() {
        let server = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = server.local_addr().expect("addr").port();
        let answering = thread::spawn(move || {
            let (mut stream, _) = server.accept().expect("accept");
            let mut asked = String::new();
            stream.read_to_string(&mut asked).expect("read");
            stream
                .write_all(format!("re:{asked}").as_bytes())
                .expect("write");
        });
        let dir = tempfile::tempdir().expect("tempdir");
        let socket = socket_path(dir.path(), port);
        let mut host = Relay::unix_to_tcp(&socket, port).expect("host half");
        // the container's half on another free port stands in for 127.0.0.1:port in there
        let inner = TcpListener::bind("127.0.0.1:0").expect("free port");
        let inner_port = inner.local_addr().expect("addr").port();
        drop(inner);
        let _container = Relay::tcp_to_unix(inner_port, &socket).expect("container half");
        let mut client = TcpStream::connect(("127.0.0.1", inner_port)).expect("connect");
        client.write_all(b"ping").expect("write");
        client.shutdown(Shutdown::Write).expect("half close");
        let mut answer = String::new();
        client.read_to_string(&mut answer).expect("read");
        assert_eq!(answer, "re:ping");
        answering.join().expect("server");
        host.stop();
        assert!(!socket.exists());
    }
}
