//! What the collector's HTTP means: endpoint matching as upstream's routes, the bearer
//! check, query decoding, and its responses (upstream's status lines, lowercase headers,
//! `{"detail": ...}` bodies). The transport is the reactor's HTTP driver. Pure code.

use fabric_reactor::http::constant_time_eq;

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

/// The first value of a query parameter.
pub(crate) fn query<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
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

    /// `{"detail": …, "code": …}`: an answer of ours with a stable code.
    pub(crate) fn code(status: u16, detail: &str, code: &str) -> Answer {
        Answer::json(
            status,
            &serde_json::json!({ "detail": detail, "code": code }),
        )
    }

    pub(crate) fn text(status: u16, text: &str) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: text.as_bytes().to_vec(),
            extra: "",
        }
    }

    pub(crate) fn bad_request() -> Answer {
        Answer::text(400, "Bad Request")
    }

    pub(crate) fn unauthorized() -> Answer {
        Answer {
            extra: "www-authenticate: Bearer\r\n",
            ..Answer::detail(401, "Unauthorized")
        }
    }

    /// The response; `keep_alive` answers `connection: keep-alive` (the client asked for
    /// it), else `connection: close`.
    pub(crate) fn bytes(&self, keep_alive: bool) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        if !self.content_type.is_empty() {
            head.push_str(&format!("content-type: {}\r\n", self.content_type));
        }
        head.push_str(self.extra);
        let connection = if keep_alive { "keep-alive" } else { "close" };
        head.push_str(&format!(
            "content-length: {}\r\nconnection: {connection}\r\n\r\n",
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
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Upstream's routes: path first (404), then method (405).
pub(crate) fn route(method: &str, path: &str) -> Result<Endpoint, Answer> {
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
pub(crate) fn bearer_matches(value: &str, token: &str) -> bool {
    let mut parts = value.splitn(2, char::is_whitespace);
    let scheme = parts.next().unwrap_or_default();
    let given = parts.next().unwrap_or_default().trim();
    scheme.eq_ignore_ascii_case("bearer")
        && given.is_ascii()
        && constant_time_eq(given.as_bytes(), token.as_bytes())
}

/// The decoded `key=value` pairs of a raw query.
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_upstream() {
        let status = |line: &str| {
            let mut parts = line.split(' ');
            let (method, path) = (parts.next().unwrap(), parts.next().unwrap());
            let path = path.split('?').next().unwrap();
            match route(method, path) {
                Ok(_) => 0,
                Err(answer) => answer.status,
            }
        };
        assert_eq!(status("GET /healthz HTTP/1.1"), 0);
        assert_eq!(status("POST /healthz HTTP/1.1"), 405);
        assert_eq!(status("GET /nope HTTP/1.1"), 404);
        assert_eq!(status("GET /v1/stream/ HTTP/1.1"), 404);
        assert_eq!(status("GET /v1/stream/a/b HTTP/1.1"), 404);
        assert_eq!(status("DELETE /v1/stream/a HTTP/1.1"), 405);
        assert_eq!(status("GET /v1/atof HTTP/1.1"), 405);
        let endpoint = route("DELETE", "/v1/deregister-request/a%20b").unwrap();
        assert_eq!(endpoint, Endpoint::Deregister("a b".into()));
        let pairs = parse_query("remove_queue=true");
        assert_eq!(query(&pairs, "remove_queue"), Some("true"));
        assert!(bearer_matches("bearer t", "t"));
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
        let text = String::from_utf8(Answer::unauthorized().bytes(false)).unwrap();
        assert!(text.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{text}");
        assert!(text.contains("www-authenticate: Bearer\r\n"));
        assert!(text.ends_with("connection: close\r\n\r\n{\"detail\":\"Unauthorized\"}"));
        let mut out = Vec::new();
        chunk("{}", &mut out);
        assert_eq!(out, b"3\r\n{}\n\r\n");
        assert_eq!(percent_decode("a%2Fb+c%zz", true), "a/b c%zz");
        let kept = String::from_utf8(Answer::empty(204).bytes(true)).unwrap();
        assert!(kept.ends_with("connection: keep-alive\r\n\r\n"), "{kept}");
    }
}
