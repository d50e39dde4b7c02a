//! The provider client: one provider child process per environment, NDJSON on stdio.
//!
//! Requests are sequential (a mutex). Each waits for its response until its deadline; a
//! timeout, a crash (stdout closed), an oversized or malformed line, or a response to
//! another request makes the provider terminal: its process group is killed and every later
//! request fails with `provider_failed` naming the first cause. Nothing is ever resent: the
//! outcome of the interrupted request is unknown. The provider's stderr is kept as a
//! bounded tail for error messages.

use fabric_config::codes;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fabric_config::Stage;
use fabric_config::provider::{
    MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES, ProviderOperation, ProviderOutcome, ProviderRequest,
    ProviderResponse,
};
use serde_json::Value;

use crate::error::SandboxError;
use fabric_reactor::spawner;
use fabric_reactor::sys::{self, HostChild, SpawnSpec};

/// Bytes of provider stderr kept for error messages.
const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// How long a failure waits for the provider's stderr to reach EOF (its last lines).
const STDERR_EOF_WAIT: Duration = Duration::from_millis(500);
/// How long closing waits for the provider to exit after its stdin closed.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What the stdout reader thread hands over.
enum Line {
    Text(Vec<u8>),
    TooLarge,
    Closed,
}

/// A running provider process.
#[derive(Debug)]
pub struct ProviderClient {
    provider: String,
    inner: Mutex<Inner>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

#[derive(Debug)]
struct Inner {
    child: HostChild,
    stdin: Option<File>,
    lines: Receiver<LineMsg>,
    /// Closed by the stderr thread when the provider's stderr reaches EOF.
    stderr_done: Receiver<()>,
    /// The code that made the provider terminal.
    failed: Option<&'static str>,
}

/// `Line` wrapped so `Inner` can derive `Debug`.
struct LineMsg(Line);

impl std::fmt::Debug for LineMsg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineMsg")
    }
}

impl ProviderClient {
    /// Starts `program args` (cwd `cwd`, this process's environment) as the provider named
    /// `provider`.
    pub fn spawn(
        provider: &str,
        program: &std::path::Path,
        args: &[String],
        cwd: &std::path::Path,
        stage: Stage,
    ) -> Result<ProviderClient, SandboxError> {
        let spec = SpawnSpec {
            program: program.as_os_str().to_owned(),
            args: args.iter().map(Into::into).collect(),
            env: std::env::vars_os().collect(),
            cwd: cwd.to_path_buf(),
        };
        let spawned = spawner::spawn(spec).map_err(|error| SandboxError::Launch {
            stage,
            program: program.to_string_lossy().into_owned(),
            reason: error.to_string(),
        })?;
        let (sender, lines) = mpsc::channel();
        let stdout = File::from(spawned.stdout);
        std::thread::Builder::new()
            .name("fabric-provider-out".into())
            .spawn(move || read_lines(stdout, &sender))
            .map_err(|error| launch_error(stage, program, &error))?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let tail = Arc::clone(&stderr);
        let stderr_file = File::from(spawned.stderr);
        let (stderr_closed, stderr_done) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("fabric-provider-err".into())
            .spawn(move || {
                keep_tail(stderr_file, &tail);
                drop(stderr_closed);
            })
            .map_err(|error| launch_error(stage, program, &error))?;
        Ok(ProviderClient {
            provider: provider.to_owned(),
            inner: Mutex::new(Inner {
                child: spawned.child,
                stdin: Some(File::from(spawned.stdin)),
                lines,
                stderr_done,
                failed: None,
            }),
            stderr,
        })
    }

    /// The provider name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The provider's process id.
    pub fn pid(&self) -> u32 {
        self.lock().child.id()
    }

    /// Whether an earlier failure made the provider terminal.
    pub fn is_failed(&self) -> bool {
        self.lock().failed.is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends one request and returns the `succeeded` output. An encoded request above
    /// 256 KiB is refused unsent (`provider_request_too_large`); a `failed` answer is
    /// `provider_error`, or the provider's code itself when the registry knows it as a
    /// sandbox code (the provider's code is in `metadata.provider_code` either way).
    pub fn request(
        &self,
        operation: ProviderOperation,
        timeout: Duration,
        stage: Stage,
    ) -> Result<Value, SandboxError> {
        let name = operation.name();
        let request = ProviderRequest::new(
            format!("provider-request-{}", uuid::Uuid::new_v4().simple()),
            operation,
        );
        let mut line = serde_json::to_vec(&request).map_err(|error| {
            self.error(
                stage,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("cannot encode `{name}`: {error}"),
            )
        })?;
        line.push(b'\n');
        if line.len() > MAX_REQUEST_BYTES {
            return Err(self.error(
                stage,
                codes::PROVIDER_REQUEST_TOO_LARGE,
                format!(
                    "the `{name}` request is {} bytes encoded, above the {MAX_REQUEST_BYTES}-byte provider request limit; it was not sent",
                    line.len()
                ),
            ));
        }
        let mut inner = self.lock();
        if let Some(cause) = inner.failed {
            return Err(self.error(
                stage,
                codes::PROVIDER_FAILED,
                format!("the `{}` provider is terminal after an earlier `{cause}`; its environments cannot be used", self.provider),
            ));
        }
        let written = match inner.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&line).and_then(|()| stdin.flush()),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        };
        if written.is_err() {
            return Err(self.terminal(
                &mut inner,
                stage,
                codes::PROVIDER_CRASHED,
                format!(
                    "the `{}` provider closed its stdin before `{name}`",
                    self.provider
                ),
            ));
        }
        let answer = match inner.lines.recv_timeout(timeout) {
            Ok(LineMsg(Line::Text(text))) => text,
            Ok(LineMsg(Line::TooLarge)) => {
                return Err(self.terminal(
                    &mut inner,
                    stage,
                    codes::PROVIDER_OUTPUT_TOO_LARGE,
                    format!("the `{name}` response exceeds {MAX_RESPONSE_BYTES} bytes"),
                ));
            }
            Ok(LineMsg(Line::Closed)) | Err(RecvTimeoutError::Disconnected) => {
                return Err(self.terminal(
                    &mut inner,
                    stage,
                    codes::PROVIDER_CRASHED,
                    format!("the `{}` provider exited during `{name}`", self.provider),
                ));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(self.terminal(&mut inner, stage, codes::PROVIDER_TIMEOUT, format!("the `{}` provider did not answer `{name}` within {} ms; its outcome is unknown and it is not retried", self.provider, timeout.as_millis())));
            }
        };
        let response: ProviderResponse = match serde_json::from_slice(&answer) {
            Ok(response) => response,
            Err(error) => {
                return Err(self.terminal(
                    &mut inner,
                    stage,
                    codes::PROVIDER_PROTOCOL_ERROR,
                    format!("the `{name}` response is not a provider response: {error}"),
                ));
            }
        };
        if response.request_id != request.request_id {
            return Err(self.terminal(
                &mut inner,
                stage,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the `{name}` response names another request_id"),
            ));
        }
        drop(inner);
        match response.outcome {
            ProviderOutcome::Succeeded { output } => Ok(output),
            ProviderOutcome::Failed { error } => Err(SandboxError::Provider {
                stage,
                // A sandbox code of the registry (the bundled providers' image and identity
                // checks) is the error's own code; any other provider code stays in
                // `metadata.provider_code` of a `provider_error`.
                code: fabric_config::codes::lookup(&error.code)
                    .filter(|known| {
                        known.origin == fabric_config::codes::Origin::Sandbox
                            || known.code == codes::PATH_REFUSED
                    })
                    .map_or(codes::PROVIDER_ERROR, |known| known.code),
                message: format!(
                    "the `{}` provider failed `{name}`: {}: {}",
                    self.provider, error.code, error.message
                ),
                provider_code: Some(error.code),
                stderr_tail: None,
            }),
        }
    }

    /// An error about this provider with its stderr tail.
    pub fn error(&self, stage: Stage, code: &'static str, message: String) -> SandboxError {
        let tail = self
            .stderr
            .lock()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        SandboxError::Provider {
            stage,
            code,
            message,
            provider_code: None,
            stderr_tail: (!tail.trim().is_empty()).then_some(tail),
        }
    }

    fn terminal(
        &self,
        inner: &mut Inner,
        stage: Stage,
        code: &'static str,
        message: String,
    ) -> SandboxError {
        inner.failed = Some(code);
        inner.stdin = None;
        let _ = sys::signal_group(inner.child.id() as i32, libc::SIGKILL);
        let _ = inner.child.wait();
        // The stderr thread keeps the last lines until EOF; a descendant that inherited the
        // pipe could hold it open, so the wait is bounded.
        let _ = inner.stderr_done.recv_timeout(STDERR_EOF_WAIT);
        self.error(stage, code, message)
    }

    /// Closes the provider's stdin and waits for it to exit (`SIGKILL` to its group after
    /// 5 s).
    pub fn close(&self) {
        let mut inner = self.lock();
        inner.stdin = None;
        let deadline = std::time::Instant::now() + CLOSE_WAIT;
        loop {
            match inner.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if std::time::Instant::now() >= deadline => {
                    let _ = sys::signal_group(inner.child.id() as i32, libc::SIGKILL);
                    let _ = inner.child.wait();
                    return;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

impl Drop for ProviderClient {
    fn drop(&mut self) {
        self.close();
    }
}

fn launch_error(stage: Stage, program: &std::path::Path, error: &std::io::Error) -> SandboxError {
    SandboxError::Launch {
        stage,
        program: program.to_string_lossy().into_owned(),
        reason: error.to_string(),
    }
}

fn read_lines(stdout: File, sender: &mpsc::Sender<LineMsg>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let read = (&mut reader)
            .take(MAX_RESPONSE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line);
        let message = match read {
            Ok(0) | Err(_) => Line::Closed,
            Ok(_) if line.last() != Some(&b'\n') && line.len() > MAX_RESPONSE_BYTES => {
                Line::TooLarge
            }
            Ok(_) if line.last() != Some(&b'\n') => Line::Closed,
            Ok(_) => {
                line.pop();
                Line::Text(line)
            }
        };
        let last = !matches!(message, Line::Text(_));
        if sender.send(LineMsg(message)).is_err() || last {
            return;
        }
    }
}

fn keep_tail(mut stderr: File, tail: &Mutex<Vec<u8>>) {
    let mut buffer = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buffer) {
        if n == 0 {
            return;
        }
        if let Ok(mut kept) = tail.lock() {
            kept.extend_from_slice(&buffer[..n]);
            let excess = kept.len().saturating_sub(STDERR_TAIL_BYTES);
            kept.drain(..excess);
        }
    }
}
