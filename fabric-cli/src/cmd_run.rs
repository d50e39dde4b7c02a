//! `fabric run CONFIG (--input TEXT | --request FILE | --inputs FILE.jsonl) [--base-dir DIR]`
//! (owned by the hosting work).
//!
//! - `--input TEXT` / `--request FILE` (a RunRequest JSON object): start a runtime, invoke it
//!   once, stop it, print the RunResult JSON (pretty).
//! - `--inputs FILE.jsonl`: one runtime, one invocation per non-empty line in order, one
//!   compact RunResult JSON per output line. A line holding a JSON object is a RunRequest;
//!   any other JSON value (for example a string) is the request's `input`. A file without a
//!   request is an error.
//!
//! Output: JSON as above when stdout is not a terminal or with `--json`; on a terminal
//! without `--json`, a readable result instead (status, response, usage, time, artifact
//! paths, the error with a hint) and, for `--inputs`, one summary line per input under a
//! progress bar.
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

use fabric_config::codes;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use fabric_config::agent::RunStatus;
use fabric_config::health::HealthLevel;
use fabric_config::{ErrorInfo, FabricConfig, RunRequest, Stage};
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

use crate::common::{parse_level, read_config, runtime_options};
use crate::human;
use crate::output::{
    EXIT_FAILED, EXIT_INVALID, EXIT_OK, error_value, exit_for, print_error, print_json, print_line,
};

/// What a `--inputs` line must hold (said by every line error).
const INPUTS_LINE: &str = "each non-empty line must be one JSON value: a RunRequest object, or any other value (such as a string) used as the input";

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
    /// JSON-lines file: one runtime, one invocation per non-empty line (a RunRequest object,
    /// or any other JSON value as the input). Piped: one RunResult JSON per line; on a
    /// terminal: one summary line per input and a progress bar.
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// Health-check the runtime at this level (live, active, ready) before the invocation;
    /// the CheckReport is printed under `check`, and the invocation runs only when it passed.
    #[arg(long, value_parser = parse_level, conflicts_with = "inputs")]
    pub check_level: Option<HealthLevel>,
    /// Stream the reply (native OpenAI streaming): the assistant text as it arrives on a
    /// terminal, one JSON line per chunk when piped or with --json, then the result.
    #[arg(long, conflicts_with_all = ["inputs", "check_level"])]
    pub stream: bool,
    /// Stream the raw NeMo Relay ATOF records of the turn (needs Relay telemetry): starts
    /// the runtime with the embedded collector and prints one JSON line per record, then
    /// the result as the last line.
    #[arg(long, conflicts_with_all = ["inputs", "check_level", "stream"])]
    pub stream_atof: bool,
    /// Seconds the adapter host may take to answer `start` (above 0, at most 10^9).
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = crate::flags::seconds,
        allow_hyphen_values = true,
        default_value_t = crate::flags::Seconds(crate::common::default_start_timeout())
    )]
    pub start_timeout: crate::flags::Seconds,
    #[command(flatten)]
    pub capture: crate::capture_flags::CaptureArgs,
    /// Print the full RunResult JSON even on a terminal (piped output is always JSON).
    #[arg(long)]
    pub json: bool,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// JSON on stdout (piped, or `--json`).
    Json,
    /// Readable text on a terminal.
    Human,
}

impl Style {
    fn of(args: &Args) -> Style {
        if !args.json && std::io::stdout().is_terminal() {
            Style::Human
        } else {
            Style::Json
        }
    }

    /// Prints an error before any result and returns `exit`.
    fn error(self, info: &ErrorInfo, exit: u8) -> ExitCode {
        match self {
            Style::Json => print_error(info, exit),
            Style::Human => {
                print_line(&human::error(info));
                ExitCode::from(exit)
            }
        }
    }
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
        let info = invalid(codes::INVALID_REQUEST, message, file);
        match self.path {
            Some(path) => info.with_metadata("path", path),
            None => info,
        }
    }
}

fn read_request(path: &Path) -> Result<RunRequest, ErrorInfo> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        invalid(
            codes::REQUEST_READ_FAILED,
            format!("cannot read request `{}`: {error}", path.display()),
            path,
        )
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        let reason = fabric_config::json_syntax_reason(&error, &text);
        invalid(
            codes::INVALID_REQUEST,
            format!(
                "request `{}` is not JSON: {reason} (line {}, column {})",
                path.display(),
                error.line(),
                error.column()
            ),
            path,
        )
        .with_metadata("line", error.line())
        .with_metadata("column", error.column())
    })?;
    if !value.is_object() {
        return Err(invalid(
            codes::INVALID_REQUEST,
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
            codes::INPUTS_READ_FAILED,
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
                codes::INVALID_REQUEST,
                format!(
                    "inputs `{}` line {number}: {reason}; {INPUTS_LINE}",
                    path.display()
                ),
                path,
            )
            .with_metadata("line", number)
        };
        let value: Value = serde_json::from_str(line).map_err(|error| {
            let reason = fabric_config::json_syntax_reason(&error, line);
            bad(format!("not JSON: {reason} (column {})", error.column()))
                .with_metadata("column", error.column())
        })?;
        let request = request_from(value).map_err(|problem| {
            let message = format!(
                "inputs `{}` line {number}: {}; {INPUTS_LINE}",
                path.display(),
                problem.reason
            );
            problem
                .into_error(message, path)
                .with_metadata("line", number)
        })?;
        requests.push(request);
    }
    if requests.is_empty() {
        return Err(invalid(
            codes::INVALID_REQUEST,
            format!(
                "inputs `{}` holds no request; {INPUTS_LINE}",
                path.display()
            ),
            path,
        ));
    }
    Ok(requests)
}

fn exit_for_status(status: RunStatus) -> u8 {
    match status {
        RunStatus::Succeeded => EXIT_OK,
        _ => EXIT_FAILED,
    }
}

/// Runs `fabric run`.
pub fn run(args: Args) -> ExitCode {
    let style = Style::of(&args);
    let config = match read_config(&args.config.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return style.error(&info, EXIT_INVALID),
    };
    let mut options = match runtime_options(&args.config, Some(args.start_timeout)) {
        Ok(options) => options,
        Err(info) => return style.error(&info, EXIT_INVALID),
    };
    if let Err(info) = args.capture.apply(&mut options) {
        return style.error(&info, EXIT_INVALID);
    }
    if let Some(path) = &args.inputs {
        return match read_inputs(path) {
            Ok(requests) => run_many(&config, requests, &options, style),
            Err(info) => style.error(&info, EXIT_INVALID),
        };
    }
    let request = match (&args.input, &args.request) {
        (Some(text), _) => RunRequest::new(text.as_str()),
        (None, Some(path)) => match read_request(path) {
            Ok(request) => request,
            Err(info) => return style.error(&info, EXIT_INVALID),
        },
        (None, None) => {
            let info = ErrorInfo::new(
                Stage::Config,
                codes::INVALID_REQUEST,
                "one of --input, --request or --inputs is required",
            );
            return style.error(&info, EXIT_INVALID);
        }
    };
    if args.stream {
        return crate::stream::run_stream(&config, request, &options, args.json);
    }
    if args.stream_atof {
        let mut options = options;
        options.runtime.relay_streaming = Some(fabric_host::RelayStreaming::default());
        return crate::stream::run_stream_atof(&config, request, &options);
    }
    if let Some(level) = args.check_level {
        return run_checked(&config, request, &options, level, style);
    }
    let began = Instant::now();
    match Fabric::new().run(&config, request, &options) {
        Ok(result) => {
            match style {
                Style::Human => print_line(&human::result(&result, began.elapsed().as_millis())),
                Style::Json => print_json(&serde_json::to_value(&result).unwrap_or(Value::Null)),
            }
            ExitCode::from(exit_for_status(result.status))
        }
        Err(error) => {
            let exit = exit_for(&error);
            style.error(&ErrorInfo::from(error), exit)
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
    style: Style,
) -> ExitCode {
    let began = Instant::now();
    let checked = Fabric::new().run_checked(config, request, options, level, None);
    let (report, result) = match checked {
        Ok(outcome) => outcome,
        Err(error) => {
            let exit = exit_for(&error);
            return style.error(&ErrorInfo::from(error), exit);
        }
    };
    let exit = result
        .as_ref()
        .map_or(EXIT_FAILED, |result| exit_for_status(result.status));
    match style {
        Style::Human => {
            let passed = if result.is_some() {
                "passed"
            } else {
                "did not pass; nothing was invoked"
            };
            print_line(&format!(
                "health check at level {}: {passed}",
                level.as_str()
            ));
            if let Some(result) = &result {
                print_line(&human::result(result, began.elapsed().as_millis()));
            }
        }
        Style::Json => {
            let mut value = match &result {
                Some(result) => serde_json::to_value(result).unwrap_or(Value::Null),
                None => json!({}),
            };
            value["check"] = serde_json::to_value(&report).unwrap_or(Value::Null);
            print_json(&value);
        }
    }
    ExitCode::from(exit)
}

/// The `--inputs` progress bar (terminals only), drawn on stdout with the summary lines.
fn progress_bar(total: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total as u64),
        indicatif::ProgressDrawTarget::stdout(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{bar:30}] {pos}/{len} inputs · {msg} · {elapsed}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message("0 failed");
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

fn run_many(
    config: &FabricConfig,
    requests: Vec<RunRequest>,
    options: &RunOptions,
    style: Style,
) -> ExitCode {
    let fabric = Fabric::new();
    let runtime = match fabric.start_runtime(config, options) {
        Ok(runtime) => runtime,
        Err(error) => {
            let exit = exit_for(&error);
            return style.error(&ErrorInfo::from(error), exit);
        }
    };
    let progress = (style == Style::Human).then(|| progress_bar(requests.len()));
    let mut failures = 0u64;
    let mut exit = EXIT_OK;
    for (index, request) in requests.into_iter().enumerate() {
        let began = Instant::now();
        match runtime.invoke(request) {
            Ok(result) => {
                if result.status != RunStatus::Succeeded {
                    failures += 1;
                    exit = EXIT_FAILED;
                }
                match &progress {
                    Some(bar) => {
                        let elapsed = began.elapsed().as_millis();
                        bar.println(human::result_line(index + 1, &result, elapsed));
                        bar.inc(1);
                        bar.set_message(format!("{failures} failed"));
                    }
                    None => print_line(
                        &serde_json::to_value(&result)
                            .unwrap_or(Value::Null)
                            .to_string(),
                    ),
                }
                if crate::output::stdout_closed() {
                    // The reader went away (`| head -1`): stop invoking, stop the runtime.
                    break;
                }
            }
            Err(error) => {
                exit = exit_for(&error);
                let info = ErrorInfo::from(error);
                match &progress {
                    Some(bar) => bar.println(human::error(&info)),
                    None => print_line(&error_value(&info).to_string()),
                }
                break;
            }
        }
    }
    if let Some(bar) = &progress {
        bar.finish();
    }
    let stopped = runtime.stop();
    if let Some(error) = &stopped.error
        && style == Style::Human
    {
        print_line(&format!(
            "stop: {} [{}]: {}",
            error.stage.as_str(),
            error.code,
            error.message
        ));
    }
    ExitCode::from(exit)
}
