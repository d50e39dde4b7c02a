//! Readable output for terminals: `fabric run` and `fabric doctor` print these when stdout
//! is a terminal and `--json` is not given (piped output stays JSON).

use fabric_config::codes;
use std::fmt::Write as _;
use std::path::Path;

use fabric_config::agent::RunStatus;
use fabric_config::plan::{DoctorReport, DoctorStatus};
use fabric_config::{ErrorInfo, RunResult, Stage};
use serde_json::Value;

/// Characters of the response shown on a `--inputs` summary line.
const LINE_RESPONSE_CHARS: usize = 100;

/// What to try next for an error code, when there is a usual fix: the registry's hint of
/// the code, refined by what this failure carries (a missing Python module, the stage).
pub fn hint(info: &ErrorInfo) -> Option<&'static str> {
    let python_missing = info
        .metadata
        .get("stderr_tail")
        .and_then(Value::as_str)
        .is_some_and(|tail| tail.contains("No module named"));
    match info.code.as_str() {
        codes::HOST_CRASHED | codes::HOST_EXITED if python_missing => Some(
            "the adapter's Python package is not importable by the interpreter that ran it: \
             activate the virtual environment it is installed in, or set ADAPTER_PYTHON to \
             that environment's python (`fabric doctor CONFIG` checks this)",
        ),
        codes::TIMEOUT if info.stage == Stage::Start => Some(
            "the adapter took too long to start: raise --start-timeout, or check it with \
             `fabric doctor CONFIG`",
        ),
        code => codes::find(code).and_then(|entry| entry.hint).or(info
            .retryable
            .then_some("the adapter marked this failure retryable: running again may succeed")),
    }
}

/// `label:` padded so that values line up.
fn field(out: &mut String, label: &str, value: &str) {
    let mut lines = value.lines();
    let first = lines.next().unwrap_or("");
    let _ = writeln!(out, "  {:<12}{first}", format!("{label}:"));
    for line in lines {
        let _ = writeln!(out, "  {:<12}{line}", "");
    }
}

fn status_mark(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Succeeded => "✓",
        _ => "✗",
    }
}

fn response(result: &RunResult) -> Option<String> {
    match result.output.get("response") {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    }
}

fn usage(result: &RunResult) -> Option<String> {
    let usage = result.usage.as_ref()?;
    let mut parts = Vec::new();
    for (count, what) in [
        (usage.input_tokens, "input"),
        (usage.output_tokens, "output"),
        (usage.total_tokens, "total"),
    ] {
        if let Some(count) = count {
            parts.push(format!("{count} {what}"));
        }
    }
    let mut text = if parts.is_empty() {
        String::new()
    } else {
        format!("{} tokens", parts.join(", "))
    };
    if let Some(cost) = usage.cost_usd {
        if !text.is_empty() {
            text.push_str(", ");
        }
        text.push_str(&format!("${cost:.4}"));
    }
    (!text.is_empty()).then_some(text)
}

fn artifact_paths(result: &RunResult) -> Vec<String> {
    let root = result.artifacts.root.as_deref().map(Path::new);
    result
        .artifacts
        .artifacts
        .iter()
        .map(|artifact| match root {
            Some(root) if Path::new(&artifact.path).is_relative() => {
                root.join(&artifact.path).display().to_string()
            }
            _ => artifact.path.clone(),
        })
        .collect()
}

fn error_text(info: &ErrorInfo) -> String {
    let mut text = format!("{} [{}]: {}", info.stage.as_str(), info.code, info.message);
    if let Some(path) = info.path() {
        text.push_str(&format!(" (at `{path}`)"));
    }
    text
}

/// The readable result of one run.
pub fn result(result: &RunResult, elapsed_ms: u128) -> String {
    let mut out = format!(
        "{} {} · {} ({}) · {elapsed_ms} ms\n",
        status_mark(result.status),
        result.status.as_str(),
        result.agent_name,
        result.adapter_id.as_deref().unwrap_or(&result.harness),
    );
    if let Some(text) = response(result) {
        field(&mut out, "response", &text);
    }
    if let Some(text) = usage(result) {
        field(&mut out, "usage", &text);
    }
    let artifacts = artifact_paths(result);
    if !artifacts.is_empty() {
        field(&mut out, "artifacts", &artifacts.join("\n"));
    }
    if let Some(info) = &result.error {
        field(&mut out, "error", &error_text(info));
        if let Some(hint) = hint(info) {
            field(&mut out, "hint", hint);
        }
    }
    if let Some(text) = software(result) {
        field(&mut out, "software", &text);
    }
    field(&mut out, "invocation", &result.invocation_id);
    out.pop();
    out
}

/// One line of software evidence: the core's version, the size of the evidence and its
/// coverage (`fabric-core 0.1.0 · 3 contexts, 4 entries · complete`).
fn software(result: &RunResult) -> Option<String> {
    let execution = result.execution.as_ref()?;
    let core = execution
        .inventories
        .iter()
        .flat_map(|inventory| &inventory.entries)
        .find(|entry| entry.role == "core");
    let mut line = match core.and_then(|entry| entry.version.value.as_deref().map(|v| (entry, v))) {
        Some((entry, version)) => format!("{} {version} · ", entry.name),
        None => String::new(),
    };
    line.push_str(&format!(
        "{} contexts, {} entries · ",
        execution.inventories.len(),
        execution.entry_count()
    ));
    if execution.coverage.is_complete() {
        line.push_str("complete");
    } else {
        let gaps: Vec<String> = execution
            .coverage
            .gaps
            .iter()
            .map(|gap| format!("{}: {}", gap.participant, gap.reason))
            .collect();
        line.push_str(&format!("incomplete ({})", gaps.join(", ")));
    }
    Some(line)
}

/// One line for a `--inputs` result: status, time, then the response or the error.
pub fn result_line(number: usize, result: &RunResult, elapsed_ms: u128) -> String {
    let mut line = format!(
        "{} #{number} {} · {elapsed_ms} ms",
        status_mark(result.status),
        result.status.as_str()
    );
    if let Some(info) = &result.error {
        line.push_str(&format!(" · {}", error_text(info)));
    } else if let Some(text) = response(result) {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut short: String = flat.chars().take(LINE_RESPONSE_CHARS).collect();
        if short.len() < flat.len() {
            short.push('…');
        }
        line.push_str(&format!(" · {short}"));
    }
    line
}

/// An error before any result, with its hint (`interrupted` after a signal).
pub fn error(info: &ErrorInfo) -> String {
    let info = &crate::interrupt::explain(info);
    let mut out = format!("✗ error: {}\n", error_text(info));
    if let Some(tail) = info.metadata.get("stderr_tail").and_then(Value::as_str) {
        let last: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
        let shown = &last[last.len().saturating_sub(5)..];
        if !shown.is_empty() {
            field(&mut out, "stderr", &shown.join("\n"));
        }
    }
    if let Some(hint) = hint(info) {
        field(&mut out, "hint", hint);
    }
    out.pop();
    out
}

fn doctor_mark(status: DoctorStatus) -> &'static str {
    match status {
        DoctorStatus::Pass => "✓",
        DoctorStatus::Warn => "!",
        DoctorStatus::Fail => "✗",
    }
}

/// The readable doctor report: a verdict line, then one line per check (mark, name,
/// message, the config field) with the descriptor file it resolved and, for a failed
/// check with a usual fix, a hint.
pub fn doctor(report: &DoctorReport) -> String {
    let count = |status: DoctorStatus| {
        report
            .checks
            .iter()
            .filter(|check| check.status == status)
            .count()
    };
    let (failed, warned) = (count(DoctorStatus::Fail), count(DoctorStatus::Warn));
    let verdict = match (failed, warned) {
        (0, 0) => "ready: every check passed".to_owned(),
        (0, warned) => format!("ready, with {warned} warning{}", plural(warned)),
        (failed, warned) => format!(
            "not ready: {failed} check{} failed, {warned} warning{}",
            plural(failed),
            plural(warned)
        ),
    };
    let name = if report.agent_name.is_empty() {
        "config"
    } else {
        &report.agent_name
    };
    let mut out = format!(
        "{} doctor · {name} · {verdict}\n",
        doctor_mark(report.status)
    );
    let width = report
        .checks
        .iter()
        .map(|check| check.name.chars().count())
        .max()
        .unwrap_or(0);
    for check in &report.checks {
        let mut line = format!(
            "  {} {:<width$}  {}",
            doctor_mark(check.status),
            check.name,
            check.message
        );
        if let Some(path) = &check.path
            && !check.message.contains(path.as_str())
        {
            line.push_str(&format!(" (at `{path}`)"));
        }
        let _ = writeln!(out, "{line}");
        let indent = " ".repeat(width + 6);
        if let Some(file) = check.metadata.get("file").and_then(Value::as_str) {
            let _ = writeln!(out, "{indent}{file}");
        }
        if check.status == DoctorStatus::Fail
            && let Some(hint) = codes::find(&check.code).and_then(|entry| entry.hint)
        {
            let _ = writeln!(out, "{indent}hint: {hint}");
        }
    }
    out.pop();
    out
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
