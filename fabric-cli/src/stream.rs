//! `fabric run --stream`: one invocation through native OpenAI streaming
//! (`invoke_openai_stream`).
//!
//! - stdout is a terminal (and no `--json`): the assistant text (`choices[].delta.content`)
//!   is printed as it arrives, then a newline and the readable result of `fabric run`.
//! - otherwise: one JSON line per `chat.completion.chunk`, exactly as the adapter emitted
//!   it, then the RunResult JSON (compact) as the last line.
//!
//! `fabric run --stream-atof`: one invocation through Relay ATOF streaming
//! (`invoke_stream`, the embedded collector): one JSON line per ATOF record, then the
//! RunResult (compact) as the last line, on a terminal too.
//!
//! Exit codes as `fabric run`; an adapter without the streaming claim is
//! `openai_streaming_unavailable` (exit 2) and nothing is invoked; a broken stream is
//! `openai_stream_protocol_error` (exit 3); piped, `{"error": ...}` is the last line.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use fabric_config::agent::RunStatus;
use fabric_config::stream::OpenAiChunk;
use fabric_config::{ErrorInfo, FabricConfig, RunRequest, RunResult};
use fabric_host::{Fabric, HostError, PullStream, RunOptions, StreamNext};
use serde_json::Value;

use crate::output::{EXIT_FAILED, EXIT_OK, error_value, exit_for, stdout_closed};

/// How the chunks are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The assistant text as it arrives.
    Text,
    /// One JSON line per chunk.
    Lines,
}

/// Runs one streamed invocation; `json` (`--json`) asks for JSON lines on a terminal too.
pub fn run_stream(
    config: &FabricConfig,
    request: RunRequest,
    options: &RunOptions,
    json: bool,
) -> ExitCode {
    let mode = if !json && std::io::stdout().is_terminal() {
        Mode::Text
    } else {
        Mode::Lines
    };
    let began = Instant::now();
    let runtime = match Fabric::new().start_runtime(config, options) {
        Ok(runtime) => Arc::new(runtime),
        Err(error) => return fail(error, mode),
    };
    let outcome = stream_turn(&runtime, request, mode);
    let mut result = match outcome {
        Ok(result) => result,
        Err(error) => {
            runtime.stop();
            return fail(error, mode);
        }
    };
    runtime.stop_into(&mut result);
    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
    match mode {
        Mode::Text => {
            crate::output::print_line(&crate::human::result(&result, began.elapsed().as_millis()))
        }
        Mode::Lines => crate::output::print_line(&value.to_string()),
    }
    ExitCode::from(match result.status {
        RunStatus::Succeeded => EXIT_OK,
        _ => EXIT_FAILED,
    })
}

/// Runs one invocation streaming its Relay ATOF records (`options.runtime.relay_streaming`
/// set by the caller).
pub fn run_stream_atof(
    config: &FabricConfig,
    request: RunRequest,
    options: &RunOptions,
) -> ExitCode {
    let mode = Mode::Lines;
    let runtime = match Fabric::new().start_runtime(config, options) {
        Ok(runtime) => Arc::new(runtime),
        Err(error) => return fail(error, mode),
    };
    let outcome = runtime.invoke_stream(request).and_then(|stream| {
        loop {
            if stdout_closed() {
                stream.close();
                break;
            }
            match stream.next(None)? {
                StreamNext::Item(item) => crate::output::print_line(&item),
                StreamNext::End => break,
                StreamNext::Timeout => {}
            }
        }
        stream.result()
    });
    let mut result = match outcome {
        Ok(result) => result,
        Err(error) => {
            runtime.stop();
            return fail(error, mode);
        }
    };
    runtime.stop_into(&mut result);
    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
    crate::output::print_line(&value.to_string());
    ExitCode::from(match result.status {
        RunStatus::Succeeded => EXIT_OK,
        _ => EXIT_FAILED,
    })
}

/// The error as `fabric run` prints it; piped, on one line (the last one).
fn fail(error: HostError, mode: Mode) -> ExitCode {
    let exit = exit_for(&error);
    let info = ErrorInfo::from(error);
    match mode {
        Mode::Text => {
            crate::output::print_line(&crate::human::error(&info));
            ExitCode::from(exit)
        }
        Mode::Lines => {
            crate::output::print_line(&error_value(&info).to_string());
            ExitCode::from(exit)
        }
    }
}

/// Streams the turn's chunks to stdout and returns its RunResult.
fn stream_turn(
    runtime: &Arc<fabric_host::Runtime>,
    request: RunRequest,
    mode: Mode,
) -> Result<RunResult, HostError> {
    let stream = runtime.invoke_openai_stream(request)?;
    let mut wrote_text = false;
    loop {
        if stdout_closed() {
            // Nobody reads any more: drop the rest, let the turn finish.
            stream.close();
            break;
        }
        match stream.next(None)? {
            StreamNext::Item(item) => match mode {
                Mode::Lines => crate::output::print_line(&item),
                Mode::Text => wrote_text |= print_text(&item),
            },
            StreamNext::End => break,
            StreamNext::Timeout => {}
        }
    }
    if wrote_text {
        crate::output::print_line("");
    }
    stream.result()
}

/// Prints the content deltas of one chunk without a newline; whether anything was printed.
fn print_text(item: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(item) else {
        return false;
    };
    let Ok(chunk) = OpenAiChunk::check(&value) else {
        return false;
    };
    let text = chunk.text();
    if text.is_empty() {
        return false;
    }
    let mut stdout = std::io::stdout().lock();
    // A closed terminal is noticed by the next line write.
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    true
}
