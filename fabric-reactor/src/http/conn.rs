//! One connection's transport state machine: head, body, streamed answer, closing.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown};
use std::sync::Arc;
use std::time::Instant;

use mio::net::TcpStream;

use super::body::{BodyReader, Framing};
use super::chunked::ChunkedError;
use super::{
    CONTINUE, Ending, Limits, MAX_HEAD_BYTES, OnBody, OnHead, Outbox, Produce, Reject, Reply,
    Service, Turn, head,
};

/// Bytes read from a socket at once.
const READ_CHUNK: usize = 64 * 1024;
thread_local! {
    /// The buffer reads go through (zeroed once per thread, not for every read).
    static SCRATCH: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; READ_CHUNK]);
}
/// Bytes a peer sends ahead (its next requests) kept while an answer streams; beyond them
/// input is dropped and the connection closes after the answer.
const AHEAD_LIMIT: usize = MAX_HEAD_BYTES;

#[derive(Debug)]
pub(super) enum Phase {
    /// Waiting for a complete head (`idle`: between kept-alive requests).
    Head { idle: bool },
    /// Reading the body of an accepted request.
    Body {
        reader: BodyReader,
        /// Decoded body bytes the service has not consumed.
        data: Vec<u8>,
        /// Inactivity deadline while waiting for input.
        idle: Option<std::time::Duration>,
        /// Paused by the service (backpressure) until resumed.
        paused: bool,
    },
    /// Writing a streamed answer.
    Stream,
    /// A final answer is queued or written; reading only drains.
    Closing,
}

/// Why a deadline is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Deadline {
    Head,
    BodyIdle,
    Service,
    Linger,
}

/// What a connection reads from and writes to: a socket, or (fuzzing) bytes in memory.
pub(super) trait Transport: Read + Write {
    /// Shuts the write side (the peer reads the end of the answer).
    fn shutdown_write(&mut self);

    /// A second handle on the socket that a worker may write to (an answer written
    /// through its [`Outbox`]); `None` when there is none (bytes in memory).
    fn writer(&self) -> Option<std::net::TcpStream> {
        None
    }
}

impl Transport for TcpStream {
    fn shutdown_write(&mut self) {
        let _ = self.shutdown(Shutdown::Write);
    }

    fn writer(&self) -> Option<std::net::TcpStream> {
        use std::os::fd::AsFd;
        // Shares the socket's open file (and so its `O_NONBLOCK`): a write never blocks.
        let fd = self.as_fd().try_clone_to_owned().ok()?;
        Some(std::net::TcpStream::from(fd))
    }
}

#[derive(Debug)]
pub(super) struct Conn<C, T = TcpStream> {
    pub(super) stream: T,
    pub(super) phase: Phase,
    pub(super) state: C,
    input: Vec<u8>,
    out: Vec<u8>,
    pub(super) deadline: Option<(Instant, Deadline)>,
    /// Passed the service's checks (a request was accepted).
    pub(super) trusted: bool,
    /// When the connection was accepted or last became idle (eviction order).
    pub(super) since: u64,
    /// The peer's address (connections are shed from the peer holding the most first).
    pub(super) peer: Option<IpAddr>,
    /// When the last byte arrived (or the body began): how long a body has stalled.
    pub(super) last_input: Instant,
    /// The request is `HEAD`: answers are written without their body.
    head_only: bool,
    /// The request's body was read whole when its streamed answer began (the connection
    /// may then be kept after it).
    body_read: bool,
    /// Bytes the peer sent while an answer streamed were dropped ([`AHEAD_LIMIT`]): the
    /// connection closes after the answer.
    ahead_lost: bool,
    write_shut: bool,
    /// The streamed answer's outbox, to be written through once the driver holds no byte.
    through: Option<Arc<Outbox>>,
    /// The socket's second handle given to written-through outboxes (made on first use).
    writer: Option<Arc<std::net::TcpStream>>,
    /// The connection's token and whether it is registered for writability too (only
    /// while output waits for room: else every ACK of a written answer would wake the
    /// reactor for nothing).
    pub(super) token: mio::Token,
    pub(super) writable: bool,
}

/// What the server does with the connection after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Wait for the next readiness event, deadline or resume.
    Wait,
    /// Read budget used up: drive again on the next loop iteration.
    Again,
    /// Finished: close it, telling the service how it ended.
    Drop(Ending),
}

impl<C: Default, T: Transport> Conn<C, T> {
    pub(super) fn new(stream: T, limits: &Limits, since: u64, peer: Option<IpAddr>) -> Conn<C, T> {
        Conn {
            stream,
            phase: Phase::Head { idle: false },
            state: C::default(),
            input: Vec::new(),
            out: Vec::new(),
            deadline: Some((Instant::now() + limits.head_timeout, Deadline::Head)),
            trusted: false,
            since,
            peer,
            last_input: Instant::now(),
            head_only: false,
            body_read: false,
            ahead_lost: false,
            write_shut: false,
            through: None,
            writer: None,
            token: mio::Token(0),
            writable: false,
        }
    }

    /// Output waits for the socket to take it.
    pub(super) fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Lets the streamed answer's worker write to the socket once the driver has written
    /// everything it held (the head, an interim answer).
    fn pass_through(&mut self) {
        if !self.out.is_empty() || self.through.is_none() {
            return;
        }
        let Some(outbox) = self.through.take() else {
            return;
        };
        if !matches!(self.phase, Phase::Stream) {
            return;
        }
        if self.writer.is_none() {
            self.writer = self.stream.writer().map(Arc::new);
        }
        if let Some(writer) = &self.writer {
            outbox.write_through(Arc::clone(writer));
        }
    }

    /// Since when an accepted request's body has been stalled: the peer sent nothing for
    /// at least `limits.body_stall` while the driver was reading (not paused by the
    /// service). Such a connection may be shed for a newcomer when every slot is taken.
    pub(super) fn stalled(&self, limits: &Limits, now: Instant) -> Option<Instant> {
        let reading = matches!(self.phase, Phase::Body { paused: false, .. });
        (self.trusted && reading && now.duration_since(self.last_input) >= limits.body_stall)
            .then_some(self.last_input)
    }

    /// Whether the connection waits for a head (a new or kept-alive one): shed first.
    pub(super) fn untrusted(&self) -> bool {
        !self.trusted || matches!(self.phase, Phase::Head { idle: true })
    }

    pub(super) fn is_waiting_on_service(&self) -> bool {
        matches!(self.phase, Phase::Stream | Phase::Body { paused: true, .. })
    }

    fn reply(&mut self, reply: Reply, limits: &Limits, seq: &mut u64) {
        let bytes = if self.head_only {
            head_part(&reply.bytes)
        } else {
            &reply.bytes
        };
        self.out.extend_from_slice(bytes);
        let body_done = match &self.phase {
            Phase::Body { reader, .. } => reader.complete(),
            _ => true,
        };
        if reply.keep_alive && body_done {
            self.await_next(limits, seq);
        } else {
            self.close_after_answer(limits);
        }
    }

    /// The answer is complete and the connection is kept: it waits for the next head (idle,
    /// shed first, closed after [`Limits::keep_alive_idle`]). Input already read (the next
    /// request, sent ahead) stays and is parsed next.
    fn await_next(&mut self, limits: &Limits, seq: &mut u64) {
        self.phase = Phase::Head { idle: true };
        self.deadline = Some((Instant::now() + limits.keep_alive_idle, Deadline::Head));
        *seq += 1;
        self.since = *seq;
    }

    /// A streamed answer ended (`produce` said `how`): keep the connection when the service
    /// asked and nothing forbids it, else close after the answer.
    fn end_stream(&mut self, how: Produce, limits: &Limits, seq: &mut u64) {
        let keep =
            how == Produce::DoneKeepAlive && self.body_read && !self.ahead_lost && !self.head_only;
        if keep {
            self.await_next(limits, seq);
        } else {
            self.close_after_answer(limits);
        }
    }

    pub(super) fn close_after_answer(&mut self, limits: &Limits) {
        self.phase = Phase::Closing;
        self.deadline = Some((Instant::now() + limits.linger, Deadline::Linger));
    }

    /// Answers a rejection (or drops the connection when the service has no answer).
    pub(super) fn reject<S: Service<Conn = C>>(
        &mut self,
        service: &S,
        why: Reject,
        limits: &Limits,
    ) -> bool {
        match service.reject(why) {
            Some(bytes) => {
                self.out.extend_from_slice(&bytes);
                self.close_after_answer(limits);
                true
            }
            None => false,
        }
    }

    /// Writes pending output; `Err` when the peer is gone. Once everything is written on a
    /// closing connection, its write side is shut down (once).
    fn flush(&mut self) -> io::Result<()> {
        while !self.out.is_empty() {
            match self.stream.write(&self.out) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out.drain(..n);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(error) => return Err(error),
            }
        }
        if matches!(self.phase, Phase::Closing) && !self.write_shut {
            self.write_shut = true;
            self.stream.shutdown_write();
        }
        Ok(())
    }

    /// Reads once what the socket has, within `budget`: `Ok(None)` when the budget is
    /// used, `Ok(Some(true))` at EOF. A closing connection only drains; a streaming one
    /// keeps what the peer sends ahead up to [`AHEAD_LIMIT`] (its next request).
    fn read_some(&mut self, budget: &mut usize) -> io::Result<Option<bool>> {
        let keep = match self.phase {
            Phase::Head { .. } | Phase::Body { .. } => true,
            Phase::Stream => self.input.len() < AHEAD_LIMIT,
            Phase::Closing => false,
        };
        SCRATCH.with_borrow_mut(|buf| self.read_into(buf, keep, budget))
    }

    fn read_into(
        &mut self,
        buf: &mut [u8],
        keep: bool,
        budget: &mut usize,
    ) -> io::Result<Option<bool>> {
        loop {
            if *budget == 0 {
                return Ok(None);
            }
            match self.stream.read(buf) {
                Ok(0) => return Ok(Some(true)),
                Ok(n) => {
                    *budget = budget.saturating_sub(n);
                    if keep {
                        self.input.extend_from_slice(&buf[..n]);
                    } else if matches!(self.phase, Phase::Stream) {
                        self.ahead_lost = true;
                    }
                    return Ok(Some(false));
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// Does everything the connection can do now: write, read, parse, hand to the service.
    pub(super) fn step<S: Service<Conn = C>>(
        &mut self,
        service: &mut S,
        limits: &Limits,
        turn: &mut Turn,
        seq: &mut u64,
    ) -> Step {
        let mut budget = limits.read_budget;
        loop {
            if self.flush().is_err() {
                return Step::Drop(Ending::Dropped);
            }
            self.pass_through();
            match self.advance(service, limits, turn, seq) {
                Advance::Continue => continue,
                Advance::Drop => return Step::Drop(Ending::Dropped),
                Advance::Wait => {
                    if self.flush().is_err() {
                        return Step::Drop(Ending::Dropped);
                    }
                    return Step::Wait;
                }
                Advance::Read => {
                    if self.flush().is_err() {
                        return Step::Drop(Ending::Dropped);
                    }
                }
            }
            let in_request = matches!(self.phase, Phase::Body { .. } | Phase::Stream);
            match self.read_some(&mut budget) {
                Ok(Some(false)) => {
                    self.last_input = Instant::now();
                    if let Phase::Body {
                        idle: Some(idle), ..
                    } = self.phase
                    {
                        self.deadline = Some((Instant::now() + idle, Deadline::BodyIdle));
                    }
                }
                Ok(Some(true)) => {
                    return match self.phase {
                        Phase::Closing if !self.out.is_empty() => Step::Wait,
                        _ if in_request => Step::Drop(Ending::PeerClosed),
                        _ => Step::Drop(Ending::Done),
                    };
                }
                Ok(None) => return Step::Again,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
                Err(_) if in_request => return Step::Drop(Ending::PeerClosed),
                Err(_) => return Step::Drop(Ending::Dropped),
            }
        }
    }

    /// One pass over the current phase.
    fn advance<S: Service<Conn = C>>(
        &mut self,
        service: &mut S,
        limits: &Limits,
        turn: &mut Turn,
        seq: &mut u64,
    ) -> Advance {
        match &mut self.phase {
            Phase::Closing => Advance::Read,
            Phase::Head { .. } => {
                let (request, end) = match head::parse(&self.input) {
                    Ok(Some(parsed)) => parsed,
                    Ok(None) => return Advance::Read,
                    Err(why) => return self.rejected(&*service, why, limits),
                };
                self.input.drain(..end);
                self.deadline = None;
                self.head_only = request.method() == "HEAD";
                self.body_read = false;
                self.ahead_lost = false;
                let decision = service.on_head(&mut self.state, &request, turn);
                self.through = turn.through.take();
                match decision {
                    OnHead::Reply(reply) => self.reply(reply, limits, seq),
                    OnHead::Body {
                        continue_first,
                        idle,
                    } => {
                        let Some(framing) = request.framing() else {
                            return self.rejected(&*service, Reject::Malformed, limits);
                        };
                        self.trusted = true;
                        self.last_input = Instant::now();
                        if continue_first {
                            self.out.extend_from_slice(CONTINUE);
                        }
                        self.deadline =
                            idle.map(|idle| (Instant::now() + idle, Deadline::BodyIdle));
                        self.phase = Phase::Body {
                            reader: BodyReader::new(framing),
                            data: Vec::new(),
                            idle,
                            paused: false,
                        };
                    }
                    OnHead::Stream(head) if self.head_only => {
                        // The head of the answer and nothing more: the connection closes.
                        self.out.extend_from_slice(head_part(&head));
                        self.close_after_answer(limits);
                    }
                    OnHead::Stream(head) => {
                        self.trusted = true;
                        // A body the service does not read must not be parsed as the next
                        // request: only a request without one may keep the connection.
                        self.body_read = request.framing() == Some(Framing::Length(0));
                        self.out.extend_from_slice(&head);
                        self.phase = Phase::Stream;
                    }
                }
                Advance::Continue
            }
            Phase::Body { reader, data, .. } => {
                let decision = service.on_body(&mut self.state, data, reader.complete(), turn);
                self.through = turn.through.take();
                self.apply_body(service, decision, limits, turn, seq)
            }
            Phase::Stream => {
                let room = limits.stream_buffer.saturating_sub(self.out.len());
                if room > 0 {
                    let how = service.produce(&mut self.state, &mut self.out, room, turn);
                    if how != Produce::Wait {
                        self.end_stream(how, limits, seq);
                        return Advance::Continue;
                    }
                }
                // Reads only to notice the peer going away; more is produced when the
                // socket drained or the service resumes the server.
                Advance::Read
            }
        }
    }

    /// Applies a service's decision about the body; a broken chunked framing is answered
    /// as the service says.
    pub(super) fn apply_body<S: Service<Conn = C>>(
        &mut self,
        service: &mut S,
        decision: OnBody,
        limits: &Limits,
        turn: &mut Turn,
        seq: &mut u64,
    ) -> Advance {
        match self.after_body(decision, limits, seq) {
            Err(error) => {
                let reply = service.on_body_error(&mut self.state, error, turn);
                self.reply(Reply::close(reply), limits, seq);
                Advance::Continue
            }
            Ok(advance) => advance,
        }
    }

    fn after_body(
        &mut self,
        decision: OnBody,
        limits: &Limits,
        seq: &mut u64,
    ) -> Result<Advance, ChunkedError> {
        let Phase::Body {
            reader,
            data,
            idle,
            paused,
        } = &mut self.phase
        else {
            return Ok(Advance::Continue);
        };
        match decision {
            OnBody::Reply(reply) => {
                self.reply(reply, limits, seq);
                Ok(Advance::Continue)
            }
            OnBody::Stream(head) => {
                self.deadline = None;
                // What follows a body read whole is the peer's next request (kept for a
                // kept connection); the rest of an unread body is dropped (it closes).
                self.body_read = reader.complete();
                if !self.body_read {
                    self.input.clear();
                }
                if self.head_only {
                    self.out.extend_from_slice(head_part(&head));
                    self.close_after_answer(limits);
                } else {
                    self.out.extend_from_slice(&head);
                    self.phase = Phase::Stream;
                }
                Ok(Advance::Continue)
            }
            OnBody::Pause(until) => {
                *paused = true;
                self.deadline = until.map(|at| (at, Deadline::Service));
                Ok(Advance::Wait)
            }
            OnBody::Read => {
                *paused = false;
                if matches!(self.deadline, Some((_, Deadline::Service))) {
                    self.deadline = idle.map(|idle| (Instant::now() + idle, Deadline::BodyIdle));
                }
                Ok(match reader.feed(&mut self.input, data)? {
                    true => Advance::Continue,
                    // The service asked for more of a body that has ended: a bug; do not
                    // spin on it.
                    false if reader.complete() => Advance::Drop,
                    false => Advance::Read,
                })
            }
        }
    }

    fn rejected<S: Service<Conn = C>>(
        &mut self,
        service: &S,
        why: Reject,
        limits: &Limits,
    ) -> Advance {
        if self.reject(service, why, limits) {
            Advance::Continue
        } else {
            Advance::Drop
        }
    }
}

/// The status line and headers of a response (up to and including the blank line): what a
/// `HEAD` request is answered with. The whole response when it has no blank line.
pub(super) fn head_part(response: &[u8]) -> &[u8] {
    match response.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(at) => &response[..at + 4],
        None => response,
    }
}

/// What one pass decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Advance {
    /// The phase changed or made progress.
    Continue,
    /// Needs more bytes from the socket.
    Read,
    /// Waits for an event (socket room, a resume, a deadline).
    Wait,
    /// Close it.
    Drop,
}

#[cfg(test)]
mod tests {
    use super::head_part;

    #[test]
    fn head_answers_keep_the_head_only() {
        let full = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(
            head_part(full),
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"
        );
        assert_eq!(head_part(b"HTTP/1.1 200 OK\r\n"), b"HTTP/1.1 200 OK\r\n");
        assert_eq!(head_part(b""), b"");
    }
}
