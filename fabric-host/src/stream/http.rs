//! What the OpenAI stream listener's HTTP means: the request head checked in upstream's
//! order, and its answers. Pure code: the reactor's HTTP driver parses and frames.

use fabric_config::stream::OPENAI_STREAM_PATH;
use fabric_reactor::http::{ChunkedError, Request, constant_time_eq};

/// An HTTP answer of the listener (status and reason phrase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Status(pub u16, pub &'static str);

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
    /// The response bytes: a final status with `Content-Length: 0` and
    /// `Connection: close`.
    pub(crate) fn response(self) -> Vec<u8> {
        let Status(code, reason) = self;
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

impl From<ChunkedError> for Fault {
    fn from(error: ChunkedError) -> Fault {
        match error {
            ChunkedError::Terminator => Fault::bad("Invalid OpenAI stream chunk terminator"),
            ChunkedError::Malformed => {
                Fault::bad("OpenAI stream contained malformed transport data")
            }
        }
    }
}

/// Checks a request head against the stream's rules, in upstream's order: method and path
/// (404), bearer token (401), NDJSON content type (415), chunked transfer coding (411),
/// `Expect: 100-continue` (417).
pub(crate) fn check_head(request: &Request, token: &str) -> Result<(), Fault> {
    if request.method() != "POST" || request.path() != OPENAI_STREAM_PATH {
        return Err(Fault::new(NOT_FOUND, "Unknown OpenAI stream endpoint"));
    }
    let header = |name: &str| request.header(name).unwrap_or_default();
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
    if !request.is_chunked() {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "tok";

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
        let mut text = lines.join("\r\n");
        text.push_str("\r\n\r\n");
        let request = Request::parse(text.as_bytes())
            .expect("valid head")
            .expect("complete head")
            .0;
        match check_head(&request, TOKEN) {
            Ok(()) => 100,
            Err(fault) => fault.status.0,
        }
    }

    #[test]
    fn heads_are_checked_in_order() {
        assert_eq!(status(&good()), 100);
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
    }

    #[test]
    fn responses_close_the_connection() {
        assert_eq!(
            fabric_reactor::http::CONTINUE,
            b"HTTP/1.1 100 Continue\r\n\r\n"
        );
        let text = String::from_utf8(CONFLICT.response()).unwrap();
        assert!(text.starts_with("HTTP/1.1 409 "));
        assert!(text.contains("Connection: close"));
    }
}
