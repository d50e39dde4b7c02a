//! Deadline-bounded line I/O on a TCP or unix-domain stream, shared by the listener and the
//! client.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A connected stream of either transport.
#[derive(Debug)]
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub(crate) fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    pub(crate) fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
        }
    }

    pub(crate) fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::os::fd::AsRawFd for Stream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// Why a line could not be read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineError {
    /// The deadline passed.
    Timeout,
    /// The peer closed (or reset) the connection before a full line.
    Closed,
    /// The line exceeded its bound.
    TooLong,
}

fn remaining(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}

/// Reads bytes up to the first `\n` (excluded). Bytes after it are ignored.
pub(crate) fn read_line(
    stream: &mut Stream,
    max: usize,
    deadline: Instant,
) -> Result<Vec<u8>, LineError> {
    let mut line = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    loop {
        let left = remaining(deadline).ok_or(LineError::Timeout)?;
        stream
            .set_read_timeout(Some(left))
            .map_err(|_| LineError::Closed)?;
        match stream.read(&mut chunk) {
            Ok(0) => return Err(LineError::Closed),
            Ok(n) => {
                if let Some(pos) = chunk[..n].iter().position(|&b| b == b'\n') {
                    if line.len() + pos >= max {
                        return Err(LineError::TooLong);
                    }
                    line.extend_from_slice(&chunk[..pos]);
                    return Ok(line);
                }
                if line.len() + n >= max {
                    return Err(LineError::TooLong);
                }
                line.extend_from_slice(&chunk[..n]);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(LineError::Closed),
        }
    }
}

/// Writes all of `bytes` before `deadline`.
pub(crate) fn write_all(
    stream: &mut Stream,
    bytes: &[u8],
    deadline: Instant,
) -> Result<(), LineError> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let left = remaining(deadline).ok_or(LineError::Timeout)?;
        stream
            .set_write_timeout(Some(left))
            .map_err(|_| LineError::Closed)?;
        match stream.write(rest) {
            Ok(0) => return Err(LineError::Closed),
            Ok(n) => rest = &rest[n..],
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(LineError::Closed),
        }
    }
    Ok(())
}

/// Longest socket path passed to `bind`/`connect` as is (`sun_path` holds 108 bytes with
/// its NUL); longer paths go through `/proc/self/fd/<dir fd>/<name>`.
const MAX_DIRECT_SOCKET_PATH: usize = 100;

/// Calls `f` with a path that reaches `path` and fits a unix socket address: `path` itself
/// when short enough, else `/proc/self/fd/<fd of its directory>/<file name>` (Linux), so a
/// deep `FABRIC_HOME` still gets a unix socket.
pub(crate) fn with_unix_path<R>(
    path: &std::path::Path,
    f: impl FnOnce(&std::path::Path) -> std::io::Result<R>,
) -> std::io::Result<R> {
    use std::os::fd::AsRawFd;
    if path.as_os_str().len() <= MAX_DIRECT_SOCKET_PATH {
        return f(path);
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return f(path);
    };
    let dir = std::fs::File::open(dir)?;
    let short = std::path::Path::new("/proc/self/fd")
        .join(dir.as_raw_fd().to_string())
        .join(name);
    f(&short)
}
