//! Prewarmed hosts for `fresh` isolation: while the batch runs, a pool keeps up to
//! `concurrency` adapter hosts launched ahead of the items (`fabric-host`'s prewarm), so an
//! item's start claims a host whose interpreter is already up instead of waiting for it.
//! The pool is closed when the batch ends (or is cancelled): its unclaimed hosts are
//! terminated then.

use fabric_config::plan::RunPlan;
use fabric_host::{Fabric, MAX_PREWARM_HOSTS, Prewarm, RuntimeOptions};

use crate::options::{BatchOptions, Isolation};

/// The batch's pool, when `options` ask for one and the plan can be prewarmed (a local
/// environment without Relay streaming); otherwise items start cold, as before.
pub(crate) fn open(
    plan: &RunPlan,
    runtime: &RuntimeOptions,
    options: &BatchOptions,
) -> Option<Prewarm> {
    if !options.prewarm || options.isolation != Isolation::Fresh {
        return None;
    }
    let hosts = u32::try_from(options.concurrency.max(1))
        .unwrap_or(u32::MAX)
        .min(MAX_PREWARM_HOSTS);
    Fabric::new().prewarm_plan(plan, runtime, hosts).ok()
}

/// Closes the pool (its waiting hosts are terminated) and returns how many hosts items
/// claimed from it.
pub(crate) fn close(pool: Option<Prewarm>) -> u64 {
    pool.map_or(0, |pool| pool.close().claimed)
}
