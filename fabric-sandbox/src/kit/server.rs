//! Calls to the runtime server on an environment's socket.

use fabric_config::codes;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::bridge::Client;
use fabric_config::bridge::validate_request;
use serde_json::{Value, json};

use super::{Failure, SOCKET};

/// Whether the runtime server on `socket` answers a server `check`.
fn server_check(socket: &Path) -> Result<(), String> {
    let mut client = Client::new(socket);
    client.set_timeout(Duration::from_secs(5));
    let request = validate_request(&json!({
        "interface_version": fabric_config::bridge::INTERFACE_VERSION,
        "operation": "check"
    }))
    .map_err(|failure| failure.message())?;
    let response = client.call(&request);
    match response.error {
        None => Ok(()),
        Some(error) => Err(format!("{}: {}", error.code, error.message)),
    }
}

/// Refuses, as `environment_not_found` with the check's message, an environment to attach
/// whose runtime server in `dir` does not answer `check`.
pub fn require_server(dir: &Path) -> Result<(), Failure> {
    server_check(&dir.join(SOCKET)).map_err(|message| (codes::ENVIRONMENT_NOT_FOUND, message))
}

/// Polls the runtime server on `socket` with `check` until it answers, `alive` says the
/// server is gone, or `deadline` passes (the last check's message).
pub fn wait_for_server(
    socket: &Path,
    deadline: Duration,
    mut alive: impl FnMut() -> bool,
) -> Result<(), String> {
    let began = Instant::now();
    loop {
        match server_check(socket) {
            Ok(()) => return Ok(()),
            Err(message) if began.elapsed() > deadline || !alive() => return Err(message),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// A `runtime_control` output: the runtime server's response to one bridge request.
pub(super) fn runtime_control(socket: &Path, request: &Value) -> Result<Value, Failure> {
    let request =
        validate_request(request).map_err(|failure| (codes::INVALID_REQUEST, failure.message()))?;
    let mut client = Client::new(socket);
    client.set_timeout(Duration::from_secs(fabric_config::bridge::CALL_SECONDS));
    Ok(json!({"response": client.call(&request)}))
}
