//! `fabric export gym RESULTS.jsonl --task-id T --rollout-id R [--atof ATOF.jsonl]`: maps
//! one rollout's RunResults to NeMo Gym's observation contract and prints
//! `{"ng_agent_observations": {...}, "trajectory": {...}}` (exit 0), or `{"error": {...}}`
//! (exit 2).
//!
//! RESULTS.jsonl holds one JSON object per line: RunResults, and Relay ATOF records
//! (`kind` `scope` or `mark`), so the output of `fabric run --stream-atof` can be exported
//! as it is; `--atof` adds the records of another file. Blank lines are skipped.

use fabric_config::codes;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fabric_config::gym::GymObservationsRequest;
use fabric_config::{ErrorInfo, RunResult, Stage};
use fabric_relay::gym;
use serde_json::Value;

use crate::output::{EXIT_INVALID, EXIT_OK, print_error, print_json};

/// Arguments of `fabric export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub target: Target,
}

/// What to export to.
#[derive(Debug, clap::Subcommand)]
pub enum Target {
    /// NeMo Gym rollout observations (`ng_agent_observations`) and the trajectory record.
    Gym(GymArgs),
}

/// Arguments of `fabric export gym`.
#[derive(Debug, clap::Args)]
pub struct GymArgs {
    /// JSON Lines file of RunResults (ATOF records may be mixed in).
    pub results: PathBuf,
    /// Gym task id.
    #[arg(long)]
    pub task_id: String,
    /// Gym rollout id.
    #[arg(long)]
    pub rollout_id: String,
    /// JSON Lines file of Relay ATOF records of the same invocations.
    #[arg(long)]
    pub atof: Option<PathBuf>,
    /// The bundle's `source`.
    #[arg(long, default_value = fabric_config::gym::DEFAULT_SOURCE)]
    pub source: String,
}

/// Runs `fabric export`.
pub fn run(args: Args) -> ExitCode {
    let Target::Gym(args) = args.target;
    match export_gym(&args) {
        Ok(value) => {
            print_json(&value);
            ExitCode::from(EXIT_OK)
        }
        Err(info) => print_error(&info, EXIT_INVALID),
    }
}

fn is_atof(value: &Value) -> bool {
    matches!(
        value.get("kind").and_then(Value::as_str),
        Some("scope" | "mark")
    )
}

/// Reads `path` line by line into results and ATOF records.
fn read_lines(
    path: &Path,
    results: &mut Vec<RunResult>,
    atof: &mut Vec<Value>,
) -> Result<(), ErrorInfo> {
    let file = || path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| {
        ErrorInfo::new(
            Stage::Config,
            codes::EXPORT_READ_FAILED,
            format!("cannot read `{}`: {error}", path.display()),
        )
        .with_metadata("file", file())
    })?;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let invalid = |what: String| {
            ErrorInfo::new(
                Stage::Config,
                codes::EXPORT_LINE_INVALID,
                format!("`{}` line {}: {what}", path.display(), index + 1),
            )
            .with_metadata("file", file())
            .with_metadata("line", index + 1)
        };
        let value: Value = serde_json::from_str(line)
            .map_err(|error| invalid(format!("not JSON (column {})", error.column())))?;
        if is_atof(&value) {
            atof.push(value);
            continue;
        }
        let result: RunResult = serde_json::from_value(value)
            .map_err(|_| invalid("neither a RunResult nor an ATOF record".to_owned()))?;
        results.push(result);
    }
    Ok(())
}

fn export_gym(args: &GymArgs) -> Result<Value, ErrorInfo> {
    let (mut results, mut atof) = (Vec::new(), Vec::new());
    read_lines(&args.results, &mut results, &mut atof)?;
    if let Some(path) = &args.atof {
        let mut stray = Vec::new();
        read_lines(path, &mut stray, &mut atof)?;
        results.extend(stray);
    }
    let request = GymObservationsRequest {
        task_id: args.task_id.clone(),
        rollout_id: args.rollout_id.clone(),
        results,
        atof,
        source: Some(args.source.clone()),
        sandboxes: Vec::new(),
    };
    let observations = gym::observations(&request).map_err(|error| {
        let info = ErrorInfo::from(error);
        // The ids are flags here.
        match info.path() {
            Some(path @ ("task_id" | "rollout_id")) => {
                let flag = format!("--{}", path.replace('_', "-"));
                ErrorInfo::new(
                    info.stage,
                    info.code.clone(),
                    info.message.replace(path, &flag),
                )
                .with_metadata("path", flag)
            }
            _ => info,
        }
    })?;
    Ok(serde_json::to_value(observations).unwrap_or(Value::Null))
}
