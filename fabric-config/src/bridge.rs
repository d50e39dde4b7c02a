//! The sandbox command bridge wire (interface version 2): one request line from
//! `fabric-agent-ctl start|invoke|stop|check` to the runtime server (`fabric-agent-ctl
//! serve`) over a private unix socket, and one response line back. Wire compatible with
//! upstream NeMo Fabric 0.5.0's bridge for `start`, `invoke` and `stop`; `check` is the
//! spec's server / runtime health check.
//!
//! Request: a JSON object with exactly the keys its operation takes —
//! `{interface_version: 2, operation, agent, runtime_id, config|input|request}`:
//!
//! | operation | keys besides `interface_version`, `operation` |
//! | --- | --- |
//! | `start` | `agent`, `config` (a FabricConfig whose `metadata.name` equals `agent`) |
//! | `invoke` | `agent`, `runtime_id`, and one of `input` (any JSON) or `request` (a RunRequest object) |
//! | `stop` | `agent`, `runtime_id` |
//! | `check` | optional `agent` + `runtime_id` (both or neither), optional `request` (`{level, timeout_seconds}`) |
//! | `exec` | `request` (an [`ExecRequest`](crate::environment_ops::ExecRequest): a caller's command run by the server where it runs) |
//!
//! Response: `{operation, status, changed, result, error}` where `status` is `succeeded`,
//! `failed` or `unsupported`, and `error` is `{code, stage, message, effects}` or null.
//! `effects` says what a failed call did: `none`, `applied` or `unknown` (the caller must not
//! replay a call whose effects are unknown).
//!
//! ```
//! use fabric_config::bridge::{self, Operation, Payload};
//!
//! let line = br#"{"interface_version":2,"operation":"stop","agent":"a","runtime_id":"runtime-1"}"#;
//! let request = bridge::parse_request(line).unwrap();
//! assert_eq!(request.operation, Operation::Stop);
//! assert!(matches!(request.payload, Payload::None));
//!
//! let duplicate = br#"{"interface_version":2,"interface_version":2,"operation":"stop"}"#;
//! let failure = bridge::parse_request(duplicate).unwrap_err();
//! assert_eq!(failure.code, "invalid_request");
//! assert_eq!(failure.field.as_deref(), Some("interface_version"));
//! ```

use crate::codes;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::health::HealthLevel;

/// The interface version every request carries.
pub const INTERFACE_VERSION: u64 = 2;
/// Largest request line, newline included (512 KiB).
pub const REQUEST_LIMIT: usize = 512 * 1024;
/// Largest response line, newline included (4 MiB), except `exec`'s.
pub const RESPONSE_LIMIT: usize = 4 * 1024 * 1024;
/// Largest response line of an `exec` (16 MiB): two output streams of at most 1 MiB each,
/// which JSON may spell in up to six bytes per byte.
pub const EXEC_RESPONSE_LIMIT: usize = 16 * 1024 * 1024;
/// The client's deadline for one call: connect, send and the whole response.
pub const CALL_SECONDS: u64 = 320;
/// The deadline for a complete request line (server) or stdin input (client).
pub const READ_SECONDS: u64 = 10;
/// Connections one runtime server serves at once; one more is answered `host_busy`
/// (nothing dispatched) and closed.
pub const MAX_CONNECTIONS: usize = 32;
/// How long the server may take to exit after SIGTERM / SIGINT.
pub const SHUTDOWN_SECONDS: u64 = 4;
/// The default socket path; `FABRIC_HOST_SOCKET` overrides it.
pub const DEFAULT_SOCKET: &str = "/sandbox/fabric.sock";
/// The environment variable naming the socket.
pub const SOCKET_ENV: &str = "FABRIC_HOST_SOCKET";
/// The lock file beside the socket (never removed).
pub const LOCK_FILE: &str = "fabric.lock";
/// The ownership marker beside the socket.
pub const UNCLEAN_FILE: &str = "fabric.unclean";

/// A bridge operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Start a runtime.
    Start,
    /// Invoke a runtime.
    Invoke,
    /// Stop a runtime.
    Stop,
    /// Check the server or one runtime.
    Check,
    /// Run a caller's command in the sandbox (its own process group, a deadline, bounded
    /// output): the environment operation `exec` of a provider environment.
    Exec,
    /// Run the server (a command only; never sent over the socket).
    Serve,
}

impl Operation {
    /// Every operation.
    pub const ALL: [Operation; 6] = [
        Operation::Start,
        Operation::Invoke,
        Operation::Stop,
        Operation::Check,
        Operation::Exec,
        Operation::Serve,
    ];

    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Start => "start",
            Operation::Invoke => "invoke",
            Operation::Stop => "stop",
            Operation::Check => "check",
            Operation::Exec => "exec",
            Operation::Serve => "serve",
        }
    }

    /// The operation spelled `text`.
    pub fn parse(text: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.as_str() == text)
    }

    /// Whether a call whose request was sent may have changed the sandbox.
    pub fn has_effects(self) -> bool {
        matches!(
            self,
            Operation::Start | Operation::Invoke | Operation::Stop | Operation::Exec
        )
    }

    /// The largest response line of this operation ([`EXEC_RESPONSE_LIMIT`] for `exec`,
    /// else [`RESPONSE_LIMIT`]).
    pub fn response_limit(self) -> usize {
        match self {
            Operation::Exec => EXEC_RESPONSE_LIMIT,
            _ => RESPONSE_LIMIT,
        }
    }
}

/// Where a bridge call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BridgeStage {
    /// The request (arguments, shape, routing).
    Request,
    /// The config or RunRequest.
    Validation,
    /// Runtime start.
    Start,
    /// Runtime stop.
    Stop,
    /// Invocation.
    Invoke,
    /// A caller's command (`exec`).
    Exec,
    /// The socket, its limits and deadlines.
    Transport,
}

/// What a failed call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effects {
    /// Nothing changed.
    None,
    /// The call's effects took place.
    Applied,
    /// Unknown: never replay the call.
    Unknown,
}

/// Response status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The SDK call completed (an invoke result may still say `failed`).
    Succeeded,
    /// The command failed; `error` says why.
    Failed,
    /// The server does not support the request.
    Unsupported,
}

/// The error of a failed response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeError {
    /// Registered code (`fabric_config::codes`).
    pub code: String,
    /// Where it failed.
    pub stage: BridgeStage,
    /// Fixed, safe text: never a config value, prompt or raw exception.
    pub message: String,
    /// What the failed call did.
    pub effects: Effects,
}

/// One response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    /// The request's operation, or `unknown`.
    pub operation: String,
    /// Outcome.
    pub status: Status,
    /// Whether the call changed the sandbox; null when unknown (invoke is always null).
    pub changed: Option<bool>,
    /// start: the runtime handle; invoke: the RunResult; stop: null; check: the CheckReport;
    /// exec: the ExecOutput.
    pub result: Value,
    /// Null when `status` is `succeeded`.
    pub error: Option<BridgeError>,
}

impl Response {
    /// A succeeded response.
    pub fn succeeded(operation: &str, changed: Option<bool>, result: Value) -> Response {
        Response {
            operation: operation.to_owned(),
            status: Status::Succeeded,
            changed,
            result,
            error: None,
        }
    }

    /// A failed (or, for `interface_unsupported`, unsupported) response.
    pub fn failed(operation: &str, failure: &Failure) -> Response {
        Response {
            operation: operation.to_owned(),
            status: if failure.code == codes::INTERFACE_UNSUPPORTED {
                Status::Unsupported
            } else {
                Status::Failed
            },
            changed: failure.changed,
            result: Value::Null,
            error: Some(BridgeError {
                code: failure.code.to_owned(),
                stage: failure.stage,
                message: failure.message(),
                effects: failure.effects,
            }),
        }
    }

    /// The response line (compact JSON + newline). A line over the operation's
    /// [`Operation::response_limit`] becomes a `response_too_large` failure with unknown
    /// effects.
    pub fn encode(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        let limit =
            Operation::parse(&self.operation).map_or(RESPONSE_LIMIT, Operation::response_limit);
        if line.len() <= limit && line.len() > 1 {
            return line;
        }
        let failure = Failure::new(codes::RESPONSE_TOO_LARGE, BridgeStage::Transport)
            .with_effects(None, Effects::Unknown);
        let mut line =
            serde_json::to_vec(&Response::failed(&self.operation, &failure)).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// A failure before or while serving a request: a registered code, the stage, the field it
/// concerns (named in the message, never its value), and the call's effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Registered code.
    pub code: &'static str,
    /// Where it failed.
    pub stage: BridgeStage,
    /// The request field or command flag concerned.
    pub field: Option<String>,
    /// `changed` of the response (default `Some(false)`).
    pub changed: Option<bool>,
    /// `effects` of the response (default `none`).
    pub effects: Effects,
}

impl Failure {
    /// A failure with no effects.
    pub fn new(code: &'static str, stage: BridgeStage) -> Failure {
        Failure {
            code,
            stage,
            field: None,
            changed: Some(false),
            effects: Effects::None,
        }
    }

    /// `invalid_request` at `request`, naming `field`.
    pub fn invalid(field: impl Into<String>) -> Failure {
        Failure::new(codes::INVALID_REQUEST, BridgeStage::Request).with_field(field)
    }

    /// Names the field concerned.
    pub fn with_field(mut self, field: impl Into<String>) -> Failure {
        self.field = Some(field.into());
        self
    }

    /// Sets `changed` and `effects`.
    pub fn with_effects(mut self, changed: Option<bool>, effects: Effects) -> Failure {
        self.changed = changed;
        self.effects = effects;
        self
    }

    /// The fixed message, with the field name when there is one.
    pub fn message(&self) -> String {
        let text = message(self.code);
        match &self.field {
            Some(field) => format!("{text} (field `{field}`)"),
            None => text.to_owned(),
        }
    }
}

/// The fixed text of a bridge code.
pub fn message(code: &str) -> &'static str {
    match code {
        codes::CLEANUP_UNCONFIRMED => {
            "cleanup of an earlier runtime in this sandbox is not confirmed; replace the sandbox"
        }
        codes::INVALID_REQUEST => "the bridge request is malformed",
        codes::INTERFACE_UNSUPPORTED => "this server speaks bridge interface version 2 only",
        codes::WRONG_AGENT => "the agent name does not match the runtime or the config",
        codes::VALIDATION_FAILED => "the config or run request was rejected",
        codes::VALIDATION_UNAVAILABLE => "the adapter's capabilities could not be verified",
        codes::START_FAILED => "the runtime could not be started; its effects are unknown",
        codes::STOP_FAILED => "the runtime did not stop cleanly",
        codes::INVOKE_FAILED => "the invocation did not produce a result",
        codes::HOST_STOPPING => "the runtime server is shutting down",
        codes::RUNTIME_UNAVAILABLE => "no running runtime has this id",
        codes::RUNTIME_EXISTS => "this sandbox cannot start another runtime",
        codes::HOST_UNAVAILABLE => "the runtime server socket is not reachable",
        codes::INVALID_RESPONSE => "the server's response is missing, malformed or truncated",
        codes::REQUEST_TOO_LARGE => "the request exceeds 512 KiB",
        codes::RESPONSE_TOO_LARGE => "the response exceeds 4 MiB; the call's effects are unknown",
        codes::INVALID_INPUT => "the input is not one UTF-8 JSON value within 512 KiB",
        codes::HOST_LOCK_HELD => "another runtime server holds this socket's lock",
        codes::HOST_BUSY => {
            "the runtime server is serving its maximum of 32 connections; nothing was dispatched"
        }
        codes::EXEC_FAILED => {
            "the program could not be started: it is missing or not executable, or the working directory is gone"
        }
        codes::PATH_REFUSED => {
            "the working directory is refused: a symbolic link or a special file is on its path"
        }
        codes::INVALID_ENVIRONMENT_REQUEST => "the exec request is malformed",
        _ => "the bridge call failed",
    }
}

/// What an invoke or check carries besides the identifiers.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// stop, or check without options.
    None,
    /// start: the config object.
    Config(Value),
    /// invoke: any JSON input.
    Input(Value),
    /// invoke: a RunRequest object; check: `{level, timeout_seconds}`.
    Request(Map<String, Value>),
}

/// A request that passed the shape rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The operation (never `serve`).
    pub operation: Operation,
    /// The agent name (`start`, `invoke`, `stop`; optional for `check`).
    pub agent: Option<String>,
    /// The runtime id (`invoke`, `stop`; optional for `check`).
    pub runtime_id: Option<String>,
    /// The operation's payload.
    pub payload: Payload,
}

impl Request {
    /// The request object (what [`parse_request`] accepts).
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("interface_version".into(), INTERFACE_VERSION.into());
        object.insert("operation".into(), self.operation.as_str().into());
        if let Some(agent) = &self.agent {
            object.insert("agent".into(), agent.clone().into());
        }
        if let Some(id) = &self.runtime_id {
            object.insert("runtime_id".into(), id.clone().into());
        }
        match &self.payload {
            Payload::None => {}
            Payload::Config(config) => {
                object.insert("config".into(), config.clone());
            }
            Payload::Input(input) => {
                object.insert("input".into(), input.clone());
            }
            Payload::Request(request) => {
                object.insert("request".into(), Value::Object(request.clone()));
            }
        }
        Value::Object(object)
    }

    /// The request line, or `request_too_large`.
    pub fn encode(&self) -> Result<Vec<u8>, Failure> {
        let mut line = serde_json::to_vec(&self.to_value()).unwrap_or_default();
        line.push(b'\n');
        if line.len() > REQUEST_LIMIT {
            return Err(Failure::new(codes::REQUEST_TOO_LARGE, BridgeStage::Request));
        }
        Ok(line)
    }
}

/// The operation named by a decoded request, for the response (`unknown` when none).
pub fn operation_name(value: &Value) -> &'static str {
    value
        .get("operation")
        .and_then(Value::as_str)
        .and_then(Operation::parse)
        .map_or("unknown", Operation::as_str)
}

/// Decodes one request line strictly (duplicate keys, NaN and trailing data rejected) and
/// checks its shape. The returned value is the decoded object (for the operation name on
/// failure).
pub fn parse_request(line: &[u8]) -> Result<Request, Failure> {
    let value = decode_strict(line).map_err(|error| Failure::invalid(error.field))?;
    validate_request(&value)
}

/// Checks the shape of a decoded request object.
pub fn validate_request(value: &Value) -> Result<Request, Failure> {
    let Some(object) = value.as_object() else {
        return Err(Failure::invalid("$"));
    };
    let operation = object
        .get("operation")
        .and_then(Value::as_str)
        .and_then(Operation::parse)
        .ok_or_else(|| Failure::invalid("operation"))?;
    match object.get("interface_version") {
        Some(Value::Number(n)) if n.as_u64() == Some(INTERFACE_VERSION) && n.is_u64() => {}
        _ => {
            return Err(
                Failure::new(codes::INTERFACE_UNSUPPORTED, BridgeStage::Request)
                    .with_field("interface_version"),
            );
        }
    }
    let mut allowed: Vec<&str> = vec!["interface_version", "operation"];
    let mut required: Vec<&str> = Vec::new();
    match operation {
        Operation::Start => required.extend(["agent", "config"]),
        Operation::Invoke => {
            required.extend(["agent", "runtime_id"]);
            match (object.contains_key("input"), object.contains_key("request")) {
                (true, false) => required.push("input"),
                (false, true) => required.push("request"),
                (true, true) => return Err(Failure::invalid("request")),
                (false, false) => return Err(Failure::invalid("input")),
            }
        }
        Operation::Stop => required.extend(["agent", "runtime_id"]),
        Operation::Exec => required.push("request"),
        Operation::Check => {
            allowed.extend(["agent", "runtime_id", "request"]);
            if object.contains_key("agent") != object.contains_key("runtime_id") {
                let missing = if object.contains_key("agent") {
                    "runtime_id"
                } else {
                    "agent"
                };
                return Err(Failure::invalid(missing));
            }
        }
        Operation::Serve => return Err(Failure::invalid("operation")),
    }
    allowed.extend(required.iter().copied());
    if let Some(missing) = required.iter().find(|key| !object.contains_key(**key)) {
        return Err(Failure::invalid(*missing));
    }
    if let Some(extra) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(Failure::invalid(extra.clone()));
    }
    let text = |key: &str| -> Result<Option<String>, Failure> {
        match object.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\0') => {
                Ok(Some(s.clone()))
            }
            Some(_) => Err(Failure::invalid(key)),
        }
    };
    let agent = text("agent")?;
    let runtime_id = text("runtime_id")?;
    let payload = match operation {
        Operation::Start => {
            let config = &object["config"];
            let Some(config_object) = config.as_object() else {
                return Err(Failure::invalid("config"));
            };
            let name = config_object
                .get("metadata")
                .and_then(Value::as_object)
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str);
            if name != agent.as_deref() {
                return Err(Failure::new(codes::WRONG_AGENT, BridgeStage::Request)
                    .with_field("config.metadata.name"));
            }
            Payload::Config(config.clone())
        }
        Operation::Invoke if object.contains_key("input") => {
            Payload::Input(object["input"].clone())
        }
        Operation::Invoke | Operation::Check | Operation::Exec => match object.get("request") {
            None => Payload::None,
            Some(Value::Object(request)) => Payload::Request(request.clone()),
            Some(_) => return Err(Failure::invalid("request")),
        },
        _ => Payload::None,
    };
    Ok(Request {
        operation,
        agent,
        runtime_id,
        payload,
    })
}

/// The health options of a `check` request: `{level?, timeout_seconds?}`.
pub fn check_options(payload: &Payload) -> Result<(Option<HealthLevel>, Option<f64>), Failure> {
    let Payload::Request(options) = payload else {
        return Ok((None, None));
    };
    if let Some(key) = options
        .keys()
        .find(|k| !matches!(k.as_str(), "level" | "timeout_seconds"))
    {
        return Err(Failure::invalid(format!("request.{key}")));
    }
    let level = match options.get("level") {
        None => None,
        Some(value) => Some(
            value
                .as_str()
                .and_then(HealthLevel::parse)
                .ok_or_else(|| Failure::invalid("request.level"))?,
        ),
    };
    let timeout = match options.get("timeout_seconds") {
        None => None,
        Some(value) => Some(
            value
                .as_f64()
                .filter(|t| t.is_finite() && *t > 0.0)
                .ok_or_else(|| Failure::invalid("request.timeout_seconds"))?,
        ),
    };
    Ok((level, timeout))
}

/// Why strict decoding failed: the path of the offending field (`$` for the document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictError {
    /// `a.b[2].c` style path, or `$`.
    pub field: String,
}

/// Decodes exactly one UTF-8 JSON value (surrounding whitespace allowed), rejecting
/// duplicate object keys (the error names the key's path) and non-standard numbers.
pub fn decode_strict(bytes: &[u8]) -> Result<Value, StrictError> {
    let text = std::str::from_utf8(bytes).map_err(|_| StrictError { field: "$".into() })?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let duplicate = std::cell::RefCell::new(None);
    let value = StrictSeed {
        path: String::new(),
        duplicate: &duplicate,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    match value {
        Ok(value) => Ok(value),
        Err(_) => Err(StrictError {
            field: duplicate.into_inner().unwrap_or_else(|| "$".into()),
        }),
    }
}

struct StrictSeed<'a> {
    path: String,
    duplicate: &'a std::cell::RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for StrictSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("non-finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictSeed {
            path: format!("{}[{}]", self.path, items.len()),
            duplicate: self.duplicate,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if object.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(path);
                return Err(de::Error::custom("duplicate key"));
            }
            let value = map.next_value_seed(StrictSeed {
                path,
                duplicate: self.duplicate,
            })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Request, Failure> {
        parse_request(text.as_bytes())
    }

    #[test]
    fn strict_decoding_names_duplicate_keys_and_rejects_nan() {
        assert_eq!(
            decode_strict(br#"{"a": {"b": 1, "b": 2}}"#)
                .unwrap_err()
                .field,
            "a.b"
        );
        assert_eq!(
            decode_strict(br#"{"a": [{"x": 1}, {"y": 1, "y": 1}]}"#)
                .unwrap_err()
                .field,
            "a[1].y"
        );
        assert!(decode_strict(b"NaN").is_err());
        assert!(decode_strict(br#"{"a": NaN}"#).is_err());
        assert!(decode_strict(b"1 2").is_err());
        assert_eq!(
            decode_strict(b" [1.5, null] \n").unwrap(),
            serde_json::json!([1.5, null])
        );
    }

    #[test]
    fn request_shapes() {
        let start = parse(
            r#"{"interface_version":2,"operation":"start","agent":"a","config":{"metadata":{"name":"a"}}}"#,
        )
        .unwrap();
        assert!(matches!(start.payload, Payload::Config(_)));
        let wrong = parse(
            r#"{"interface_version":2,"operation":"start","agent":"b","config":{"metadata":{"name":"a"}}}"#,
        )
        .unwrap_err();
        assert_eq!(wrong.code, "wrong_agent");
        let extra = parse(
            r#"{"interface_version":2,"operation":"stop","agent":"a","runtime_id":"r","x":1}"#,
        )
        .unwrap_err();
        assert_eq!(
            (extra.code, extra.field.as_deref()),
            ("invalid_request", Some("x"))
        );
        let both = parse(
            r#"{"interface_version":2,"operation":"invoke","agent":"a","runtime_id":"r","input":1,"request":{}}"#,
        )
        .unwrap_err();
        assert_eq!(both.code, "invalid_request");
        let version = parse(r#"{"interface_version":1,"operation":"stop"}"#).unwrap_err();
        assert_eq!(version.code, "interface_unsupported");
        let response = Response::failed("stop", &version);
        assert_eq!(response.status, Status::Unsupported);
        let half = parse(r#"{"interface_version":2,"operation":"check","agent":"a"}"#).unwrap_err();
        assert_eq!(half.field.as_deref(), Some("runtime_id"));
        let serve = parse(r#"{"interface_version":2,"operation":"serve"}"#).unwrap_err();
        assert_eq!(serve.field.as_deref(), Some("operation"));
        let exec =
            parse(r#"{"interface_version":2,"operation":"exec","request":{"argv":["true"]}}"#)
                .unwrap();
        assert!(matches!(exec.payload, Payload::Request(_)));
        let bare = parse(r#"{"interface_version":2,"operation":"exec"}"#).unwrap_err();
        assert_eq!(bare.field.as_deref(), Some("request"));
        let runtime = parse(
            r#"{"interface_version":2,"operation":"exec","runtime_id":"r","request":{"argv":["true"]}}"#,
        )
        .unwrap_err();
        assert_eq!(runtime.field.as_deref(), Some("runtime_id"));
    }

    #[test]
    fn requests_round_trip_and_oversized_ones_are_refused() {
        let request = Request {
            operation: Operation::Invoke,
            agent: Some("a".into()),
            runtime_id: Some("r".into()),
            payload: Payload::Input("x".repeat(REQUEST_LIMIT).into()),
        };
        assert_eq!(request.encode().unwrap_err().code, "request_too_large");
        let small = Request {
            payload: Payload::Input(serde_json::json!({"q": 1})),
            ..request
        };
        let line = small.encode().unwrap();
        assert_eq!(parse_request(&line).unwrap(), small);
    }

    #[test]
    fn oversized_responses_become_response_too_large() {
        // an exec answer may be larger than any other, up to its own limit
        let output = Response::succeeded("exec", None, "x".repeat(RESPONSE_LIMIT).into());
        assert!(output.encode().len() > RESPONSE_LIMIT);
        let huge = Response::succeeded("exec", None, "x".repeat(EXEC_RESPONSE_LIMIT).into());
        assert!(huge.encode().len() < RESPONSE_LIMIT);
        let big = Response::succeeded("invoke", None, "x".repeat(RESPONSE_LIMIT).into());
        let line = big.encode();
        let decoded: Response = serde_json::from_slice(&line).unwrap();
        let error = decoded.error.unwrap();
        assert_eq!(
            (error.code.as_str(), error.effects),
            ("response_too_large", Effects::Unknown)
        );
        assert_eq!(decoded.changed, None);
    }
}
