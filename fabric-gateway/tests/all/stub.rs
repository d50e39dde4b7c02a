//! A loopback model endpoint that records what it received and answers with scripted
//! parts (written with a gap between them, like a streaming model), and a raw client.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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

impl Stub {
    /// Answers every request with `parts` (one write each, `gap` between them).
    pub fn start(parts: Vec<Vec<u8>>, gap: Duration) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(Mutex::new(false));
        let (r, s) = (Arc::clone(&received), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if *s.lock().unwrap() {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let (r, parts) = (Arc::clone(&r), parts.clone());
                std::thread::spawn(move || {
                    let Some(request) = read_request(&mut stream) else {
                        return;
                    };
                    r.lock().unwrap().push(request);
                    for (i, part) in parts.iter().enumerate() {
                        if i > 0 {
                            std::thread::sleep(gap);
                        }
                        if stream.write_all(part).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Stub {
            addr,
            received,
            stop,
            thread: Some(thread),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
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

/// The head of an SSE answer delimited by the connection's close.
pub const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

/// Sends a POST of `body` to `url` (`http://host:port/path`) and returns the stream.
pub fn post(url: &str, body: &str, extra: &str) -> TcpStream {
    let rest = url.strip_prefix("http://").expect("http url");
    let (host, path) = rest.split_once('/').expect("path");
    let mut stream = TcpStream::connect(host).expect("connect");
    let request = format!(
        "POST /{path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    stream
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
