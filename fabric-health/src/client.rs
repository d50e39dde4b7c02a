//! The core side: check a runtime (or service) through its health endpoint file.
//!
//! [`Check`] carries one check's clock: it starts when created (so routing counts against
//! the budget) and its deadline defaults to the request's timeout. Every path returns a
//! [`CheckReport`] by the deadline (plus scheduling slack): transport, authentication and
//! decoding problems become `unknown` with a reason, never `passed`.

use std::fs::OpenOptions;
use std::io::Read;
use std::net::TcpStream;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use fabric_config::health::{
    Activity, CHECK_REPORT_SCHEMA_VERSION, CheckObservation, CheckOutcome, CheckReport,
    CheckRequest, CheckScope, CheckTarget, reason,
};
use serde_json::{Map, Value, json};

use crate::clock;
use crate::conn::{LineError, Stream, read_line, with_unix_path, write_all};
use crate::wire::{self, EndpointAddr, EndpointFile, Secret};

mod relay;

/// One health check in progress. Setters take `&mut self`.
/// Connection attempts of one check when the listener closes before answering.
const CLOSED_ATTEMPTS: usize = 3;

pub struct Check<'a> {
    request: &'a CheckRequest,
    started_at: SystemTime,
    started: Instant,
    deadline: Instant,
    activity: Option<Activity>,
    still_current: Option<&'a dyn Fn() -> bool>,
}

impl std::fmt::Debug for Check<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("request", self.request)
            .field("deadline", &self.deadline)
            .field("activity", &self.activity)
            .finish_non_exhaustive()
    }
}

impl<'a> Check<'a> {
    /// Starts the clock now; the deadline is now + `request.timeout()` (default 3 s).
    /// Validate the request first ([`CheckRequest::validate`]); an invalid timeout falls
    /// back to the default here.
    pub fn new(request: &'a CheckRequest) -> Check<'a> {
        let started = Instant::now();
        Check {
            request,
            started_at: SystemTime::now(),
            started,
            deadline: started + request.timeout(),
            activity: None,
            still_current: None,
        }
    }

    /// Overrides the deadline (default: creation time + the request's timeout).
    pub fn deadline(&mut self, deadline: Instant) -> &mut Self {
        self.deadline = deadline;
        self
    }

    /// Runtime activity to report (default: none, reported as `null`).
    pub fn activity(&mut self, activity: Activity) -> &mut Self {
        self.activity = Some(activity);
        self
    }

    /// A predicate that is true while the checked runtime (or service binding) is still the
    /// one the check started on. It is called after the listener answered (and after any
    /// transport failure); false turns the result into `unknown/observation_changed`.
    /// Default: always current.
    pub fn still_current(&mut self, predicate: &'a dyn Fn() -> bool) -> &mut Self {
        self.still_current = Some(predicate);
        self
    }

    /// Budget left before the deadline.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// A report with no observations and the given outcome and reason, finished now. Hosts
    /// use it for decisions made before any transport (unknown runtime, no health levels).
    pub fn report(&self, outcome: CheckOutcome, why: &str) -> CheckReport {
        self.finish(outcome, Some(why.to_owned()), Vec::new())
    }

    /// `unknown/runtime_unavailable` (or `service_unavailable` for service scope).
    pub fn unavailable(&self) -> CheckReport {
        self.report(CheckOutcome::Unknown, self.unavailable_reason())
    }

    /// `unsupported/unsupported_adapter`: the adapter's descriptor advertises no levels.
    pub fn unsupported_adapter(&self) -> CheckReport {
        self.report(CheckOutcome::Unsupported, reason::UNSUPPORTED_ADAPTER)
    }

    /// A report with one observation the caller made itself (`source_id` names it, e.g.
    /// `fabric:runtime_server`), observed now, at the request's level. A runtime server
    /// answers its own server-scope checks this way.
    pub fn observed(
        &self,
        outcome: CheckOutcome,
        why: Option<&str>,
        source_id: &str,
    ) -> CheckReport {
        let observation = CheckObservation {
            level: self.request.level,
            outcome,
            reason: why.map(str::to_owned),
            source_id: source_id.to_owned(),
            observed_at: clock::rfc3339(SystemTime::now()),
        };
        let overall =
            (outcome != CheckOutcome::Passed).then(|| why.unwrap_or("probe_failed").to_owned());
        self.finish(outcome, overall, vec![observation])
    }

    /// Runs the check against the endpoint file the adapter host wrote under its
    /// `FABRIC_HOME` (see [`crate::listener::endpoint_path`]).
    pub fn run(&self, endpoint_file: &Path) -> CheckReport {
        if self.request.scope == CheckScope::Server {
            return self.report(CheckOutcome::Unsupported, reason::UNSUPPORTED_SCOPE);
        }
        let (outcome, why, checks) = match self.exchange_retrying(endpoint_file) {
            Ok(observations) => summarize(observations),
            Err(why) => (CheckOutcome::Unknown, Some(why.to_owned()), Vec::new()),
        };
        if Instant::now() > self.deadline {
            return self.report(CheckOutcome::Unknown, reason::PROBE_TIMEOUT);
        }
        if let Some(current) = self.still_current
            && !current()
        {
            return self.report(CheckOutcome::Unknown, reason::OBSERVATION_CHANGED);
        }
        self.finish(outcome, why, checks)
    }

    fn unavailable_reason(&self) -> &'static str {
        match self.request.scope {
            CheckScope::Service => reason::SERVICE_UNAVAILABLE,
            _ => reason::RUNTIME_UNAVAILABLE,
        }
    }

    /// [`Self::exchange`], again on a fresh connection (at most [`CLOSED_ATTEMPTS`] in all,
    /// within the one deadline) when the listener closed the connection before answering:
    /// under a flood of idle peers it closes the oldest waiting connection, which can be
    /// this one when the checking process was descheduled between connecting and writing.
    /// A probe only observes, so a second attempt is safe.
    fn exchange_retrying(
        &self,
        endpoint_file: &Path,
    ) -> Result<Vec<CheckObservation>, &'static str> {
        let first = self.exchange(endpoint_file);
        if first != Err(reason::NO_RESPONSE) {
            return first;
        }
        for _ in 1..CLOSED_ATTEMPTS {
            if self.remaining().is_zero() {
                break;
            }
            match self.exchange(endpoint_file) {
                // Closed again, or the listener is gone now: the first answer stands.
                Err(why) if why == reason::NO_RESPONSE || why == self.unavailable_reason() => {}
                other => return other,
            }
        }
        Err(reason::NO_RESPONSE)
    }

    /// The whole round trip; `Err(reason)` for anything that is not an authenticated,
    /// well-formed answer to this request.
    fn exchange(&self, endpoint_file: &Path) -> Result<Vec<CheckObservation>, &'static str> {
        let timeout = |e: LineError| match e {
            LineError::Timeout => reason::PROBE_TIMEOUT,
            LineError::Closed => reason::NO_RESPONSE,
            LineError::TooLong => reason::INVALID_RESPONSE,
        };
        if self.remaining().is_zero() {
            return Err(reason::PROBE_TIMEOUT);
        }
        let endpoint = read_endpoint(endpoint_file, self.unavailable_reason())?;
        let secret = Secret::from_hex(&endpoint.secret).ok_or(reason::INVALID_ENDPOINT)?;
        let addr = endpoint.addr().ok_or(reason::INVALID_ENDPOINT)?;
        let left = self.remaining();
        if left.is_zero() {
            return Err(reason::PROBE_TIMEOUT);
        }
        let unreachable = |_| {
            if self.remaining().is_zero() {
                reason::PROBE_TIMEOUT
            } else {
                self.unavailable_reason()
            }
        };
        let mut stream = match addr {
            EndpointAddr::Tcp(addr) => {
                let tcp = TcpStream::connect_timeout(&addr, left).map_err(unreachable)?;
                let _ = tcp.set_nodelay(true);
                Stream::Tcp(tcp)
            }
            EndpointAddr::Unix(path) => {
                Stream::Unix(connect_unix(&path, self.deadline).map_err(unreachable)?)
            }
        };

        let nonce = hex::encode(wire::random_bytes().map_err(|_| reason::PROBE_ERROR)?);
        let budget_ms = clock::whole_ms(self.remaining()).max(1);
        let mut body = Map::new();
        body.insert("kind".into(), json!(wire::REQUEST_KIND));
        body.insert("v".into(), json!(wire::PROTOCOL_VERSION));
        body.insert("nonce".into(), json!(nonce));
        body.insert("level".into(), json!(self.request.level.as_str()));
        body.insert("budget_ms".into(), json!(budget_ms));
        body.insert(
            "issued_at_ms".into(),
            json!(clock::unix_ms(SystemTime::now())),
        );
        let line = wire::seal(&secret, body);
        write_all(&mut stream, line.as_bytes(), self.deadline).map_err(timeout)?;

        let answer =
            read_line(&mut stream, wire::MAX_RESPONSE_BYTES, self.deadline).map_err(timeout)?;
        let body = wire::open(&secret, &answer).map_err(|mac_problem| {
            if mac_problem {
                reason::AUTHENTICATION_FAILED
            } else {
                reason::INVALID_RESPONSE
            }
        })?;
        decode_response(&body, &nonce, endpoint.pid, self.request)
    }

    fn finish(
        &self,
        outcome: CheckOutcome,
        why: Option<String>,
        checks: Vec<CheckObservation>,
    ) -> CheckReport {
        let elapsed = self.started.elapsed();
        let finished_at = self.started_at + elapsed;
        let level = (self.request.scope != CheckScope::Server).then_some(self.request.level);
        CheckReport {
            schema_version: CHECK_REPORT_SCHEMA_VERSION.to_owned(),
            scope: self.request.scope,
            target: CheckTarget {
                runtime_id: self.request.runtime_id.clone(),
                service_id: self.request.service_id.clone(),
            },
            level,
            outcome,
            reason: why,
            checks,
            started_at: clock::rfc3339(self.started_at),
            finished_at: clock::rfc3339(finished_at),
            elapsed_ms: clock::whole_ms(elapsed),
            activity: self.activity,
        }
    }
}

/// Checks through `endpoint_file` with the given deadline; the clock starts now.
/// Equivalent to `Check::new(request).deadline(deadline)` (+ `.activity(a)`) `.run(file)`.
pub fn check(
    endpoint_file: &Path,
    request: &CheckRequest,
    deadline: Instant,
    activity: Option<Activity>,
) -> CheckReport {
    let mut check = Check::new(request);
    check.deadline(deadline);
    if let Some(a) = activity {
        check.activity(a);
    }
    check.run(endpoint_file)
}

/// `unsupported/unsupported_adapter` for an adapter whose descriptor advertises no levels.
pub fn check_unsupported(request: &CheckRequest, activity: Option<Activity>) -> CheckReport {
    let mut check = Check::new(request);
    if let Some(a) = activity {
        check.activity(a);
    }
    check.unsupported_adapter()
}

/// Connects to a unix socket by `deadline`. A non-blocking unix connect fails with
/// `EAGAIN` while the listener's backlog is full (instead of waiting like TCP's SYN
/// retries), so it is retried with a short pause until the deadline.
fn connect_unix(path: &Path, deadline: Instant) -> std::io::Result<UnixStream> {
    let mut pause = Duration::from_micros(200);
    loop {
        match with_unix_path(path, |p| mio::net::UnixStream::connect(p)) {
            Ok(stream) => {
                let stream = UnixStream::from(stream);
                stream.set_nonblocking(false)?;
                return Ok(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}

fn read_endpoint(path: &Path, unavailable: &'static str) -> Result<EndpointFile, &'static str> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // O_NOFOLLOW: a symlink planted in place of the file is refused, not followed.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => unavailable,
            _ if e.raw_os_error() == Some(libc::ELOOP) => reason::ENDPOINT_SYMLINK,
            _ => reason::INVALID_ENDPOINT,
        })?;
    let meta = file.metadata().map_err(|_| reason::INVALID_ENDPOINT)?;
    if !meta.is_file() {
        return Err(reason::ENDPOINT_NOT_REGULAR);
    }
    // The file must belong to us: `/proc/self` is owned by this process's effective uid.
    if let Ok(me) = std::fs::metadata("/proc/self")
        && me.uid() != meta.uid()
    {
        return Err(reason::ENDPOINT_FOREIGN_OWNER);
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(reason::ENDPOINT_INSECURE_MODE);
    }
    let mut text = Vec::new();
    file.take(wire::MAX_ENDPOINT_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|_| reason::INVALID_ENDPOINT)?;
    if text.len() as u64 > wire::MAX_ENDPOINT_FILE_BYTES {
        return Err(reason::INVALID_ENDPOINT);
    }
    serde_json::from_slice(&text).map_err(|_| reason::INVALID_ENDPOINT)
}

/// Validates an authenticated response body and returns its observations.
pub(crate) fn decode_response(
    body: &Map<String, Value>,
    nonce: &str,
    pid: u32,
    request: &CheckRequest,
) -> Result<Vec<CheckObservation>, &'static str> {
    // A valid MAC on a different kind or nonce is a reflected or replayed message.
    if body.get("kind").and_then(Value::as_str) != Some(wire::RESPONSE_KIND)
        || body.get("nonce").and_then(Value::as_str) != Some(nonce)
    {
        return Err(reason::AUTHENTICATION_FAILED);
    }
    if body.get("v").and_then(Value::as_u64) != Some(wire::PROTOCOL_VERSION)
        || body.get("pid").and_then(Value::as_u64) != Some(u64::from(pid))
    {
        return Err(reason::INVALID_RESPONSE);
    }
    let observations: Vec<CheckObservation> = body
        .get("observations")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or(reason::INVALID_RESPONSE)?;
    check_observations(&observations, request)?;
    Ok(observations)
}

/// Observations of a runtime or service check: non-empty, at most the requested levels in
/// order, each well-formed, only the last one not passed, a passing last one at the
/// requested level.
pub(crate) fn check_observations(
    observations: &[CheckObservation],
    request: &CheckRequest,
) -> Result<(), &'static str> {
    let expected = request.level.cumulative();
    if observations.is_empty() || observations.len() > expected.len() {
        return Err(reason::INVALID_RESPONSE);
    }
    for (i, (obs, level)) in observations.iter().zip(expected).enumerate() {
        let last = i + 1 == observations.len();
        let well_formed = obs.level == *level
            && wire::valid_source_id(&obs.source_id)
            && obs.reason.as_deref().is_none_or(wire::valid_reason)
            && clock::is_rfc3339_utc(&obs.observed_at);
        // Only the last observation may be a non-pass; a passing last one must be the
        // requested level.
        let in_order = if last {
            obs.outcome != CheckOutcome::Passed || observations.len() == expected.len()
        } else {
            obs.outcome == CheckOutcome::Passed
        };
        if !well_formed || !in_order {
            return Err(reason::INVALID_RESPONSE);
        }
    }
    Ok(())
}

/// An overall outcome, its reason and the observations behind it.
type Decided = (CheckOutcome, Option<String>, Vec<CheckObservation>);

/// Overall outcome and reason from validated observations: the last observation decides.
fn summarize(observations: Vec<CheckObservation>) -> Decided {
    let last = observations
        .last()
        .expect("decode_response rejects empty lists");
    let outcome = last.outcome;
    let why = match (outcome, &last.reason) {
        (CheckOutcome::Passed, _) => None,
        (_, Some(given)) => Some(given.clone()),
        (CheckOutcome::Failed, None) => Some(reason::PROBE_FAILED.to_owned()),
        (CheckOutcome::Unsupported, None) => Some(reason::UNSUPPORTED_LEVEL.to_owned()),
        (_, None) => Some(reason::PROBE_ERROR.to_owned()),
    };
    (outcome, why, observations)
}
