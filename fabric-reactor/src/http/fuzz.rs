//! Fuzzing hook (not API: the services' `fuzz` modules and `fabric-fuzz` call it): one
//! connection of the driver — the same state machine as on a socket (heads, bodies,
//! framing, `HEAD`, keep-alive after a reply or a produced answer, requests sent ahead,
//! backpressure, streamed answers) — over bytes in memory, with a service. Deadlines a
//! service asked for fire at once when the connection waits.

use std::io::{self, Read, Write};

use super::conn::{Conn, Deadline, Step, Transport};
use super::{Ending, Limits, Service, Turn};

/// Most answer bytes kept (the rest is counted as written and dropped).
const OUT_LIMIT: usize = 1024 * 1024;
/// Most steps one connection is driven.
const MAX_STEPS: usize = 10_000;

/// The peer in memory: each piece arrives on its own read (a `WouldBlock` between two),
/// then the peer closes its side.
#[derive(Debug)]
struct Memory {
    pieces: Vec<Vec<u8>>,
    next: usize,
    offset: usize,
    /// A `WouldBlock` is due before the next piece.
    pause: bool,
    out: Vec<u8>,
}

impl Read for Memory {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(piece) = self.pieces.get(self.next) else {
            return Ok(0);
        };
        if self.pause {
            self.pause = false;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let rest = &piece[self.offset..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.offset += n;
        if self.offset == piece.len() {
            self.next += 1;
            self.offset = 0;
            self.pause = true;
        }
        Ok(n)
    }
}

impl Write for Memory {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = OUT_LIMIT.saturating_sub(self.out.len());
        self.out.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transport for Memory {
    fn shutdown_write(&mut self) {}
}

/// Drives one connection that sends `pieces` (then closes) through `service` with
/// `limits`; what the driver wrote back. The service is told how the connection ended.
pub fn connection<S: Service>(service: &mut S, limits: &Limits, pieces: Vec<Vec<u8>>) -> Vec<u8> {
    let memory = Memory {
        pieces,
        next: 0,
        offset: 0,
        pause: false,
        out: Vec::new(),
    };
    let mut conn: Conn<S::Conn, Memory> = Conn::new(memory, limits, 1, None);
    let mut seq = 1;
    let mut ending = Ending::Dropped;
    for _ in 0..MAX_STEPS {
        let mut turn = Turn::default();
        match conn.step(service, limits, &mut turn, &mut seq) {
            Step::Drop(end) => {
                ending = end;
                break;
            }
            Step::Again => {}
            Step::Wait if conn.is_waiting_on_service() => {
                // Nothing wakes it in memory: its deadline passes now, or it never would.
                if !matches!(conn.deadline, Some((_, Deadline::Service))) {
                    break;
                }
                conn.deadline = None;
                let decision = service.on_deadline(&mut conn.state, &mut turn);
                conn.apply_body(service, decision, limits, &mut turn, &mut seq);
            }
            Step::Wait => {}
        }
    }
    let Conn { state, stream, .. } = conn;
    service.on_close(state, ending);
    stream.out
}
