//! `exec`: one command in an environment, with a deadline.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fabric_config::provider::ExecOutput;
use serde_json::Value;

use super::Failure;

/// Bytes of one exec stream read (above the core's 3 MiB limit, for the same reason).
const EXEC_READ_CAP: u64 = 4 * 1024 * 1024;

/// Splits an `exec` argv into program and arguments.
pub(super) fn split_argv(argv: &[String]) -> Result<(&String, &[String]), Failure> {
    argv.split_first()
        .ok_or(("invalid_argv", "`argv` is empty".to_owned()))
}

/// An `exec` output: runs `command` (stdin closed), killing it after `timeout`.
pub(super) fn exec(mut command: Command, timeout: Duration) -> Result<Value, Failure> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            (
                "exec_failed",
                format!(
                    "cannot run `{}`: {error}",
                    command.get_program().to_string_lossy()
                ),
            )
        })?;
    let read = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(stream) = stream {
                let _ = stream.take(EXEC_READ_CAP).read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if began.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => return Err(("exec_failed", error.to_string())),
        }
    };
    let output = ExecOutput {
        exit_code: status.and_then(|s| s.code()),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    serde_json::to_value(output).map_err(|error| ("internal", error.to_string()))
}
