//! A loopback model endpoint that records what it received and answers with scripted
//! parts (written with a gap between them, like a streaming model), closing each
//! connection after its answer or keeping it for the next request; and raw clients: one
//! connection per call ([`post`]), or one connection kept for call after call ([`Kept`]).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One request the stub received: its head (text) and body.
#[derive(Debug, Clone)]
pub struct Received {
    pub head: String,
    pub body: Vec<u8>,
}

/// The stub; dropping it stops its thread.
#[derive(Debug)]
pub struct Stub {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
    /// Connections accepted.
    pub accepted: Arc<AtomicUsize>,
    stop: Arc<Mutex<bool>>,
    thread: Option<JoinHandle<()>>,
}

/// Reads a head and its `content-length` body from `stream`.
pub fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0usize);
    let mut body = data[end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Received { head, body })
}

/// How a stub treats its connections.
#[derive(Debug, Clone, Copy, Default)]
pub enum Mode {
    /// One request per connection; it closes after the answer.
    #[default]
    Close,
    /// Requests one after another on a connection (answers must delimit themselves:
    /// `content-length` or chunked, as [`kept_json_answer`] and [`kept_sse`] make them).
    KeepAlive,
    /// As `KeepAlive`, but the second request of every connection is read and the
    /// connection closed unanswered (an endpoint dropping an idle connection as it is
    /// reused).
    DropSecond,
}

impl Stub {
    /// Answers every request with `parts` (one write each, `gap` between them) and closes.
    pub fn start(parts: Vec<Vec<u8>>, gap: Duration) -> Stub {
        Stub::start_with(parts, gap, Mode::Close)
    }

    /// Answers every request with `parts` (one write each, `gap` between them), treating
    /// connections as `mode` says.
    pub fn start_with(parts: Vec<Vec<u8>>, gap: Duration, mode: Mode) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(Mutex::new(false));
        let (r, s, a) = (
            Arc::clone(&received),
            Arc::clone(&stop),
            Arc::clone(&accepted),
        );
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if *s.lock().unwrap() {
                    return;
                }
                let Ok(stream) = stream else { continue };
                a.fetch_add(1, Ordering::SeqCst);
                let (r, parts) = (Arc::clone(&r), parts.clone());
                std::thread::spawn(move || serve(stream, &r, &parts, gap, mode));
            }
        });
        Stub {
            addr,
            received,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// One stub connection: its requests, each answered with `parts`.
fn serve(
    mut stream: TcpStream,
    received: &Mutex<Vec<Received>>,
    parts: &[Vec<u8>],
    gap: Duration,
    mode: Mode,
) {
    // A kept connection nobody uses any more ends its thread. Each part goes out as it is
    // written (as model servers set it): with Nagle's algorithm a part would wait for the
    // peer's delayed acknowledgement of the one before on a reused connection.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_nodelay(true);
    for index in 0.. {
        let Some(request) = read_request(&mut stream) else {
            return;
        };
        received.lock().unwrap().push(request);
        if index == 1 && matches!(mode, Mode::DropSecond) {
            return;
        }
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(gap);
            }
            if stream.write_all(part).is_err() {
                return;
            }
        }
        if matches!(mode, Mode::Close) {
            return;
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        *self.stop.lock().unwrap() = true;
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A JSON answer with `content-length`.
pub fn json_answer(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A JSON answer with `content-length` on a kept connection.
pub fn kept_json_answer(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// An SSE answer on a kept connection, chunked: the head with the first event, then one
/// part per further event, the last with the last chunk.
pub fn kept_sse(events: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let chunk = |event: &[u8]| {
        let mut out = format!("{:x}\r\n", event.len()).into_bytes();
        out.extend_from_slice(event);
        out.extend_from_slice(b"\r\n");
        out
    };
    let mut parts: Vec<Vec<u8>> = events.iter().map(|event| chunk(event)).collect();
    if let Some(first) = parts.first_mut() {
        first.splice(0..0, KEPT_SSE_HEAD.iter().copied());
    }
    match parts.last_mut() {
        Some(last) => last.extend_from_slice(b"0\r\n\r\n"),
        None => parts.push([KEPT_SSE_HEAD, b"0\r\n\r\n"].concat()),
    }
    parts
}

/// The head of a chunked SSE answer.
pub const KEPT_SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";

/// The head of an SSE answer delimited by the connection's close.
pub const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

/// `http://host:port/path` → (`host:port`, `path` without its leading `/`).
fn split_url(url: &str) -> (&str, &str) {
    let rest = url.strip_prefix("http://").expect("http url");
    rest.split_once('/').expect("path")
}

/// A POST of `body` to `path` on `host` with `extra` header lines.
fn post_request(host: &str, path: &str, body: &str, extra: &str) -> String {
    format!(
        "POST /{path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Sends a POST of `body` to `url` (`http://host:port/path`) on a new connection, with
/// `Connection: close` (one call per connection), and returns the stream.
pub fn post(url: &str, body: &str, extra: &str) -> TcpStream {
    let (host, path) = split_url(url);
    let mut stream = TcpStream::connect(host).expect("connect");
    let extra = format!("connection: close\r\n{extra}");
    stream
        .write_all(post_request(host, path, body, &extra).as_bytes())
        .expect("send");
    stream
}

/// One answer read from a kept connection.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// From the request to the first read that held the marker (`None`: never seen).
    pub to_marker: Option<Duration>,
    /// From the request to the answer's last byte.
    pub to_end: Duration,
}

/// A client that keeps one connection and sends call after call on it (HTTP/1.1 without
/// `Connection: close`, as httpx and the model SDKs do), reading each answer by its
/// framing (`content-length` or chunked).
#[derive(Debug)]
pub struct Kept {
    stream: TcpStream,
    host: String,
}

impl Kept {
    /// Connects to the host of `url`.
    pub fn connect(url: &str) -> Kept {
        let (host, _) = split_url(url);
        let stream = TcpStream::connect(host).expect("connect");
        let _ = stream.set_nodelay(true);
        Kept {
            stream,
            host: host.to_owned(),
        }
    }

    /// POSTs `body` to `url`'s path and reads the whole answer, noting when `marker` first
    /// arrived.
    pub fn call(&mut self, url: &str, body: &str, marker: &[u8]) -> Answer {
        let (_, path) = split_url(url);
        let started = Instant::now();
        let request = post_request(&self.host, path, body, "");
        self.stream.write_all(request.as_bytes()).expect("send");
        let mut data = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        let mut to_marker = None;
        loop {
            let n = self.stream.read(&mut buf).expect("read");
            assert!(n > 0, "the connection closed before the answer's end");
            data.extend_from_slice(&buf[..n]);
            if to_marker.is_none() && data.windows(marker.len()).any(|w| w == marker) {
                to_marker = Some(started.elapsed());
            }
            if answer_complete(&data) {
                let to_end = started.elapsed();
                let (status, head, body) = split_answer(&data);
                return Answer {
                    status,
                    head,
                    body,
                    to_marker,
                    to_end,
                };
            }
        }
    }
}

/// Whether `data` holds a whole answer: its head and a body delimited by `content-length`
/// or chunked framing.
fn answer_complete(data: &[u8]) -> bool {
    let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&data[..at]).to_ascii_lowercase();
    let mut body = &data[at + 4..];
    if head.contains("transfer-encoding: chunked") {
        loop {
            let Some(line) = body.windows(2).position(|w| w == b"\r\n") else {
                return false;
            };
            let size = std::str::from_utf8(&body[..line])
                .ok()
                .and_then(|text| usize::from_str_radix(text.trim(), 16).ok())
                .expect("chunk size");
            if size == 0 {
                return body.len() >= line + 4;
            }
            if body.len() < line + 2 + size + 2 {
                return false;
            }
            body = &body[line + 2 + size + 2..];
        }
    }
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .expect("a kept answer delimits itself");
    body.len() >= length
}

/// The whole answer (until the gateway closes): status, head, de-chunked body.
pub fn answer(mut stream: TcpStream) -> (u16, String, Vec<u8>) {
    let mut data = Vec::new();
    stream.read_to_end(&mut data).expect("read");
    split_answer(&data)
}

pub fn split_answer(data: &[u8]) -> (u16, String, Vec<u8>) {
    let end = data
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("head")
        + 4;
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let status = head[9..12].parse().expect("status");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(&data[end..])
    } else {
        data[end..].to_vec()
    };
    (status, head, body)
}

pub fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(at) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(std::str::from_utf8(&data[..at]).unwrap().trim(), 16)
            .expect("chunk size");
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[at + 2..at + 2 + size]);
        data = &data[at + 2 + size + 2..];
    }
}
