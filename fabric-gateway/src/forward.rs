//! Forwarding on a small bounded worker pool: each call is sent to its real endpoint with
//! `ureq` (rustls for HTTPS; no async runtime; endpoint connections kept in its pool; a
//! call is sent once, never again), the answer is passed to the harness re-framed chunked
//! (on a connection kept for the harness's next call when its request allows it): its head
//! with the first body bytes, a streamed answer's body reads as they arrive, a whole
//! answer's body at its end (or every [`PASS_BYTES`]), written by the worker straight to
//! the harness's socket while it takes them (`Turn::answer_through`), else through the
//! reactor; then the call is recorded.

use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Instant, SystemTime};

use ureq::http;

use crate::capture::Upstream;
use crate::client;
use crate::record::{self, Observed};
use crate::route::{Due, Route};
use crate::server::Waker;
use fabric_reactor::http::{Outbox, Pushed};

/// Workers forwarding calls at once (each holds one call from request to last byte).
const MAX_WORKERS: usize = 256;
/// One read of an answer's body.
const READ_BYTES: usize = 16 * 1024;
/// A non-streamed answer's bytes gathered before they are passed on (its end passes them
/// too): one write for a whole answer of usual size, while a big one still drains long
/// before the outbox is full.
const PASS_BYTES: usize = 64 * 1024;

/// A call read from the harness, ready to forward.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) route: Arc<Route>,
    pub(crate) upstream: Upstream,
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: String,
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) body: Vec<u8>,
    pub(crate) started: Instant,
    pub(crate) started_at: SystemTime,
    pub(crate) invocation_id: Option<String>,
    /// The harness's connection may carry its next call (HTTP/1.1 without
    /// `Connection: close`).
    pub(crate) keep_alive: bool,
}

type Job = (Call, Arc<Outbox>, Waker);

#[derive(Debug)]
struct Pool {
    jobs: Sender<Job>,
    queue: Arc<Mutex<Receiver<Job>>>,
    /// (workers, idle workers)
    counts: Arc<Mutex<(usize, usize)>>,
}

static POOL: OnceLock<Pool> = OnceLock::new();

/// Queues a call: an idle worker takes it, or a new one is started (up to
/// [`MAX_WORKERS`]; beyond that the call waits for a worker).
pub(crate) fn submit(call: Call, exchange: Arc<Outbox>, waker: Waker) {
    let pool = POOL.get_or_init(|| {
        let (jobs, queue) = mpsc::channel();
        Pool {
            jobs,
            queue: Arc::new(Mutex::new(queue)),
            counts: Arc::new(Mutex::new((0, 0))),
        }
    });
    let spawn = {
        let mut counts = pool.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let spawn = counts.1 == 0 && counts.0 < MAX_WORKERS;
        if spawn {
            counts.0 += 1;
        } else if counts.1 > 0 {
            counts.1 -= 1;
        }
        spawn
    };
    if spawn {
        let queue = Arc::clone(&pool.queue);
        let counts = Arc::clone(&pool.counts);
        let started = std::thread::Builder::new()
            .name("fabric-gateway".into())
            .spawn(move || work(&queue, &counts));
        if started.is_err() {
            pool.counts.lock().unwrap_or_else(PoisonError::into_inner).0 -= 1;
        }
    }
    if let Err(mpsc::SendError((call, exchange, waker))) = pool.jobs.send((call, exchange, waker)) {
        forward(call, &exchange, &waker);
    }
}

fn work(queue: &Mutex<Receiver<Job>>, counts: &Mutex<(usize, usize)>) {
    loop {
        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((call, exchange, waker)) = job else {
            return;
        };
        forward(call, &exchange, &waker);
        counts.lock().unwrap_or_else(PoisonError::into_inner).1 += 1;
    }
}

/// The endpoint URL of a call: the role's real `base_url` with the call's path and query.
fn target(call: &Call) -> String {
    let mut url = format!(
        "{}{}",
        call.upstream.base_url.trim_end_matches('/'),
        call.path
    );
    if !call.query.is_empty() {
        url.push('?');
        url.push_str(&call.query);
    }
    url
}

fn request(call: &Call) -> Result<http::Request<Vec<u8>>, http::Error> {
    let mut builder = http::Request::builder()
        .method(call.method.as_str())
        .uri(target(call));
    for (name, value) in &call.headers {
        builder = builder.header(name.as_str(), value.as_slice());
    }
    builder.body(call.body.clone())
}

/// The answer's head for the harness: the endpoint's status and headers, re-framed as a
/// chunked body, on a connection kept after it when `keep_alive`, else closed.
fn head(response: &http::Response<ureq::Body>, keep_alive: bool) -> Vec<u8> {
    let status = response.status();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
    .into_bytes();
    for (name, value) in response.headers() {
        let hop = [
            "connection",
            "keep-alive",
            "transfer-encoding",
            "content-length",
        ]
        .iter()
        .any(|h| name.as_str().eq_ignore_ascii_case(h));
        if !hop {
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
    }
    head.extend_from_slice(b"transfer-encoding: chunked\r\n");
    head.extend_from_slice(if keep_alive {
        b"connection: keep-alive\r\n\r\n".as_slice()
    } else {
        b"connection: close\r\n\r\n".as_slice()
    });
    head
}

fn chunk(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    out
}

/// Forwards one call and records it. The answer is passed on in as few writes as it
/// allows: a whole answer's head and body at once (at its end, or every [`PASS_BYTES`]);
/// a streamed one's head with its first read, then each read as it arrives.
fn forward(call: Call, exchange: &Outbox, waker: &Waker) {
    let mut seen = Observed::default();
    let mut ended = false;
    let mut pending = Vec::new();
    let cap = call.route.options.body_cap;
    match send(&call) {
        Err(why) => seen.error = Some(why),
        Ok(response) => {
            seen.status = Some(response.status().as_u16());
            seen.first_byte = Some(call.started.elapsed());
            seen.streamed = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            pending = head(&response, call.keep_alive);
            let mut open = true;
            // Read to its end (ureq then gives the endpoint connection back to its pool,
            // before the harness can send its next call).
            let mut body = response.into_body().into_reader();
            let mut buf = vec![0u8; READ_BYTES];
            while open {
                match body.read(&mut buf) {
                    Ok(0) => {
                        ended = true;
                        break;
                    }
                    Ok(n) => {
                        seen.first_token
                            .get_or_insert_with(|| call.started.elapsed());
                        seen.chunks += 1;
                        seen.keep(&buf[..n], cap);
                        pending.extend_from_slice(&chunk(&buf[..n]));
                        if seen.streamed || pending.len() >= PASS_BYTES {
                            open = pass(exchange, waker, &mut pending);
                        }
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => {
                        seen.error = Some("the endpoint's answer broke off".to_owned());
                        break;
                    }
                }
            }
            if !open && !ended && seen.error.is_none() {
                seen.error = Some("the harness closed the connection first".to_owned());
            }
        }
    }
    seen.latency = call.started.elapsed();
    let unanswered = seen.status.is_none();
    // The record is built and written once the harness has the whole answer (off its
    // path); the invocation's end waits for it, so its summary still counts the call.
    // Under a token budget it is written first: the harness's next call is checked
    // against this one's tokens.
    let due = call.route.due(call.invocation_id.as_deref());
    let record_first = call.route.options.max_total_tokens.is_some();
    let mut record = Some((seen, due));
    if record_first {
        append(&call, &mut record);
    }
    if unanswered {
        let body = r#"{"error":{"message":"model gateway: the endpoint could not be reached","type":"upstream_error"}}"#;
        pending = crate::service::json_answer("502 Bad Gateway", body);
    } else if ended {
        // (A broken answer ends without its last chunk: the harness sees it cut short.)
        pending.extend_from_slice(b"0\r\n\r\n");
    }
    // Only a whole chunked answer delimits itself (the 502 says `connection: close`).
    let kept = ended && call.keep_alive;
    let pushed = exchange.finish_with(&pending, kept);
    // The reactor ends the answer on its side: the connection waits for the next call, or
    // closes. When the harness has every byte already and the connection is kept, that
    // can wait for the reactor's next wake-up (the harness's next request, at the latest).
    if kept && pushed == Pushed::Written {
        waker.settle();
    } else {
        waker.wake();
    }
    append(&call, &mut record);
}

/// Passes `pending` on to the harness, waking the reactor when it has bytes to write;
/// `false` once the harness is gone.
fn pass(exchange: &Outbox, waker: &Waker, pending: &mut Vec<u8>) -> bool {
    let pushed = exchange.send(pending);
    pending.clear();
    if pushed == Pushed::Queued {
        waker.wake();
    }
    pushed != Pushed::Gone
}

/// Sends the call once. A connection that broke under it (even a pooled one the endpoint
/// closed as it was taken) is answered 502 and recorded, never sent again: the endpoint may
/// have received it, and a resend would make the records differ from what the endpoint
/// saw. The harness's own retry policy decides (the OpenAI and Anthropic SDKs retry a 502).
fn send(call: &Call) -> Result<http::Response<ureq::Body>, String> {
    let request = request(call)
        .map_err(|_| "the request could not be forwarded (invalid head)".to_owned())?;
    client::agent(call)
        .run(request)
        .map_err(|error| record::describe(&error))
}

/// Builds and writes the call's record (once).
fn append(call: &Call, record: &mut Option<(Observed, Due)>) {
    if let Some((seen, due)) = record.take() {
        let _ = call.route.append(record::build(call, seen), due);
    }
}
