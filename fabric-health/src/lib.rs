//! Runtime health checks over an authenticated local channel (a unix-domain socket in the
//! private `FABRIC_HOME`, or loopback TCP).
//!
//! Two halves that share [`wire`]:
//! - [`listener`] (adapter side): a Rust adapter host calls [`listener::spawn`] with its
//!   `FABRIC_HOME` and a probe; the listener writes `health.endpoint.json` (0600) with its
//!   socket path (or port), pid and a random secret and answers HMAC-authenticated requests.
//! - [`client`] (core side): [`client::Check`] reads that file, sends one request bound to a
//!   fresh nonce and the remaining budget, verifies the answer and builds the immutable
//!   [`CheckReport`] (`fabric.check/v1alpha1`).
//!
//! Levels are cumulative (`live` → `active` → `ready`) and stop at the first non-pass; one
//! deadline covers everything; failures to get an authenticated answer are `unknown` with a
//! reason, never `passed`. The crate knows nothing of hosts: deciding that a runtime is
//! unknown or that an adapter has no health levels is the caller's job
//! ([`client::Check::unavailable`], [`client::Check::unsupported_adapter`]).
//!
//! ```
//! use fabric_health::{CheckOutcome, CheckRequest, HealthLevel, client, listener};
//! use fabric_health::listener::ProbeOutcome;
//!
//! let home = tempfile::tempdir().unwrap();
//! let handle = listener::spawn(home.path(), |level, _budget| match level {
//!     HealthLevel::Ready => ProbeOutcome::failed("example:ready", "not_ready"),
//!     _ => ProbeOutcome::passed("example:session"),
//! })
//! .unwrap();
//!
//! let request = CheckRequest::runtime("runtime-1").with_level(HealthLevel::Ready);
//! let report = client::Check::new(&request).run(handle.endpoint_path());
//! assert_eq!(report.outcome, CheckOutcome::Failed);
//! assert_eq!(report.reason.as_deref(), Some("not_ready"));
//! assert_eq!(report.checks.len(), 3);
//!
//! let endpoint = handle.endpoint_path().to_path_buf();
//! handle.stop();
//! assert!(!endpoint.exists());
//! ```

#![forbid(unsafe_code)]

mod accept;
pub mod client;
mod clock;
mod conn;
pub mod error;
#[doc(hidden)]
pub mod fuzz;
pub mod listener;
pub mod wire;

pub use error::Error;
pub use fabric_config::health::{
    Activity, CheckObservation, CheckOutcome, CheckReport, CheckRequest, CheckScope, CheckTarget,
    HealthLevel, reason,
};
