//! Shared output helpers: JSON on stdout, stable exit codes.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use fabric_config::ErrorInfo;
use fabric_host::{ErrorClass, HostError};
use serde_json::{Value, json};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the command completed with a failed outcome (failed result, failed check).
pub const EXIT_FAILED: u8 = 1;
/// Exit code: invalid input or config.
pub const EXIT_INVALID: u8 = 2;
/// Exit code: runtime failure before a result.
pub const EXIT_RUNTIME: u8 = 3;

/// Exit code of a facade error: config and capability problems are 2, the rest 3.
pub fn exit_for(error: &HostError) -> u8 {
    match error.class() {
        ErrorClass::Config | ErrorClass::Capability => EXIT_INVALID,
        _ => EXIT_RUNTIME,
    }
}

/// Set once a write to stdout failed (a closed pipe: `fabric plan x.json | head -1`).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout was closed by its reader; long commands stop producing output (and stop
/// their runtimes) instead of writing into the void.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Writes `text` and a newline to stdout. A closed pipe is not an error (no panic, no
/// message): later writes are skipped, as ripgrep and fd do.
pub fn print_line(text: &str) {
    if stdout_closed() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{text}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Prints a JSON value (pretty) on stdout.
pub fn print_json(value: &Value) {
    print_line(&serde_json::to_string_pretty(value).expect("a JSON value always serializes"));
}

/// Prints `{"error": {"code", "stage", "message", "path"}}` on stdout and returns `exit`.
pub fn print_error(error: &ErrorInfo, exit: u8) -> ExitCode {
    print_json(&error_value(error));
    ExitCode::from(exit)
}

/// `{"error": {"code", "stage", "message", "path", "metadata"?}}` (`interrupted` after a
/// signal, see [`crate::interrupt::explain`]).
pub fn error_value(error: &ErrorInfo) -> Value {
    let error = &crate::interrupt::explain(error);
    let mut body = json!({
        "code": error.code,
        "stage": error.stage.as_str(),
        "message": error.message,
        "path": error.path(),
    });
    if !error.metadata.is_empty() {
        body["metadata"] = Value::Object(error.metadata.clone());
    }
    json!({ "error": body })
}
