//! `exec`: one command in an environment, in its own process group, with a deadline and
//! bounded output.
//!
//! The command runs as the leader of a new process group. At the deadline the whole group
//! is killed (`SIGKILL`), so a grandchild dies with its parent; when the leader exits
//! first, what it left running in its group is killed too (an `exec` leaves nothing
//! behind, and no leftover holds the output pipes open). Each of stdout and stderr is read
//! to its end and kept up to the limit; the rest is dropped and flagged.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fabric_config::codes;
use fabric_config::environment_ops::ExecRequest;
use fabric_config::provider::ExecOutput;
use fabric_reactor::sys;
use serde_json::Value;

use super::Failure;

/// Splits an `exec` argv into program and arguments.
pub(super) fn split_argv(argv: &[String]) -> Result<(&String, &[String]), Failure> {
    argv.split_first().ok_or((
        codes::INVALID_ENVIRONMENT_REQUEST,
        "`argv` is empty".to_owned(),
    ))
}

/// An `exec` output as the provider protocol's output value.
pub(super) fn exec_value(
    command: Command,
    request: &ExecRequest,
    deadline_inside: bool,
) -> Result<Value, Failure> {
    let output = run(command, request, deadline_inside)?;
    serde_json::to_value(output).map_err(|error| ("internal", error.to_string()))
}

/// Runs `command` as `request` says (its stdin, deadline and output limit; the program,
/// arguments, directory and variables are already in `command`).
/// `deadline_inside`: the command enforces the deadline itself and exits
/// [`TIMED_OUT_EXIT`] when it passed (a container's `fabric-agent-ctl exec-group`, whose
/// process group lives in the container); the local deadline is then later by
/// [`INSIDE_GRACE`].
pub fn run(
    mut command: Command,
    request: &ExecRequest,
    deadline_inside: bool,
) -> Result<ExecOutput, Failure> {
    let stdin = request.stdin();
    let limit = usize::try_from(request.output_limit_bytes).unwrap_or(usize::MAX);
    let timeout = Duration::from_secs_f64(request.timeout_seconds);
    command
        .process_group(0)
        .stdin(if stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let began = Instant::now();
    let mut child = command.spawn().map_err(|error| {
        (
            codes::EXEC_FAILED,
            format!(
                "cannot run `{}`: {error}",
                command.get_program().to_string_lossy()
            ),
        )
    })?;
    if let Some(mut pipe) = child.stdin.take() {
        std::thread::spawn(move || {
            // A command that exits without reading makes this write fail with EPIPE, never
            // kill an embedder (C, Go) that does not ignore SIGPIPE.
            let _ = sys::block_sigpipe_in_this_thread();
            let _ = pipe.write_all(&stdin);
        });
    }
    let stdout = child.stdout.take().map(|s| keep(s, limit));
    let stderr = child.stderr.take().map(|s| keep(s, limit));
    let outer = if deadline_inside {
        timeout + INSIDE_GRACE
    } else {
        timeout
    };
    let (status, mut timed_out) = wait_group(child, outer);
    let duration = began.elapsed();
    let status = status.map_err(|error| (codes::EXEC_FAILED, error.to_string()))?;
    timed_out |= deadline_inside && status.code() == Some(TIMED_OUT_EXIT) && duration >= timeout;
    let (stdout, stdout_truncated) = stdout.map(join).unwrap_or_default();
    let (stderr, stderr_truncated) = stderr.map(join).unwrap_or_default();
    Ok(ExecOutput {
        exit_code: if timed_out { None } else { status.code() },
        stdout,
        stderr,
        signal: status.signal(),
        stdout_truncated,
        stderr_truncated,
        timed_out,
        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
    })
}

/// The exit code of a command whose deadline passed inside (`exec-group`, as `timeout(1)`).
pub const TIMED_OUT_EXIT: i32 = 124;
/// How much later than its own deadline a command that enforces it inside is killed here.
const INSIDE_GRACE: Duration = Duration::from_secs(5);

/// Waits for `child`, the leader of its own process group, until `timeout`: at the deadline
/// the whole group is killed (`true`: timed out), and once the leader exited what it left
/// in its group is killed too.
pub fn wait_group(
    mut child: Child,
    timeout: Duration,
) -> (std::io::Result<std::process::ExitStatus>, bool) {
    let group = i32::try_from(child.id()).unwrap_or(0);
    let (sender, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait());
    });
    let outcome = match exited.recv_timeout(timeout) {
        Ok(status) => (status, false),
        Err(_) => {
            let _ = sys::signal_group(group, sys::SIGKILL);
            let status = exited
                .recv()
                .unwrap_or_else(|_| Err(std::io::Error::other("the waiter ended")));
            (status, true)
        }
    };
    // The leader is reaped; its group id is not reused while members of the group live.
    let _ = sys::signal_group(group, sys::SIGKILL);
    outcome
}

/// `fabric-agent-ctl exec-group TIMEOUT_MS PROGRAM ARGS...`: runs the program (stdio
/// inherited) as the leader of a new process group, kills the group at the deadline and
/// when the leader exits, and returns the exit code to exit with: the program's, `128 +
/// signal` when a signal ended it, [`TIMED_OUT_EXIT`] when the deadline passed.
pub fn exec_group(arguments: &[String]) -> Result<i32, String> {
    let [timeout, program, args @ ..] = arguments else {
        return Err("usage: exec-group TIMEOUT_MS PROGRAM [ARGS...]".into());
    };
    let timeout: u64 = timeout
        .parse()
        .map_err(|_| format!("`{timeout}` is not a timeout in milliseconds"))?;
    let child = Command::new(program)
        .args(args)
        .process_group(0)
        .spawn()
        .map_err(|error| format!("cannot run `{program}`: {error}"))?;
    match wait_group(child, Duration::from_millis(timeout)) {
        (_, true) => Ok(TIMED_OUT_EXIT),
        (Ok(status), false) => Ok(status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))),
        (Err(error), false) => Err(error.to_string()),
    }
}

type Kept = std::thread::JoinHandle<(String, bool)>;

/// Reads `stream` to its end on a thread, keeping `limit` bytes.
fn keep(mut stream: impl Read + Send + 'static, limit: usize) -> Kept {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut truncated = false;
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    let room = limit.saturating_sub(kept.len());
                    kept.extend_from_slice(&buffer[..n.min(room)]);
                    truncated |= n > room;
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        (String::from_utf8_lossy(&kept).into_owned(), truncated)
    })
}

fn join(handle: Kept) -> (String, bool) {
    handle.join().unwrap_or_default()
}
