//! Request heads: found in the bytes read so far, bounded, parsed with `httparse` into an
//! owned [`Request`]. Pure code.

use super::Reject;
use super::body::Framing;

/// Longest accepted request head (request line and headers).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most header lines accepted in one head.
pub const MAX_HEADERS: usize = 64;

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    method: String,
    target: String,
    /// HTTP/1.`minor`.
    minor: u8,
    headers: Vec<(String, Vec<u8>)>,
}

/// The head at the start of `buf`: `Ok(None)` while incomplete, else the request and the
/// head's length in bytes.
pub(super) fn parse(buf: &[u8]) -> Result<Option<(Request, usize)>, Reject> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let end = match request.parse(buf) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return Err(Reject::TooLarge);
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(Reject::TooLarge),
        Err(_) => return Err(Reject::Malformed),
    };
    if end > MAX_HEAD_BYTES {
        return Err(Reject::TooLarge);
    }
    let parsed = Request {
        method: request.method.unwrap_or_default().to_owned(),
        target: request.path.unwrap_or_default().to_owned(),
        minor: request.version.unwrap_or(1),
        headers: request
            .headers
            .iter()
            .map(|h| (h.name.to_owned(), h.value.to_vec()))
            .collect(),
    };
    Ok(Some((parsed, end)))
}

impl Request {
    /// The head at the start of `buf`: `Ok(None)` while incomplete, else the request and
    /// the head's length in bytes (what the driver does with every connection's input).
    pub fn parse(buf: &[u8]) -> Result<Option<(Request, usize)>, Reject> {
        parse(buf)
    }

    /// The method (`GET`, `POST`, ...).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request target's path (before `?`), undecoded.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The raw query (after `?`, empty without one).
    pub fn query(&self) -> &str {
        self.target.split_once('?').map_or("", |(_, query)| query)
    }

    /// The last value of a header (a name is matched ignoring case, as a dictionary built
    /// line by line would keep it), trimmed, decoded as UTF-8 (lossily).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .rev()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| String::from_utf8_lossy(value).trim().to_owned())
    }

    /// Every header line in order: name as sent, raw value (what a forwarding service
    /// passes on).
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_slice()))
    }

    /// Whether the last transfer coding is `chunked`.
    pub fn is_chunked(&self) -> bool {
        self.header("transfer-encoding").is_some_and(|value| {
            value
                .split(',')
                .map(str::trim)
                .rfind(|coding| !coding.is_empty())
                .is_some_and(|coding| coding.eq_ignore_ascii_case("chunked"))
        })
    }

    /// The body's framing: chunked, else `Content-Length` (0 without it); `None` when the
    /// length is not a number.
    pub fn framing(&self) -> Option<Framing> {
        if self.is_chunked() {
            return Some(Framing::Chunked);
        }
        match self.header("content-length") {
            None => Some(Framing::Length(0)),
            Some(value) => value.parse::<usize>().ok().map(Framing::Length),
        }
    }

    /// Whether the request carries `Expect: 100-continue`.
    pub fn expects_continue(&self) -> bool {
        self.header("expect")
            .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"))
    }

    /// Whether the client asked to keep the connection explicitly: `Connection:
    /// keep-alive` (an HTTP/1.1 client that sends `Connection: close` never is). The
    /// services that answer `connection: keep-alive` only to such clients use this; see
    /// [`Request::is_persistent`] for HTTP/1.1's default.
    pub fn asks_keep_alive(&self) -> bool {
        self.has_connection_token("keep-alive") && !self.has_connection_token("close")
    }

    /// Whether the connection persists after this request by HTTP's rules: HTTP/1.1 without
    /// `Connection: close` (persistent by default, as httpx and the model SDKs expect), or
    /// HTTP/1.0 with `Connection: keep-alive`.
    pub fn is_persistent(&self) -> bool {
        if self.minor >= 1 {
            !self.has_connection_token("close")
        } else {
            self.asks_keep_alive()
        }
    }

    /// Whether a `Connection` header lists `token` (ignoring case).
    fn has_connection_token(&self, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case("connection"))
            .flat_map(|(_, value)| value.split(|&byte| byte == b','))
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    }

    /// The HTTP minor version (`1` for HTTP/1.1).
    pub fn minor_version(&self) -> u8 {
        self.minor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(lines: &[&str]) -> Vec<u8> {
        let mut text = lines.join("\r\n");
        text.push_str("\r\n\r\n");
        text.into_bytes()
    }

    #[test]
    fn heads_parse_with_their_framing() {
        let bytes = head(&[
            "POST /a/b?x=1&y HTTP/1.1",
            "Transfer-Encoding: gzip, chunked",
            "content-length: 5",
            "Expect: 100-continue",
            "Connection: Keep-Alive",
            "X: 1",
            "x: 2",
        ]);
        let (request, end) = parse(&bytes).unwrap().unwrap();
        assert_eq!(end, bytes.len());
        assert_eq!(request.method(), "POST");
        assert_eq!((request.path(), request.query()), ("/a/b", "x=1&y"));
        assert_eq!(request.header("X").as_deref(), Some("2"));
        assert_eq!(request.framing(), Some(Framing::Chunked));
        assert!(request.expects_continue() && request.asks_keep_alive());
        assert_eq!(parse(&bytes[..20]), Ok(None));
        let (plain, _) = parse(&head(&["GET / HTTP/1.0", "Content-Length: 7"]))
            .unwrap()
            .unwrap();
        assert_eq!(plain.framing(), Some(Framing::Length(7)));
        assert!(!plain.asks_keep_alive() && !plain.is_persistent());
        let persistent = |lines: &[&str]| parse(&head(lines)).unwrap().unwrap().0.is_persistent();
        assert!(persistent(&["GET / HTTP/1.1"]));
        assert!(!persistent(&["GET / HTTP/1.1", "Connection: Close"]));
        assert!(!persistent(&[
            "GET / HTTP/1.1",
            "Connection: x",
            "connection: te, close"
        ]));
        assert!(persistent(&["GET / HTTP/1.0", "Connection: keep-alive"]));
        assert!(!persistent(&["GET / HTTP/1.0"]));
        let (bad, _) = parse(&head(&["GET / HTTP/1.1", "Content-Length: x"]))
            .unwrap()
            .unwrap();
        assert_eq!(bad.framing(), None);
    }

    #[test]
    fn bad_and_oversized_heads_are_rejected() {
        assert_eq!(parse(b"\x01\x02 nonsense\r\n\r\n"), Err(Reject::Malformed));
        let long = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert_eq!(parse(&long), Err(Reject::TooLarge));
        let many: Vec<String> = (0..=MAX_HEADERS).map(|i| format!("h{i}: v")).collect();
        let mut lines = vec!["GET / HTTP/1.1"];
        lines.extend(many.iter().map(String::as_str));
        assert_eq!(parse(&head(&lines)), Err(Reject::TooLarge));
    }
}
