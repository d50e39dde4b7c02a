//! Decoding with JSON paths: path rendering, decode errors built from the expected shape
//! only (no input literals), and single-document decoding.

use crate::error::{ConfigError, ConfigRule, DecodeErrorKind};

use super::finding;

/// Appends an object key to a JSON path: `a.b`, or `a["odd key"]` for keys that are empty or
/// contain `.`, brackets, quotes, whitespace or control characters (JSON-escaped).
pub fn join_key(path: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| !(c.is_whitespace() || c.is_control() || matches!(c, '.' | '[' | ']' | '"')));
    if simple {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    } else {
        let quoted = serde_json::to_string(key).unwrap_or_else(|_| "\"?\"".to_owned());
        format!("{path}[{quoted}]")
    }
}

/// Appends a list index to a JSON path: `a[3]`.
pub fn join_index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

fn render_path(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Map { key } => out = join_key(&out, key),
            serde_path_to_error::Segment::Seq { index } => out = join_index(&out, *index),
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

/// Replaces string literals (`"…"`) and backticked values in a serde message.
fn redact_literals(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut escaped = false;
                for inner in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if inner == '\\' {
                        escaped = true;
                    } else if inner == '"' {
                        break;
                    }
                }
                out.push_str("\"<redacted>\"");
            }
            '`' => {
                for inner in chars.by_ref() {
                    if inner == '`' {
                        break;
                    }
                }
                out.push_str("`<redacted>`");
            }
            _ => out.push(c),
        }
    }
    out
}

fn strip_position(message: &str, line: usize) -> &str {
    if line == 0 {
        return message;
    }
    match message.rfind(" at line ") {
        Some(index) => &message[..index],
        None => message,
    }
}

/// A JSON syntax error with its reason in words and its position; `text` is the input.
fn syntax_error(error: &serde_json::Error, text: &str) -> ConfigError {
    ConfigError::InvalidJson {
        line: error.line(),
        column: error.column(),
        reason: super::syntax::json_syntax_reason(error, text),
    }
}

/// serde's `expected` texts in the user's words: no Rust type names (`u64`, `struct X`).
fn plain_expected(expected: &str) -> String {
    let plain = match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "an object",
        "unit" => "null",
        "option" => "a value or null",
        "char" | "a character" => "a single character",
        "a borrowed string" => "a string",
        "variant identifier" | "field identifier" => "a known name",
        other if other.starts_with("struct ") || other.starts_with("internally tagged enum ") => {
            "an object"
        }
        other if other.starts_with("enum ") => "one of the known values",
        other if other.starts_with("a tuple of size ") => "an array",
        other => other,
    };
    plain.to_owned()
}

/// The name of serde's `` one of `a`, `b` `` list (or `` `a` or `b` ``) closest to `field`,
/// when one is close (the rule of [`crate::tolerated`]: Jaro-Winkler ≥ 0.8).
fn closest_name(field: &str, expected: &str) -> Option<String> {
    let names: Vec<String> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    crate::tolerated::closest(field, &names)
}

fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(&message[start..end])
}

fn expected_part(message: &str) -> Option<&str> {
    message
        .rfind(", expected ")
        .map(|index| &message[index + ", expected ".len()..])
}

fn is_instruction_mode_path(path: &str) -> bool {
    path == "instructions.system.mode"
}

fn is_stats_group_path(path: &str) -> bool {
    path.strip_prefix("system_stats.collect[")
        .is_some_and(|rest| rest.ends_with(']'))
}

/// Converts a path-tracked serde_json error into a [`ConfigError`].
pub(crate) fn decode_error(error: serde_path_to_error::Error<serde_json::Error>) -> ConfigError {
    decode_error_in(error, None)
}

/// [`decode_error`] for an error decoding `text` (`None`: decoding a value, no syntax).
fn decode_error_in(
    error: serde_path_to_error::Error<serde_json::Error>,
    text: Option<&str>,
) -> ConfigError {
    let path = render_path(error.path());
    let inner = error.into_inner();
    match inner.classify() {
        serde_json::error::Category::Data => {}
        _ => return syntax_error(&inner, text.unwrap_or("?")),
    }
    let full = inner.to_string();
    let message = strip_position(&full, inner.line());
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let field = backticked(rest).unwrap_or("?");
        let expected = expected_part(rest)
            .map(|e| format!("; expected {e}"))
            .unwrap_or_default();
        let hint = expected_part(rest)
            .and_then(|expected| closest_name(field, expected))
            .map(|name| format!(" (did you mean `{name}`?)"))
            .unwrap_or_default();
        return ConfigError::Decode {
            kind: DecodeErrorKind::UnknownField,
            path,
            message: format!("unknown field `{field}`{hint} (not an extension point){expected}"),
        };
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        let field = backticked(rest).unwrap_or("?");
        return ConfigError::Decode {
            kind: DecodeErrorKind::MissingField,
            path: join_key(&path, field),
            message: "required field is missing".to_owned(),
        };
    }
    if message.starts_with("unknown variant ") {
        if is_instruction_mode_path(&path) {
            return finding(ConfigRule::InstructionModeUnknown, path).into();
        }
        if is_stats_group_path(&path) {
            return finding(ConfigRule::SystemStatsGroupUnknown, path).into();
        }
        let expected = expected_part(message).unwrap_or("a known value");
        return ConfigError::Decode {
            kind: DecodeErrorKind::UnknownVariant,
            path,
            message: format!("unknown value; expected {expected}"),
        };
    }
    let (kind, what) = if message.starts_with("invalid type: ") {
        (DecodeErrorKind::InvalidType, "wrong type")
    } else {
        (DecodeErrorKind::InvalidValue, "invalid value")
    };
    let message = match expected_part(message) {
        Some(expected) => format!(
            "{what}; expected {}",
            redact_literals(&plain_expected(expected))
        ),
        None => redact_literals(message),
    };
    ConfigError::Decode {
        kind,
        path,
        message,
    }
}

/// Decodes one JSON document of type `T` (nothing but white space after it); errors carry
/// the JSON path of the offending field.
pub(crate) fn decode_json_str<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, ConfigError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| decode_error_in(error, Some(text)))?;
    deserializer
        .end()
        .map_err(|error| syntax_error(&error, text))?;
    Ok(value)
}
