//! The `fabric.environment-provider.v1alpha1` request loop on stdio: one request line in,
//! one response line out.

use std::io::{BufRead, Read, Write};
use std::process::ExitCode;

use fabric_config::provider::{
    MAX_REQUEST_BYTES, PROTOCOL_VERSION, ProviderOperation, ProviderRequest,
};
use serde_json::{Value, json};

use super::Failure;

/// Serves requests from stdin until it closes: `handle` answers each operation. `name` is
/// the binary's name for diagnostics on stderr.
pub fn serve(
    name: &str,
    mut handle: impl FnMut(ProviderOperation) -> Result<Value, Failure>,
) -> ExitCode {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        let mut line = Vec::new();
        match (&mut input)
            .take(MAX_REQUEST_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
        let request: ProviderRequest = match serde_json::from_slice(&line) {
            Ok(request) => request,
            Err(error) => {
                eprintln!("{name}: invalid request line: {error}");
                return ExitCode::FAILURE;
            }
        };
        let outcome = if request.protocol_version == PROTOCOL_VERSION {
            handle(request.operation)
        } else {
            Err(("protocol_unsupported", format!("only {PROTOCOL_VERSION}")))
        };
        let response = match outcome {
            Ok(output) => {
                json!({"request_id": request.request_id, "status": "succeeded", "output": output})
            }
            Err((code, message)) => {
                json!({"request_id": request.request_id, "status": "failed", "error": {"code": code, "message": message}})
            }
        };
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{response}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
}
