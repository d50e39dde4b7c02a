//! The TCP transport under the gateway's `ureq` agents (TLS is chained on top of it as
//! before). ureq's own one writes a request's head and its body in two sends (the endpoint
//! wakes for each) and probes a pooled connection with three system calls; on a loopback
//! endpoint those are a large part of a call's cost. This one holds what ureq transmits
//! until ureq waits for the answer, so a usual request leaves in one send, and probes with
//! one `recv(MSG_PEEK | MSG_DONTWAIT)` ([`fabric_reactor::sys::socket_idle`]), only as the
//! pool hands a connection out (its check as it takes one back, just after the answer's
//! last bytes were read, is answered without a system call).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Weak};

use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, ShutdownHandle,
    Transport,
};
use ureq::{Error, Timeout};

/// Bytes held back at most: a bigger request body leaves in pieces of about this size.
const HOLD_BYTES: usize = 64 * 1024;

/// Opens [`HeldTcp`] connections (in a chain: a transport already made by an earlier
/// connector, a proxy's, is passed on).
#[derive(Debug, Default)]
pub(crate) struct TcpConnector;

impl<In: Transport> Connector<In> for TcpConnector {
    type Out = Either<In, HeldTcp>;

    fn connect(
        &self,
        details: &ConnectionDetails<'_>,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        if let Some(chained) = chained {
            return Ok(Some(Either::A(chained)));
        }
        let stream = Arc::new(connect(details)?);
        let handle: Weak<dyn ShutdownHandle> = Arc::downgrade(&stream) as Weak<dyn ShutdownHandle>;
        (details.register_shutdown)(handle)?;
        let config = details.config;
        Ok(Some(Either::B(HeldTcp {
            stream,
            buffers: LazyBuffers::new(config.input_buffer_size(), config.output_buffer_size()),
            held: Vec::new(),
            held_timeout: None,
            read_timeout: None,
            write_timeout: None,
            read_since_probe: false,
        })))
    }
}

/// The first of the resolved addresses that accepts, each given the connect timeout.
fn connect(details: &ConnectionDetails<'_>) -> Result<TcpStream, Error> {
    let timeout = details.timeout.not_zero().map(|t| *t);
    let mut last = None;
    for addr in &details.addrs {
        let connected = match timeout {
            Some(timeout) => TcpStream::connect_timeout(addr, timeout),
            None => TcpStream::connect(addr),
        };
        match connected {
            Ok(stream) => {
                if details.config.no_delay() {
                    stream.set_nodelay(true)?;
                }
                return Ok(stream);
            }
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                last = Some(Error::Timeout(Timeout::Connect));
            }
            Err(error) => last = Some(Error::Io(error)),
        }
    }
    Err(last.unwrap_or_else(|| {
        Error::Io(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "no address to connect to",
        ))
    }))
}

/// A TCP connection whose writes wait for the next read.
#[derive(Debug)]
pub(crate) struct HeldTcp {
    stream: Arc<TcpStream>,
    buffers: LazyBuffers,
    /// Transmitted bytes not yet written.
    held: Vec<u8>,
    /// The write timeout of the held bytes (the last transmit's).
    held_timeout: Option<NextTimeout>,
    /// The socket's timeouts as last set (a change costs a system call).
    read_timeout: Option<std::time::Duration>,
    write_timeout: Option<std::time::Duration>,
    /// Input arrived since the last probe: the pool's check as it takes the connection
    /// back, right after the answer's end, needs no system call (bytes the endpoint sent
    /// after the answer are in ureq's buffer, which it checks; a close or bytes arriving
    /// later are seen by the probe when the connection is taken for the next call).
    read_since_probe: bool,
}

/// Maps a socket error; a timeout (a blocking socket's `WouldBlock` too) is `reason`'s.
fn io_error(error: io::Error, reason: Timeout) -> Error {
    match error.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Error::Timeout(reason),
        _ => Error::Io(error),
    }
}

/// Sets a socket timeout when it differs from the one set last.
fn set_timeout(
    stream: &TcpStream,
    last: &mut Option<std::time::Duration>,
    want: Option<std::time::Duration>,
    set: fn(&TcpStream, Option<std::time::Duration>) -> io::Result<()>,
) -> Result<(), Error> {
    if *last != want {
        set(stream, want)?;
        *last = want;
    }
    Ok(())
}

impl HeldTcp {
    /// Writes the held bytes.
    fn release(&mut self) -> Result<(), Error> {
        let Some(timeout) = self.held_timeout.take() else {
            return Ok(());
        };
        if timeout.after.is_zero() {
            self.held.clear();
            return Err(Error::Timeout(timeout.reason));
        }
        let want = timeout.not_zero().map(|t| *t);
        set_timeout(
            &self.stream,
            &mut self.write_timeout,
            want,
            TcpStream::set_write_timeout,
        )?;
        let written = (&*self.stream).write_all(&self.held);
        self.held.clear();
        written.map_err(|error| io_error(error, timeout.reason))
    }
}

impl Transport for HeldTcp {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let timeout = timeout.for_write();
        if timeout.after.is_zero() {
            return Err(Error::Timeout(timeout.reason));
        }
        self.held
            .extend_from_slice(&self.buffers.output()[..amount]);
        self.held_timeout = Some(timeout);
        if self.held.len() >= HOLD_BYTES {
            self.release()?;
        }
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        self.release()?;
        let timeout = timeout.for_read();
        if timeout.after.is_zero() {
            return Err(Error::Timeout(timeout.reason));
        }
        let want = timeout.not_zero().map(|t| *t);
        set_timeout(
            &self.stream,
            &mut self.read_timeout,
            want,
            TcpStream::set_read_timeout,
        )?;
        let input = self.buffers.input_append_buf();
        let amount = loop {
            match (&*self.stream).read(input) {
                Ok(n) => break n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(io_error(error, timeout.reason)),
            }
        };
        self.buffers.input_appended(amount);
        self.read_since_probe |= amount > 0;
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        if !self.held.is_empty() {
            return false;
        }
        if std::mem::take(&mut self.read_since_probe) {
            return true;
        }
        fabric_reactor::sys::socket_idle(&self.stream)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    use crate::client::{BUFFER_BYTES, build};

    const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

    /// One read of what a client sent (a small request sent in one write arrives whole).
    fn read_once(stream: &mut TcpStream) -> String {
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).expect("read");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    fn post(agent: &ureq::Agent, url: &str) -> u16 {
        let mut answer = agent.post(url).send("{\"model\":\"m\"}").expect("answer");
        let _ = answer.body_mut().read_to_string();
        answer.status().as_u16()
    }

    #[test]
    fn a_request_leaves_in_one_write_and_a_closed_connection_is_not_reused() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/v1/chat", listener.local_addr().expect("addr"));
        let server = std::thread::spawn(move || {
            let mut seen = Vec::new();
            // The first connection: one request, answered, then closed by the endpoint
            // while the client keeps it in its pool.
            let (mut first, _) = listener.accept().expect("accept");
            seen.push(read_once(&mut first));
            first.write_all(ANSWER).expect("answer");
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(first);
            // The next request must come on a new connection.
            let (mut second, _) = listener.accept().expect("accept again");
            seen.push(read_once(&mut second));
            second.write_all(ANSWER).expect("answer");
            seen
        });
        let agent = build(BUFFER_BYTES);
        assert_eq!(post(&agent, &url), 200);
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(post(&agent, &url), 200);
        let seen = server.join().expect("server");
        for request in seen {
            assert!(
                request.starts_with("POST /v1/chat HTTP/1.1\r\n")
                    && request.ends_with("\r\n\r\n{\"model\":\"m\"}"),
                "head and body in one read: {request:?}"
            );
        }
    }
}
