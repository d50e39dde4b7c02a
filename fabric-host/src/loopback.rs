//! What the reactor's loopback servers share (the stream listeners and the collector
//! servers): a listener registered under a reserved slot, connections accepted into a
//! fixed set of connection slots, queued output written, input read under a budget.
//!
//! Tokens come from the table's [`TokenRange`]: `sub` 0 for the listener, `index + 1` for
//! the connection in slot `index`.

use std::io::{self, Read, Write};
use std::net::Shutdown;

use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry};

use crate::slots::{SlotKey, Slots, TokenRange};

/// Bytes read from a socket at once.
const READ_CHUNK: usize = 64 * 1024;

/// Makes `listener` non-blocking, registers it for reads in a reserved slot and fills the
/// slot with `entry(listener)`; the slot is handed back when registering fails.
pub(crate) fn open<T>(
    slots: &mut Slots<T>,
    registry: &Registry,
    tokens: TokenRange,
    listener: std::net::TcpListener,
    entry: impl FnOnce(TcpListener) -> T,
) -> io::Result<SlotKey> {
    listener.set_nonblocking(true)?;
    let mut listener = TcpListener::from_std(listener);
    let slot = slots.reserve();
    if let Err(error) = registry.register(&mut listener, tokens.token(slot, 0), Interest::READABLE)
    {
        slots.unreserve(slot);
        return Err(error);
    }
    Ok(slots.fill(slot, entry(listener)))
}

/// Deregisters a closed entry's listener and connections.
pub(crate) fn close<'a>(
    registry: &Registry,
    listener: &mut TcpListener,
    streams: impl Iterator<Item = &'a mut TcpStream>,
) {
    let _ = registry.deregister(listener);
    for stream in streams {
        let _ = registry.deregister(stream);
    }
}

/// Accepts the next connection for a free slot of `conns` (the entry in table slot
/// `slot`), registered for reads and writes: `None` once nothing is waiting (or accepting
/// failed). A connection beyond the free slots is closed unanswered; one that cannot be
/// registered is dropped.
pub(crate) fn accept<C>(
    listener: &TcpListener,
    conns: &[Option<C>],
    registry: &Registry,
    tokens: TokenRange,
    slot: usize,
) -> Option<(usize, TcpStream)> {
    loop {
        let (mut stream, _) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None, // WouldBlock, or a transient accept failure
        };
        let Some(index) = conns.iter().position(Option::is_none) else {
            drop(stream); // more connections than slots at once: closed unanswered
            continue;
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        if registry
            .register(&mut stream, tokens.token(slot, index + 1), interest)
            .is_err()
        {
            continue;
        }
        return Some((index, stream));
    }
}

/// Writes pending output until it is written or the socket is full; `Err` when the peer is
/// gone. Once everything is written and the connection is `closing`, its write side is
/// shut down (once: `write_shut`).
pub(crate) fn flush(
    stream: &mut TcpStream,
    out: &mut Vec<u8>,
    closing: bool,
    write_shut: &mut bool,
) -> io::Result<()> {
    while !out.is_empty() {
        match stream.write(out) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                out.drain(..n);
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(error) => return Err(error),
        }
    }
    if closing && !*write_shut {
        *write_shut = true;
        let _ = stream.shutdown(Shutdown::Write);
    }
    Ok(())
}

/// Reads once what the socket has, within `budget` (the bytes this event may still read):
/// `Ok(None)` when the budget is used, `Ok(Some(true))` at EOF, else `Ok(Some(false))`.
/// The bytes go to `input` when `keep` (a closing connection only drains).
pub(crate) fn read_some(
    stream: &mut TcpStream,
    input: &mut Vec<u8>,
    keep: bool,
    budget: &mut usize,
) -> io::Result<Option<bool>> {
    let mut buf = [0u8; READ_CHUNK];
    loop {
        if *budget == 0 {
            return Ok(None);
        }
        match stream.read(&mut buf) {
            Ok(0) => return Ok(Some(true)),
            Ok(n) => {
                *budget = budget.saturating_sub(n);
                if keep {
                    input.extend_from_slice(&buf[..n]);
                }
                return Ok(Some(false));
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}
