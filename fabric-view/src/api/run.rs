//! `GET /api/runs/{id}`: one run — a RunResult file, a batch item (`{batch}_{row}`) or an
//! invocation directory — with what its files hold: the invocation record, stdout, the
//! sampled stats, the workspace patch, artifacts, captured model calls, health reports, and
//! the conversation.

use std::io::Read;
use std::path::{Path, PathBuf};

use fabric_config::ErrorInfo;
use fabric_config::result::RunResult;
use serde_json::Value;

use super::{Answered, conversation, not_found, ok, samples};
use crate::index::classify::{artifact_path, read_json, status_name};
use crate::index::{Kind, Shared};
use crate::wire::{Artifact, FileRef, ModelCalls, Problem, RunAnswer, SystemStats};

/// Where a run's parts are.
struct Parts {
    kind: &'static str,
    label: String,
    result: Option<RunResult>,
    /// The error of a batch item that has no result.
    error: Option<ErrorInfo>,
    /// Its `.fabric/<runtime>/<invocation>/` directory.
    dir: Option<PathBuf>,
    problems: Vec<Problem>,
}

impl Parts {
    fn new(kind: &'static str, label: String) -> Parts {
        Parts {
            kind,
            label,
            result: None,
            error: None,
            dir: None,
            problems: Vec::new(),
        }
    }
}

fn problem(path: &Path, message: impl Into<String>) -> Problem {
    Problem {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Finds the run of an id.
fn locate(shared: &Shared, id: &str) -> Option<Parts> {
    let index = shared.read();
    let mut parts = if let Some((batch, row)) = id.split_once('_') {
        let (path, lines) = index.batch(batch)?;
        let row: usize = row.parse().ok()?;
        let item = lines.items.get(row)?;
        let label = format!("{} #{row} {}", shared.label(path), item.id);
        let mut parts = Parts::new("batch_item", label);
        match lines.line(path, row) {
            Ok(line) => {
                parts.result = line.result.or(line.results.and_then(|mut all| all.pop()));
                parts.error = line.error;
            }
            Err(message) => parts.problems.push(problem(path, message)),
        }
        parts
    } else {
        let (path, entry) = index.entry(id)?;
        let mut parts = Parts::new("run_result", shared.label(path));
        match &entry.kind {
            Kind::Result(_) => match read_json(path).and_then(|value| {
                serde_json::from_value::<RunResult>(value).map_err(|e| e.to_string())
            }) {
                Ok(result) => parts.result = Some(result),
                Err(message) => parts.problems.push(problem(path, message)),
            },
            Kind::Invocation(_) => {
                parts.kind = "invocation";
                parts.dir = Some(path.to_path_buf());
            }
            _ => return None,
        }
        parts
    };
    if parts.dir.is_none()
        && let Some(result) = &parts.result
    {
        parts.dir = invocation_dir(result).or_else(|| {
            index
                .invocation_dir(&result.invocation_id)
                .map(Path::to_path_buf)
        });
    }
    Some(parts)
}

/// The invocation directory a result's core-collected artifacts are in.
fn invocation_dir(result: &RunResult) -> Option<PathBuf> {
    result
        .artifacts
        .artifacts
        .iter()
        .find(|artifact| artifact.name == "stdout" && artifact.kind == "log")
        .and_then(|artifact| {
            artifact_path(result, &artifact.path)
                .parent()
                .map(Path::to_path_buf)
        })
        .filter(|dir| dir.is_dir())
}

/// Whether a file name is a saved health-check report's (`health*.json`).
fn is_health_report(name: &str) -> bool {
    name.starts_with("health") && name.ends_with(".json")
}

/// The files of `dir`, by name.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    paths.sort();
    paths
}

/// The health-check reports saved in `dir`, by name.
fn health_reports(dir: &Path) -> Vec<Value> {
    files(dir)
        .iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| is_health_report(&name.to_string_lossy()))
        })
        .filter_map(|path| read_json(path).ok())
        .collect()
}

/// Whether the first bytes of a file look like text.
fn looks_like_text(path: &Path) -> bool {
    let mut head = [0u8; 1024];
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let read = file.read(&mut head).unwrap_or(0);
    let head = &head[..read];
    !head.contains(&0)
        && match std::str::from_utf8(head) {
            Ok(_) => true,
            Err(error) => error.error_len().is_none(), // cut inside a character
        }
}

fn file_ref(shared: &Shared, path: &Path) -> Option<FileRef> {
    let size = std::fs::metadata(path).ok()?.len();
    Some(FileRef {
        file_id: shared.register_file(path)?,
        size,
    })
}

fn artifact(shared: &Shared, name: String, kind: Option<String>, path: &Path) -> Artifact {
    let file_id = shared.register_file(path);
    Artifact {
        name,
        kind,
        size: std::fs::metadata(path).ok().map(|m| m.len()),
        text: file_id.is_some() && looks_like_text(path),
        file_id,
    }
}

/// The path of the first artifact of `kind` (if any), else `file` in the invocation
/// directory.
fn part_path(parts: &Parts, kind: Option<&str>, file: &str) -> Option<PathBuf> {
    parts
        .result
        .as_ref()
        .zip(kind)
        .and_then(|(result, kind)| {
            result
                .artifacts
                .artifacts
                .iter()
                .find(|artifact| artifact.kind == kind)
                .map(|artifact| artifact_path(result, &artifact.path))
        })
        .or_else(|| parts.dir.as_ref().map(|dir| dir.join(file)))
        .filter(|path| path.is_file())
}

pub(super) fn run(shared: &Shared, id: &str) -> Answered {
    let Some(mut parts) = locate(shared, id) else {
        return not_found("run");
    };
    let invocation = parts
        .dir
        .as_ref()
        .and_then(|dir| read_json(&dir.join("adapter-invocation.json")).ok());
    let input = invocation
        .as_ref()
        .and_then(|record| record.pointer("/request/input"))
        .cloned()
        .unwrap_or(Value::Null);
    let stdout_path = part_path(&parts, None, "stdout.txt");
    let output = match &parts.result {
        Some(result) => result.output.clone(),
        None => stdout_path
            .as_ref()
            .and_then(|path| read_json(path).ok())
            .unwrap_or(Value::Null),
    };
    let (conversation, conversation_source, unreadable) =
        conversation::of_run(parts.result.as_ref(), &input, &output);
    if let Some(message) = unreadable {
        parts
            .problems
            .push(problem(Path::new("conversation"), message));
    }
    let mut system_stats = SystemStats::default();
    if let Some(path) = part_path(&parts, Some("system_stats_samples"), "system-stats.jsonl") {
        match samples::read(&path) {
            Ok(samples) => system_stats.samples = samples,
            Err(message) => parts.problems.push(problem(&path, message)),
        }
    }
    system_stats.summary = part_path(
        &parts,
        Some("system_stats_summary"),
        "system-stats-summary.json",
    )
    .and_then(|path| read_json(&path).ok());
    let mut artifacts = Vec::new();
    let mut health = Vec::new();
    if let Some(result) = &parts.result {
        for listed in &result.artifacts.artifacts {
            let path = artifact_path(result, &listed.path);
            if listed.kind.contains("health")
                && let Ok(report) = read_json(&path)
            {
                health.push(report);
            }
            artifacts.push(artifact(
                shared,
                listed.name.clone(),
                Some(listed.kind.clone()),
                &path,
            ));
        }
    } else if let Some(dir) = &parts.dir {
        for path in files(dir) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if is_health_report(&name)
                && let Ok(report) = read_json(&path)
            {
                health.push(report);
            }
            artifacts.push(artifact(shared, name, None, &path));
        }
    }
    // A result's invocation directory: the reports saved there (`fabric check CONFIG >
    // .fabric/RUNTIME/INVOCATION/health.json`), when the result lists none.
    if parts.result.is_some()
        && health.is_empty()
        && let Some(dir) = &parts.dir
    {
        health.extend(health_reports(dir));
    }
    let model_calls = parts
        .result
        .as_ref()
        .and_then(|result| result.model_calls.as_ref())
        .map(|calls| ModelCalls {
            count: calls.count,
            file_id: calls
                .path
                .as_deref()
                .and_then(|path| shared.register_file(Path::new(path))),
        });
    let status = match (&parts.result, &parts.error) {
        (Some(result), _) => Some(status_name(result)),
        (None, Some(_)) => Some("errored".to_owned()),
        (None, None) => None,
    };
    let result = parts.result.as_ref();
    ok(&RunAnswer {
        id: id.to_owned(),
        kind: parts.kind,
        label: parts.label.clone(),
        status,
        input,
        output,
        error: result
            .and_then(|result| result.error.clone())
            .or(parts.error.clone()),
        events: result
            .map(|result| {
                result
                    .events
                    .iter()
                    .filter_map(|event| serde_json::to_value(event).ok())
                    .collect()
            })
            .unwrap_or_default(),
        usage: result
            .and_then(|result| result.usage.as_ref())
            .and_then(|usage| serde_json::to_value(usage).ok()),
        result: result.and_then(|result| serde_json::to_value(result).ok()),
        invocation,
        conversation,
        conversation_source,
        system_stats,
        artifacts,
        patch: part_path(&parts, Some("patch"), "workspace.patch")
            .and_then(|path| file_ref(shared, &path)),
        stdout: stdout_path.and_then(|path| file_ref(shared, &path)),
        model_calls,
        health,
        problems: parts.problems,
    })
}
