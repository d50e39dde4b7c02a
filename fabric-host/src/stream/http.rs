//! The part of HTTP/1.1 the OpenAI stream listener speaks: one request head (parsed with
//! `httparse`), checked in upstream's order, and a chunked request body decoder. Pure code:
//! the reactor feeds bytes in and writes the answers out.

use fabric_config::stream::OPENAI_STREAM_PATH;

/// Longest accepted request head (request line and headers).
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most header lines accepted in one head.
const MAX_HEADERS: usize = 64;
/// Longest accepted chunk-size or trailer line.
const MAX_CONTROL_LINE: usize = 4096;

/// An HTTP answer of the listener (status and reason phrase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Status(pub u16, pub &'static str);

pub(crate) const CONTINUE: Status = Status(100, "Continue");
pub(crate) const OK: Status = Status(200, "OK");
pub(crate) const BAD_REQUEST: Status = Status(400, "Bad Request");
pub(crate) const UNAUTHORIZED: Status = Status(401, "Rejected");
pub(crate) const NOT_FOUND: Status = Status(404, "Rejected");
pub(crate) const CONFLICT: Status = Status(409, "Rejected");
pub(crate) const LENGTH_REQUIRED: Status = Status(411, "Rejected");
pub(crate) const TOO_LARGE: Status = Status(413, "Rejected");
pub(crate) const UNSUPPORTED_TYPE: Status = Status(415, "Rejected");
pub(crate) const EXPECTATION_FAILED: Status = Status(417, "Rejected");

impl Status {
    /// The response bytes: a final status carries `Content-Length: 0` and
    /// `Connection: close`; `100 Continue` is an interim line.
    pub(crate) fn response(self) -> Vec<u8> {
        let Status(code, reason) = self;
        if code == 100 {
            return format!("HTTP/1.1 {code} {reason}\r\n\r\n").into_bytes();
        }
        format!("HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .into_bytes()
    }
}

/// A rejected request or body: the answer and a safe message (never a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub status: Status,
    pub message: String,
}

impl Fault {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Fault {
        Fault {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn bad(message: impl Into<String>) -> Fault {
        Fault::new(BAD_REQUEST, message)
    }
}

/// Result of looking for a complete head in the bytes read so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Head {
    /// More bytes are needed.
    Partial,
    /// The head is complete, valid and authenticated; the body starts at this offset.
    Accepted(usize),
}

/// Parses and checks a request head against the stream's rules, in upstream's order:
/// method and path (404), bearer token (401), NDJSON content type (415), chunked transfer
/// coding (411), `Expect: 100-continue` (417). Malformed heads are 400.
pub(crate) fn check_head(buf: &[u8], token: &str) -> Result<Head, Fault> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let end = match request.parse(buf) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return Err(Fault::bad("OpenAI stream request head is too large"));
        }
        Ok(httparse::Status::Partial) => return Ok(Head::Partial),
        Err(_) => {
            return Err(Fault::bad(
                "OpenAI stream contained malformed transport data",
            ));
        }
    };
    let path = request.path.unwrap_or_default();
    let path = path.split('?').next().unwrap_or_default();
    if request.method != Some("POST") || path != OPENAI_STREAM_PATH {
        return Err(Fault::new(NOT_FOUND, "Unknown OpenAI stream endpoint"));
    }
    let header = |name: &str| -> String {
        // The last occurrence wins, as in a dictionary built line by line.
        request
            .headers
            .iter()
            .rev()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.iter().map(|&b| char::from(b)).collect::<String>())
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let expected = format!("Bearer {token}");
    if !constant_time_eq(header("authorization").as_bytes(), expected.as_bytes()) {
        return Err(Fault::new(
            UNAUTHORIZED,
            "Invalid OpenAI stream authorization",
        ));
    }
    let content_type = header("content-type");
    if content_type.split(';').next().unwrap_or_default().trim() != "application/x-ndjson" {
        return Err(Fault::new(
            UNSUPPORTED_TYPE,
            "OpenAI stream must use NDJSON",
        ));
    }
    let transfer = header("transfer-encoding");
    let last_coding = transfer
        .split(',')
        .map(str::trim)
        .rfind(|coding| !coding.is_empty());
    if !last_coding.is_some_and(|coding| coding.eq_ignore_ascii_case("chunked")) {
        return Err(Fault::new(
            LENGTH_REQUIRED,
            "OpenAI stream must use chunked transfer encoding",
        ));
    }
    if !header("expect").eq_ignore_ascii_case("100-continue") {
        return Err(Fault::new(
            EXPECTATION_FAILED,
            "OpenAI stream must use Expect: 100-continue",
        ));
    }
    Ok(Head::Accepted(end))
}

/// Compares two byte strings in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &byte) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ byte);
    }
    diff == 0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Size,
    Data(usize),
    DataEnd,
    Trailers,
    Done,
}

/// Decodes a chunked body incrementally.
#[derive(Debug)]
pub(crate) struct Chunked {
    phase: Phase,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked { phase: Phase::Size }
    }
}

impl Chunked {
    /// Decodes as much of `input` as possible, appending body bytes to `body`; returns how
    /// many input bytes were consumed. Stops after the last chunk's trailers
    /// ([`Chunked::is_done`]).
    pub(crate) fn decode(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<usize, Fault> {
        let mut pos = 0;
        loop {
            let rest = &input[pos..];
            match self.phase {
                Phase::Done => return Ok(pos),
                Phase::Data(remaining) => {
                    if rest.is_empty() {
                        return Ok(pos);
                    }
                    let take = remaining.min(rest.len());
                    body.extend_from_slice(&rest[..take]);
                    pos += take;
                    self.phase = if take == remaining {
                        Phase::DataEnd
                    } else {
                        Phase::Data(remaining - take)
                    };
                }
                Phase::DataEnd => {
                    if rest.len() < 2 {
                        return Ok(pos);
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(Fault::bad("Invalid OpenAI stream chunk terminator"));
                    }
                    pos += 2;
                    self.phase = Phase::Size;
                }
                Phase::Size | Phase::Trailers => {
                    let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
                        if rest.len() > MAX_CONTROL_LINE {
                            return Err(Fault::bad(
                                "OpenAI stream contained malformed transport data",
                            ));
                        }
                        return Ok(pos);
                    };
                    let line = &rest[..newline];
                    pos += newline + 1;
                    if self.phase == Phase::Trailers {
                        if line == b"\r" || line.is_empty() {
                            self.phase = Phase::Done;
                        }
                        continue;
                    }
                    let size = parse_size(line)?;
                    self.phase = if size == 0 {
                        Phase::Trailers
                    } else {
                        Phase::Data(size)
                    };
                }
            }
        }
    }

    /// Whether the last chunk and its trailers were read.
    pub(crate) fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }
}

fn parse_size(line: &[u8]) -> Result<usize, Fault> {
    let malformed = || Fault::bad("OpenAI stream contained malformed transport data");
    let text = std::str::from_utf8(line).map_err(|_| malformed())?;
    let digits = text.split(';').next().unwrap_or_default().trim();
    if digits.is_empty() || digits.len() > 15 {
        return Err(malformed());
    }
    usize::from_str_radix(digits, 16).map_err(|_| malformed())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "tok";

    fn head(lines: &[&str]) -> Vec<u8> {
        let mut text = lines.join("\r\n");
        text.push_str("\r\n\r\n");
        text.into_bytes()
    }

    fn good() -> Vec<&'static str> {
        vec![
            "POST /openai-stream HTTP/1.1",
            "Host: 127.0.0.1:1",
            "Authorization: Bearer tok",
            "Content-Type: application/x-ndjson",
            "Transfer-Encoding: chunked",
            "Expect: 100-continue",
        ]
    }

    fn status(lines: &[&str]) -> u16 {
        match check_head(&head(lines), TOKEN) {
            Ok(_) => 100,
            Err(fault) => fault.status.0,
        }
    }

    #[test]
    fn heads_are_checked_in_order() {
        let bytes = head(&good());
        assert_eq!(check_head(&bytes, TOKEN), Ok(Head::Accepted(bytes.len())));
        assert_eq!(check_head(&bytes[..20], TOKEN), Ok(Head::Partial));
        let with = |index: usize, line: &'static str| {
            let mut lines = good();
            lines[index] = line;
            status(&lines)
        };
        assert_eq!(with(0, "GET /openai-stream HTTP/1.1"), 404);
        assert_eq!(with(0, "POST /other HTTP/1.1"), 404);
        assert_eq!(with(0, "POST /openai-stream?x=1 HTTP/1.1"), 100);
        assert_eq!(with(2, "Authorization: Bearer nope"), 401);
        assert_eq!(with(2, "Authorization: Bearer tok2"), 401);
        assert_eq!(with(3, "Content-Type: application/json"), 415);
        assert_eq!(
            with(3, "Content-Type: application/x-ndjson; charset=utf-8"),
            100
        );
        assert_eq!(with(4, "Transfer-Encoding: gzip"), 411);
        assert_eq!(with(4, "Transfer-Encoding: gzip, chunked"), 100);
        assert_eq!(with(5, "Expect: nothing"), 417);
        // A bad path is reported before a bad token.
        let mut lines = good();
        lines[0] = "POST /x HTTP/1.1";
        lines[2] = "Authorization: none";
        assert_eq!(status(&lines), 404);
        assert_eq!(
            check_head(b"\x01\x02 nonsense\r\n\r\n", TOKEN)
                .unwrap_err()
                .status,
            BAD_REQUEST
        );
    }

    #[test]
    fn chunked_bodies_decode_across_reads() {
        let wire = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n";
        for split in 0..wire.len() {
            let mut decoder = Chunked::default();
            let mut body = Vec::new();
            let mut pending = wire[..split].to_vec();
            let used = decoder.decode(&pending, &mut body).unwrap();
            pending.drain(..used);
            pending.extend_from_slice(&wire[split..]);
            let used = decoder.decode(&pending, &mut body).unwrap();
            assert_eq!(used, pending.len(), "split at {split}");
            assert!(decoder.is_done());
            assert_eq!(body, b"hello world");
        }
        let mut body = Vec::new();
        assert!(Chunked::default().decode(b"zz\r\n", &mut body).is_err());
        assert!(Chunked::default().decode(b"1\r\nabc", &mut body).is_err());
    }

    #[test]
    fn responses_close_the_connection() {
        assert_eq!(CONTINUE.response(), b"HTTP/1.1 100 Continue\r\n\r\n");
        let text = String::from_utf8(CONFLICT.response()).unwrap();
        assert!(text.starts_with("HTTP/1.1 409 "));
        assert!(text.contains("Connection: close"));
    }
}
