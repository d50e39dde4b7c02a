//! `exec`: one command in an environment, in its own process group, with a deadline and
//! bounded output. It runs where the environment's processes run: in the local provider's
//! process, or in a provider environment's runtime server (`fabric-agent-ctl serve`, the
//! bridge operation `exec`), which the provider reaches through the environment's socket
//! ([`server_exec`](super::server::server_exec)).
//!
//! The command runs as the leader of a new process group. At the deadline the whole group
//! is killed (`SIGKILL`), so a grandchild dies with its parent; when the leader exits
//! first, what it left running in its group is killed too (an `exec` leaves nothing
//! behind, and no leftover holds the output pipes open). Each of stdout and stderr is read
//! to its end and kept up to the limit; the rest is dropped and flagged.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fabric_config::codes;
use fabric_config::environment_ops::ExecRequest;
use fabric_config::provider::ExecOutput;
use fabric_reactor::sys;

use super::{Failure, files};

/// Splits an `exec` argv into program and arguments.
fn split_argv(argv: &[String]) -> Result<(&String, &[String]), Failure> {
    argv.split_first().ok_or((
        codes::INVALID_ENVIRONMENT_REQUEST,
        "`argv` is empty".to_owned(),
    ))
}

/// Runs a caller's `exec` in this process's reach: `argv` (never through a shell) in `cwd`
/// beneath `base`/`prefix` (missing, not a directory or reached through a link: refused),
/// with `envs` and then the request's `env` added to this process's variables. The local
/// provider calls it with its workspace as `base`; a runtime server with its base directory
/// and the prefix `workspace`, so the command runs where the environment's processes run.
pub fn exec_beneath<K, V>(
    base: &Path,
    prefix: &Path,
    request: &ExecRequest,
    envs: impl IntoIterator<Item = (K, V)>,
) -> Result<ExecOutput, Failure>
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    request.check().map_err(files::invalid)?;
    let (program, args) = split_argv(&request.argv)?;
    let cwd = request.cwd.as_deref().unwrap_or(".");
    files::check_dir(base, prefix, cwd)?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(base.join(prefix).join(cwd))
        .envs(envs)
        .envs(&request.env);
    run(command, request)
}

/// Runs `command` as `request` says (its stdin, deadline and output limit; the program,
/// arguments, directory and variables are already in `command`).
fn run(mut command: Command, request: &ExecRequest) -> Result<ExecOutput, Failure> {
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
    let (status, timed_out) = wait_group(child, timeout);
    let duration = began.elapsed();
    let status = status.map_err(|error| (codes::EXEC_FAILED, error.to_string()))?;
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

/// Waits for `child`, the leader of its own process group, until `timeout`: at the deadline
/// the whole group is killed (`true`: timed out), and once the leader exited what it left
/// in its group is killed too.
fn wait_group(
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
