//! `settings.network` of the subprocess provider: absent (the machine's network), or
//! `"none"`: the runtime server starts through `unshare --user --map-current-user --net`, in
//! a new user and network namespace whose only interface is a loopback that is down (every
//! runtime and `exec` of the environment is the server's child and stays in it), so nothing (not even the host's loopback) is reachable; the
//! user keeps its id. The runtime server's unix socket is a path, which namespaces do not
//! hide. Where unprivileged namespaces are not available (`unshare` missing or refused),
//! `prepare` fails with `environment_setting_unsupported` naming `settings.network`.

use fabric_config::codes;
use fabric_config::config::JsonObject;
use fabric_sandbox::kit::Failure;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

const UNSHARE: &str = "unshare";
const UNSHARE_ARGS: [&str; 4] = ["--user", "--map-current-user", "--net", "--"];

/// Whether `settings.network` asks for no network (after checking that namespaces work).
pub fn read(settings: &JsonObject) -> Result<bool, Failure> {
    match settings.get("network") {
        None => Ok(false),
        Some(Value::String(mode)) if mode == "none" => {
            available()?;
            Ok(true)
        }
        Some(_) => Err(unsupported(
            "only `none` (a network namespace of its own) is offered; use the container provider for `loopback`, `bridge` or `host`",
        )),
    }
}

/// The command that starts `program`, in new namespaces when `isolated`.
pub fn command(isolated: bool, program: &Path) -> Command {
    if !isolated {
        return Command::new(program);
    }
    let mut command = Command::new(UNSHARE);
    command.args(UNSHARE_ARGS).arg(program);
    command
}

/// `unshare ... true` succeeds here.
fn available() -> Result<(), Failure> {
    let ran = Command::new(UNSHARE)
        .args(UNSHARE_ARGS)
        .arg("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match ran {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(unsupported(&format!(
            "this machine refuses an unprivileged network namespace (`unshare --user --net`: {})",
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
        Err(error) => Err(unsupported(&format!("cannot run `{UNSHARE}`: {error}"))),
    }
}

fn unsupported(reason: &str) -> Failure {
    (
        codes::ENVIRONMENT_SETTING_UNSUPPORTED,
        format!("`settings.network` is not supported by the subprocess provider: {reason}"),
    )
}
