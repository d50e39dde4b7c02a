//! Answers written through an [`Outbox`] (`Turn::answer_through`): a worker thread writes
//! to the connection's socket itself while the driver holds nothing, and the driver takes
//! over, in order, once the socket is full; the connection is kept for the next request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use fabric_reactor::http::{
    ChunkedError, Limits, OnBody, OnHead, Outbox, Produce, Pushed, Reject, Request, ServerKey,
    Servers, Service, Turn,
};
use fabric_reactor::{Handle, Registration};

/// `GET /<pieces>/<size>`: a `content-length` answer of `pieces` pieces of `size` bytes
/// (byte `i` of the body is `i % 251`), sent by a worker thread through the outbox.
#[derive(Debug)]
struct Through {
    key: Arc<OnceLock<ServerKey>>,
    /// What became of each piece, per request.
    log: Arc<Mutex<Vec<Vec<Pushed>>>>,
}

#[derive(Debug, Default)]
struct Conn {
    outbox: Option<Arc<Outbox>>,
}

static THROUGH: Registration<Servers<Through>> = Registration::new();

fn tenant() -> Handle<Servers<Through>> {
    THROUGH.get_or_register(Servers::default).expect("reactor")
}

fn body_byte(at: usize) -> u8 {
    u8::try_from(at % 251).expect("under 251")
}

impl Service for Through {
    type Conn = Conn;

    fn on_head(&mut self, conn: &mut Conn, request: &Request, turn: &mut Turn) -> OnHead {
        let mut parts = request.path().trim_start_matches('/').split('/');
        let mut next = || parts.next().and_then(|part| part.parse::<usize>().ok());
        let (Some(pieces), Some(size)) = (next(), next()) else {
            return OnHead::Reply(fabric_reactor::http::Reply::close(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_vec(),
            ));
        };
        let outbox = Arc::new(Outbox::default());
        conn.outbox = Some(Arc::clone(&outbox));
        turn.answer_through(&outbox);
        let (key, log) = (Arc::clone(&self.key), Arc::clone(&self.log));
        std::thread::spawn(move || {
            // The driver lets the worker write once it has written the head.
            std::thread::sleep(Duration::from_millis(50));
            let mut pushed = Vec::new();
            for piece in 0..pieces {
                let bytes: Vec<u8> = (piece * size..(piece + 1) * size).map(body_byte).collect();
                let result = outbox.send(&bytes);
                pushed.push(result);
                if result == Pushed::Queued {
                    resume(*key.get().expect("key"));
                }
            }
            outbox.finish_with(&[], true);
            log.lock().expect("log").push(pushed);
            resume(*key.get().expect("key"));
        });
        OnHead::Stream(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
                pieces * size
            )
            .into_bytes(),
        )
    }

    fn on_body(&mut self, _: &mut Conn, _: &mut Vec<u8>, _: bool, _: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn produce(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        room: usize,
        turn: &mut Turn,
    ) -> Produce {
        match &conn.outbox {
            Some(outbox) => outbox.take(out, room, turn),
            None => Produce::Done,
        }
    }

    fn on_body_error(&mut self, _: &mut Conn, _: ChunkedError, _: &mut Turn) -> Vec<u8> {
        Vec::new()
    }

    fn on_deadline(&mut self, _: &mut Conn, _: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn reject(&self, _why: Reject) -> Option<Vec<u8>> {
        None
    }

    fn on_close(&mut self, conn: Conn, _ending: fabric_reactor::http::Ending) {
        if let Some(outbox) = conn.outbox {
            outbox.abandon();
        }
    }
}

fn resume(key: ServerKey) {
    let _ = tenant().post(move |servers, cx| servers.resume(cx, key));
}

/// A server on 127.0.0.1; closed when dropped.
struct Server {
    addr: SocketAddr,
    key: ServerKey,
    log: Arc<Mutex<Vec<Vec<Pushed>>>>,
}

impl Server {
    fn start() -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let key_slot = Arc::new(OnceLock::new());
        let log = Arc::new(Mutex::new(Vec::new()));
        let service = Through {
            key: Arc::clone(&key_slot),
            log: Arc::clone(&log),
        };
        let key = tenant()
            .call(move |servers, cx| servers.open(cx, listener, Limits::new(8, 2), service))
            .expect("reactor")
            .expect("open");
        key_slot.set(key).expect("set once");
        Server { addr, key, log }
    }

    /// What became of each request's pieces, once `requests` workers logged theirs (the
    /// peer may read a body before its worker has logged it).
    fn pushed(&self, requests: usize) -> Vec<Vec<Pushed>> {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let log = self.log.lock().expect("log").clone();
            if log.len() >= requests || std::time::Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let key = self.key;
        let _ = tenant().call(move |servers, cx| servers.close(cx, key));
    }
}

/// Asks for `pieces` × `size` bytes on `stream` (after `pause`, starts reading), checks the
/// body byte for byte.
fn fetch(reader: &mut BufReader<TcpStream>, pieces: usize, size: usize, pause: Duration) {
    reader
        .get_mut()
        .write_all(format!("GET /{pieces}/{size} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
        .expect("write");
    std::thread::sleep(pause);
    let mut status = String::new();
    reader.read_line(&mut status).expect("status");
    assert_eq!(status.trim(), "HTTP/1.1 200 OK");
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().expect("length");
        }
    }
    assert_eq!(length, pieces * size);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("the whole body");
    let wrong = body
        .iter()
        .enumerate()
        .position(|(at, &byte)| byte != body_byte(at));
    assert_eq!(wrong, None, "the body is out of order at this byte");
}

fn client(addr: SocketAddr) -> BufReader<TcpStream> {
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    BufReader::new(stream)
}

#[test]
fn a_small_answer_is_written_by_the_worker_and_the_connection_kept() {
    let server = Server::start();
    let mut reader = client(server.addr);
    fetch(&mut reader, 3, 100, Duration::ZERO);
    fetch(&mut reader, 1, 10, Duration::ZERO);
    assert_eq!(
        server.pushed(2),
        [vec![Pushed::Written; 3], vec![Pushed::Written]],
        "every piece went straight to the socket"
    );
}

#[test]
fn a_peer_that_does_not_read_gets_the_rest_from_the_driver_in_order() {
    let server = Server::start();
    let mut reader = client(server.addr);
    // 4 MiB: more than the socket buffers and the outbox together hold.
    fetch(&mut reader, 64, 64 * 1024, Duration::from_millis(300));
    let pushed = server.pushed(1);
    assert_eq!(pushed[0][0], Pushed::Written, "{pushed:?}");
    assert!(
        pushed[0].contains(&Pushed::Queued),
        "the socket filled: {pushed:?}"
    );
    // The connection serves the next request, written through again.
    fetch(&mut reader, 2, 10, Duration::ZERO);
    assert_eq!(server.pushed(2)[1], [Pushed::Written; 2]);
}
