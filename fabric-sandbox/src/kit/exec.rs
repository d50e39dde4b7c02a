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
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
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
///
/// Every thread the exec needs (the two readers, the stdin feeder, the deadline) starts
/// before the command does and gets its pipe or process group once it runs: a command that
/// forks up to its environment's `pids` limit (a runtime server shares the container's
/// cgroup with it) can then never leave this process unable to read, feed or kill it.
fn run(mut command: Command, request: &ExecRequest) -> Result<ExecOutput, Failure> {
    let stdin = request.stdin();
    let limit = usize::try_from(request.output_limit_bytes).unwrap_or(usize::MAX);
    let timeout = Duration::from_secs_f64(request.timeout_seconds);
    let stdout = prestarted(move |stream: ChildStdout| keep(stream, limit))?;
    let stderr = prestarted(move |stream: ChildStderr| keep(stream, limit))?;
    let feeder = if stdin.is_empty() {
        None
    } else {
        Some(prestarted(move |mut pipe: ChildStdin| {
            // A command that exits without reading makes this write fail with EPIPE, never
            // kill an embedder (C, Go) that does not ignore SIGPIPE.
            let _ = sys::block_sigpipe_in_this_thread();
            let _ = pipe.write_all(&stdin);
        })?)
    };
    // At the deadline the whole group is killed (`true`: timed out).
    let deadline = prestarted(move |(group, exited): (i32, mpsc::Receiver<()>)| {
        match exited.recv_timeout(timeout) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = sys::signal_group(group, sys::SIGKILL);
                true
            }
            _ => false,
        }
    })?;
    command
        .process_group(0)
        .stdin(if feeder.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
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
    let group = i32::try_from(child.id()).unwrap_or(0);
    let (exited, leader_exited) = mpsc::channel();
    let _ = deadline.0.send((group, leader_exited));
    if let (Some(feeder), Some(pipe)) = (&feeder, child.stdin.take()) {
        let _ = feeder.0.send(pipe);
    }
    if let Some(pipe) = child.stdout.take() {
        let _ = stdout.0.send(pipe);
    }
    if let Some(pipe) = child.stderr.take() {
        let _ = stderr.0.send(pipe);
    }
    let status = child.wait();
    let _ = exited.send(());
    let timed_out = deadline.1.join().ok().flatten().unwrap_or(false);
    // The leader is reaped; its group id is not reused while members of the group live:
    // what it left running is killed, so nothing holds the output pipes open.
    let _ = sys::signal_group(group, sys::SIGKILL);
    let duration = began.elapsed();
    let status = status.map_err(|error| (codes::EXEC_FAILED, error.to_string()))?;
    let (stdout, stdout_truncated) = finished(stdout);
    let (stderr, stderr_truncated) = finished(stderr);
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

/// A thread started now that runs `work` on what is sent to it later (nothing: it ends at
/// once, `None`); a thread that cannot start is `exec_failed` before anything ran.
type Prestarted<T, R> = (mpsc::Sender<T>, JoinHandle<Option<R>>);

fn prestarted<T: Send + 'static, R: Send + 'static>(
    work: impl FnOnce(T) -> R + Send + 'static,
) -> Result<Prestarted<T, R>, Failure> {
    let (sender, receiver) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("fabric-exec".into())
        .spawn(move || receiver.recv().ok().map(work))
        .map_err(|error| {
            (
                codes::EXEC_FAILED,
                format!("cannot start the exec's threads: {error}"),
            )
        })?;
    Ok((sender, handle))
}

/// Reads `stream` to its end, keeping `limit` bytes; the text and whether more came.
fn keep(mut stream: impl Read, limit: usize) -> (String, bool) {
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
}

/// What a reader kept (nothing when its stream never came).
fn finished<T>((sender, handle): Prestarted<T, (String, bool)>) -> (String, bool) {
    drop(sender);
    handle.join().ok().flatten().unwrap_or_default()
}
