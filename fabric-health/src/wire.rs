//! The health endpoint protocol: the endpoint file, the request and response lines, the
//! canonical JSON the MACs cover, and the bounds both sides enforce.
//!
//! # Endpoint file
//! The adapter host writes `health.endpoint.json` under its `FABRIC_HOME`, atomically (temp
//! file + rename) with mode 0600. Two schema versions exist and the client reads both:
//!
//! ```json
//! {"schema_version":"fabric.health-endpoint/v2","transport":"unix",
//!  "socket":"/dev/shm/fabric-runtime-…/.fabric/runtime-…/health-0f1e2d3c4b5a6978.sock",
//!  "pid":4242,"secret":"<64 lowercase hex digits: 32 random bytes>"}
//! {"schema_version":"fabric.health-endpoint/v1","host":"127.0.0.1","port":40123,
//!  "pid":4242,"secret":"<64 lowercase hex digits: 32 random bytes>"}
//! ```
//! v2 with `"transport":"unix"` names an absolute unix-domain socket path inside the 0700
//! `FABRIC_HOME` (the default); v1 (and v2 with `"transport":"tcp"`, `host`, `port`) a
//! loopback TCP listener. Listeners write TCP endpoints as v1 so older cores still read them.
//! The MAC key is the 32 decoded secret bytes. The client opens the file with `O_NOFOLLOW`
//! and rejects files that are not regular, not owned by its uid, accessible to group or
//! others, hosts other than a loopback literal, relative socket paths and secrets that are
//! not 64 hex digits.
//!
//! # Request (core → host), one line per connection
//! ```json
//! {"budget_ms":2996,"issued_at_ms":1796040000123,"kind":"fabric.health/request",
//!  "level":"ready","mac":"<hex>","nonce":"<64 hex>","v":1}
//! ```
//! `mac` = lowercase hex of HMAC-SHA256(key, canonical(request without `mac`)). `nonce` is 32
//! fresh random bytes; `budget_ms` the remaining check budget, which the host applies to its
//! probes; `issued_at_ms` Unix milliseconds. The host drops (closes without answering) any
//! request that is malformed, has a wrong MAC, repeats a nonce it has seen, or is older than
//! [`FRESHNESS_WINDOW_MS`].
//!
//! # Response (host → core), one line
//! ```json
//! {"kind":"fabric.health/response","mac":"<hex>","nonce":"<the request's nonce>",
//!  "observations":[{"level":"live","observed_at":"2026-11-30T12:00:00.001Z",
//!                   "outcome":"passed","reason":null,"source_id":"scripted:process"}],
//!  "pid":4242,"v":1}
//! ```
//! `mac` covers canonical(response without `mac`), so it is bound to the request's nonce; the
//! `kind` strings keep a request from being reflected as a response. Observations run in level
//! order, stop at the first one that does not pass, and never go past the requested level.
//!
//! # Canonical JSON
//! [`JsonStyle::CANONICAL_UTF8`](fabric_config::canonical::JsonStyle::CANONICAL_UTF8): object
//! keys sorted by code point, no whitespace (`,` and `:` separators), strings escaped as JSON
//! requires (`"`, `\\`, control characters; `\b \f \n \r \t` short forms, other controls as
//! `\u00xx`; everything else literal UTF-8). Only strings, integers, booleans, null, arrays and
//! objects appear (floats would be written like Python's `repr`). This equals Python's
//! `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.

use fabric_config::canonical::{JsonStyle, to_json_string};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Sha256;

/// File name of the endpoint file under `FABRIC_HOME`.
pub const ENDPOINT_FILE_NAME: &str = "health.endpoint.json";
/// `schema_version` of a TCP endpoint file (also read: [`ENDPOINT_SCHEMA_VERSION_V2`]).
pub const ENDPOINT_SCHEMA_VERSION: &str = "fabric.health-endpoint/v1";
/// `schema_version` of an endpoint file that names its transport (unix socket or TCP).
pub const ENDPOINT_SCHEMA_VERSION_V2: &str = "fabric.health-endpoint/v2";
/// `transport` of a unix-domain socket endpoint.
pub const TRANSPORT_UNIX: &str = "unix";
/// `transport` of a loopback TCP endpoint.
pub const TRANSPORT_TCP: &str = "tcp";
/// `kind` of a request line.
pub const REQUEST_KIND: &str = "fabric.health/request";
/// `kind` of a response line.
pub const RESPONSE_KIND: &str = "fabric.health/response";
/// Protocol version (`v`).
pub const PROTOCOL_VERSION: u64 = 1;
/// Largest accepted endpoint file.
pub const MAX_ENDPOINT_FILE_BYTES: u64 = 4096;
/// Largest accepted request line (newline included).
pub const MAX_REQUEST_BYTES: usize = 4096;
/// Largest accepted response line (newline included).
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// Requests whose `issued_at_ms` is further than this from the host's clock are dropped.
pub const FRESHNESS_WINDOW_MS: u64 = 60_000;
/// Largest `budget_ms` a host honours (one day).
pub const MAX_BUDGET_MS: u64 = 86_400_000;
/// Longest accepted reason (snake_case, `[a-z][a-z0-9_]*`).
pub const MAX_REASON_LEN: usize = 64;
/// Longest accepted evidence source id (`[A-Za-z0-9._:/-]+`).
pub const MAX_SOURCE_ID_LEN: usize = 128;

type HmacSha256 = Hmac<Sha256>;

/// The endpoint file's content (v1 or v2; see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointFile {
    /// [`ENDPOINT_SCHEMA_VERSION`] (TCP) or [`ENDPOINT_SCHEMA_VERSION_V2`].
    pub schema_version: String,
    /// v2 only: [`TRANSPORT_UNIX`] or [`TRANSPORT_TCP`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// TCP: the loopback literal the listener is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// TCP: the listener port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Unix: absolute path of the listening socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    /// Host process id.
    pub pid: u32,
    /// 64 lowercase hex digits (32 random bytes); the MAC key.
    pub secret: String,
}

/// Where a listener is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointAddr {
    /// A unix-domain socket (absolute path).
    Unix(std::path::PathBuf),
    /// A loopback TCP address.
    Tcp(std::net::SocketAddr),
}

impl EndpointFile {
    /// A v1 file for a TCP listener on `addr`.
    pub fn tcp(addr: std::net::SocketAddr, pid: u32, secret: &Secret) -> EndpointFile {
        EndpointFile {
            schema_version: ENDPOINT_SCHEMA_VERSION.to_owned(),
            transport: None,
            host: Some(addr.ip().to_string()),
            port: Some(addr.port()),
            socket: None,
            pid,
            secret: secret.to_hex(),
        }
    }

    /// A v2 file for a unix-domain socket listener at `socket` (absolute).
    pub fn unix(socket: &std::path::Path, pid: u32, secret: &Secret) -> EndpointFile {
        EndpointFile {
            schema_version: ENDPOINT_SCHEMA_VERSION_V2.to_owned(),
            transport: Some(TRANSPORT_UNIX.to_owned()),
            host: None,
            port: None,
            socket: Some(socket.to_string_lossy().into_owned()),
            pid,
            secret: secret.to_hex(),
        }
    }

    /// The address this file names, if the file is well-formed: a known schema version,
    /// a loopback literal and non-zero port for TCP, an absolute socket path for unix, and
    /// no fields of the other transport.
    pub fn addr(&self) -> Option<EndpointAddr> {
        let transport = match (self.schema_version.as_str(), self.transport.as_deref()) {
            (ENDPOINT_SCHEMA_VERSION, None) => TRANSPORT_TCP,
            (ENDPOINT_SCHEMA_VERSION_V2, Some(t @ (TRANSPORT_TCP | TRANSPORT_UNIX))) => t,
            _ => return None,
        };
        if transport == TRANSPORT_UNIX {
            let path = std::path::PathBuf::from(self.socket.as_deref()?);
            let ok = self.host.is_none() && self.port.is_none() && path.is_absolute();
            return ok.then_some(EndpointAddr::Unix(path));
        }
        let host: std::net::IpAddr = self.host.as_deref()?.parse().ok()?;
        let port = self.port.filter(|p| *p != 0)?;
        (host.is_loopback() && self.socket.is_none())
            .then_some(EndpointAddr::Tcp(std::net::SocketAddr::new(host, port)))
    }
}

/// A 32-byte MAC key.
#[derive(Clone)]
pub struct Secret([u8; 32]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// 32 fresh random bytes from the OS.
    pub fn random() -> std::io::Result<Secret> {
        Ok(Secret(random_bytes()?))
    }

    /// Decodes 64 hex digits.
    pub fn from_hex(text: &str) -> Option<Secret> {
        if text.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(text, &mut out).ok()?;
        Some(Secret(out))
    }

    /// Lowercase hex.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Lowercase hex of HMAC-SHA256 over `message`.
    pub fn mac_hex(&self, message: &[u8]) -> String {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(message);
        hex::encode(mac.finalize().into_bytes())
    }

    /// Constant-time check of a hex MAC over `message`.
    pub fn verify_hex(&self, message: &[u8], mac_hex: &str) -> bool {
        let mut tag = [0u8; 32];
        if mac_hex.len() != 64 || hex::decode_to_slice(mac_hex, &mut tag).is_err() {
            return false;
        }
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(message);
        mac.verify_slice(&tag).is_ok()
    }
}

/// 32 random bytes from the OS.
pub fn random_bytes() -> std::io::Result<[u8; 32]> {
    let mut out = [0u8; 32];
    getrandom::fill(&mut out).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(out)
}

/// Canonical JSON text of `value` (see the module docs).
pub fn canonical(value: &Value) -> String {
    to_json_string(value, JsonStyle::CANONICAL_UTF8)
}

/// Adds `"mac"` to `body` and returns the line (newline included).
pub fn seal(secret: &Secret, mut body: Map<String, Value>) -> String {
    body.remove("mac");
    let value = Value::Object(body);
    let mac = secret.mac_hex(canonical(&value).as_bytes());
    let Value::Object(mut body) = value else {
        unreachable!("built as an object")
    };
    body.insert("mac".into(), Value::String(mac));
    let mut line = canonical(&Value::Object(body));
    line.push('\n');
    line
}

/// Parses one line as a JSON object and checks its `"mac"`; returns the object without the
/// mac on success. `Err(true)` = parsed but the MAC is wrong or missing; `Err(false)` = not a
/// JSON object.
pub fn open(secret: &Secret, line: &[u8]) -> Result<Map<String, Value>, bool> {
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(line) else {
        return Err(false);
    };
    let Some(Value::String(mac)) = body.remove("mac") else {
        return Err(true);
    };
    let value = Value::Object(body);
    if !secret.verify_hex(canonical(&value).as_bytes(), &mac) {
        return Err(true);
    }
    let Value::Object(body) = value else {
        unreachable!("built as an object")
    };
    Ok(body)
}

/// Whether `s` is a valid reason (`[a-z][a-z0-9_]*`, at most [`MAX_REASON_LEN`]).
pub fn valid_reason(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_REASON_LEN
        && s.as_bytes()[0].is_ascii_lowercase()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `s` is a valid evidence source id (`[A-Za-z0-9._:/-]+`, at most
/// [`MAX_SOURCE_ID_LEN`]).
pub fn valid_source_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_SOURCE_ID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:/-".contains(&b))
}

/// Whether `s` is 64 lowercase hex digits.
pub fn valid_nonce(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_sorts_and_escapes() {
        let v = json!({"b": [1, {"z": null, "a": true}], "a": "x\"\\\n\u{1}é", "c": -3});
        assert_eq!(
            canonical(&v),
            r#"{"a":"x\"\\\n\u0001é","b":[1,{"a":true,"z":null}],"c":-3}"#
        );
    }

    #[test]
    fn seal_open_round_trip_and_tamper() {
        let secret = Secret::from_hex(&"ab".repeat(32)).unwrap();
        let mut body = Map::new();
        body.insert("kind".into(), json!(REQUEST_KIND));
        body.insert("nonce".into(), json!("00".repeat(32)));
        let line = seal(&secret, body.clone());
        assert!(line.ends_with('\n'));
        assert_eq!(open(&secret, line.trim_end().as_bytes()).unwrap(), body);
        let tampered = line.replace(REQUEST_KIND, RESPONSE_KIND);
        assert_eq!(open(&secret, tampered.as_bytes()), Err(true));
        let other = Secret::from_hex(&"cd".repeat(32)).unwrap();
        assert_eq!(open(&other, line.as_bytes()), Err(true));
        assert_eq!(open(&secret, b"[1]"), Err(false));
        assert_eq!(open(&secret, br#"{"kind":"x"}"#), Err(true));
    }

    #[test]
    fn known_mac_vector() {
        // Cross-checked with Python: hmac.new(bytes(range(32)), b'{"a":1}', hashlib.sha256).
        let secret = Secret::from_hex(&hex::encode((0u8..32).collect::<Vec<_>>())).unwrap();
        assert_eq!(
            secret.mac_hex(br#"{"a":1}"#),
            "b4cebde30982443ec36c18fa99ad10a70e705bba779f57c37e84decb64ae50fb"
        );
    }

    #[test]
    fn validators() {
        assert!(valid_reason("probe_timeout"));
        assert!(!valid_reason("Probe"));
        assert!(!valid_reason("_x"));
        assert!(!valid_reason(&"a".repeat(65)));
        assert!(valid_source_id("scripted:process/v1.2-x_y"));
        assert!(!valid_source_id("a b"));
        assert!(!valid_source_id(""));
        assert!(valid_nonce(&"0f".repeat(32)));
        assert!(!valid_nonce(&"0F".repeat(32)));
        assert!(Secret::from_hex("zz").is_none());
        assert_eq!(
            format!("{:?}", Secret::from_hex(&"ab".repeat(32)).unwrap()),
            "Secret(<redacted>)"
        );
    }
}
