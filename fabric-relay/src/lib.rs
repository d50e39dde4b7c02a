//! Relay telemetry: the embedded ATOF collector (a loopback HTTP service on the core's
//! reactor, wire-compatible with upstream's collector app), the client of an external one,
//! and Relay streaming of a runtime (where its adapter publishes, and the plan it starts
//! with). See `docs/telemetry.md`. And the mapping of a rollout's results and ATOF records to
//! NeMo Gym's observations ([`gym`]).
//!
//! ```no_run
//! use std::time::Duration;
//! use fabric_relay::{StreamNext, collector::{Collector, CollectorOptions}};
//!
//! let collector = Collector::start(&CollectorOptions::loopback())?;
//! collector.register("request-1")?;
//! let reader = collector.attach("request-1")?;
//! // publishers POST NDJSON records to <base_url>/v1/atof with the bearer token
//! let _url = format!("{}/v1/atof", collector.base_url());
//! collector.deregister("request-1", false);
//! assert_eq!(reader.next(Some(Duration::from_secs(1))), StreamNext::End);
//! # Ok::<(), fabric_relay::RelayError>(())
//! ```

#![forbid(unsafe_code)]

pub mod collector;
mod error;
pub mod external;
#[doc(hidden)]
pub mod fuzz;
pub mod gym;
pub mod streaming;

pub use error::RelayError;

/// What one pull of a stream of JSON documents returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamNext {
    /// The next item (one JSON document).
    Item(String),
    /// No more items.
    End,
    /// No item arrived within the timeout.
    Timeout,
}
