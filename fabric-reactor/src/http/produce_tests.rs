//! The driver keeps a connection after a produced answer that ends with
//! [`Produce::DoneKeepAlive`] (over the in-memory connection of [`super::fuzz`]): the next
//! request on it is answered, whether it came in a later read or ahead with the first.

use super::{
    ChunkedError, Ending, Limits, OnBody, OnHead, Produce, Reject, Request, Service, Turn, fuzz,
};

/// Answers `GET /s` and `POST /b` (after its body) with a produced `ok` or the body, kept
/// alive when the request allows it; `/slow` produces after `waits` calls.
#[derive(Debug, Default)]
struct Producer {
    heads: usize,
    endings: Vec<Ending>,
    waits: usize,
}

#[derive(Debug, Default)]
struct State {
    keep: bool,
    body: Vec<u8>,
    produced: bool,
}

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";

impl Service for Producer {
    type Conn = State;

    fn on_head(&mut self, conn: &mut State, request: &Request, _turn: &mut Turn) -> OnHead {
        self.heads += 1;
        conn.keep = request.is_persistent();
        conn.body = b"ok".to_vec();
        conn.produced = false;
        match request.path() {
            "/b" => OnHead::Body {
                continue_first: false,
                idle: None,
            },
            _ => OnHead::Stream(HEAD.to_vec()),
        }
    }

    fn on_body(
        &mut self,
        conn: &mut State,
        data: &mut Vec<u8>,
        complete: bool,
        _turn: &mut Turn,
    ) -> OnBody {
        if !complete {
            return OnBody::Read;
        }
        conn.body = std::mem::take(data);
        OnBody::Stream(HEAD.to_vec())
    }

    fn produce(
        &mut self,
        conn: &mut State,
        out: &mut Vec<u8>,
        _room: usize,
        _turn: &mut Turn,
    ) -> Produce {
        if self.waits > 0 {
            self.waits -= 1;
            return Produce::Wait;
        }
        if !conn.produced {
            conn.produced = true;
            out.extend_from_slice(format!("{:x}\r\n", conn.body.len()).as_bytes());
            out.extend_from_slice(&conn.body);
            out.extend_from_slice(b"\r\n0\r\n\r\n");
        }
        if conn.keep {
            Produce::DoneKeepAlive
        } else {
            Produce::Done
        }
    }

    fn on_body_error(&mut self, _: &mut State, _: ChunkedError, _: &mut Turn) -> Vec<u8> {
        b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n".to_vec()
    }

    fn on_deadline(&mut self, _: &mut State, _: &mut Turn) -> OnBody {
        OnBody::Read
    }

    fn reject(&self, _why: Reject) -> Option<Vec<u8>> {
        Some(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n".to_vec())
    }

    fn on_close(&mut self, _conn: State, ending: Ending) {
        self.endings.push(ending);
    }
}

/// The answers `pieces` get from a fresh [`Producer`] (`waits` produce calls wait first),
/// the heads it saw, and how the connection ended.
fn run(pieces: &[&[u8]], waits: usize) -> (String, usize, Vec<Ending>) {
    let mut service = Producer {
        waits,
        ..Producer::default()
    };
    let pieces = pieces.iter().map(|piece| piece.to_vec()).collect();
    let out = fuzz::connection(&mut service, &Limits::new(4, 1), pieces);
    (
        String::from_utf8_lossy(&out).into_owned(),
        service.heads,
        service.endings,
    )
}

fn answers(out: &str) -> usize {
    out.matches("HTTP/1.1 200 OK").count()
}

const GET: &[u8] = b"GET /s HTTP/1.1\r\nhost: x\r\n\r\n";

#[test]
fn two_requests_on_one_connection_are_both_answered() {
    let (out, heads, endings) = run(&[GET, GET], 0);
    assert_eq!((answers(&out), heads), (2, 2), "{out}");
    assert_eq!(out.matches("2\r\nok\r\n0\r\n\r\n").count(), 2, "{out}");
    assert_eq!(
        endings,
        [Ending::Done],
        "the peer closed an idle connection"
    );
}

#[test]
fn a_request_sent_ahead_is_kept_and_answered_after_the_first() {
    let ahead = [GET, GET].concat();
    let (out, heads, _) = run(&[&ahead], 0);
    assert_eq!((answers(&out), heads), (2, 2), "{out}");
    // A body read whole, then the next request in the same read.
    let post = b"POST /b HTTP/1.1\r\ncontent-length: 5\r\n\r\nhelloGET /s HTTP/1.1\r\n\r\n";
    let (out, heads, _) = run(&[post], 0);
    assert_eq!((answers(&out), heads), (2, 2), "{out}");
    assert!(out.contains("5\r\nhello\r\n0\r\n\r\n") && out.ends_with("2\r\nok\r\n0\r\n\r\n"));
}

#[test]
fn connection_close_closes_after_the_answer() {
    let close = b"GET /s HTTP/1.1\r\nconnection: close\r\n\r\n";
    let (out, heads, endings) = run(&[close, GET], 0);
    assert_eq!((answers(&out), heads), (1, 1), "{out}");
    assert_eq!(endings, [Ending::Done]);
    let old = b"GET /s HTTP/1.0\r\n\r\n";
    let (out, heads, _) = run(&[old, GET], 0);
    assert_eq!(
        (answers(&out), heads),
        (1, 1),
        "HTTP/1.0 closes by default: {out}"
    );
}

#[test]
fn head_still_closes() {
    let (out, heads, _) = run(&[b"HEAD /s HTTP/1.1\r\n\r\n", GET], 0);
    assert_eq!((answers(&out), heads), (1, 1), "{out}");
    assert!(out.ends_with("\r\n\r\n") && !out.contains("ok"), "{out}");
}

#[test]
fn a_body_the_service_did_not_read_is_never_the_next_request() {
    // `/s` streams from its head: the body (itself a request) must not be parsed.
    let post = b"POST /s HTTP/1.1\r\ncontent-length: 24\r\n\r\nGET /s HTTP/1.1\r\nx: y\r\n\r\n";
    let (out, heads, _) = run(&[post], 0);
    assert_eq!((answers(&out), heads), (1, 1), "{out}");
}

#[test]
fn what_is_sent_ahead_while_streaming_is_kept_within_a_bound() {
    // One read takes 64 KiB: the first request streams (one `produce` waits) while the
    // rest of them is read; every one of them is answered in turn.
    let many = GET.len().max(1);
    let count = 70_000 / many;
    let ahead = GET.repeat(count);
    let (out, heads, _) = run(&[&ahead], 1);
    assert_eq!((answers(&out), heads), (count, count));
    // Beyond the bound what the peer sends is dropped: the connection closes after the
    // answer instead of parsing a stream with a hole in it.
    let flood = GET.repeat(4 * super::MAX_HEAD_BYTES / many);
    let (out, heads, _) = run(&[&flood], 3);
    assert_eq!((answers(&out), heads), (1, 1), "{} bytes out", out.len());
}
