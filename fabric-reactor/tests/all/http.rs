//! The loopback HTTP driver through its public surface: a small service on the process-wide
//! reactor, and raw TCP clients. Capacity (slow or silent clients never lock a request
//! out, and neither can a peer holding every slot with bodies that never come), deadlines,
//! keep-alive, chunked bodies, `100 Continue` and `HEAD`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use fabric_reactor::http::{
    ChunkedError, Ending, Limits, OnBody, OnHead, Reject, Reply, Request, Servers, Service, Turn,
};
use fabric_reactor::{Handle, Registration};

/// Answers `GET /ping` with `pong` and `POST /echo` with the body's length; a request
/// asking for keep-alive keeps its connection.
#[derive(Debug)]
struct Echo {
    body_idle: Duration,
}

#[derive(Debug, Default)]
struct EchoConn {
    keep_alive: bool,
}

fn answer(status: &str, body: &str, keep_alive: bool) -> Reply {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    Reply {
        bytes: format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: {connection}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
        keep_alive,
    }
}

impl Service for Echo {
    type Conn = EchoConn;

    fn on_head(&mut self, conn: &mut EchoConn, request: &Request, _turn: &mut Turn) -> OnHead {
        conn.keep_alive = request.asks_keep_alive();
        match (request.method(), request.path()) {
            ("GET" | "HEAD", "/ping") => OnHead::Reply(answer("200 OK", "pong", conn.keep_alive)),
            ("POST", "/echo") => OnHead::Body {
                continue_first: request.expects_continue(),
                idle: Some(self.body_idle),
            },
            _ => OnHead::Reply(answer("404 Not Found", "", false)),
        }
    }

    fn on_body(
        &mut self,
        conn: &mut EchoConn,
        data: &mut Vec<u8>,
        complete: bool,
        _turn: &mut Turn,
    ) -> OnBody {
        if !complete {
            return OnBody::Read;
        }
        let length = data.len().to_string();
        data.clear();
        OnBody::Reply(answer("200 OK", &length, conn.keep_alive))
    }

    fn on_deadline(&mut self, _conn: &mut EchoConn, _turn: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn on_body_error(&mut self, _: &mut EchoConn, _: ChunkedError, _: &mut Turn) -> Vec<u8> {
        answer("400 Bad Request", "", false).bytes
    }

    fn reject(&self, why: Reject) -> Option<Vec<u8>> {
        (why != Reject::HeadTimeout).then(|| answer("400 Bad Request", "", false).bytes)
    }

    fn on_close(&mut self, _conn: EchoConn, _ending: Ending) {}
}

static ECHO: Registration<Servers<Echo>> = Registration::new();

fn tenant() -> Handle<Servers<Echo>> {
    ECHO.get_or_register(Servers::default).expect("reactor")
}

/// A server on 127.0.0.1 with `limits`; closed when dropped.
struct Server {
    addr: SocketAddr,
    key: fabric_reactor::http::ServerKey,
}

impl Server {
    fn start(limits: Limits, body_idle: Duration) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let service = Echo { body_idle };
        let key = tenant()
            .call(move |servers, cx| servers.open(cx, listener, limits, service))
            .expect("reactor")
            .expect("open");
        Server { addr, key }
    }

    fn connections(&self) -> usize {
        let key = self.key;
        tenant()
            .call(move |servers, _| servers.connections(key))
            .expect("reactor")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let key = self.key;
        let _ = tenant().call(move |servers, cx| servers.close(cx, key));
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    stream
}

/// Reads one response (status line, headers, `content-length` body).
fn response(reader: &mut BufReader<TcpStream>) -> Option<(String, String)> {
    let mut status = String::new();
    if reader.read_line(&mut status).ok()? == 0 {
        return None;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((status.trim().to_owned(), String::from_utf8(body).ok()?))
}

/// Whether the server closed the connection (EOF, or a reset) within `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).expect("timeout");
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

#[test]
fn silent_and_half_sent_connections_cannot_lock_a_request_out() {
    let server = Server::start(Limits::new(32, 8), Duration::from_secs(10));
    // Another local process holds 200 connections: half never sends a byte, half stops in
    // the middle of its head.
    let mut held = Vec::new();
    for i in 0..200 {
        let mut stream = connect(server.addr);
        if i % 2 == 1 {
            stream
                .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Le")
                .expect("write");
        }
        held.push(stream);
    }
    // The untrusted share is bounded: the oldest were shed as the newer arrived.
    assert!(server.connections() <= 32 - 8, "{}", server.connections());
    let began = Instant::now();
    let mut stream = connect(server.addr);
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    stream
        .write_all(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let mut reader = BufReader::new(stream);
    let (status, body) = response(&mut reader).expect("served within a second");
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "pong")
    );
    assert!(began.elapsed() < Duration::from_secs(1));
}

#[test]
fn accepted_requests_keep_their_slots_and_a_full_server_sheds_the_idle() {
    let server = Server::start(Limits::new(4, 2), Duration::from_secs(10));
    // Two requests whose bodies are still coming are trusted: they keep their slots.
    let mut bodies = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(server.addr);
        stream
            .write_all(b"POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nab")
            .expect("write");
        bodies.push(stream);
    }
    // A flood of silent connections only ever holds the untrusted share.
    let _flood: Vec<TcpStream> = (0..20).map(|_| connect(server.addr)).collect();
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.connections() <= 4, "{}", server.connections());
    // The trusted requests complete.
    for mut stream in bodies {
        stream.write_all(b"cd").expect("write");
        let mut reader = BufReader::new(stream);
        let (status, body) = response(&mut reader).expect("answer");
        assert_eq!((status.as_str(), body.as_str()), ("HTTP/1.1 200 OK", "4"));
    }
}

#[test]
fn a_head_whose_body_never_comes_is_dropped_at_its_deadline() {
    let idle = Duration::from_millis(300);
    let server = Server::start(Limits::new(8, 2), idle);
    let mut stream = connect(server.addr);
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\n")
        .expect("write");
    let began = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(5)));
    let waited = began.elapsed();
    assert!(
        waited >= idle,
        "closed after {waited:?}, before the deadline"
    );
    // A body that keeps coming is not dropped: each byte resets the deadline.
    let mut stream = connect(server.addr);
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\n")
        .expect("write");
    for byte in [b"a", b"b", b"c", b"d"] {
        std::thread::sleep(idle / 2);
        stream.write_all(byte).expect("write");
    }
    let mut reader = BufReader::new(stream);
    let (_, body) = response(&mut reader).expect("answer");
    assert_eq!(body, "4");
}

#[test]
fn a_head_that_never_completes_is_closed_at_the_head_deadline() {
    let mut limits = Limits::new(8, 2);
    limits.head_timeout = Duration::from_millis(200);
    let server = Server::start(limits, Duration::from_secs(10));
    let mut stream = connect(server.addr);
    stream.write_all(b"GET /ping HTTP/1.1\r\n").expect("write");
    assert!(closed_within(&mut stream, Duration::from_secs(5)));
}

#[test]
fn kept_alive_connections_carry_several_requests_and_close_when_idle() {
    let mut limits = Limits::new(8, 2);
    limits.keep_alive_idle = Duration::from_millis(300);
    let server = Server::start(limits, Duration::from_secs(10));
    let stream = connect(server.addr);
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    writer
        .write_all(b"GET /ping HTTP/1.1\r\nConnection: keep-alive\r\n\r\n")
        .expect("write");
    assert_eq!(response(&mut reader).expect("first").1, "pong");
    // Two pipelined requests, the second a chunked body behind `100 Continue`.
    writer
        .write_all(
            b"GET /ping HTTP/1.1\r\nConnection: keep-alive\r\n\r\n\
              POST /echo HTTP/1.1\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\
              Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .expect("write");
    assert_eq!(response(&mut reader).expect("second").1, "pong");
    let mut interim = String::new();
    reader.read_line(&mut interim).expect("interim");
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n");
    let mut blank = String::new();
    reader.read_line(&mut blank).expect("blank");
    assert_eq!(response(&mut reader).expect("third").1, "5");
    // Without a next request the connection is closed after the keep-alive idle time.
    let mut stream = reader.into_inner();
    assert!(closed_within(&mut stream, Duration::from_secs(5)));
    // Without `Connection: keep-alive` the answer closes the connection.
    let mut stream = connect(server.addr);
    stream
        .write_all(b"GET /ping HTTP/1.1\r\n\r\n")
        .expect("write");
    let mut all = String::new();
    stream.read_to_string(&mut all).expect("read to the end");
    assert!(all.ends_with("pong"), "{all}");
}

#[test]
fn malformed_heads_and_bodies_are_answered_400() {
    let server = Server::start(Limits::new(8, 2), Duration::from_secs(10));
    for request in [
        &b"\x01\x02 nonsense\r\n\r\n"[..],
        b"POST /echo HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ] {
        let mut stream = connect(server.addr);
        stream.write_all(request).expect("write");
        let mut reader = BufReader::new(stream);
        let (status, _) = response(&mut reader).expect("answer");
        assert_eq!(status, "HTTP/1.1 400 Bad Request", "{request:?}");
    }
}

#[test]
fn head_requests_are_answered_without_a_body() {
    let server = Server::start(Limits::new(8, 2), Duration::from_secs(10));
    let mut stream = connect(server.addr);
    stream
        .write_all(b"HEAD /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("read to the end");
    let text = String::from_utf8(all).expect("utf-8");
    assert_eq!(
        text,
        "HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\n"
    );
    // Kept alive, the next request on the connection is answered right after the head.
    let stream = connect(server.addr);
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    writer
        .write_all(
            b"HEAD /ping HTTP/1.1\r\nConnection: keep-alive\r\n\r\n\
              GET /ping HTTP/1.1\r\n\r\n",
        )
        .expect("write");
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    assert!(head.contains("content-length: 4"), "{head}");
    let (status, body) = response(&mut reader).expect("the GET after the HEAD");
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "pong")
    );
}

#[test]
fn a_peer_holding_every_slot_with_stalled_bodies_cannot_lock_requests_out() {
    let mut limits = Limits::new(16, 4);
    limits.body_stall = Duration::from_millis(200);
    let server = Server::start(limits, Duration::from_secs(30));
    // A token holder fills every slot with accepted requests whose bodies never come.
    let mut held = Vec::new();
    for _ in 0..18 {
        let mut stream = connect(server.addr);
        stream
            .write_all(b"POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\n")
            .expect("write");
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(300)); // past `body_stall`
    let began = Instant::now();
    for _ in 0..20 {
        let mut stream = connect(server.addr);
        stream
            .set_read_timeout(Some(Duration::from_secs(1)))
            .expect("timeout");
        stream
            .write_all(b"GET /ping HTTP/1.1\r\n\r\n")
            .expect("write");
        let mut reader = BufReader::new(stream);
        let (_, body) = response(&mut reader).expect("served although every slot was held");
        assert_eq!(body, "pong");
    }
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    // A body that keeps coming is not shed: bytes within `body_stall` keep it.
    let mut active = connect(server.addr);
    active
        .write_all(b"POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\n")
        .expect("write");
    let _more: Vec<TcpStream> = (0..20).map(|_| connect(server.addr)).collect();
    active.write_all(b"abc").expect("write");
    let mut reader = BufReader::new(active);
    assert_eq!(response(&mut reader).expect("answer").1, "3");
}
