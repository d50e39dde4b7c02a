//! `fabric stub-model serve`: the stub model server as a standalone process, for CI that
//! runs a harness without a real model.
//!
//! The first stdout line is `{"base_url", "chat_completions_url", "responses_url",
//! "messages_url"}`. Every request is logged as one JSON line (to `--log`, or standard error).
//! `SIGINT`/`SIGTERM` stop the server; a last line `{"stopped": true, "requests": N}`
//! follows and the command exits 0.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fabric_config::{ErrorInfo, Stage, codes};
use fabric_conformance::stub_model::{RequestLog, Script, StubModel};
use serde_json::json;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::output::{EXIT_INVALID, EXIT_OK, EXIT_RUNTIME, print_error, print_line};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Serve scripted model replies until SIGINT/SIGTERM.
    Serve(ServeArgs),
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Loopback address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// A reply script (JSON: `{"replies": [{"text"}, {"tool_calls": [{"name",
    /// "arguments"}]}, {"error": {"status", "message"}}, {"raw"}]}`), answered one reply
    /// per request, the last one repeating.
    #[arg(long, value_name = "PATH", conflicts_with = "reply")]
    script: Option<PathBuf>,
    /// A text reply (repeatable: answered in order, the last one repeating). Default: one
    /// reply "stub reply".
    #[arg(long, value_name = "TEXT")]
    reply: Vec<String>,
    /// Append the request log (one JSON line per request) to this file instead of standard
    /// error.
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        Sub::Serve(args) => serve(args),
    }
}

fn invalid(field: &str, message: String) -> ExitCode {
    let info = ErrorInfo::new(Stage::Config, codes::STUB_MODEL_SCRIPT_INVALID, message)
        .with_metadata("field", field);
    print_error(&info, EXIT_INVALID)
}

/// Reads and checks a reply script (`--script`, `--model-stub-script`); the error is printed
/// (exit 2, the message naming the field).
pub(crate) fn read_script(path: &Path) -> Result<Script, ExitCode> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        invalid(
            "--script",
            format!("cannot read the script {}: {error}", path.display()),
        )
    })?;
    Script::parse(&text).map_err(|message| invalid("--script", format!("--script: {message}")))
}

/// Starts a stub model server in this process; the error is printed (exit 3).
pub(crate) fn start(
    listen: SocketAddr,
    script: Script,
    log: RequestLog,
) -> Result<StubModel, ExitCode> {
    StubModel::start(listen, script, log).map_err(start_failed)
}

fn start_failed(message: String) -> ExitCode {
    let info = ErrorInfo::new(Stage::Start, codes::STUB_MODEL_START_FAILED, message);
    print_error(&info, EXIT_RUNTIME)
}

fn serve(args: ServeArgs) -> ExitCode {
    if !args.listen.ip().is_loopback() {
        return invalid(
            "--listen",
            format!(
                "--listen {} is not a loopback address (the stub serves loopback only)",
                args.listen
            ),
        );
    }
    let script = match &args.script {
        None => Script::texts(&args.reply),
        Some(path) => match read_script(path) {
            Ok(script) => script,
            Err(code) => return code,
        },
    };
    let log = match &args.log {
        None => RequestLog::Stderr,
        Some(path) => match RequestLog::file(path) {
            Ok(log) => log,
            Err(error) => {
                return start_failed(format!("cannot open --log {}: {error}", path.display()));
            }
        },
    };
    // Signals first: a signal during start still stops cleanly.
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return start_failed("cannot install the SIGINT/SIGTERM handlers".into());
    };
    let stub = match start(args.listen, script, log) {
        Ok(stub) => stub,
        Err(code) => return code,
    };
    let base = stub.base_url();
    print_line(
        &json!({
            "base_url": base,
            "chat_completions_url": format!("{base}/chat/completions"),
            "responses_url": format!("{base}/responses"),
            "messages_url": format!("{base}/messages"),
        })
        .to_string(),
    );
    let _ = signals.forever().next();
    let requests = stub.requests();
    stub.close();
    print_line(&json!({"stopped": true, "requests": requests}).to_string());
    ExitCode::from(EXIT_OK)
}
