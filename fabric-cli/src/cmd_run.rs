//! `fabric run CONFIG (--input TEXT | --request FILE | --inputs FILE.jsonl) [--base-dir DIR]`
//! (owned by the hosting work).
//!
//! - `--input TEXT` / `--request FILE` (a RunRequest JSON object): start a runtime, invoke it
//!   once, stop it, print the RunResult JSON (pretty).
//! - `--inputs FILE.jsonl`: one runtime, one invocation per non-empty line in order, one
//!   compact RunResult JSON per output line. A line holding a JSON object is a RunRequest;
//!   any other JSON value (for example a string) is the request's `input`.
//!
//! - `--check-level LEVEL` (one invocation): health-check the new runtime first; the
//!   CheckReport is added to the printed RunResult under `check`. When the check does not
//!   pass, nothing is invoked and only `{"check": report}` is printed (exit 1).
//!
//! - `--stream` (one invocation): native OpenAI streaming, see `stream.rs`.
//!
//! Exit codes: 0 every result succeeded; 1 a result failed or was cancelled; 2 invalid
//! config, request or input file (`{"error": {...}}` on stdout, nothing started); 3 the
//! runtime failed before a result (`{"error": {...}}` on stdout).
//!
//! When stderr is a terminal, a one-line human summary per result goes to stderr, and
//! `--inputs` shows a progress line (done/total, rate, failures).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use fabric_config::agent::RunStatus;
use fabric_config::health::HealthLevel;
use fabric_config::{ErrorInfo, FabricConfig, RunRequest, RunResult, Stage};
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

use crate::common::{parse_level, read_config, runtime_options};
use crate::output::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, exit_for, print_error, print_json};

/// Arguments of `fabric run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Input text for one invocation.
    #[arg(long, conflicts_with_all = ["request", "inputs"])]
    pub input: Option<String>,
    /// RunRequest JSON file for one invocation.
    #[arg(long, conflicts_with = "inputs")]
    pub request: Option<PathBuf>,
    /// JSON-lines file: one runtime, one invocation per line, one RunResult per output line.
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// Health-check the runtime at this level (live, active, ready) before the invocation;
    /// the CheckReport is printed under `check`, and the invocation runs only when it passed.
    #[arg(long, value_parser = parse_level, conflicts_with = "inputs")]
    pub check_level: Option<HealthLevel>,
    /// Stream the reply (native OpenAI streaming): the assistant text as it arrives on a
    /// terminal, one JSON line per chunk when piped, then the result.
    #[arg(long, conflicts_with_all = ["inputs", "check_level"])]
    pub stream: bool,
    /// Seconds the adapter host may take to answer `start` (default 90).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub start_timeout: Option<f64>,
}

fn invalid(code: &str, message: String, path: &Path) -> ErrorInfo {
    ErrorInfo::new(Stage::Config, code, message).with_metadata("file", path.display().to_string())
}

/// Why a JSON object is not a RunRequest: a value-free reason and the field path
/// (`request.overrides`).
struct RequestProblem {
    reason: String,
    path: Option<String>,
}

/// A JSON value as a request: an object is a RunRequest (unknown keys are dropped, as
/// upstream does), anything else is its input.
fn request_from(value: Value) -> Result<RunRequest, RequestProblem> {
    match value {
        Value::Object(_) => RunRequest::from_value(value)
            .and_then(|request| request.validate().map(|()| request))
            .map_err(|error| {
                let info = ErrorInfo::from(error);
                let path = info
                    .metadata
                    .get("path")
                    .and_then(Value::as_str)
                    .map(|path| format!("request.{path}"));
                RequestProblem {
                    reason: info.message,
                    path,
                }
            }),
        other => Ok(RunRequest::new(other)),
    }
}

impl RequestProblem {
    fn into_error(self, message: String, file: &Path) -> ErrorInfo {
        let info = invalid("invalid_request", message, file);
        match self.path {
            Some(path) => info.with_metadata("path", path),
            None => info,
        }
    }
}

fn read_request(path: &Path) -> Result<RunRequest, ErrorInfo> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        invalid(
            "request_read_failed",
            format!("cannot read request `{}`: {error}", path.display()),
            path,
        )
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        invalid(
            "invalid_request",
            format!("request `{}` is not JSON: {error}", path.display()),
            path,
        )
    })?;
    if !value.is_object() {
        return Err(invalid(
            "invalid_request",
            format!(
                "request `{}` must be a RunRequest JSON object",
                path.display()
            ),
            path,
        ));
    }
    request_from(value).map_err(|problem| {
        let message = format!(
            "request `{}` is not a RunRequest: {}",
            path.display(),
            problem.reason
        );
        problem.into_error(message, path)
    })
}

fn read_inputs(path: &Path) -> Result<Vec<RunRequest>, ErrorInfo> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        invalid(
            "inputs_read_failed",
            format!("cannot read inputs `{}`: {error}", path.display()),
            path,
        )
    })?;
    let mut requests = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        let bad = |reason: String| {
            invalid(
                "invalid_request",
                format!("inputs `{}` line {number}: {reason}", path.display()),
                path,
            )
            .with_metadata("line", number)
        };
        let value: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let request = request_from(value).map_err(|problem| {
            let message = format!(
                "inputs `{}` line {number}: {}",
                path.display(),
                problem.reason
            );
            problem
                .into_error(message, path)
                .with_metadata("line", number)
        })?;
        requests.push(request);
    }
    Ok(requests)
}

fn exit_for_status(status: RunStatus) -> u8 {
    match status {
        RunStatus::Succeeded => EXIT_OK,
        _ => EXIT_FAILED,
    }
}

/// A one-line human summary of a result (stderr, terminals only).
fn summary(result: &RunResult, elapsed_ms: u128) -> String {
    let mut line = format!(
        "{} {} · {} · {} ms",
        match result.status {
            RunStatus::Succeeded => "✓",
            _ => "✗",
        },
        result.status.as_str(),
        result.invocation_id,
        elapsed_ms
    );
    if let Some(error) = &result.error {
        line.push_str(&format!(
            " · {} [{}]: {}",
            error.stage.as_str(),
            error.code,
            error.message
        ));
    }
    if let Some(usage) = &result.usage {
        let count = |v: Option<u64>| v.map_or("?".to_owned(), |v| v.to_string());
        line.push_str(&format!(
            " · tokens in {} out {}",
            count(usage.input_tokens),
            count(usage.output_tokens)
        ));
    }
    if let Some(response) = result.output.get("response").and_then(Value::as_str) {
        let short: String = response.chars().take(120).collect();
        line.push_str(&format!("\n  {short}"));
    }
    line
}

/// Runs `fabric run`.
pub fn run(args: Args) -> ExitCode {
    let config = match read_config(&args.config.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let options = match runtime_options(&args.config, args.start_timeout) {
        Ok(options) => options,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    if let Some(path) = &args.inputs {
        return match read_inputs(path) {
            Ok(requests) => run_many(&config, requests, &options),
            Err(info) => print_error(&info, EXIT_INVALID),
        };
    }
    let request = match (&args.input, &args.request) {
        (Some(text), _) => RunRequest::new(text.as_str()),
        (None, Some(path)) => match read_request(path) {
            Ok(request) => request,
            Err(info) => return print_error(&info, EXIT_INVALID),
        },
        (None, None) => {
            let info = ErrorInfo::new(
                Stage::Config,
                "invalid_request",
                "one of --input, --request or --inputs is required",
            );
            return print_error(&info, EXIT_INVALID);
        }
    };
    if args.stream {
        return crate::stream::run_stream(&config, request, &options, summary);
    }
    if let Some(level) = args.check_level {
        return run_checked(&config, request, &options, level);
    }
    let began = Instant::now();
    match Fabric::new().run(&config, request, &options) {
        Ok(result) => {
            if std::io::stderr().is_terminal() {
                eprintln!("{}", summary(&result, began.elapsed().as_millis()));
            }
            print_json(&serde_json::to_value(&result).unwrap_or(Value::Null));
            ExitCode::from(exit_for_status(result.status))
        }
        Err(error) => {
            let exit = exit_for(&error);
            print_error(&ErrorInfo::from(error), exit)
        }
    }
}

/// `fabric run --check-level`: the RunResult with the CheckReport under `check`, or only
/// `{"check": report}` (exit 1) when the check did not pass and nothing was invoked.
fn run_checked(
    config: &FabricConfig,
    request: RunRequest,
    options: &RunOptions,
    level: HealthLevel,
) -> ExitCode {
    let began = Instant::now();
    match Fabric::new().run_checked(config, request, options, level, None) {
        Ok((report, Some(result))) => {
            if std::io::stderr().is_terminal() {
                eprintln!("{}", summary(&result, began.elapsed().as_millis()));
            }
            let mut value = serde_json::to_value(&result).unwrap_or(Value::Null);
            value["check"] = serde_json::to_value(&report).unwrap_or(Value::Null);
            print_json(&value);
            ExitCode::from(exit_for_status(result.status))
        }
        Ok((report, None)) => {
            print_json(&json!({ "check": report }));
            ExitCode::from(EXIT_FAILED)
        }
        Err(error) => {
            let exit = exit_for(&error);
            print_error(&ErrorInfo::from(error), exit)
        }
    }
}

fn print_line(value: &Value) {
    crate::output::print_line(&value.to_string());
}

fn run_many(config: &FabricConfig, requests: Vec<RunRequest>, options: &RunOptions) -> ExitCode {
    let fabric = Fabric::new();
    let runtime = match fabric.start_runtime(config, options) {
        Ok(runtime) => runtime,
        Err(error) => {
            let exit = exit_for(&error);
            return print_error(&ErrorInfo::from(error), exit);
        }
    };
    let terminal = std::io::stderr().is_terminal();
    let total = requests.len() as u64;
    let progress = if terminal {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} invocations · {msg} [{elapsed_precise}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message("0 failed");
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(bar)
    } else {
        None
    };
    let mut failures = 0u64;
    let mut exit = EXIT_OK;
    let started = Instant::now();
    for request in requests {
        let began = Instant::now();
        match runtime.invoke(request) {
            Ok(result) => {
                if result.status != RunStatus::Succeeded {
                    failures += 1;
                    exit = EXIT_FAILED;
                }
                if let Some(bar) = &progress {
                    bar.println(summary(&result, began.elapsed().as_millis()));
                    bar.inc(1);
                    let rate = bar.position() as f64 / started.elapsed().as_secs_f64().max(1e-9);
                    bar.set_message(format!("{rate:.1}/s · {failures} failed"));
                }
                print_line(&serde_json::to_value(&result).unwrap_or(Value::Null));
                if crate::output::stdout_closed() {
                    // The reader went away (`| head -1`): stop invoking, stop the runtime.
                    break;
                }
            }
            Err(error) => {
                exit = exit_for(&error);
                let info = ErrorInfo::from(error);
                if let Some(bar) = &progress {
                    bar.println(format!(
                        "✗ {} [{}]: {}",
                        info.stage.as_str(),
                        info.code,
                        info.message
                    ));
                }
                print_line(&json!({ "error": error_body(&info) }));
                break;
            }
        }
    }
    if let Some(bar) = &progress {
        bar.finish();
    }
    let stopped = runtime.stop();
    if let Some(error) = &stopped.error
        && terminal
    {
        eprintln!(
            "stop: {} [{}]: {}",
            error.stage.as_str(),
            error.code,
            error.message
        );
    }
    ExitCode::from(exit)
}

fn error_body(info: &ErrorInfo) -> Value {
    let mut body = json!({
        "code": info.code,
        "stage": info.stage.as_str(),
        "message": info.message,
        "path": info.path(),
    });
    if !info.metadata.is_empty() {
        body["metadata"] = Value::Object(info.metadata.clone());
    }
    body
}
