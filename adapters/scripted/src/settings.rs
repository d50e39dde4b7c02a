//! `harness.settings` and per-invoke directives, validated with the field path in errors.
//!
//! The rules here mirror `settings_schema` in `scripted.fabric-adapter.json`; a unit test
//! keeps the two in step (every schema property is known here and vice versa).

use fabric_config::codes;
use serde_json::{Map, Value};

/// A validation failure: the dotted path of the offending field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub path: String,
    pub problem: String,
}

impl Invalid {
    fn new(path: &str, problem: impl Into<String>) -> Self {
        Invalid {
            path: path.to_owned(),
            problem: problem.into(),
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Invalid>;

/// What happens once every scripted reply has been used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenExhausted {
    /// Start again from the first reply.
    #[default]
    Cycle,
    /// Fail the invocation with `scripted_replies_exhausted`.
    Fail,
    /// Echo the input.
    Echo,
}

/// An error the script asks for (`code`, `message`, `retryable`).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorSpec {
    pub code: String,
    pub message: String,
    pub retryable: bool,
}

/// One scripted reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// Response template (`{input}`, `{previous_input}`, ...); `None` echoes the input.
    pub response: Option<String>,
    /// Verbatim output replacing the whole output object.
    pub output: Option<Value>,
    /// Agent-loop turns this reply claims to use; more than `runtime.max_turns` fails.
    pub turns: Option<u64>,
    pub usage: Option<Map<String, Value>>,
    pub fail: Option<ErrorSpec>,
}

/// Health behaviour requested by settings: which level to fail or stall.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HealthSettings {
    pub fail: Option<String>,
    pub stall: Option<String>,
}

/// Validated `harness.settings`.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub replies: Vec<Reply>,
    pub when_exhausted: WhenExhausted,
    pub history_limit: usize,
    pub start_delay_ms: u64,
    pub start_fail: Option<ErrorSpec>,
    pub ignore_stop: bool,
    /// Milliseconds the host keeps running after answering `stop` (`exit_delay_ms`).
    pub exit_delay_ms: u64,
    pub health: HealthSettings,
    /// Native OpenAI streaming (`harness.settings.stream`).
    pub stream: crate::stream::StreamSettings,
    /// Relay ATOF records (`harness.settings.atof`).
    pub atof: crate::atof::AtofSettings,
    /// Software evidence report (`harness.settings.evidence`).
    pub evidence: crate::evidence::EvidenceSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            replies: Vec::new(),
            when_exhausted: WhenExhausted::Cycle,
            history_limit: DEFAULT_HISTORY_LIMIT,
            start_delay_ms: 0,
            start_fail: None,
            ignore_stop: false,
            exit_delay_ms: 0,
            health: HealthSettings::default(),
            stream: crate::stream::StreamSettings::default(),
            atof: crate::atof::AtofSettings::default(),
            evidence: crate::evidence::EvidenceSettings::default(),
        }
    }
}

pub const DEFAULT_HISTORY_LIMIT: usize = 64;
pub const MAX_HISTORY_LIMIT: u64 = 100_000;
pub const MAX_DELAY_MS: u64 = 600_000;
pub const SETTINGS_KEYS: &[&str] = &[
    "replies",
    "when_exhausted",
    "history_limit",
    "start_delay_ms",
    "start_fail",
    "ignore_stop",
    "exit_delay_ms",
    "health",
    "stream",
    "atof",
    "evidence",
];
pub const HEALTH_LEVELS: &[&str] = &["live", "active", "ready"];

impl Settings {
    pub fn parse(settings: &Map<String, Value>) -> Result<Settings> {
        let base = "harness.settings";
        closed(settings, base, SETTINGS_KEYS)?;
        let mut out = Settings::default();
        if let Some(v) = settings.get("replies") {
            let path = format!("{base}.replies");
            let items = v
                .as_array()
                .ok_or_else(|| Invalid::new(&path, "must be an array"))?;
            for (i, item) in items.iter().enumerate() {
                out.replies
                    .push(parse_reply(item, &format!("{path}[{i}]"))?);
            }
        }
        if let Some(v) = settings.get("when_exhausted") {
            out.when_exhausted = match v.as_str() {
                Some("cycle") => WhenExhausted::Cycle,
                Some("fail") => WhenExhausted::Fail,
                Some("echo") => WhenExhausted::Echo,
                _ => {
                    return Err(Invalid::new(
                        &format!("{base}.when_exhausted"),
                        "must be one of cycle, fail, echo",
                    ));
                }
            };
        }
        if let Some(v) = settings.get("history_limit") {
            let n = uint(v, &format!("{base}.history_limit"), 1, MAX_HISTORY_LIMIT)?;
            out.history_limit = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(v) = settings.get("start_delay_ms") {
            out.start_delay_ms = uint(v, &format!("{base}.start_delay_ms"), 0, MAX_DELAY_MS)?;
        }
        if let Some(v) = settings.get("start_fail") {
            out.start_fail = Some(parse_error(v, &format!("{base}.start_fail"))?);
        }
        if let Some(v) = settings.get("ignore_stop") {
            out.ignore_stop = boolean(v, &format!("{base}.ignore_stop"))?;
        }
        if let Some(v) = settings.get("exit_delay_ms") {
            out.exit_delay_ms = uint(v, &format!("{base}.exit_delay_ms"), 0, MAX_DELAY_MS)?;
        }
        if let Some(v) = settings.get("stream") {
            out.stream = out.stream.merged(v, &format!("{base}.stream"))?;
        }
        if let Some(v) = settings.get("atof") {
            out.atof = out.atof.merged(v, &format!("{base}.atof"))?;
        }
        if let Some(v) = settings.get("evidence") {
            out.evidence =
                crate::evidence::EvidenceSettings::parse(v, &format!("{base}.evidence"))?;
        }
        if let Some(v) = settings.get("health") {
            let path = format!("{base}.health");
            let map = object(v, &path)?;
            closed(map, &path, &["fail", "stall"])?;
            for (key, slot) in [
                ("fail", &mut out.health.fail),
                ("stall", &mut out.health.stall),
            ] {
                if let Some(level) = map.get(key) {
                    let level = level.as_str().filter(|l| HEALTH_LEVELS.contains(l));
                    let level = level.ok_or_else(|| {
                        Invalid::new(
                            &format!("{path}.{key}"),
                            "must be one of live, active, ready",
                        )
                    })?;
                    *slot = Some(level.to_owned());
                }
            }
        }
        Ok(out)
    }
}

fn parse_reply(v: &Value, path: &str) -> Result<Reply> {
    if let Some(text) = v.as_str() {
        return Ok(Reply {
            response: Some(text.to_owned()),
            ..Reply::default()
        });
    }
    let map = v
        .as_object()
        .ok_or_else(|| Invalid::new(path, "must be a string or an object"))?;
    closed(map, path, &["response", "output", "turns", "usage", "fail"])?;
    let mut reply = Reply::default();
    if let Some(r) = map.get("response") {
        reply.response = Some(string(r, &format!("{path}.response"))?.to_owned());
    }
    if let Some(o) = map.get("output") {
        if reply.response.is_some() {
            return Err(Invalid::new(
                path,
                "set either response or output, not both",
            ));
        }
        reply.output = Some(o.clone());
    }
    if let Some(t) = map.get("turns") {
        reply.turns = Some(uint(t, &format!("{path}.turns"), 1, u64::from(u32::MAX))?);
    }
    if let Some(u) = map.get("usage") {
        reply.usage = Some(parse_usage(u, &format!("{path}.usage"))?);
    }
    if let Some(f) = map.get("fail") {
        reply.fail = Some(parse_error(f, &format!("{path}.fail"))?);
    }
    Ok(reply)
}

pub fn parse_error(v: &Value, path: &str) -> Result<ErrorSpec> {
    let map = object(v, path)?;
    closed(map, path, &["code", "message", "retryable"])?;
    let field = |key: &str| -> Result<String> {
        let p = format!("{path}.{key}");
        let s = string(
            map.get(key)
                .ok_or_else(|| Invalid::new(&p, "is required"))?,
            &p,
        )?;
        if s.trim().is_empty() {
            return Err(Invalid::new(&p, "must be non-blank"));
        }
        Ok(s.to_owned())
    };
    let code = field("code")?;
    let message = field("message")?;
    let retryable = match map.get("retryable") {
        Some(r) => boolean(r, &format!("{path}.retryable"))?,
        None => false,
    };
    Ok(ErrorSpec {
        code,
        message,
        retryable,
    })
}

/// Validates an `AgentUsage` object and returns it unchanged.
pub fn parse_usage(v: &Value, path: &str) -> Result<Map<String, Value>> {
    let map = object(v, path)?;
    closed(
        map,
        path,
        &[
            "input_tokens",
            "cached_input_tokens",
            "input_tokens_include_cache",
            "output_tokens",
            "total_tokens",
            "cost_usd",
        ],
    )?;
    for (key, value) in map {
        let p = format!("{path}.{key}");
        match key.as_str() {
            "input_tokens_include_cache" => {
                boolean(value, &p)?;
            }
            "cost_usd" => {
                let ok = value.as_f64().is_some_and(|c| c >= 0.0);
                if !ok {
                    return Err(Invalid::new(&p, "must be a number >= 0"));
                }
            }
            _ => {
                uint(value, &p, 0, u64::MAX)?;
            }
        }
    }
    Ok(map.clone())
}

/// A deliberate violation of the lifecycle protocol, for host fault tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolFault {
    /// Answer with a line that is not JSON.
    NonJson,
    /// Answer with a line that is not valid UTF-8.
    InvalidUtf8,
    /// Answer with `"operation": "stop"` instead of the request's operation.
    WrongOperation,
    /// Answer with one line of `oversized_bytes` bytes (default 17 MiB).
    Oversized,
    /// Answer `succeeded` with an output that is not an AgentRunResult.
    InvalidResult,
    /// Do not answer this request at all (keep serving later ones).
    Silent,
}

pub const DIRECTIVE_KEYS: &[&str] = &[
    "fail",
    "cancel",
    "raise",
    "sleep_ms",
    "artifact",
    "usage",
    "crash",
    "memory_mib",
    "step_ms",
    "memory_hold",
    "burn_cpu_ms",
    "spawn_children",
    "spawn_orphans",
    "turns",
    "stderr",
    "protocol_fault",
    "oversized_bytes",
    "write_files",
];

/// One workspace edit of the `write_files` directive: write (create or replace) or delete.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEdit {
    /// Relative to the host's working directory (the workspace).
    pub path: String,
    /// `None` deletes the file.
    pub content: Option<Vec<u8>>,
}

/// Most edits one `write_files` directive may carry.
pub const MAX_FILE_EDITS: usize = 1_024;

/// An artifact the invocation writes under the runtime artifact root.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactSpec {
    pub name: String,
    pub content: String,
    pub kind: String,
    pub media_type: Option<String>,
}

/// Per-invoke directives from `request.context.scripted` and `request.input.scripted`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Directives {
    pub fail: Option<ErrorSpec>,
    pub cancel: bool,
    pub raise: Option<ErrorSpec>,
    pub sleep_ms: u64,
    pub artifacts: Vec<ArtifactSpec>,
    pub usage: Option<Map<String, Value>>,
    pub crash: bool,
    pub memory_mib: Vec<u64>,
    pub step_ms: u64,
    pub memory_hold: bool,
    pub burn_cpu_ms: u64,
    pub spawn_children: u64,
    pub spawn_orphans: u64,
    pub turns: Option<u64>,
    pub stderr: Option<String>,
    pub protocol_fault: Option<ProtocolFault>,
    pub oversized_bytes: u64,
    pub write_files: Vec<FileEdit>,
}

pub const MAX_MEMORY_MIB: u64 = 65_536;
pub const MAX_CHILDREN: u64 = 1_024;
pub const DEFAULT_STEP_MS: u64 = 100;
pub const DEFAULT_OVERSIZED_BYTES: u64 = 17 * 1024 * 1024;

impl Directives {
    /// Merges the `scripted` objects of input (first) and context (wins per key).
    pub fn parse(input: Option<&Value>, context: Option<&Value>) -> Result<Directives> {
        let mut merged = Map::new();
        for (source, value) in [
            ("request.input.scripted", input),
            ("request.context.scripted", context),
        ] {
            if let Some(value) = value {
                let map = object(value, source)?;
                closed(map, source, DIRECTIVE_KEYS)?;
                for (k, v) in map {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
        let p = |key: &str| format!("scripted.{key}");
        let mut d = Directives {
            step_ms: DEFAULT_STEP_MS,
            oversized_bytes: DEFAULT_OVERSIZED_BYTES,
            ..Directives::default()
        };
        for (key, v) in &merged {
            let path = p(key);
            match key.as_str() {
                "fail" => d.fail = Some(parse_error(v, &path)?),
                "raise" => d.raise = Some(parse_error(v, &path)?),
                "cancel" => d.cancel = boolean(v, &path)?,
                "crash" => d.crash = boolean(v, &path)?,
                "memory_hold" => d.memory_hold = boolean(v, &path)?,
                "sleep_ms" => d.sleep_ms = uint(v, &path, 0, MAX_DELAY_MS)?,
                "step_ms" => d.step_ms = uint(v, &path, 0, MAX_DELAY_MS)?,
                "burn_cpu_ms" => d.burn_cpu_ms = uint(v, &path, 0, MAX_DELAY_MS)?,
                "spawn_children" => d.spawn_children = uint(v, &path, 0, MAX_CHILDREN)?,
                "spawn_orphans" => d.spawn_orphans = uint(v, &path, 0, MAX_CHILDREN)?,
                "turns" => d.turns = Some(uint(v, &path, 1, u64::from(u32::MAX))?),
                "oversized_bytes" => d.oversized_bytes = uint(v, &path, 1, 1 << 31)?,
                "usage" => d.usage = Some(parse_usage(v, &path)?),
                "stderr" => d.stderr = Some(string(v, &path)?.to_owned()),
                "write_files" => d.write_files = parse_file_edits(v, &path)?,
                "memory_mib" => {
                    let items = v
                        .as_array()
                        .ok_or_else(|| Invalid::new(&path, "must be an array of MiB values"))?;
                    for (i, item) in items.iter().enumerate() {
                        d.memory_mib
                            .push(uint(item, &format!("{path}[{i}]"), 0, MAX_MEMORY_MIB)?);
                    }
                }
                "artifact" => match v {
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            d.artifacts
                                .push(parse_artifact(item, &format!("{path}[{i}]"))?);
                        }
                    }
                    other => d.artifacts.push(parse_artifact(other, &path)?),
                },
                "protocol_fault" => {
                    d.protocol_fault = Some(match v.as_str() {
                        Some("non_json") => ProtocolFault::NonJson,
                        Some(codes::INVALID_UTF8) => ProtocolFault::InvalidUtf8,
                        Some("wrong_operation") => ProtocolFault::WrongOperation,
                        Some("oversized") => ProtocolFault::Oversized,
                        Some("invalid_result") => ProtocolFault::InvalidResult,
                        Some("silent") => ProtocolFault::Silent,
                        _ => {
                            return Err(Invalid::new(
                                &path,
                                "must be one of non_json, invalid_utf8, wrong_operation, \
                                 oversized, invalid_result, silent",
                            ));
                        }
                    })
                }
                _ => unreachable_key(key)?,
            }
        }
        Ok(d)
    }
}

fn unreachable_key(key: &str) -> Result<()> {
    // `closed` already rejected unknown keys; keep a safe answer rather than a panic.
    Err(Invalid::new(
        &format!("scripted.{key}"),
        "is not a known directive",
    ))
}

/// `write_files`: `{"<relative path>": "text" | {"bytes": [0..=255, ...]} | null}` (null
/// deletes). Paths follow the artifact-name rule (relative, no `..`/`.`/empty segments).
fn parse_file_edits(v: &Value, path: &str) -> Result<Vec<FileEdit>> {
    let map = object(v, path)?;
    if map.len() > MAX_FILE_EDITS {
        return Err(Invalid::new(
            path,
            format!("must have at most {MAX_FILE_EDITS} entries"),
        ));
    }
    let mut edits = Vec::with_capacity(map.len());
    for (name, value) in map {
        let p = format!("{path}.{name}");
        if !is_safe_relative(name) {
            return Err(Invalid::new(
                &p,
                "must be a relative path without '..', '.' or empty segments",
            ));
        }
        let content = match value {
            Value::Null => None,
            Value::String(text) => Some(text.as_bytes().to_vec()),
            Value::Object(bytes) => {
                closed(bytes, &p, &["bytes"])?;
                let items = bytes
                    .get("bytes")
                    .and_then(Value::as_array)
                    .ok_or_else(|| Invalid::new(&format!("{p}.bytes"), "must be an array"))?;
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let byte = uint(item, &format!("{p}.bytes[{i}]"), 0, 255)?;
                    out.push(u8::try_from(byte).unwrap_or_default());
                }
                Some(out)
            }
            _ => {
                return Err(Invalid::new(
                    &p,
                    "must be a string, {\"bytes\": [...]} or null",
                ));
            }
        };
        edits.push(FileEdit {
            path: name.clone(),
            content,
        });
    }
    Ok(edits)
}

fn parse_artifact(v: &Value, path: &str) -> Result<ArtifactSpec> {
    let map = object(v, path)?;
    closed(map, path, &["name", "content", "kind", "media_type"])?;
    let req = |key: &str| -> Result<String> {
        let p = format!("{path}.{key}");
        Ok(string(
            map.get(key)
                .ok_or_else(|| Invalid::new(&p, "is required"))?,
            &p,
        )?
        .to_owned())
    };
    let name = req("name")?;
    if !is_safe_relative(&name) {
        return Err(Invalid::new(
            &format!("{path}.name"),
            "must be a relative path without '..', '.' or empty segments",
        ));
    }
    let content = req("content")?;
    let kind = match map.get("kind") {
        Some(k) => nonblank(k, &format!("{path}.kind"))?.to_owned(),
        None => "file".to_owned(),
    };
    let media_type = match map.get("media_type") {
        Some(m) => Some(nonblank(m, &format!("{path}.media_type"))?.to_owned()),
        None => None,
    };
    Ok(ArtifactSpec {
        name,
        content,
        kind,
        media_type,
    })
}

/// A relative path of plain segments: no root, no drive, no `.`/`..`, no empty segment.
pub fn is_safe_relative(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains(':')
        && !name.contains('\0')
        && name
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

pub(crate) fn closed(map: &Map<String, Value>, path: &str, allowed: &[&str]) -> Result<()> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(unknown) => Err(Invalid::new(
            &format!("{path}.{unknown}"),
            "unexpected field",
        )),
        None => Ok(()),
    }
}

pub(crate) fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| Invalid::new(path, "must be an object"))
}

fn string<'a>(v: &'a Value, path: &str) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| Invalid::new(path, "must be a string"))
}

fn nonblank<'a>(v: &'a Value, path: &str) -> Result<&'a str> {
    let s = string(v, path)?;
    if s.trim().is_empty() {
        return Err(Invalid::new(path, "must be non-blank"));
    }
    Ok(s)
}

pub(crate) fn boolean(v: &Value, path: &str) -> Result<bool> {
    v.as_bool()
        .ok_or_else(|| Invalid::new(path, "must be a boolean"))
}

/// A fault directive: one of the `known` fault names.
pub(crate) fn fault(v: &Value, path: &str, known: &[&str]) -> Result<String> {
    v.as_str()
        .filter(|name| known.contains(name))
        .map(str::to_owned)
        .ok_or_else(|| Invalid::new(path, "must name a known fault"))
}

/// A member no rule knows.
pub(crate) fn unknown_key(path: &str) -> Invalid {
    Invalid::new(path, "is not a known key")
}

pub(crate) fn uint(v: &Value, path: &str, min: u64, max: u64) -> Result<u64> {
    match v.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Invalid::new(
            path,
            format!("must be an integer in {min}..={max}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(v: Value) -> Result<Settings> {
        Settings::parse(v.as_object().unwrap())
    }

    #[test]
    fn parses_replies_and_defaults() {
        let s = settings(json!({
            "replies": ["hi {input}", {"response": "two", "turns": 3, "usage": {"input_tokens": 4}}],
            "when_exhausted": "fail"
        }))
        .unwrap();
        assert_eq!(s.replies.len(), 2);
        assert_eq!(s.replies[0].response.as_deref(), Some("hi {input}"));
        assert_eq!(s.replies[1].turns, Some(3));
        assert_eq!(s.when_exhausted, WhenExhausted::Fail);
        assert_eq!(s.history_limit, DEFAULT_HISTORY_LIMIT);
    }

    #[test]
    fn rejects_with_paths() {
        let e = settings(json!({"nope": 1})).unwrap_err();
        assert_eq!(e.path, "harness.settings.nope");
        let e = settings(json!({"replies": ["ok", {"turns": 0}]})).unwrap_err();
        assert_eq!(e.path, "harness.settings.replies[1].turns");
        let e = settings(json!({"replies": [{"response": "a", "output": 1}]})).unwrap_err();
        assert_eq!(e.path, "harness.settings.replies[0]");
        let e = settings(json!({"start_fail": {"code": " ", "message": "m"}})).unwrap_err();
        assert_eq!(e.path, "harness.settings.start_fail.code");
        let e = settings(json!({"health": {"fail": "dead"}})).unwrap_err();
        assert_eq!(e.path, "harness.settings.health.fail");
        let e = settings(json!({"replies": [{"usage": {"cost_usd": -1}}]})).unwrap_err();
        assert_eq!(e.path, "harness.settings.replies[0].usage.cost_usd");
    }

    #[test]
    fn directives_merge_context_over_input() {
        let d = Directives::parse(
            Some(&json!({"sleep_ms": 5, "turns": 2})),
            Some(&json!({"sleep_ms": 7, "artifact": {"name": "a/b.txt", "content": "x"}})),
        )
        .unwrap();
        assert_eq!(d.sleep_ms, 7);
        assert_eq!(d.turns, Some(2));
        assert_eq!(d.artifacts[0].kind, "file");
        let e = Directives::parse(
            None,
            Some(&json!({"artifact": {"name": "../x", "content": ""}})),
        )
        .unwrap_err();
        assert_eq!(e.path, "scripted.artifact.name");
        let e = Directives::parse(
            None,
            Some(&json!({"artifact": [{"name": "a", "content": "", "kind": " "}]})),
        )
        .unwrap_err();
        assert_eq!(e.path, "scripted.artifact[0].kind");
        let e = Directives::parse(None, Some(&json!({"explode": true}))).unwrap_err();
        assert_eq!(e.path, "request.context.scripted.explode");
    }

    #[test]
    fn write_files_directive() {
        let d = Directives::parse(
            None,
            Some(
                &json!({"write_files": {"a/b.txt": "x", "c.bin": {"bytes": [0, 255]}, "d": null}}),
            ),
        )
        .unwrap();
        assert_eq!(d.write_files.len(), 3);
        assert_eq!(d.write_files[0].content.as_deref(), Some(&b"x"[..]));
        assert_eq!(d.write_files[1].content.as_deref(), Some(&[0u8, 255][..]));
        assert_eq!(d.write_files[2].content, None);
        for (bad, path) in [
            (json!({"../x": "y"}), "scripted.write_files.../x"),
            (json!({"x": 1}), "scripted.write_files.x"),
            (
                json!({"x": {"bytes": [256]}}),
                "scripted.write_files.x.bytes[0]",
            ),
        ] {
            let e = Directives::parse(None, Some(&json!({"write_files": bad}))).unwrap_err();
            assert_eq!(e.path, path);
        }
    }

    #[test]
    fn safe_relative_paths() {
        for ok in ["a", "a/b.txt", "x..y"] {
            assert!(is_safe_relative(ok), "{ok}");
        }
        for bad in ["", "/a", "a//b", "./a", "a/..", "C:x", "a\\b", "a/"] {
            assert!(!is_safe_relative(bad), "{bad}");
        }
    }

    /// The descriptor's closed settings_schema and this parser name the same keys.
    #[test]
    fn descriptor_schema_matches_parser() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripted.fabric-adapter.json");
        let text = std::fs::read_to_string(path).unwrap();
        let descriptor: Value = serde_json::from_str(&text).unwrap();
        let schema = &descriptor["settings_schema"];
        assert_eq!(schema["additionalProperties"], json!(false));
        let mut keys: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut ours = SETTINGS_KEYS.to_vec();
        ours.sort_unstable();
        assert_eq!(keys, ours);
    }
}
