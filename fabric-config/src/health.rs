//! Health checks: the request a caller makes (`CheckRequest`) and the immutable report it
//! gets back (`CheckReport`, schema `fabric.check/v1alpha1`).
//!
//! Levels are cumulative (`live` → `active` → `ready`); evaluation stops at the first
//! observation that does not pass, and `checks` lists the observations that ran, in order.
//! One deadline (`timeout_seconds`, default 3 s, positive and finite) covers routing, every
//! probe and response decoding.
//!
//! Report JSON (every field always present; absent values are `null`):
//!
//! ```json
//! {
//!   "schema_version": "fabric.check/v1alpha1",
//!   "scope": "runtime",
//!   "target": {"runtime_id": "runtime-1", "service_id": null},
//!   "level": "ready",
//!   "outcome": "failed",
//!   "reason": "not_ready",
//!   "checks": [
//!     {"level": "live", "outcome": "passed", "reason": null,
//!      "source_id": "scripted:process", "observed_at": "2026-11-30T12:00:00.001Z"},
//!     {"level": "active", "outcome": "failed", "reason": "not_ready",
//!      "source_id": "scripted:request_interface", "observed_at": "2026-11-30T12:00:00.002Z"}
//!   ],
//!   "started_at": "2026-11-30T12:00:00.000Z",
//!   "finished_at": "2026-11-30T12:00:00.003Z",
//!   "elapsed_ms": 3,
//!   "activity": "idle"
//! }
//! ```

use crate::codes;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorInfo, Stage};

/// `schema_version` of every [`CheckReport`].
pub const CHECK_REPORT_SCHEMA_VERSION: &str = "fabric.check/v1alpha1";

/// Default check budget when `timeout_seconds` is absent.
pub const DEFAULT_CHECK_TIMEOUT_SECONDS: f64 = 3.0;

/// Largest accepted `timeout_seconds` (one day); larger budgets are a caller mistake.
pub const MAX_CHECK_TIMEOUT_SECONDS: f64 = 86_400.0;

/// Stable reason codes used by the core. Adapters may report their own snake_case reasons
/// (for example `capabilities_unverified`); these are the ones the core itself produces.
pub mod reason {
    /// The deadline expired before the check completed.
    pub const PROBE_TIMEOUT: &str = "probe_timeout";
    /// Stop, release or session replacement happened while the check ran.
    pub const OBSERVATION_CHANGED: &str = "observation_changed";
    /// The runtime is unknown, stopped, or its health endpoint is absent or refuses connections.
    pub const RUNTIME_UNAVAILABLE: &str = crate::codes::RUNTIME_UNAVAILABLE;
    /// The service binding is released or unavailable.
    pub const SERVICE_UNAVAILABLE: &str = "service_unavailable";
    /// The adapter advertises no health levels.
    pub const UNSUPPORTED_ADAPTER: &str = "unsupported_adapter";
    /// The adapter does not implement the requested level.
    pub const UNSUPPORTED_LEVEL: &str = "unsupported_level";
    /// The execution mode cannot check this scope (local `scope=server`).
    pub const UNSUPPORTED_SCOPE: &str = "unsupported_scope";
    /// A health message carried a wrong MAC or was not bound to this request's nonce.
    pub const AUTHENTICATION_FAILED: &str = "authentication_failed";
    /// The health listener answered with something that is not a valid response.
    pub const INVALID_RESPONSE: &str = crate::codes::INVALID_RESPONSE;
    /// The health endpoint file is unreadable, malformed or names a non-loopback host or a
    /// relative socket path.
    pub const INVALID_ENDPOINT: &str = "invalid_endpoint";
    /// The health endpoint file is a symbolic link (it is opened with `O_NOFOLLOW`).
    pub const ENDPOINT_SYMLINK: &str = "endpoint_symlink";
    /// The health endpoint file is not a regular file.
    pub const ENDPOINT_NOT_REGULAR: &str = "endpoint_not_regular";
    /// The health endpoint file is owned by another user.
    pub const ENDPOINT_FOREIGN_OWNER: &str = "endpoint_foreign_owner";
    /// The health endpoint file is readable or writable by group or others (must be 0600).
    pub const ENDPOINT_INSECURE_MODE: &str = "endpoint_insecure_mode";
    /// The listener closed the connection without answering (it drops unauthenticated requests).
    pub const NO_RESPONSE: &str = "no_response";
    /// The adapter's probe raised or returned something unusable.
    pub const PROBE_ERROR: &str = "probe_error";
    /// The adapter's probe returned a plain negative answer without its own reason.
    pub const PROBE_FAILED: &str = "probe_failed";
}

/// What a check targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckScope {
    /// One runtime, selected by `runtime_id`.
    Runtime,
    /// One prepared or attached service, selected by `service_id`.
    Service,
    /// The runtime server of a sandbox environment (unsupported locally).
    Server,
}

impl CheckScope {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckScope::Runtime => "runtime",
            CheckScope::Service => "service",
            CheckScope::Server => "server",
        }
    }
}

/// A health level. Ordered: `Live < Active < Ready`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HealthLevel {
    /// Current evidence that the owned agent or session is alive.
    #[default]
    Live,
    /// The native request interface meets the adapter's availability check.
    Active,
    /// The native readiness response (or its qualified equivalent) passes.
    Ready,
}

impl HealthLevel {
    /// Every level, in evaluation order.
    pub const ALL: [HealthLevel; 3] = [HealthLevel::Live, HealthLevel::Active, HealthLevel::Ready];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthLevel::Live => "live",
            HealthLevel::Active => "active",
            HealthLevel::Ready => "ready",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<HealthLevel> {
        match text {
            "live" => Some(HealthLevel::Live),
            "active" => Some(HealthLevel::Active),
            "ready" => Some(HealthLevel::Ready),
            _ => None,
        }
    }

    /// The levels evaluated for a request of this level, in order (`ready` → all three).
    pub fn cumulative(self) -> &'static [HealthLevel] {
        let n = match self {
            HealthLevel::Live => 1,
            HealthLevel::Active => 2,
            HealthLevel::Ready => 3,
        };
        &Self::ALL[..n]
    }
}

/// Outcome of one observation or of a whole check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// The requested observations passed.
    Passed,
    /// An observation found a concrete failure.
    Failed,
    /// The result could not be established (timeout, unavailable target, invalid response,
    /// ownership change, authentication failure).
    Unknown,
    /// The adapter or execution mode does not provide the check.
    Unsupported,
}

impl CheckOutcome {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckOutcome::Passed => "passed",
            CheckOutcome::Failed => "failed",
            CheckOutcome::Unknown => "unknown",
            CheckOutcome::Unsupported => "unsupported",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<CheckOutcome> {
        match text {
            "passed" => Some(CheckOutcome::Passed),
            "failed" => Some(CheckOutcome::Failed),
            "unknown" => Some(CheckOutcome::Unknown),
            "unsupported" => Some(CheckOutcome::Unsupported),
            _ => None,
        }
    }
}

/// Runtime activity: whether a Fabric invocation is pending. Separate from health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    /// No invocation pending.
    Idle,
    /// An invocation is pending.
    Busy,
}

/// A health-check request.
///
/// `scope=runtime` needs `runtime_id`, `scope=service` needs `service_id`, `scope=server`
/// takes neither. `level` defaults to `live`; `timeout_seconds` defaults to 3 and must be
/// positive and finite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// What to check.
    pub scope: CheckScope,
    /// The runtime to check (`scope=runtime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_id: Option<String>,
    /// The service to check (`scope=service`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_id: Option<String>,
    /// Requested level; earlier levels are evaluated first. Default `live`.
    #[serde(default)]
    pub level: HealthLevel,
    /// The whole check's budget in seconds. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
}

impl CheckRequest {
    /// A `live` runtime check with the default timeout.
    pub fn runtime(runtime_id: impl Into<String>) -> Self {
        CheckRequest {
            scope: CheckScope::Runtime,
            runtime_id: Some(runtime_id.into()),
            service_id: None,
            level: HealthLevel::Live,
            timeout_seconds: None,
        }
    }

    /// A `live` service check with the default timeout.
    pub fn service(service_id: impl Into<String>) -> Self {
        CheckRequest {
            scope: CheckScope::Service,
            runtime_id: None,
            service_id: Some(service_id.into()),
            level: HealthLevel::Live,
            timeout_seconds: None,
        }
    }

    /// A server check with the default timeout.
    pub fn server() -> Self {
        CheckRequest {
            scope: CheckScope::Server,
            runtime_id: None,
            service_id: None,
            level: HealthLevel::Live,
            timeout_seconds: None,
        }
    }

    /// Sets the level (builder style).
    pub fn with_level(mut self, level: HealthLevel) -> Self {
        self.level = level;
        self
    }

    /// Sets `timeout_seconds` (builder style).
    pub fn with_timeout_seconds(mut self, seconds: f64) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }

    /// Checks the field rules; the error names the offending field.
    pub fn validate(&self) -> Result<(), ErrorInfo> {
        let invalid = |path: &str, message: &str| {
            Err(
                ErrorInfo::new(Stage::Config, codes::INVALID_CHECK_REQUEST, message)
                    .with_metadata("path", path),
            )
        };
        let blank = |v: &Option<String>| v.as_deref().is_some_and(|s| s.trim().is_empty());
        if blank(&self.runtime_id) {
            return invalid("runtime_id", "runtime_id must not be empty");
        }
        if blank(&self.service_id) {
            return invalid("service_id", "service_id must not be empty");
        }
        match self.scope {
            CheckScope::Runtime => {
                if self.runtime_id.is_none() {
                    return invalid("runtime_id", "scope=runtime requires runtime_id");
                }
                if self.service_id.is_some() {
                    return invalid("service_id", "scope=runtime does not take service_id");
                }
            }
            CheckScope::Service => {
                if self.service_id.is_none() {
                    return invalid("service_id", "scope=service requires service_id");
                }
                if self.runtime_id.is_some() {
                    return invalid("runtime_id", "scope=service does not take runtime_id");
                }
            }
            CheckScope::Server => {
                if self.runtime_id.is_some() {
                    return invalid("runtime_id", "scope=server does not take runtime_id");
                }
                if self.service_id.is_some() {
                    return invalid("service_id", "scope=server does not take service_id");
                }
            }
        }
        if let Some(t) = self.timeout_seconds
            && !crate::seconds::in_range(t, MAX_CHECK_TIMEOUT_SECONDS)
        {
            return invalid(
                "timeout_seconds",
                "timeout_seconds must be positive, finite and at most 86400",
            );
        }
        Ok(())
    }

    /// The check budget (default 3 s). Call [`CheckRequest::validate`] first; an invalid
    /// value here falls back to the default.
    pub fn timeout(&self) -> Duration {
        let secs = match self.timeout_seconds {
            Some(t) if crate::seconds::in_range(t, MAX_CHECK_TIMEOUT_SECONDS) => t,
            _ => DEFAULT_CHECK_TIMEOUT_SECONDS,
        };
        Duration::from_secs_f64(secs)
    }
}

/// The checked target. Exactly one id is set for runtime and service scope; both are null
/// for server scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckTarget {
    /// Runtime id (`scope=runtime`), else null.
    pub runtime_id: Option<String>,
    /// Service id (`scope=service`), else null.
    pub service_id: Option<String>,
}

/// One observation that ran, in evaluation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckObservation {
    /// The level this observation answers.
    pub level: HealthLevel,
    /// Its outcome.
    pub outcome: CheckOutcome,
    /// Snake_case reason; null when passed without comment.
    pub reason: Option<String>,
    /// Fixed evidence-source id naming the native evidence (for example
    /// `scripted:process`), or `fabric:<something>` when the core produced it.
    pub source_id: String,
    /// When the observation was made, RFC 3339 UTC.
    #[schemars(extend("format" = "date-time"))]
    pub observed_at: String,
}

/// The immutable result of one check (`fabric.check/v1alpha1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckReport {
    /// Always `fabric.check/v1alpha1`.
    pub schema_version: String,
    /// The requested scope.
    pub scope: CheckScope,
    /// The checked target.
    pub target: CheckTarget,
    /// The requested level; null for `scope=server`.
    pub level: Option<HealthLevel>,
    /// Overall outcome: `passed` only when every observation up to `level` passed.
    pub outcome: CheckOutcome,
    /// Snake_case reason for a non-passing outcome; null when passed.
    pub reason: Option<String>,
    /// Observations that ran, in order.
    pub checks: Vec<CheckObservation>,
    /// When the check started (routing included), RFC 3339 UTC.
    #[schemars(extend("format" = "date-time"))]
    pub started_at: String,
    /// When the check finished, RFC 3339 UTC.
    #[schemars(extend("format" = "date-time"))]
    pub finished_at: String,
    /// Monotonic elapsed time in whole milliseconds.
    pub elapsed_ms: u64,
    /// Runtime activity when known; null otherwise (service and server scope).
    pub activity: Option<Activity>,
}

impl CheckReport {
    /// Whether the outcome is `passed`.
    pub fn passed(&self) -> bool {
        self.outcome == CheckOutcome::Passed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_defaults_and_strictness() {
        let r: CheckRequest =
            serde_json::from_str(r#"{"scope":"runtime","runtime_id":"R1"}"#).unwrap();
        assert_eq!(r.level, HealthLevel::Live);
        assert_eq!(r.timeout(), Duration::from_secs(3));
        r.validate().unwrap();
        assert!(
            serde_json::from_str::<CheckRequest>(r#"{"scope":"runtime","runtime_id":"R1","x":1}"#)
                .is_err()
        );
        assert!(
            serde_json::from_str::<CheckRequest>(r#"{"scope":"runtime","level":"x"}"#).is_err()
        );
    }

    #[test]
    fn request_validation_names_fields() {
        let path = |r: CheckRequest| r.validate().unwrap_err().path().map(str::to_owned);
        let mut r = CheckRequest::runtime("R1");
        r.runtime_id = None;
        assert_eq!(path(r).as_deref(), Some("runtime_id"));
        assert_eq!(
            path(CheckRequest::runtime(" ")).as_deref(),
            Some("runtime_id")
        );
        let mut r = CheckRequest::service("S");
        r.runtime_id = Some("R".into());
        assert_eq!(path(r).as_deref(), Some("runtime_id"));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
            let r = CheckRequest::runtime("R1").with_timeout_seconds(bad);
            assert_eq!(path(r).as_deref(), Some("timeout_seconds"));
        }
        CheckRequest::server().validate().unwrap();
        CheckRequest::runtime("R")
            .with_timeout_seconds(0.001)
            .validate()
            .unwrap();
        assert_eq!(
            CheckRequest::runtime("R")
                .with_timeout_seconds(0.5)
                .timeout(),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn levels_are_cumulative_and_ordered() {
        assert_eq!(HealthLevel::Live.cumulative(), &[HealthLevel::Live]);
        assert_eq!(HealthLevel::Ready.cumulative(), &HealthLevel::ALL);
        assert!(
            HealthLevel::Live < HealthLevel::Active && HealthLevel::Active < HealthLevel::Ready
        );
        for l in HealthLevel::ALL {
            assert_eq!(HealthLevel::parse(l.as_str()), Some(l));
            assert_eq!(serde_json::to_value(l).unwrap(), l.as_str());
        }
        for o in [
            CheckOutcome::Passed,
            CheckOutcome::Failed,
            CheckOutcome::Unknown,
            CheckOutcome::Unsupported,
        ] {
            assert_eq!(CheckOutcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
    }

    #[test]
    fn report_serializes_nulls() {
        let report = CheckReport {
            schema_version: CHECK_REPORT_SCHEMA_VERSION.into(),
            scope: CheckScope::Service,
            target: CheckTarget {
                runtime_id: None,
                service_id: Some("S".into()),
            },
            level: Some(HealthLevel::Live),
            outcome: CheckOutcome::Passed,
            reason: None,
            checks: vec![],
            started_at: "2026-11-30T12:00:00.000Z".into(),
            finished_at: "2026-11-30T12:00:00.000Z".into(),
            elapsed_ms: 0,
            activity: None,
        };
        let v = serde_json::to_value(&report).unwrap();
        assert!(v["target"]["runtime_id"].is_null());
        assert!(v["reason"].is_null());
        assert!(v["activity"].is_null());
        let back: CheckReport = serde_json::from_value(v).unwrap();
        assert_eq!(back, report);
        assert!(back.passed());
    }

    #[test]
    fn schemas_validate_reports_and_requests() {
        let report = serde_json::json!({
            "schema_version": CHECK_REPORT_SCHEMA_VERSION, "scope": "runtime",
            "target": {"runtime_id": "R1", "service_id": null}, "level": "ready",
            "outcome": "failed", "reason": "not_ready",
            "checks": [{"level": "live", "outcome": "passed", "reason": null,
                        "source_id": "x:y", "observed_at": "2026-11-30T12:00:00.000Z"}],
            "started_at": "2026-11-30T12:00:00.000Z", "finished_at": "2026-11-30T12:00:00.001Z",
            "elapsed_ms": 1, "activity": "idle"
        });
        let _: CheckReport = serde_json::from_value(report.clone()).unwrap();
        let schema = serde_json::to_value(schemars::schema_for!(CheckReport)).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&report));
        let mut bad = report.clone();
        bad["outcome"] = "great".into();
        assert!(!validator.is_valid(&bad));

        let schema = serde_json::to_value(schemars::schema_for!(CheckRequest)).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&serde_json::json!({"scope": "runtime", "runtime_id": "R"})));
        assert!(!validator.is_valid(&serde_json::json!({"scope": "runtime", "extra": 1})));
    }
}
