//! Process-tree readings from a proc file system (`/proc` or a fixture tree).
//!
//! The tree is the adapter host plus its descendants. Children come from
//! `<root>/<pid>/task/<tid>/children` (every thread of every process); on a kernel without
//! children lists the reader scans every `<root>/<pid>/stat` for parent ids instead. Only
//! `stat`, `task/` and `children` are read: never command lines, environments or any
//! process outside the tree (the parent scan reads only the pid, state and parent id of
//! other processes and keeps nothing of them).

mod cache;
mod children;
mod read;
mod scan;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use fabric_config::stats::RuntimeResourceSnapshot;

use crate::error::{StatsError, UnavailableReason, UnsupportedReason};
use crate::stat::ProcStat;
use crate::timestamp::rfc3339_millis;
use fabric_reactor::sys;

use cache::FdCache;
pub use cache::cached_descriptors;
pub(crate) use cache::{CACHED_FD_BUDGET, CachedFd};
use read::Scratch;
pub(crate) use read::read_full;

/// How the reader finds a process's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeDiscovery {
    /// Children lists when the kernel has them, else the parent scan (default).
    #[default]
    Auto,
    /// Only `task/<tid>/children`; a kernel without them makes readings unsupported.
    ChildrenFiles,
    /// Always scan every process's parent id (the fallback; used by tests).
    ParentScan,
}

/// Totals of one consistent reading of a process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeTotals {
    /// Live processes (zombies excluded).
    pub process_count: u64,
    /// Sum of resident set sizes of the live processes, in bytes.
    pub resident_memory_bytes: u64,
    /// utime + stime + cutime + cstime over the tree (zombies included, so a descendant's
    /// CPU does not vanish between its exit and its reaping), in clock ticks.
    pub cpu_ticks: u64,
}

/// The outcome of one attempt at a reading.
pub(super) enum Step<T> {
    Done(T),
    Retry,
    Fallback,
    Fail(UnavailableReason),
}

pub(super) const CHILDREN_UNKNOWN: u8 = 0;
pub(super) const CHILDREN_PRESENT: u8 = 1;
pub(super) const CHILDREN_MISSING: u8 = 2;

/// Reads process trees under a proc root. Safe to share between threads; a clone has the
/// same settings and its own descriptor cache.
///
/// The reader keeps the `stat` and children-list descriptors of the processes it read open
/// between readings (bounded, evicted when idle): a positioned re-read of an open proc file
/// regenerates it and costs a fraction of open + read + close. A proc descriptor is bound
/// to its process, not to the pid number: once the process is gone it reads `ESRCH`, so a
/// reused pid can never be confused with the old process.
///
/// ```no_run
/// use fabric_stats::ProcReader;
/// let reader = ProcReader::new("/proc");
/// let totals = reader.read_tree(std::process::id())?;
/// assert!(totals.process_count >= 1);
/// # Ok::<(), fabric_stats::StatsError>(())
/// ```
#[derive(Debug)]
pub struct ProcReader {
    root: PathBuf,
    discovery: TreeDiscovery,
    max_attempts: u32,
    page_size: u64,
    clock_ticks: u64,
    /// Whether the kernel has children lists (probed once per reader family).
    children_support: Arc<AtomicU8>,
    cache: Mutex<FdCache>,
}

impl Clone for ProcReader {
    fn clone(&self) -> Self {
        ProcReader {
            root: self.root.clone(),
            discovery: self.discovery,
            max_attempts: self.max_attempts,
            page_size: self.page_size,
            clock_ticks: self.clock_ticks,
            children_support: Arc::clone(&self.children_support),
            cache: Mutex::new(FdCache::default()),
        }
    }
}

impl ProcReader {
    /// A reader of the proc file system at `root` (normally `/proc`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProcReader {
            root: root.into(),
            discovery: TreeDiscovery::Auto,
            max_attempts: 8,
            page_size: sys::page_size(),
            clock_ticks: sys::clock_ticks_per_second(),
            children_support: Arc::new(AtomicU8::new(CHILDREN_UNKNOWN)),
            cache: Mutex::new(FdCache::default()),
        }
    }

    /// How children are found. Default: [`TreeDiscovery::Auto`].
    pub fn set_discovery(&mut self, discovery: TreeDiscovery) -> &mut Self {
        self.discovery = discovery;
        self
    }

    /// Attempts before a changing tree makes the reading unavailable (at least 1).
    /// Default: 8.
    pub fn set_max_attempts(&mut self, attempts: u32) -> &mut Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Bytes per page of the `rss` field. Default: the system page size.
    pub fn set_page_size(&mut self, bytes: u64) -> &mut Self {
        self.page_size = bytes.max(1);
        self
    }

    /// Clock ticks per second of the CPU fields. Default: `sysconf(_SC_CLK_TCK)`.
    pub fn set_clock_ticks(&mut self, ticks: u64) -> &mut Self {
        self.clock_ticks = ticks.max(1);
        self
    }

    /// The proc root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Clock ticks per second used to convert CPU fields.
    pub fn clock_ticks(&self) -> u64 {
        self.clock_ticks
    }

    /// Reads the tree rooted at `host_pid` and converts it into a snapshot.
    pub fn snapshot(
        &self,
        host_pid: u32,
        runtime_id: &str,
        started_at: SystemTime,
    ) -> Result<RuntimeResourceSnapshot, StatsError> {
        let totals = self.read_tree(host_pid)?;
        Ok(self.to_snapshot(&totals, runtime_id, started_at, SystemTime::now()))
    }

    /// Builds a snapshot from totals read at `observed_at`.
    pub fn to_snapshot(
        &self,
        totals: &TreeTotals,
        runtime_id: &str,
        started_at: SystemTime,
        observed_at: SystemTime,
    ) -> RuntimeResourceSnapshot {
        RuntimeResourceSnapshot {
            runtime_id: runtime_id.to_owned(),
            started_at: rfc3339_millis(started_at),
            observed_at: rfc3339_millis(observed_at),
            resident_memory_bytes: totals.resident_memory_bytes,
            process_count: totals.process_count,
            cpu_time_seconds: ticks_to_seconds(totals.cpu_ticks, self.clock_ticks),
        }
    }

    /// Reads one consistent set of totals for `host_pid` and its descendants.
    ///
    /// A reading that sees the tree change (a listed process vanished, a child was
    /// reparented, or the children lists differ on the re-check) is retried up to the
    /// configured attempts, then fails with [`UnavailableReason::TreeChanging`].
    pub fn read_tree(&self, host_pid: u32) -> Result<TreeTotals, StatsError> {
        let members = self.read_members(host_pid)?;
        Ok(self.totals(&members))
    }

    /// Totals of the processes of one reading (zombies count for CPU only).
    fn totals(&self, members: &[ProcStat]) -> TreeTotals {
        let mut totals = TreeTotals {
            process_count: 0,
            resident_memory_bytes: 0,
            cpu_ticks: 0,
        };
        for stat in members {
            totals.cpu_ticks = totals.cpu_ticks.saturating_add(stat.cpu_ticks);
            if !stat.is_exited() {
                totals.process_count += 1;
                totals.resident_memory_bytes = totals
                    .resident_memory_bytes
                    .saturating_add(stat.rss_pages.saturating_mul(self.page_size));
            }
        }
        totals
    }

    /// One consistent reading of `host_pid` and its descendants: their stats, the host's
    /// first (zombies included, not descended into). Retried and failing as
    /// [`ProcReader::read_tree`].
    pub fn read_members(&self, host_pid: u32) -> Result<Vec<ProcStat>, StatsError> {
        if !cfg!(target_os = "linux") {
            return Err(StatsError::Unsupported {
                reason: UnsupportedReason::Platform,
            });
        }
        let fail = |reason| {
            // A missing root is no proc file system at all, not an exited host (checked
            // only on failure, to keep the common path free of extra system calls).
            if reason == UnavailableReason::HostExited && !self.root.is_dir() {
                return StatsError::Unsupported {
                    reason: UnsupportedReason::NoProcFilesystem,
                };
            }
            StatsError::Unavailable {
                pid: host_pid,
                reason,
            }
        };
        let mut guard = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut scratch = Scratch {
            cache: std::mem::take(&mut *guard),
            ..Scratch::default()
        };
        let result = self.read_tree_with(host_pid, &mut scratch, &fail);
        scratch.cache.end_reading();
        *guard = scratch.cache;
        result
    }

    fn read_tree_with(
        &self,
        host_pid: u32,
        scratch: &mut Scratch,
        fail: &dyn Fn(UnavailableReason) -> StatsError,
    ) -> Result<Vec<ProcStat>, StatsError> {
        let mut use_scan = match self.discovery {
            TreeDiscovery::ParentScan => true,
            TreeDiscovery::ChildrenFiles => false,
            TreeDiscovery::Auto => {
                self.children_support.load(Ordering::Relaxed) == CHILDREN_MISSING
            }
        };
        let mut attempts = 0;
        while attempts < self.max_attempts {
            attempts += 1;
            let step = if use_scan {
                self.attempt_scan(host_pid, scratch)
            } else {
                self.attempt_children(host_pid, scratch)
            };
            match step {
                Step::Done(totals) => return Ok(totals),
                Step::Retry => continue,
                Step::Fail(reason) => return Err(fail(reason)),
                Step::Fallback => {
                    if self.discovery == TreeDiscovery::ChildrenFiles {
                        return Err(StatsError::Unsupported {
                            reason: UnsupportedReason::NoChildrenLists,
                        });
                    }
                    self.children_support
                        .store(CHILDREN_MISSING, Ordering::Relaxed);
                    use_scan = true;
                    // Switching method is not a change of the tree.
                    attempts -= 1;
                }
            }
        }
        Err(fail(UnavailableReason::TreeChanging { attempts }))
    }
}

/// Converts clock ticks to seconds, rounded to the microsecond so differences print cleanly.
pub(crate) fn ticks_to_seconds(ticks: u64, per_second: u64) -> f64 {
    round_micros(ticks as f64 / per_second.max(1) as f64)
}

/// Rounds seconds to the microsecond.
pub(crate) fn round_micros(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e6
}

/// Reads a snapshot of `host_pid` and its descendants from the proc file system at
/// `proc_root` (normally `/proc`), with default reader settings.
pub fn snapshot(
    proc_root: &Path,
    host_pid: u32,
    runtime_id: &str,
    started_at: SystemTime,
) -> Result<RuntimeResourceSnapshot, StatsError> {
    ProcReader::new(proc_root).snapshot(host_pid, runtime_id, started_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let reader = ProcReader::new("/proc");
        let totals = reader.read_tree(std::process::id()).unwrap();
        assert!(totals.process_count >= 1);
        assert!(totals.resident_memory_bytes > 0);
    }

    #[test]
    fn ticks_round_cleanly() {
        assert_eq!(ticks_to_seconds(1450, 100), 14.5);
        assert_eq!(round_micros(0.1 + 0.2), 0.3);
    }
}
