//! Batch items: one JSON line each, read from a file (checked whole before anything runs)
//! or a stream (each line checked before its item runs).
//!
//! A line holds a RunRequest object, any other JSON value (the request's input), or
//! `{"id": ..., "requests": [...]}` (a multi-turn item run in order on one runtime). The
//! item's id is `id`, else `request_id`, else its line number.

use std::collections::HashMap;
use std::io::BufRead;

use fabric_config::{ErrorInfo, RunRequest, Stage, codes};
use serde_json::Value;

/// What a line must hold (said by every line error).
const ITEM_LINE: &str = "each non-empty line must be one JSON value: a RunRequest object, any other value (such as a string) used as the input, or {\"id\": ..., \"requests\": [...]}";

/// One item of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Its id (`id`, else `request_id`, else the line number).
    pub id: String,
    /// Its 1-based line number in the source.
    pub line: usize,
    /// The turns, run in order on one runtime (one for a plain item).
    pub requests: Vec<RunRequest>,
}

fn invalid(source: &str, line: usize, reason: String) -> ErrorInfo {
    ErrorInfo::new(
        Stage::Config,
        codes::BATCH_ITEM_INVALID,
        format!("items `{source}` line {line}: {reason}; {ITEM_LINE}"),
    )
    .with_metadata("line", line)
    .with_metadata("file", source)
}

/// A value as a request: an object is a RunRequest (unknown keys such as `id` are dropped,
/// as `--inputs` does), anything else is its input. `Err` is a value-free reason.
fn request_from(value: Value, field: &str) -> Result<RunRequest, String> {
    match value {
        Value::Object(_) => RunRequest::from_value(value)
            .and_then(|request| request.validate().map(|()| request))
            .map_err(|error| {
                let info = ErrorInfo::from(error);
                match info.metadata.get("path").and_then(Value::as_str) {
                    Some(path) => format!("`{field}.{path}`: {}", info.message),
                    None => format!("`{field}`: {}", info.message),
                }
            }),
        other => Ok(RunRequest::new(other)),
    }
}

/// An id field: a non-blank string or an integer.
fn id_field(object: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
        Some(Value::Number(number)) if number.is_i64() || number.is_u64() => {
            Ok(Some(number.to_string()))
        }
        Some(_) => Err(format!("`{key}` must be a non-blank string or an integer")),
    }
}

/// Parses line `line` (1-based) of `source`; `Ok(None)` for a blank line.
pub fn parse_line(source: &str, line: usize, text: &str) -> Result<Option<Item>, ErrorInfo> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let bad = |reason: String| invalid(source, line, reason);
    let value: Value = serde_json::from_str(text).map_err(|error| {
        let reason = fabric_config::json_syntax_reason(&error, text);
        bad(format!("not JSON: {reason} (column {})", error.column()))
            .with_metadata("column", error.column())
    })?;
    let Value::Object(object) = &value else {
        let request = request_from(value, "item").map_err(bad)?;
        return Ok(Some(Item {
            id: line.to_string(),
            line,
            requests: vec![request],
        }));
    };
    let id = id_field(object, "id").map_err(bad)?;
    if let Some(turns) = object.get("requests") {
        if let Some(key) = object.keys().find(|key| *key != "id" && *key != "requests") {
            return Err(bad(format!(
                "a multi-turn item holds only `id` and `requests`, not `{key}`"
            )));
        }
        let Value::Array(turns) = turns else {
            return Err(bad("`requests` must be an array".into()));
        };
        if turns.is_empty() {
            return Err(bad("`requests` must hold at least one request".into()));
        }
        let requests = turns
            .iter()
            .enumerate()
            .map(|(index, turn)| request_from(turn.clone(), &format!("requests[{index}]")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        return Ok(Some(Item {
            id: id.unwrap_or_else(|| line.to_string()),
            line,
            requests,
        }));
    }
    let request_id = id_field(object, "request_id").map_err(bad)?;
    let request = request_from(value, "item").map_err(bad)?;
    Ok(Some(Item {
        id: id.or(request_id).unwrap_or_else(|| line.to_string()),
        line,
        requests: vec![request],
    }))
}

/// Checks items one line at a time: numbers the lines, parses them and refuses a duplicate
/// id (naming both lines). Used by [`ItemReader`] and by callers that push lines.
#[derive(Debug)]
pub struct Checker {
    source: String,
    line: usize,
    seen: HashMap<String, usize>,
}

impl Checker {
    /// A checker; `source` names the items in errors (a path, `-` for stdin).
    pub fn new(source: impl Into<String>) -> Checker {
        Checker {
            source: source.into(),
            line: 0,
            seen: HashMap::new(),
        }
    }

    /// The next line's item (`None` for a blank line).
    pub fn check(&mut self, text: &str) -> Option<Result<Item, ErrorInfo>> {
        self.line += 1;
        match parse_line(&self.source, self.line, text) {
            Ok(None) => None,
            Ok(Some(item)) => Some(self.unique(item)),
            Err(info) => Some(Err(info)),
        }
    }

    fn unique(&mut self, item: Item) -> Result<Item, ErrorInfo> {
        match self.seen.get(&item.id) {
            Some(&first) => Err(ErrorInfo::new(
                Stage::Config,
                codes::BATCH_ITEM_DUPLICATE,
                format!(
                    "items `{}` line {}: the id of this item is already used by line {first}; item ids must be unique",
                    self.source, item.line
                ),
            )
            .with_metadata("line", item.line)
            .with_metadata("first_line", first)
            .with_metadata("file", self.source.clone())),
            None => {
                self.seen.insert(item.id.clone(), item.line);
                Ok(item)
            }
        }
    }
}

/// Items of a JSON-lines reader, checked one line at a time (a malformed line or a
/// duplicate id is an error naming the line(s) before that item is handed out).
#[derive(Debug)]
pub struct ItemReader<R> {
    reader: R,
    checker: Checker,
    failed: bool,
}

impl<R: BufRead> ItemReader<R> {
    /// Items of `reader`; `source` names it in errors (a path, or `-` for stdin).
    pub fn new(reader: R, source: impl Into<String>) -> ItemReader<R> {
        ItemReader {
            reader,
            checker: Checker::new(source),
            failed: false,
        }
    }

    fn read_item(&mut self) -> Option<Result<Item, ErrorInfo>> {
        let mut text = String::new();
        loop {
            text.clear();
            match self.reader.read_line(&mut text) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(error) => {
                    let source = self.checker.source.clone();
                    let info = ErrorInfo::new(
                        Stage::Config,
                        codes::BATCH_ITEMS_READ_FAILED,
                        format!("cannot read items `{source}`: {error}"),
                    )
                    .with_metadata("file", source);
                    return Some(Err(info));
                }
            }
            if let Some(item) = self.checker.check(&text) {
                return Some(item);
            }
        }
    }
}

impl<R: BufRead> Iterator for ItemReader<R> {
    type Item = Result<Item, ErrorInfo>;

    /// The next item; after an error, nothing more.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.read_item();
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

/// Every item of `reader`, checked before anything runs: the first bad line's error.
pub fn read_all<R: BufRead>(reader: R, source: &str) -> Result<Vec<Item>, ErrorInfo> {
    ItemReader::new(reader, source).collect()
}
