//! The runtime server's `exec` (the bridge operation behind a provider environment's
//! caller `exec`): the command runs here, where the environment's processes run (inside the
//! container; in the subprocess environment's namespaces), beneath the server's
//! `workspace/`, in its own process group killed at the deadline, with bounded output
//! (`fabric_sandbox::kit::exec_beneath`, the local provider's own function).

use std::path::{Path, PathBuf};

use fabric_config::bridge::{BridgeStage, Failure, Payload, Request, Response};
use fabric_config::codes;
use fabric_config::environment_ops::ExecRequest;
use fabric_sandbox::kit;
use serde_json::Value;

/// Runs the `exec` `request` beneath `base`'s `workspace/`; the response's result is the
/// ExecOutput. A program that cannot start is `exec_failed`, a refused working directory
/// `path_refused` (or `file_not_found`), each naming the request field.
pub(super) fn exec(base: Option<&PathBuf>, request: &Request) -> Result<Response, Failure> {
    let Payload::Request(members) = &request.payload else {
        return Err(Failure::invalid("request"));
    };
    let exec: ExecRequest = serde_json::from_value(Value::Object(members.clone()))
        .map_err(|_| Failure::invalid("request"))?;
    exec.check()
        .map_err(|(field, _)| Failure::invalid(format!("request.{field}")))?;
    let base = base.map_or(Path::new("."), PathBuf::as_path);
    let no_variables: [(&str, &str); 0] = [];
    let output = kit::exec_beneath(base, Path::new("workspace"), &exec, no_variables).map_err(
        |(code, _)| match code {
            codes::PATH_REFUSED | codes::FILE_NOT_FOUND => {
                Failure::new(code, BridgeStage::Exec).with_field("request.cwd")
            }
            // The program could not start, or the working directory could not be read.
            _ => Failure::new(codes::EXEC_FAILED, BridgeStage::Exec).with_field("request.argv"),
        },
    )?;
    let result = serde_json::to_value(&output).unwrap_or(Value::Null);
    Ok(Response::succeeded("exec", None, result))
}
