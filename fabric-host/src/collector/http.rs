//! The part of HTTP/1.1 the collector speaks: request heads (parsed with `httparse`),
//! endpoint matching as upstream's routes, the bearer check, and responses. Every response
//! closes its connection. Pure code.

/// Longest accepted request head.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;
/// Longest JSON body a control endpoint reads.
pub(crate) const MAX_CONTROL_BODY: usize = 64 * 1024;

/// Which endpoint a request addressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Healthz,
    Register,
    Stream(String),
    Deregister(String),
    Atof,
    Stats,
}

/// How the request body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Length(usize),
    Chunked,
}

/// A parsed, routed request head.
#[derive(Debug)]
pub(crate) struct Request {
    pub endpoint: Endpoint,
    pub query: Vec<(String, String)>,
    pub authorized: bool,
    pub framing: Framing,
    pub expect_continue: bool,
    /// Bytes of the head (the body starts there).
    pub head_len: usize,
}

impl Request {
    /// The first value of a query parameter.
    pub(crate) fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A finished answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub extra: &'static str,
}

impl Answer {
    pub(crate) fn empty(status: u16) -> Answer {
        Answer {
            status,
            content_type: "",
            body: Vec::new(),
            extra: "",
        }
    }

    pub(crate) fn json(status: u16, value: &serde_json::Value) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
            extra: "",
        }
    }

    /// `{"detail": …}`, upstream's error body.
    pub(crate) fn detail(status: u16, detail: &str) -> Answer {
        Answer::json(status, &serde_json::json!({ "detail": detail }))
    }

    pub(crate) fn text(status: u16, text: &str) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: text.as_bytes().to_vec(),
            extra: "",
        }
    }

    pub(crate) fn unauthorized() -> Answer {
        Answer {
            extra: "www-authenticate: Bearer\r\n",
            ..Answer::detail(401, "Unauthorized")
        }
    }

    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        if !self.content_type.is_empty() {
            head.push_str(&format!("content-type: {}\r\n", self.content_type));
        }
        head.push_str(self.extra);
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            self.body.len()
        ));
        let mut out = head.into_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// The head of a streamed NDJSON answer (chunked).
pub(crate) fn stream_head() -> &'static [u8] {
    b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\n\
      transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
}

/// One NDJSON record as a chunk (the record and its newline).
pub(crate) fn chunk(record: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("{:x}\r\n", record.len() + 1).as_bytes());
    out.extend_from_slice(record.as_bytes());
    out.extend_from_slice(b"\n\r\n");
}

/// The last chunk.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Payload Too Large",
        _ => "Error",
    }
}

/// Parses a head: `Ok(None)` while incomplete, `Err(answer)` for what is answered before
/// any body (malformed 400, unknown route 404, wrong method 405). Authorization is
/// reported, not enforced, so the caller answers in upstream's order.
pub(crate) fn parse_head(buf: &[u8], token: &str) -> Result<Option<Request>, Answer> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head_len = match request.parse(buf) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return Err(Answer::text(400, "Bad Request"));
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(Answer::text(400, "Bad Request")),
    };
    let target = request.path.unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let method = request.method.unwrap_or_default();
    let endpoint = route(method, path)?;
    let header = |name: &str| -> Option<String> {
        request
            .headers
            .iter()
            .rev()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
    };
    let authorized = header("authorization").is_some_and(|value| bearer_matches(&value, token));
    let chunked = header("transfer-encoding").is_some_and(|value| {
        value
            .split(',')
            .map(str::trim)
            .rfind(|c| !c.is_empty())
            .is_some_and(|c| c.eq_ignore_ascii_case("chunked"))
    });
    let framing = if chunked {
        Framing::Chunked
    } else {
        match header("content-length") {
            None => Framing::Length(0),
            Some(value) => match value.parse::<usize>() {
                Ok(length) => Framing::Length(length),
                Err(_) => return Err(Answer::text(400, "Bad Request")),
            },
        }
    };
    let expect_continue =
        header("expect").is_some_and(|value| value.eq_ignore_ascii_case("100-continue"));
    Ok(Some(Request {
        endpoint,
        query: parse_query(query),
        authorized,
        framing,
        expect_continue,
        head_len,
    }))
}

/// Upstream's routes: path first (404), then method (405).
fn route(method: &str, path: &str) -> Result<Endpoint, Answer> {
    let param = |prefix: &str| -> Option<String> {
        let rest = path.strip_prefix(prefix)?;
        (!rest.is_empty() && !rest.contains('/')).then(|| percent_decode(rest, false))
    };
    let (endpoint, allowed) = if path == "/healthz" {
        (Endpoint::Healthz, "GET")
    } else if path == "/v1/register" {
        (Endpoint::Register, "POST")
    } else if path == "/v1/atof" {
        (Endpoint::Atof, "POST")
    } else if path == "/v1/stats" {
        (Endpoint::Stats, "GET")
    } else if let Some(id) = param("/v1/stream/") {
        (Endpoint::Stream(id), "GET")
    } else if let Some(id) = param("/v1/deregister-request/") {
        (Endpoint::Deregister(id), "DELETE")
    } else {
        return Err(Answer::text(404, "Not Found"));
    };
    let head_ok = method == "HEAD" && allowed == "GET";
    if method != allowed && !head_ok {
        return Err(Answer {
            extra: match allowed {
                "GET" => "allow: GET, HEAD\r\n",
                "POST" => "allow: POST\r\n",
                _ => "allow: DELETE\r\n",
            },
            ..Answer::text(405, "Method Not Allowed")
        });
    }
    Ok(endpoint)
}

/// `Bearer <token>` (scheme case-insensitive), the token compared in constant time.
fn bearer_matches(value: &str, token: &str) -> bool {
    let mut parts = value.splitn(2, char::is_whitespace);
    let scheme = parts.next().unwrap_or_default();
    let given = parts.next().unwrap_or_default().trim();
    scheme.eq_ignore_ascii_case("bearer")
        && given.is_ascii()
        && constant_time_eq(given.as_bytes(), token.as_bytes())
}

/// Compares two byte strings in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &byte) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ byte);
    }
    diff == 0
}

fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key, true), percent_decode(value, true))
        })
        .collect()
}

/// Decodes `%XX` escapes (and `+` as a space in queries); invalid escapes stay as they are.
fn percent_decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let hex = |b: u8| char::from(b).to_digit(16);
        if byte == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
            continue;
        }
        out.push(if plus_is_space && byte == b'+' {
            b' '
        } else {
            byte
        });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Python's `bytes.strip()` whitespace (ASCII) removed from both ends.
pub(crate) fn strip(line: &[u8]) -> &[u8] {
    line.trim_ascii()
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
    fn routes_match_upstream() {
        let status = |line: &str| match parse_head(&head(&[line]), "t") {
            Ok(Some(_)) => 0,
            Ok(None) => 1,
            Err(answer) => answer.status,
        };
        assert_eq!(status("GET /healthz HTTP/1.1"), 0);
        assert_eq!(status("POST /healthz HTTP/1.1"), 405);
        assert_eq!(status("GET /nope HTTP/1.1"), 404);
        assert_eq!(status("GET /v1/stream/ HTTP/1.1"), 404);
        assert_eq!(status("GET /v1/stream/a/b HTTP/1.1"), 404);
        assert_eq!(status("DELETE /v1/stream/a HTTP/1.1"), 405);
        assert_eq!(status("GET /v1/atof HTTP/1.1"), 405);
        let request = parse_head(
            &head(&[
                "DELETE /v1/deregister-request/a%20b?remove_queue=true HTTP/1.1",
                "Authorization: bearer t",
            ]),
            "t",
        )
        .unwrap()
        .unwrap();
        assert_eq!(request.endpoint, Endpoint::Deregister("a b".into()));
        assert_eq!(request.query("remove_queue"), Some("true"));
        assert!(request.authorized);
    }

    #[test]
    fn bearer_tokens_compare_exactly() {
        assert!(bearer_matches("Bearer tok", "tok"));
        assert!(bearer_matches("BEARER   tok", "tok"));
        assert!(!bearer_matches("Bearer tok2", "tok"));
        assert!(!bearer_matches("Bearer to", "tok"));
        assert!(!bearer_matches("Basic tok", "tok"));
        assert!(!bearer_matches("tok", "tok"));
    }

    #[test]
    fn answers_close_and_chunks_frame() {
        let text = String::from_utf8(Answer::unauthorized().bytes()).unwrap();
        assert!(text.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{text}");
        assert!(text.contains("www-authenticate: Bearer\r\n"));
        assert!(text.ends_with("connection: close\r\n\r\n{\"detail\":\"Unauthorized\"}"));
        let mut out = Vec::new();
        chunk("{}", &mut out);
        assert_eq!(out, b"3\r\n{}\n\r\n");
        assert_eq!(percent_decode("a%2Fb+c%zz", true), "a/b c%zz");
    }
}
