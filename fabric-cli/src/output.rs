//! Shared output helpers: JSON on stdout, stable exit codes.

use std::process::ExitCode;

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

/// Prints a JSON value (pretty) on stdout.
pub fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("a JSON value always serializes")
    );
}

/// Prints `{"error": {"code", "stage", "message", "path"}}` on stdout and returns `exit`.
pub fn print_error(error: &ErrorInfo, exit: u8) -> ExitCode {
    let mut body = json!({
        "code": error.code,
        "stage": error.stage.as_str(),
        "message": error.message,
        "path": error.path(),
    });
    if !error.metadata.is_empty() {
        body["metadata"] = Value::Object(error.metadata.clone());
    }
    print_json(&json!({ "error": body }));
    ExitCode::from(exit)
}
