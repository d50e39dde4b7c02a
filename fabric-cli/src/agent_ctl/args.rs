//! Strict command parsing: known flags only, each at most once, values never starting with
//! `--`; payload files are regular files or `-` (stdin within 10 s), one UTF-8 JSON value
//! within 512 KiB, duplicate keys and NaN rejected.

use fabric_config::codes;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc;
use std::time::Duration;

use fabric_config::bridge::{
    self, BridgeStage, Failure, Operation, Payload, READ_SECONDS, REQUEST_LIMIT, Request,
};
use fabric_config::health::DEFAULT_CHECK_TIMEOUT_SECONDS;
use serde_json::{Map, Value};

/// A parsed command: the request and, for `check`, the call deadline.
#[derive(Debug)]
pub struct Command {
    pub request: Request,
    pub timeout: Option<Duration>,
}

const VALUE_FLAGS: [&str; 6] = [
    "--agent",
    "--runtime-id",
    "--config",
    "--input",
    "--request",
    "--timeout-seconds",
];
const LEVEL_FLAGS: [&str; 3] = ["--live", "--active", "--ready"];

/// Parses `arguments` (operation first).
pub fn parse_command(arguments: &[String]) -> Result<Command, Failure> {
    let operation = arguments
        .first()
        .and_then(|a| Operation::parse(a))
        // `serve` is not a bridge call; `exec` is the environment operation's, sent by
        // providers, not a command of this tool.
        .filter(|op| !matches!(op, Operation::Serve | Operation::Exec))
        .ok_or_else(|| Failure::invalid("operation"))?;
    let mut flags: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let mut index = 1;
    while index < arguments.len() {
        let flag = arguments[index].as_str();
        if flags.contains_key(flag) {
            return Err(Failure::invalid(flag));
        }
        if VALUE_FLAGS.contains(&flag) {
            match arguments.get(index + 1) {
                Some(value) if !value.starts_with("--") => {
                    flags.insert(flag, Some(value.as_str()));
                    index += 2;
                }
                _ => return Err(Failure::invalid(flag)),
            }
        } else if operation == Operation::Check && LEVEL_FLAGS.contains(&flag) {
            flags.insert(flag, None);
            index += 1;
        } else {
            return Err(Failure::invalid(flag));
        }
    }
    let mut required: Vec<&str> = Vec::new();
    let mut allowed: Vec<&str> = Vec::new();
    match operation {
        Operation::Start => required.extend(["--agent", "--config"]),
        Operation::Invoke => {
            required.extend(["--agent", "--runtime-id"]);
            match (
                flags.contains_key("--input"),
                flags.contains_key("--request"),
            ) {
                (true, false) => required.push("--input"),
                (false, true) => required.push("--request"),
                (true, true) => return Err(Failure::invalid("--request")),
                (false, false) => return Err(Failure::invalid("--input")),
            }
        }
        Operation::Stop => required.extend(["--agent", "--runtime-id"]),
        Operation::Check => {
            allowed.extend(["--timeout-seconds"]);
            if flags.contains_key("--agent") || flags.contains_key("--runtime-id") {
                required.extend(["--agent", "--runtime-id"]);
                allowed.extend(LEVEL_FLAGS);
            }
        }
        Operation::Serve | Operation::Exec => return Err(Failure::invalid("operation")),
    }
    allowed.extend(required.iter().copied());
    if let Some(missing) = required.iter().find(|f| !flags.contains_key(**f)) {
        return Err(Failure::invalid(*missing));
    }
    if let Some(extra) = flags.keys().find(|f| !allowed.contains(f)) {
        return Err(Failure::invalid(*extra));
    }
    let value = |flag: &str| flags.get(flag).copied().flatten().map(str::to_owned);
    let payload = match operation {
        Operation::Start => Payload::Config(read_input("--config", &flags)?),
        Operation::Invoke if flags.contains_key("--input") => {
            Payload::Input(read_input("--input", &flags)?)
        }
        Operation::Invoke => match read_input("--request", &flags)? {
            Value::Object(object) => Payload::Request(object),
            _ => return Err(Failure::invalid("--request")),
        },
        _ => Payload::None,
    };
    let mut timeout = None;
    let payload = if operation == Operation::Check {
        let levels: Vec<&str> = LEVEL_FLAGS
            .into_iter()
            .filter(|f| flags.contains_key(f))
            .collect();
        if levels.len() > 1 {
            return Err(Failure::invalid(levels[1]));
        }
        let mut options = Map::new();
        if let Some(level) = levels.first() {
            options.insert("level".into(), level.trim_start_matches("--").into());
        }
        let seconds = match value("--timeout-seconds") {
            Some(text) => {
                let seconds = text
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
                    .ok_or_else(|| Failure::invalid("--timeout-seconds"))?;
                options.insert("timeout_seconds".into(), seconds.into());
                seconds
            }
            None => DEFAULT_CHECK_TIMEOUT_SECONDS,
        };
        // The server spends at most `seconds`; allow for the transport around it.
        timeout = Some(Duration::from_secs_f64(seconds + 2.0));
        if options.is_empty() {
            Payload::None
        } else {
            Payload::Request(options)
        }
    } else {
        payload
    };
    let request = Request {
        operation,
        agent: value("--agent"),
        runtime_id: value("--runtime-id"),
        payload,
    };
    // The same shape rules the server applies (e.g. `metadata.name` must equal --agent).
    bridge::validate_request(&request.to_value())?;
    request.encode()?;
    Ok(Command { request, timeout })
}

/// Reads the JSON value of `flag`: a regular file, or `-` for stdin (10 s deadline).
fn read_input(flag: &str, flags: &BTreeMap<&str, Option<&str>>) -> Result<Value, Failure> {
    let invalid = |detail: Option<String>| {
        let field = match detail {
            Some(path) => format!("{flag} {path}"),
            None => flag.to_owned(),
        };
        Failure::new(codes::INVALID_INPUT, BridgeStage::Request).with_field(field)
    };
    let path = flags.get(flag).copied().flatten().unwrap_or("-");
    let bytes = if path == "-" {
        read_stdin().ok_or_else(|| invalid(None))?
    } else {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|_| invalid(None))?;
        if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
            return Err(invalid(None));
        }
        let mut bytes = Vec::new();
        file.take(REQUEST_LIMIT as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| invalid(None))?;
        bytes
    };
    if bytes.len() > REQUEST_LIMIT {
        return Err(invalid(None));
    }
    bridge::decode_strict(&bytes)
        .map_err(|error| invalid((error.field != "$").then_some(error.field)))
}

/// Stdin within the read deadline and the size limit (+1 byte to detect overflow).
fn read_stdin() -> Option<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = std::io::stdin()
            .lock()
            .take(REQUEST_LIMIT as u64 + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        let _ = sender.send(result);
    });
    receiver
        .recv_timeout(Duration::from_secs(READ_SECONDS))
        .ok()?
        .ok()
}
