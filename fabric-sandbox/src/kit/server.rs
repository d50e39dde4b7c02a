//! Calls to the runtime server on an environment's socket.

use fabric_config::codes;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::bridge::Client;
use fabric_config::bridge::{Operation, Payload, Request, validate_request};
use fabric_config::environment_ops::ExecRequest;
use fabric_config::provider::ExecOutput;
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

/// How much longer than an `exec`'s own deadline the provider waits for the server's answer
/// (the server kills the command at the deadline, then sends what it read).
const EXEC_ANSWER_GRACE: Duration = Duration::from_secs(1);

/// A caller's `exec` through the runtime server on `socket`: one bridge `exec` request. The
/// server runs the command where the environment's processes run (inside the container,
/// in the subprocess environment's namespaces) as the leader of its own process group, kills
/// the group at the deadline and answers with the bounded output. A program that cannot
/// start is `exec_failed` naming it, as the local provider's.
pub fn server_exec(socket: &Path, request: &ExecRequest) -> Result<ExecOutput, Failure> {
    let members = serde_json::to_value(request).map_err(|error| ("internal", error.to_string()))?;
    let Value::Object(members) = members else {
        return Err(("internal", "an exec request is not an object".into()));
    };
    let call = Request {
        operation: Operation::Exec,
        agent: None,
        runtime_id: None,
        payload: Payload::Request(members),
    };
    let mut client = Client::new(socket);
    client.set_timeout(Duration::from_secs_f64(request.timeout_seconds) + EXEC_ANSWER_GRACE);
    let response = client.call(&call);
    let Some(error) = response.error else {
        return serde_json::from_value(response.result).map_err(|error| {
            (
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the runtime server's exec output is malformed: {error}"),
            )
        });
    };
    // The client accepts registered codes only; anything else is its own `invalid_response`.
    let code = codes::lookup(&error.code).map_or(codes::INVALID_RESPONSE, |known| known.code);
    let program = request.argv.first().map_or("", String::as_str);
    Err(match code {
        codes::EXEC_FAILED => (code, format!("cannot run `{program}`: {}", error.message)),
        _ => (
            code,
            format!(
                "the runtime server did not run `{program}`: {}: {}",
                error.code, error.message
            ),
        ),
    })
}
