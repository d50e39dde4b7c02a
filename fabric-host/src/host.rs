//! One adapter host process speaking the persistent local-host lifecycle protocol.
//!
//! [`Host::launch`] spawns the process in its own session and process group and hands its
//! pipes to the process-wide reactor; [`Host::call`] sends one request line and waits for
//! exactly one response line; [`Host::stop`] ends the whole process group within a bound.

use fabric_config::codes;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use fabric_config::Stage;
use mio::unix::pipe;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::error::{Diagnostics, HostError, ProtocolViolation};
use crate::hosts::{
    AfterExit, Escalation, HostInit, HostKey, HostsHandle, Lane, Notify, PendingReply, SPIN, Stdin,
    StopOutcome, StopPolicy,
};
use fabric_reactor::stderr::StderrSink;
use fabric_reactor::sys;

/// Default cap of one protocol line from a host (16 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How to launch one host process.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// Program to execute (a path, or a name looked up on the `PATH` of `env`).
    pub program: OsString,
    /// Arguments after the program.
    pub args: Vec<OsString>,
    /// The complete environment of the host (the parent's is not inherited implicitly).
    pub env: Vec<(OsString, OsString)>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Where the host's stderr is appended (created 0600). `None`: tail only.
    pub stderr_log: Option<PathBuf>,
    /// Size of one stderr log segment; the log is a two-segment ring (`<log>` and
    /// `<log>.1`), so at most twice this is kept, newest output first. Default
    /// [`DEFAULT_STDERR_LOG_BYTES`](crate::DEFAULT_STDERR_LOG_BYTES) (1 MiB).
    pub stderr_log_bytes: u64,
    /// Values replaced by `***` in the stderr log and tail (environment values).
    pub secrets: Vec<String>,
    /// Longest accepted protocol line. Default [`DEFAULT_MAX_LINE_BYTES`].
    pub max_line_bytes: usize,
    /// Watch the host's exit through a pidfd when the system has them (default `true`);
    /// `false` uses stdout EOF plus `waitid` polling, the fallback for older kernels.
    pub use_pidfd: bool,
}

impl HostSpec {
    /// A spec for `program` with no arguments, an empty environment, cwd `.`.
    pub fn new(program: impl Into<OsString>) -> HostSpec {
        HostSpec {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: PathBuf::from("."),
            stderr_log: None,
            stderr_log_bytes: fabric_reactor::stderr::DEFAULT_STDERR_LOG_BYTES,
            secrets: Vec::new(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            use_pidfd: true,
        }
    }
}

/// The result of [`Host::stop`].
#[derive(Debug, Clone)]
pub struct StopReport {
    /// The host's answer to `stop`: `Some(Ok(output))`, `Some(Err(adapter failure or
    /// protocol error))`, or `None` when it did not answer.
    pub response: Option<Result<Value, HostError>>,
    /// How the host exited (`exit code 0`, `signal 15`), when it was reaped.
    pub exit: Option<String>,
    /// How far the stop escalated.
    pub escalation: Escalation,
    /// Whether the host had already exited before the stop began.
    pub exited_before: bool,
    /// Whether a `stop` request was sent; `false` when the host was terminal, had a call
    /// in flight, or was gone, so signals were used from the start.
    pub graceful: bool,
    /// Time the stop took.
    pub elapsed: Duration,
    /// Set when the host could not be terminated within the bound (`host_termination_failed`).
    pub error: Option<HostError>,
    /// Processes of the host still alive when it exited during the stop (the core then
    /// killed them): what the adapter left behind.
    pub left_behind: Vec<fabric_stats::ProcStat>,
}

/// A running (or finished) adapter host. `Send + Sync`; one call at a time is enforced
/// by the reactor (a second concurrent call gets `runtime_busy`).
#[derive(Debug)]
pub struct Host {
    engine: HostsHandle,
    key: HostKey,
    /// The caller's own way to the host's stdin (`hosts/lane.rs`).
    lane: Arc<Lane>,
    pid: u32,
    started_at: SystemTime,
    sink: Arc<StderrSink>,
    /// The protocol line cap, applied to requests too (a host that echoes a longer request
    /// would break the protocol and make the runtime terminal).
    max_line: usize,
    terminal: Mutex<Option<HostError>>,
    /// Microseconds the last request took (`u64::MAX` before the first): decides whether
    /// waiting polls briefly before sleeping. A host's first request (`start`, behind its
    /// interpreter's start-up) is never fast, so neither the caller nor the reactor spins
    /// for it.
    last_round_trip_us: AtomicU64,
}

impl Host {
    /// Spawns the host in its own session/process group with piped stdio and registers it
    /// on the reactor.
    pub fn launch(mut spec: HostSpec) -> Result<Host, HostError> {
        let engine = HostsHandle::global().map_err(|error| HostError::EngineUnavailable {
            stage: Stage::Start,
            reason: error.reason().to_owned(),
        })?;
        let program = spec.program.to_string_lossy().into_owned();
        let launch_error = |reason: String| HostError::Launch {
            stage: Stage::Start,
            program: program.clone(),
            reason,
        };
        let log = match &spec.stderr_log {
            Some(path) => Some(
                fabric_reactor::stderr::LogRing::open(path, spec.stderr_log_bytes)
                    .map_err(|error| launch_error(format!("stderr log: {error}")))?,
            ),
            None => None,
        };
        if crate::cleanup::shutting_down() {
            return Err(HostError::EngineUnavailable {
                stage: Stage::Start,
                reason: "the process is shutting down".into(),
            });
        }
        let spawned = fabric_reactor::spawner::spawn(sys::SpawnSpec {
            program: std::mem::take(&mut spec.program),
            args: std::mem::take(&mut spec.args),
            env: std::mem::take(&mut spec.env),
            cwd: std::mem::take(&mut spec.cwd),
        })
        .map_err(|error| launch_error(error.to_string()))?;
        let sys::Spawned {
            child,
            stdin,
            stdout,
            stderr,
        } = spawned;
        let pid = child.id();
        let pidfd = if spec.use_pidfd {
            sys::pidfd_open(i32::try_from(pid).unwrap_or(i32::MAX)).ok()
        } else {
            None
        };
        let sink = Arc::new(StderrSink::new(log, spec.secrets.clone()));
        let max_line = spec.max_line_bytes.max(1);
        let stdin = Stdin::new(pipe::Sender::from(stdin));
        let lane = Arc::clone(stdin.lane());
        let key = engine
            .add(HostInit {
                child,
                stdin,
                stdout: pipe::Receiver::from(stdout),
                stderr: pipe::Receiver::from(stderr),
                pidfd,
                sink: Arc::clone(&sink),
                max_line,
            })
            .map_err(|reason| HostError::EngineUnavailable {
                stage: Stage::Start,
                reason,
            })?;
        Ok(Host {
            engine,
            key,
            lane,
            pid,
            started_at: SystemTime::now(),
            sink,
            max_line,
            terminal: Mutex::new(None),
            last_round_trip_us: AtomicU64::new(u64::MAX),
        })
    }

    /// The host's pid (also its process-group and session id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// When the host was launched.
    pub fn started_at(&self) -> SystemTime {
        self.started_at
    }

    /// Starts a per-invocation copy of the host's redacted stderr (at most `cap` bytes).
    pub(crate) fn begin_stderr_capture(&self, cap: usize) {
        self.sink.begin_capture(cap);
    }

    /// Ends the per-invocation stderr copy (`None` when none was started).
    pub(crate) fn take_stderr_capture(&self) -> Option<fabric_reactor::stderr::Capture> {
        self.sink.take_capture()
    }

    /// The redacted tail of the host's stderr.
    pub fn stderr_tail(&self) -> String {
        self.sink.tail()
    }

    /// The error that made this host terminal, if any.
    pub fn terminal_error(&self) -> Option<HostError> {
        self.lock_terminal().clone()
    }

    /// Sends `{"operation", "payload"}` and waits for the response, at most `timeout`.
    ///
    /// Returns the `output` of a succeeded outcome, [`HostError::Lifecycle`] for a failed
    /// outcome (the host stays usable), or a terminal error (protocol, crash, timeout, I/O)
    /// after which every later call fails the same way.
    pub fn call(
        &self,
        operation: &str,
        payload: &Value,
        stage: Stage,
        timeout: Duration,
    ) -> Result<Value, HostError> {
        self.begin(operation, payload, stage, timeout)?.wait()
    }

    /// Sends `{"operation", "payload"}` (any serializable payload) without waiting; finish
    /// with [`HostCall::wait`]. Lets the caller overlap its own work with the host's.
    pub fn begin<T: Serialize + ?Sized>(
        &self,
        operation: &str,
        payload: &T,
        stage: Stage,
        timeout: Duration,
    ) -> Result<HostCall<'_>, HostError> {
        self.begin_notify(operation, payload, stage, timeout, None)
    }

    /// As [`Host::begin`]; `notify` (if any) runs on the reactor thread right after the
    /// answer (or a terminal error) became available, so a caller can wait for several
    /// things at once.
    pub(crate) fn begin_notify<T: Serialize + ?Sized>(
        &self,
        operation: &str,
        payload: &T,
        stage: Stage,
        timeout: Duration,
        notify: Option<Notify>,
    ) -> Result<HostCall<'_>, HostError> {
        if let Some(error) = self.lock_terminal().clone() {
            return Err(error.at_stage(stage));
        }
        #[derive(Serialize)]
        struct Envelope<'a, T: ?Sized> {
            operation: &'a str,
            payload: &'a T,
        }
        let line = serde_json::to_vec(&Envelope { operation, payload }).map_err(|error| {
            HostError::HostIo {
                stage,
                reason: format!("cannot encode the {operation} request: {error}"),
                diagnostics: Diagnostics::default(),
            }
        })?;
        // The line plus its newline must fit the cap; nothing is sent otherwise and the
        // host stays usable.
        if line.len() >= self.max_line {
            return Err(HostError::RequestTooLarge {
                stage,
                request_bytes: line.len() + 1,
                limit_bytes: self.max_line,
            });
        }
        let stderr_mark = self.sink.mark();
        // Nobody polls for the answer of a call with a hook (it is collected once the hook
        // ran), so neither the caller nor the reactor spins for it.
        let spin = notify.is_none()
            && u128::from(self.last_round_trip_us.load(AtomicOrdering::Relaxed)) < SPIN.as_micros();
        let began = Instant::now();
        let pending = self
            .engine
            .request_begin(self.key, &self.lane, line, stage, timeout, spin, notify);
        match pending {
            Ok(pending) => Ok(HostCall {
                host: self,
                operation: operation.to_owned(),
                stage,
                began,
                stderr_mark,
                pending,
            }),
            Err(error) => Err(self.settle(Err(error)).expect_err("error stays an error")),
        }
    }

    /// Records a terminal error (with diagnostics) so later calls fail the same way.
    fn settle(&self, result: Result<Value, HostError>) -> Result<Value, HostError> {
        match result {
            Err(error) if error.is_terminal() => {
                let error = self.with_diagnostics(error);
                let mut terminal = self.lock_terminal();
                if terminal.is_none() {
                    *terminal = Some(error.clone());
                }
                Err(error)
            }
            other => other,
        }
    }

    /// Stops the host: sends `stop` with `payload` (unless the host is terminal), closes
    /// stdin, waits `policy.grace`, then `SIGTERM` and `SIGKILL` to the whole process
    /// group; always reaps. Idempotent: a second stop reports `exited_before`.
    pub fn stop(&self, payload: Option<&Value>, policy: StopPolicy) -> StopReport {
        let line = self.stop_line(payload);
        let mark = self.sink.mark();
        self.lane.close_for_stop();
        self.stop_report(self.engine.stop(self.key, line, policy), mark)
    }

    /// [`Host::stop`] that returns once the host answered `stop` (the report's `exit` is
    /// then `None`): the grace period, escalation and reap go on in the reactor, which runs
    /// `after_exit` when the host has exited. A terminal host (no `stop` request) is
    /// stopped and reaped before this returns, as by [`Host::stop`].
    pub(crate) fn stop_until_ack(
        &self,
        payload: &Value,
        policy: StopPolicy,
        after_exit: Option<AfterExit>,
    ) -> StopReport {
        let mark = self.sink.mark();
        self.lane.close_for_stop();
        match self.stop_line(Some(payload)) {
            Some(line) => self.stop_report(
                self.engine
                    .stop_until_ack(self.key, line, policy, after_exit),
                mark,
            ),
            None => self.stop_report(self.engine.stop(self.key, None, policy), mark),
        }
    }

    /// The `stop` request line, unless the host is terminal (then signals end it).
    fn stop_line(&self, payload: Option<&Value>) -> Option<Vec<u8>> {
        match payload {
            Some(payload) if self.lock_terminal().is_none() => {
                serde_json::to_vec(&json!({ "operation": "stop", "payload": payload })).ok()
            }
            _ => None,
        }
    }

    /// Stops the host by closing its stdin only (no `stop` request): it should exit on EOF
    /// within `policy.grace`, after which the stop escalates as [`Host::stop`] does. What the
    /// adapter conformance kit's `lifecycle.eof` check uses.
    pub fn stop_on_eof(&self, policy: StopPolicy) -> StopReport {
        let graceful = self.lock_terminal().is_none();
        let mark = self.sink.mark();
        self.lane.close_for_stop();
        self.stop_report(
            self.engine.stop(self.key, graceful.then(Vec::new), policy),
            mark,
        )
    }

    fn stop_report(&self, outcome: Result<StopOutcome, HostError>, mark: u64) -> StopReport {
        match outcome {
            Ok(outcome) => StopReport {
                response: outcome
                    .response
                    .map(|line| self.with_cause(parse_response(&line, "stop", Stage::Stop), mark)),
                exit: outcome.exit,
                escalation: outcome.escalation,
                exited_before: outcome.exited_before,
                graceful: outcome.graceful,
                elapsed: outcome.elapsed,
                error: outcome.error,
                left_behind: outcome.left_behind,
            },
            Err(error) => StopReport {
                response: None,
                exit: None,
                escalation: Escalation::None,
                exited_before: false,
                graceful: false,
                elapsed: Duration::ZERO,
                error: Some(error),
                left_behind: Vec::new(),
            },
        }
    }

    /// A failed outcome keeps its cause: the host's pid, its redacted stderr tail and what
    /// it wrote to stderr since `mark` (the operation's own diagnostics).
    fn with_cause(&self, result: Result<Value, HostError>, mark: u64) -> Result<Value, HostError> {
        match result {
            Err(HostError::Lifecycle {
                stage,
                code,
                message,
                retryable,
                metadata,
                ..
            }) => Err(HostError::Lifecycle {
                stage,
                code,
                message,
                retryable,
                metadata,
                diagnostics: Box::new(Diagnostics {
                    pid: Some(self.pid),
                    exit: None,
                    stderr_tail: self.sink.tail(),
                    operation_stderr: self.sink.since(mark),
                    left_behind: None,
                }),
            }),
            other => other,
        }
    }

    fn with_diagnostics(&self, mut error: HostError) -> HostError {
        match &mut error {
            HostError::Protocol { diagnostics, .. }
            | HostError::HostCrashed { diagnostics, .. }
            | HostError::Timeout { diagnostics, .. }
            | HostError::HostIo { diagnostics, .. } => {
                if diagnostics.pid.is_none() {
                    diagnostics.pid = Some(self.pid);
                }
                if diagnostics.stderr_tail.is_empty() {
                    diagnostics.stderr_tail = self.sink.tail();
                }
            }
            _ => {}
        }
        error
    }

    fn lock_terminal(&self) -> std::sync::MutexGuard<'_, Option<HostError>> {
        self.terminal
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// A request sent to a host whose response has not been collected yet.
#[derive(Debug)]
#[must_use = "the response must be collected with wait()"]
pub struct HostCall<'a> {
    host: &'a Host,
    operation: String,
    stage: Stage,
    began: Instant,
    /// Stderr position when the request was sent (what follows belongs to this operation).
    stderr_mark: u64,
    pending: PendingReply,
}

impl HostCall<'_> {
    /// Waits for the response (same results as [`Host::call`]).
    pub fn wait(self) -> Result<Value, HostError> {
        let host = self.host;
        host.finish(self.detach())
    }

    /// The call without its borrow of the host (collected later with [`Host::finish`]).
    pub(crate) fn detach(self) -> DetachedCall {
        DetachedCall {
            operation: self.operation,
            stage: self.stage,
            began: self.began,
            stderr_mark: self.stderr_mark,
            pending: self.pending,
        }
    }
}

/// A [`HostCall`] detached from its host (see [`HostCall::detach`]).
#[derive(Debug)]
pub(crate) struct DetachedCall {
    operation: String,
    stage: Stage,
    began: Instant,
    stderr_mark: u64,
    pending: PendingReply,
}

impl Host {
    /// Waits for the response of a detached call of this host.
    pub(crate) fn finish(&self, call: DetachedCall) -> Result<Value, HostError> {
        let line = call.pending.wait();
        let micros = u64::try_from(call.began.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.last_round_trip_us
            .store(micros, AtomicOrdering::Relaxed);
        let result = line.and_then(|line| parse_response(&line, &call.operation, call.stage));
        let result = self.with_cause(result, call.stderr_mark);
        self.settle(result)
    }
}

impl Host {
    /// Starts a graceful stop in the background (the `stop` request with `payload`, then
    /// the usual escalation) without waiting; used when a runtime is dropped unstopped.
    pub(crate) fn stop_in_background(&self, payload: &Value) {
        self.lane.close_for_stop();
        self.engine.release(self.key, self.stop_line(Some(payload)));
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // Terminates (if still running) and reaps in the background; never blocks.
        self.engine.release(self.key, None);
    }
}

fn protocol(stage: Stage, violation: ProtocolViolation) -> HostError {
    HostError::Protocol {
        stage,
        violation,
        diagnostics: Diagnostics::default(),
    }
}

/// Validates one response line against the request's operation and decodes its outcome.
pub(crate) fn parse_response(
    line: &[u8],
    operation: &str,
    stage: Stage,
) -> Result<Value, HostError> {
    let text =
        std::str::from_utf8(line).map_err(|_| protocol(stage, ProtocolViolation::InvalidUtf8))?;
    let value: Value =
        serde_json::from_str(text).map_err(|_| protocol(stage, ProtocolViolation::InvalidJson))?;
    let Value::Object(mut response) = value else {
        return Err(protocol(stage, ProtocolViolation::InvalidJson));
    };
    if response.get("operation").and_then(Value::as_str) != Some(operation) {
        return Err(protocol(stage, ProtocolViolation::WrongOperation));
    }
    let Some(Value::Object(mut outcome)) = response.remove("outcome") else {
        return Err(protocol(stage, ProtocolViolation::InvalidOutcome));
    };
    match outcome.get("status").and_then(Value::as_str) {
        Some("succeeded") => Ok(outcome.remove("output").unwrap_or(Value::Null)),
        Some("failed") => {
            let Some(Value::Object(error)) = outcome.remove("error") else {
                return Err(protocol(stage, ProtocolViolation::InvalidOutcome));
            };
            Err(lifecycle_failure(error, stage))
        }
        _ => Err(protocol(stage, ProtocolViolation::InvalidOutcome)),
    }
}

fn lifecycle_failure(mut error: Map<String, Value>, stage: Stage) -> HostError {
    let reported_stage = error
        .get("stage")
        .cloned()
        .and_then(|value| serde_json::from_value::<Stage>(value).ok())
        .unwrap_or(stage);
    let code = match error.remove("code") {
        Some(Value::String(code)) if !code.trim().is_empty() => code,
        _ => codes::LIFECYCLE_ERROR.to_owned(),
    };
    let message = match error.remove("message") {
        Some(Value::String(message)) => message,
        _ => String::new(),
    };
    let retryable = error
        .get("retryable")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let metadata = match error.remove("metadata") {
        Some(Value::Object(metadata)) => metadata,
        _ => Map::new(),
    };
    HostError::Lifecycle {
        stage: reported_stage,
        code,
        message,
        retryable,
        metadata,
        diagnostics: Box::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(result: Result<Value, HostError>) -> String {
        result.expect_err("should fail").code().to_owned()
    }

    #[test]
    fn parses_succeeded_and_failed_outcomes() {
        let ok = br#"{"operation": "invoke", "outcome": {"output": {"status": "succeeded"}, "status": "succeeded"}}"#;
        let output = parse_response(ok, "invoke", Stage::Invoke).expect("succeeded");
        assert_eq!(output["status"], "succeeded");
        let null = br#"{"operation":"stop","outcome":{"status":"succeeded"}}"#;
        assert_eq!(
            parse_response(null, "stop", Stage::Stop).expect("ok"),
            Value::Null
        );
        let failed = br#"{"operation":"start","outcome":{"status":"failed","error":{"stage":"start","code":"lifecycle_invalid_config","message":"bad","retryable":true,"metadata":{"k":1}}}}"#;
        let error = parse_response(failed, "start", Stage::Start).expect_err("failed");
        assert_eq!(error.code(), "lifecycle_invalid_config");
        assert_eq!(error.stage(), Stage::Start);
        assert!(!error.is_terminal());
        let info = fabric_config::ErrorInfo::from(error);
        assert!(info.retryable);
        assert_eq!(info.message, "bad");
        assert_eq!(info.metadata["k"], 1);
    }

    #[test]
    fn rejects_protocol_violations() {
        assert_eq!(
            code(parse_response(b"\xff\xfe", "invoke", Stage::Invoke)),
            "protocol_error"
        );
        assert_eq!(
            code(parse_response(b"not json", "invoke", Stage::Invoke)),
            "protocol_error"
        );
        assert_eq!(
            code(parse_response(b"[1]", "invoke", Stage::Invoke)),
            "protocol_error"
        );
        let wrong = br#"{"operation":"start","outcome":{"status":"succeeded"}}"#;
        let error = parse_response(wrong, "invoke", Stage::Invoke).expect_err("wrong op");
        assert!(matches!(
            error,
            HostError::Protocol {
                violation: ProtocolViolation::WrongOperation,
                ..
            }
        ));
        let no_outcome = br#"{"operation":"invoke"}"#;
        assert_eq!(
            code(parse_response(no_outcome, "invoke", Stage::Invoke)),
            "protocol_error"
        );
        let bad_status = br#"{"operation":"invoke","outcome":{"status":"maybe"}}"#;
        assert_eq!(
            code(parse_response(bad_status, "invoke", Stage::Invoke)),
            "protocol_error"
        );
    }
}
