//! The descriptor cache of the process-tree reader: open `stat` and children-list files
//! of recently read processes, counted against a process-wide budget.

use std::collections::HashMap;
use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Open descriptors of recently read processes.
#[derive(Debug, Default)]
pub(super) struct FdCache {
    /// Readings done so far (for idle eviction).
    pub(super) generation: u64,
    pub(super) procs: HashMap<u32, CachedProc>,
}

#[derive(Debug)]
pub(super) struct CachedProc {
    pub(super) stat: CachedFd,
    /// tid → its children list.
    pub(super) children: HashMap<u32, CachedFd>,
    pub(super) used: u64,
}

/// An open proc or cgroup file counted against the process-wide descriptor budget.
#[derive(Debug)]
pub(crate) struct CachedFd(pub(crate) fs::File);

/// Descriptors held by every reader's cache in this process.
static CACHED_FDS: AtomicUsize = AtomicUsize::new(0);

/// Above this many cached descriptors process-wide, a reader closes its whole cache after
/// its reading (so the cache never crowds out the host's own descriptors).
pub(crate) const CACHED_FD_BUDGET: usize = 256;
/// Readings after which an unused entry is closed.
const CACHE_IDLE_READINGS: u64 = 16;

impl CachedFd {
    pub(crate) fn new(file: fs::File) -> Self {
        CACHED_FDS.fetch_add(1, Ordering::Relaxed);
        CachedFd(file)
    }
}

impl Drop for CachedFd {
    fn drop(&mut self) {
        CACHED_FDS.fetch_sub(1, Ordering::Relaxed);
    }
}

impl FdCache {
    pub(super) fn end_reading(&mut self) {
        let generation = self.generation;
        self.procs
            .retain(|_, entry| generation.saturating_sub(entry.used) < CACHE_IDLE_READINGS);
        if CACHED_FDS.load(Ordering::Relaxed) > CACHED_FD_BUDGET {
            self.procs.clear();
        }
        self.generation += 1;
    }
}

/// Descriptors currently held by the process-tree and cgroup readers' caches
/// (process-wide).
pub fn cached_descriptors() -> usize {
    CACHED_FDS.load(Ordering::Relaxed)
}
