//! Process-tree resource snapshots, cgroup v2 readings, sampling and reductions.
//!
//! This crate knows nothing of adapter hosts: it takes a root pid, a runtime id, a start
//! time and the roots of the proc and cgroup file systems (fixture trees in tests).
//!
//! ```no_run
//! use std::path::Path;
//! use std::time::SystemTime;
//!
//! let snapshot = fabric_stats::snapshot(
//!     Path::new("/proc"),
//!     std::process::id(),
//!     "runtime-1",
//!     SystemTime::now(),
//! )?;
//! assert!(snapshot.process_count >= 1);
//! # Ok::<(), fabric_stats::StatsError>(())
//! ```

#![forbid(unsafe_code)]

mod cgroup;
mod collector;
mod error;
mod proc;
pub mod procs;
mod reduce;
mod sampling;
mod stat;
mod timestamp;

pub use cgroup::{CgroupReader, deltas as cgroup_deltas};
pub use collector::{
    ArtifactLocation, FinishedStats, InvocationIds, InvocationStats, SAMPLES_FILE, SUMMARY_FILE,
    StatsCollector, StatsTarget, cpu_estimate,
};
pub use error::{StatsError, UnavailableReason, UnsupportedReason};
pub use proc::{ProcReader, TreeDiscovery, TreeTotals, cached_descriptors, snapshot};
pub use reduce::{CounterAccumulator, GaugeAccumulator, reduce_gauge};
pub use sampling::{active_sampled_invocations, sampler_thread_id};
pub use stat::{ProcStat, parse_stat};
pub use timestamp::rfc3339_millis;
