//! Response heads and whole answers: every answer carries the page's security headers.

use serde::Serialize;

/// The Content-Security-Policy of every answer: only the page's own files and API.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// A response head: status line, the security headers, `content-type`, `content-length`,
/// `extra` header lines (each ending in CRLF), `connection: close` unless `keep_alive`.
pub(crate) fn head(
    status: u16,
    content_type: &str,
    length: u64,
    extra: &str,
    keep_alive: bool,
) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n\
         content-security-policy: {CONTENT_SECURITY_POLICY}\r\n\
         x-content-type-options: nosniff\r\nreferrer-policy: no-referrer\r\n\
         cache-control: no-store\r\n{extra}{}\r\n",
        reason(status),
        if keep_alive {
            ""
        } else {
            "connection: close\r\n"
        },
    )
    .into_bytes()
}

/// A whole answer: head and body.
pub(crate) fn whole(status: u16, content_type: &str, body: &[u8], keep_alive: bool) -> Vec<u8> {
    let mut bytes = head(status, content_type, body.len() as u64, "", keep_alive);
    bytes.extend_from_slice(body);
    bytes
}

/// A JSON answer.
pub(crate) fn json<T: Serialize>(status: u16, value: &T, keep_alive: bool) -> Vec<u8> {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    whole(status, "application/json", &body, keep_alive)
}

/// A JSON error answer `{"error": {"status", "message"}}`.
pub(crate) fn error(status: u16, message: &str, keep_alive: bool) -> Vec<u8> {
    json(
        status,
        &serde_json::json!({"error": {"status": status, "message": message}}),
        keep_alive,
    )
}
