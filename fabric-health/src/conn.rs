//! Deadline-bounded line I/O on a `TcpStream`, shared by the listener and the client.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

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
    stream: &mut TcpStream,
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
    stream: &mut TcpStream,
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
