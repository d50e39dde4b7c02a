//! The `fabric.environment-provider.v1alpha1` request loop: one request line in, one
//! response line out, until the input closes.

use std::io::{BufRead, Read, Write};
use std::process::ExitCode;

use fabric_config::provider::{
    MAX_REQUEST_BYTES, PROTOCOL_VERSION, ProviderOperation, ProviderRequest,
};
use serde_json::{Value, json};

use super::dispatch::Environments;
use super::{Failure, Provider};

/// Runs `provider` on stdio: what a provider binary's `main` returns. When stdin closes
/// the process exits and leaves every environment as it is.
pub fn run<P: Provider>(provider: &P) -> ExitCode {
    serve(provider, std::io::stdin().lock(), std::io::stdout().lock())
}

/// Serves `provider` on `input` / `output` (see [`run`]): every operation is answered from
/// one environment table. Exits with success when `input` closes and with failure on a
/// line that is not a request (nothing is answered to it: the core treats the provider as
/// broken) or when `output` cannot be written.
pub fn serve<P: Provider>(provider: &P, input: impl BufRead, output: impl Write) -> ExitCode {
    let mut environments = Environments::new(provider);
    lines(P::BINARY, input, output, |operation| {
        environments.answer(operation)
    })
}

/// The loop of [`serve`]: `handle` answers each operation. `name` is the binary's name for
/// diagnostics on stderr.
fn lines(
    name: &str,
    mut input: impl BufRead,
    mut output: impl Write,
    mut handle: impl FnMut(ProviderOperation) -> Result<Value, Failure>,
) -> ExitCode {
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
        if writeln!(output, "{response}")
            .and_then(|()| output.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
}
