//! What a file is: read once when it is new or changed (a batch is then appended to).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use fabric_config::result::RunResult;
use serde_json::Value;

use super::batch::{Batch, is_batch_line};
use super::walk::INVOCATION_RECORD;

/// The largest JSON document (and JSONL first line) read.
pub(crate) const MAX_DOCUMENT: u64 = 64 * 1024 * 1024;

/// The run a RunResult file (or an invocation directory) is, as the index lists it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunMeta {
    pub(crate) status: Option<String>,
    pub(crate) runtime_id: Option<String>,
    pub(crate) invocation_id: Option<String>,
    pub(crate) started_at: Option<u64>,
    pub(crate) duration_ms: Option<u64>,
    /// The ATIF trajectories it lists (absolute paths).
    pub(crate) trajectories: Vec<PathBuf>,
}

impl RunMeta {
    pub(crate) fn of_result(result: &RunResult) -> RunMeta {
        let first = result.events.iter().map(|e| e.timestamp_millis).min();
        let last = result.events.iter().map(|e| e.timestamp_millis).max();
        RunMeta {
            status: Some(status_name(result)),
            runtime_id: Some(result.runtime_id.clone()),
            invocation_id: Some(result.invocation_id.clone()),
            started_at: first,
            duration_ms: first.zip(last).map(|(first, last)| last - first),
            trajectories: result
                .artifacts
                .artifacts
                .iter()
                .filter(|artifact| artifact.kind == "atif")
                .map(|artifact| artifact_path(result, &artifact.path))
                .collect(),
        }
    }
}

/// `succeeded`, `failed` or `cancelled`.
pub(crate) fn status_name(result: &RunResult) -> String {
    serde_json::to_value(result.status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// An artifact's path: relative ones are under the result's artifact root.
pub(crate) fn artifact_path(result: &RunResult, path: &str) -> PathBuf {
    let path = Path::new(path);
    match (&result.artifacts.root, path.is_absolute()) {
        (Some(root), false) => Path::new(root).join(path),
        _ => path.to_path_buf(),
    }
}

/// What a file is.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Batch(Box<Batch>),
    Result(Box<RunMeta>),
    Atif,
    Atof,
    Gym {
        records: Option<u64>,
    },
    Summary(Value),
    Invocation(Box<RunMeta>),
    /// Not ours (a config, a schema): not listed.
    Other,
    /// Looked like ours and could not be read.
    Problem(String),
}

/// Classifies a `.json`/`.jsonl` file.
pub(crate) fn file(path: &Path) -> Kind {
    let jsonl = path.extension().is_some_and(|e| e == "jsonl");
    let result = if jsonl { lines(path) } else { document(path) };
    result.unwrap_or_else(Kind::Problem)
}

fn lines(path: &Path) -> Result<Kind, String> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    if matches!(
        name.as_deref(),
        Some("system-stats.jsonl" | "model-calls.jsonl")
    ) {
        return Ok(Kind::Other); // read with their invocation
    }
    let file = std::fs::File::open(path).map_err(|error| format!("cannot read: {error}"))?;
    let mut first = Vec::new();
    BufReader::new(file)
        .take(MAX_DOCUMENT)
        .read_until(b'\n', &mut first)
        .map_err(|error| format!("cannot read: {error}"))?;
    if first.iter().all(u8::is_ascii_whitespace) {
        return Ok(Kind::Other);
    }
    let Ok(first) = serde_json::from_slice::<Value>(&first) else {
        return Err("the first line is not JSON (skipped)".into());
    };
    if is_batch_line(&first) {
        let mut batch = Batch::new();
        batch
            .read_more(path)
            .map_err(|error| format!("cannot read: {error}"))?;
        batch.seen_items = batch.items.len();
        return Ok(Kind::Batch(Box::new(batch)));
    }
    match first.get("kind").and_then(Value::as_str) {
        Some("scope" | "mark") if first.get("uuid").is_some() => Ok(Kind::Atof),
        _ => Ok(Kind::Other),
    }
}

/// Reads a whole JSON document (at most [`MAX_DOCUMENT`] bytes).
pub(crate) fn read_json(path: &Path) -> Result<Value, String> {
    let file = std::fs::File::open(path).map_err(|error| format!("cannot read: {error}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_DOCUMENT + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read: {error}"))?;
    if bytes.len() as u64 > MAX_DOCUMENT {
        return Err("over 64 MiB: not read".into());
    }
    serde_json::from_slice(&bytes).map_err(|error| format!("not JSON (skipped): {error}"))
}

fn document(path: &Path) -> Result<Kind, String> {
    let value = read_json(path)?;
    let Some(object) = value.as_object() else {
        return Ok(Kind::Other);
    };
    let has = |key: &str| object.contains_key(key);
    if has("runtime_id") && has("invocation_id") && has("status") && has("harness") {
        let result: RunResult = serde_json::from_value(value)
            .map_err(|error| format!("not a RunResult (skipped): {error}"))?;
        return Ok(Kind::Result(Box::new(RunMeta::of_result(&result))));
    }
    if has("steps") && (has("schema_version") || has("session_id") || has("agent")) {
        return Ok(Kind::Atif);
    }
    if let Some(bundle) = object.get("ng_agent_observations") {
        let records = bundle
            .get("records")
            .and_then(Value::as_array)
            .map(|records| records.len() as u64);
        return Ok(Kind::Gym { records });
    }
    if has("items") && has("succeeded") && has("wall_ms") && has("latency") {
        return Ok(Kind::Summary(value));
    }
    Ok(Kind::Other)
}

/// An invocation directory: its record's ids.
pub(crate) fn invocation(dir: &Path) -> Kind {
    match read_json(&dir.join(INVOCATION_RECORD)) {
        Ok(record) => {
            let context = record.get("runtime_context");
            let text = |key: &str| {
                context
                    .and_then(|c| c.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            Kind::Invocation(Box::new(RunMeta {
                runtime_id: text("runtime_id"),
                invocation_id: text("invocation_id"),
                ..RunMeta::default()
            }))
        }
        Err(message) => Kind::Problem(format!("{INVOCATION_RECORD}: {message}")),
    }
}
