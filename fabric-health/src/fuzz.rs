//! Fuzzing hooks (not API; `fuzz/` and `fabric-fuzz` call them): the health wire decoders
//! as the client and the listener run them, with a fixed MAC key so the fuzzer also reaches
//! the checks behind the MAC.

use fabric_config::health::{CheckRequest, HealthLevel};
use serde_json::Value;

use crate::wire::{self, EndpointFile, Secret};
use crate::{client, listener};

/// The fixed MAC key of the harness (not a secret: it authenticates fuzz input only).
const KEY_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// Feeds `data` to every health wire decoder: the endpoint file, one request or response line
/// with its MAC as given, and the same body sealed with the key (so the request and response
/// rules run). Panics only on a bug: a line sealed here must open again.
pub fn wire(data: &[u8]) {
    if let Ok(file) = serde_json::from_slice::<EndpointFile>(data) {
        let _ = file.addr();
        let _ = Secret::from_hex(&file.secret);
    }
    let Some(secret) = Secret::from_hex(KEY_HEX) else {
        unreachable!("the harness key is 64 hex digits")
    };
    if let Ok(body) = wire::open(&secret, data) {
        decode_body(&body);
    }
    let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let line = wire::seal(&secret, body);
    let opened = wire::open(&secret, line.trim_end().as_bytes());
    assert!(opened.is_ok(), "a sealed line must open with its key");
    if let Ok(body) = opened {
        decode_body(&body);
    }
}

/// Both sides' rules for an authenticated body: the listener's request check (at the
/// body's own issue time, so freshness passes) and the client's response check for every
/// level, against the body's own nonce and pid.
fn decode_body(body: &serde_json::Map<String, Value>) {
    let now_ms = body
        .get("issued_at_ms")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let _ = listener::decode_request(body, now_ms);
    let nonce = body.get("nonce").and_then(Value::as_str).unwrap_or("");
    let pid = body
        .get("pid")
        .and_then(Value::as_u64)
        .and_then(|pid| u32::try_from(pid).ok())
        .unwrap_or(0);
    for level in HealthLevel::ALL {
        let mut request = CheckRequest::runtime("runtime-fuzz");
        request.level = level;
        let _ = client::decode_response(body, nonce, pid, &request);
    }
}
