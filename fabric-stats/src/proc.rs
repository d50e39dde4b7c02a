//! Process-tree readings from a proc file system (`/proc` or a fixture tree).
//!
//! The tree is the adapter host plus its descendants. Children come from
//! `<root>/<pid>/task/<tid>/children` (every thread of every process); on a kernel without
//! children lists the reader scans every `<root>/<pid>/stat` for parent ids instead. Only
//! `stat`, `task/` and `children` are read: never command lines, environments or any
//! process outside the tree (the parent scan reads only the pid, state and parent id of
//! other processes and keeps nothing of them).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use fabric_config::stats::RuntimeResourceSnapshot;

use crate::error::{StatsError, UnavailableReason, UnsupportedReason};
use crate::stat::{ProcStat, parse_stat};
use crate::sys;
use crate::timestamp::rfc3339_millis;

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

enum Step<T> {
    Done(T),
    Retry,
    Fallback,
    Fail(UnavailableReason),
}

const CHILDREN_UNKNOWN: u8 = 0;
const CHILDREN_PRESENT: u8 = 1;
const CHILDREN_MISSING: u8 = 2;

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

/// Open descriptors of recently read processes.
#[derive(Debug, Default)]
struct FdCache {
    /// Readings done so far (for idle eviction).
    generation: u64,
    procs: HashMap<u32, CachedProc>,
}

#[derive(Debug)]
struct CachedProc {
    stat: CachedFd,
    /// tid → its children list.
    children: HashMap<u32, CachedFd>,
    used: u64,
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
    fn end_reading(&mut self) {
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
    ) -> Result<TreeTotals, StatsError> {
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

    /// Reads `<pid>/stat` through the descriptor cache (opening and caching it when absent
    /// or stale).
    fn read_stat(&self, pid: u32, scratch: &mut Scratch) -> Result<ProcStat, StatReadError> {
        let generation = scratch.cache.generation;
        if let Some(entry) = scratch.cache.procs.get_mut(&pid) {
            let cached = read_full(&entry.stat.0, &mut scratch.buf)
                .ok()
                .and_then(|len| parse_stat(&scratch.buf[..len]));
            if let Some(stat) = cached {
                entry.used = generation;
                return Ok(stat);
            }
            // That process is gone (or its cached file no longer reads whole); the pid may
            // belong to a new one: open afresh, and judge by the fresh read.
            scratch.cache.procs.remove(&pid);
        }
        let file = match fs::File::open(scratch.path(&self.root, format_args!("/{pid}/stat"))) {
            Ok(file) => file,
            Err(error) if is_gone(&error) => return Err(StatReadError::Gone),
            Err(_) => return Err(StatReadError::Unreadable(scratch.owned_path())),
        };
        let stat = match read_full(&file, &mut scratch.buf) {
            Ok(len) => parse_stat(&scratch.buf[..len])
                .ok_or_else(|| StatReadError::Unreadable(scratch.owned_path()))?,
            Err(error) if is_gone(&error) => return Err(StatReadError::Gone),
            Err(_) => return Err(StatReadError::Unreadable(scratch.owned_path())),
        };
        scratch.cache.procs.insert(
            pid,
            CachedProc {
                stat: CachedFd::new(file),
                children: HashMap::new(),
                used: generation,
            },
        );
        Ok(stat)
    }

    /// Reads `<pid>/stat` without caching (the parent scan reads every process).
    fn read_stat_uncached(
        &self,
        pid: u32,
        scratch: &mut Scratch,
    ) -> Result<ProcStat, StatReadError> {
        let read = fs::File::open(scratch.path(&self.root, format_args!("/{pid}/stat")))
            .and_then(|file| read_full(&file, &mut scratch.buf));
        match read {
            Ok(len) => parse_stat(&scratch.buf[..len])
                .ok_or_else(|| StatReadError::Unreadable(scratch.owned_path())),
            Err(error) if is_gone(&error) => Err(StatReadError::Gone),
            Err(_) => Err(StatReadError::Unreadable(scratch.owned_path())),
        }
    }

    /// The thread ids of `pid`: just `pid` for a single-threaded process (no directory
    /// listing), else the listing of `task/`.
    fn thread_ids(&self, pid: u32, stat: &ProcStat, scratch: &mut Scratch) -> Step<Vec<u32>> {
        if stat.num_threads == 1 {
            return Step::Done(vec![pid]);
        }
        let task_dir = scratch
            .path(&self.root, format_args!("/{pid}/task"))
            .to_path_buf();
        let entries = match fs::read_dir(&task_dir) {
            Ok(entries) => entries,
            Err(error) if is_gone(&error) => return Step::Retry,
            Err(_) => return Step::Fail(UnavailableReason::ProcessUnreadable { path: task_dir }),
        };
        let mut tids = Vec::new();
        for entry in entries {
            let Ok(entry) = entry else {
                return Step::Retry;
            };
            if let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            {
                tids.push(tid);
            }
        }
        tids.sort_unstable();
        Step::Done(tids)
    }

    /// Makes sure the cache entry of `pid` (created by its `stat` read) holds an open
    /// children list for exactly the given threads.
    fn open_children(&self, pid: u32, tids: &[u32], scratch: &mut Scratch) -> Step<()> {
        let Scratch {
            cache,
            path,
            suffix,
            ..
        } = scratch;
        let Some(entry) = cache.procs.get_mut(&pid) else {
            return Step::Retry;
        };
        if entry.children.len() != tids.len()
            || tids.iter().any(|t| !entry.children.contains_key(t))
        {
            entry.children.retain(|tid, _| tids.contains(tid));
        }
        for &tid in tids {
            if entry.children.contains_key(&tid) {
                continue;
            }
            let children_path = build_path(
                path,
                suffix,
                &self.root,
                format_args!("/{pid}/task/{tid}/children"),
            );
            match fs::File::open(children_path) {
                Ok(file) => {
                    entry.children.insert(tid, CachedFd::new(file));
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    // Either the thread exited after the listing, or the kernel has no
                    // children lists at all: the thread directory tells which.
                    let thread =
                        build_path(path, suffix, &self.root, format_args!("/{pid}/task/{tid}"));
                    if thread.is_dir()
                        && self.children_support.load(Ordering::Relaxed) != CHILDREN_PRESENT
                    {
                        return Step::Fallback;
                    }
                    return Step::Retry;
                }
                Err(error) if is_gone(&error) => return Step::Retry,
                Err(_) => {
                    return Step::Fail(UnavailableReason::ProcessUnreadable {
                        path: PathBuf::from(&*path),
                    });
                }
            }
        }
        self.children_support
            .store(CHILDREN_PRESENT, Ordering::Relaxed);
        Step::Done(())
    }

    /// Reads (or re-reads: the kernel regenerates the list at offset 0) the cached children
    /// lists of the given threads of `pid`; the union, sorted.
    fn read_children(&self, pid: u32, tids: &[u32], scratch: &mut Scratch) -> Step<Vec<u32>> {
        let Scratch {
            cache,
            buf,
            path,
            suffix,
        } = scratch;
        let Some(entry) = cache.procs.get(&pid) else {
            return Step::Retry;
        };
        let mut children = Vec::new();
        for tid in tids {
            let Some(file) = entry.children.get(tid) else {
                return Step::Retry;
            };
            let unreadable = |path: &mut std::ffi::OsString, suffix: &mut String| {
                let children_path = build_path(
                    path,
                    suffix,
                    &self.root,
                    format_args!("/{pid}/task/{tid}/children"),
                );
                Step::Fail(UnavailableReason::ProcessUnreadable {
                    path: children_path.to_path_buf(),
                })
            };
            match read_full(&file.0, buf) {
                Ok(len) => {
                    for word in buf[..len]
                        .split(u8::is_ascii_whitespace)
                        .filter(|w| !w.is_empty())
                    {
                        match std::str::from_utf8(word)
                            .ok()
                            .and_then(|w| w.parse::<u32>().ok())
                        {
                            Some(child) => children.push(child),
                            None => return unreadable(path, suffix),
                        }
                    }
                }
                Err(error) if is_gone(&error) => {
                    cache.procs.remove(&pid);
                    return Step::Retry;
                }
                Err(_) => return unreadable(path, suffix),
            }
        }
        children.sort_unstable();
        Step::Done(children)
    }

    fn attempt_children(&self, host_pid: u32, scratch: &mut Scratch) -> Step<TreeTotals> {
        let host = match self.read_stat(host_pid, scratch) {
            Ok(stat) if stat.is_exited() => return Step::Fail(UnavailableReason::HostExited),
            Ok(stat) => stat,
            Err(StatReadError::Gone) => return Step::Fail(UnavailableReason::HostExited),
            Err(StatReadError::Unreadable(path)) => {
                return Step::Fail(UnavailableReason::ProcessUnreadable { path });
            }
        };
        let mut totals = TreeTotals {
            process_count: 0,
            resident_memory_bytes: 0,
            cpu_ticks: 0,
        };
        let mut seen: HashSet<u32> = HashSet::from([host_pid]);
        let mut queue = vec![(host_pid, host)];
        // Every live process with its open children lists, for the re-check.
        let mut listed: Vec<Listed> = Vec::new();
        while let Some((pid, stat)) = queue.pop() {
            totals.cpu_ticks = totals.cpu_ticks.saturating_add(stat.cpu_ticks);
            if stat.is_exited() {
                // A zombie's children were already reparented away from it.
                continue;
            }
            totals.process_count += 1;
            totals.resident_memory_bytes = totals
                .resident_memory_bytes
                .saturating_add(stat.rss_pages.saturating_mul(self.page_size));
            macro_rules! step {
                ($e:expr) => {
                    match $e {
                        Step::Done(value) => value,
                        Step::Retry => return Step::Retry,
                        Step::Fallback => return Step::Fallback,
                        Step::Fail(reason) => return Step::Fail(reason),
                    }
                };
            }
            let tids = step!(self.thread_ids(pid, &stat, scratch));
            step!(self.open_children(pid, &tids, scratch));
            let children = step!(self.read_children(pid, &tids, scratch));
            for &child in &children {
                if !seen.insert(child) {
                    return Step::Retry;
                }
                match self.read_stat(child, scratch) {
                    Ok(child_stat) if child_stat.ppid == pid => queue.push((child, child_stat)),
                    Ok(_) => return Step::Retry,
                    Err(StatReadError::Gone) => {
                        // Vanished, or hidden by the mount: a hidden child stays listed by
                        // its parent after its directory was found missing.
                        let child_dir = scratch.path(&self.root, format_args!("/{child}"));
                        if !child_dir.exists()
                            && let Step::Done(again) = self.read_children(pid, &tids, scratch)
                            && again.binary_search(&child).is_ok()
                        {
                            return Step::Fail(UnavailableReason::ProcessHidden { pid: child });
                        }
                        return Step::Retry;
                    }
                    Err(StatReadError::Unreadable(path)) => {
                        // A child that exits while its stat is read can fail with an error
                        // other than ESRCH: only one still listed by its parent is unreadable.
                        return match self.read_children(pid, &tids, scratch) {
                            Step::Done(again) if again.binary_search(&child).is_ok() => {
                                Step::Fail(UnavailableReason::ProcessUnreadable { path })
                            }
                            Step::Fail(reason) => Step::Fail(reason),
                            _ => Step::Retry,
                        };
                    }
                }
            }
            listed.push(Listed {
                pid,
                tids,
                children,
            });
        }
        // Re-check: the children lists must not have changed while the stats were read.
        for entry in &listed {
            match self.read_children(entry.pid, &entry.tids, scratch) {
                Step::Done(again) if again == entry.children => {}
                Step::Fail(reason) => return Step::Fail(reason),
                _ => return Step::Retry,
            }
        }
        Step::Done(totals)
    }

    fn attempt_scan(&self, host_pid: u32, scratch: &mut Scratch) -> Step<TreeTotals> {
        if proc_hides_processes(&self.root) {
            return Step::Fail(UnavailableReason::ProcessTableHidden);
        }
        let first = match self.scan_table(scratch) {
            Ok(table) => table,
            Err(reason) => return Step::Fail(reason),
        };
        match first.get(&host_pid) {
            None => return Step::Fail(UnavailableReason::HostExited),
            Some(stat) if stat.is_exited() => return Step::Fail(UnavailableReason::HostExited),
            Some(_) => {}
        }
        let tree = descendants_in(&first, host_pid);
        // Re-scan: the same processes must have the same parents.
        let second = match self.scan_table(scratch) {
            Ok(table) => table,
            Err(reason) => return Step::Fail(reason),
        };
        if descendants_in(&second, host_pid) != tree {
            return Step::Retry;
        }
        let mut totals = TreeTotals {
            process_count: 0,
            resident_memory_bytes: 0,
            cpu_ticks: 0,
        };
        for pid in &tree {
            let Some(stat) = first.get(pid) else {
                return Step::Retry;
            };
            totals.cpu_ticks = totals.cpu_ticks.saturating_add(stat.cpu_ticks);
            if !stat.is_exited() {
                totals.process_count += 1;
                totals.resident_memory_bytes = totals
                    .resident_memory_bytes
                    .saturating_add(stat.rss_pages.saturating_mul(self.page_size));
            }
        }
        Step::Done(totals)
    }

    /// pid → stat of every process under the root. Processes that exit during the listing
    /// are skipped (the re-scan notices if one was in the tree).
    fn scan_table(
        &self,
        scratch: &mut Scratch,
    ) -> Result<HashMap<u32, ProcStat>, UnavailableReason> {
        let unreadable = || UnavailableReason::ProcessTableUnreadable {
            path: self.root.clone(),
        };
        let entries = fs::read_dir(&self.root).map_err(|_| unreadable())?;
        let mut table = HashMap::new();
        for entry in entries {
            let entry = entry.map_err(|_| unreadable())?;
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            match self.read_stat_uncached(pid, scratch) {
                Ok(stat) => {
                    table.insert(pid, stat);
                }
                Err(StatReadError::Gone) => {}
                Err(StatReadError::Unreadable(path)) => {
                    return Err(UnavailableReason::ProcessUnreadable { path });
                }
            }
        }
        Ok(table)
    }
}

/// The pids of `root` and its descendants in `table` (sorted; `root` included). Zombies
/// are included but not descended into.
fn descendants_in(table: &HashMap<u32, ProcStat>, root: u32) -> Vec<u32> {
    let mut by_parent: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, stat) in table {
        if pid != root {
            by_parent.entry(stat.ppid).or_default().push(pid);
        }
    }
    let mut found = vec![root];
    let mut queue = vec![root];
    let mut seen = HashSet::from([root]);
    while let Some(pid) = queue.pop() {
        if table.get(&pid).is_some_and(ProcStat::is_exited) {
            continue;
        }
        for &child in by_parent.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(child) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found.sort_unstable();
    found
}

/// Reusable buffers of one reading: file contents, the path being read, and the
/// reader's descriptor cache (taken out of its lock for the reading).
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    path: std::ffi::OsString,
    suffix: String,
    cache: FdCache,
}

impl Scratch {
    /// `root` followed by the formatted suffix, without allocating after warm-up.
    fn path(&mut self, root: &Path, suffix: std::fmt::Arguments<'_>) -> &Path {
        build_path(&mut self.path, &mut self.suffix, root, suffix)
    }

    /// The last path built, owned (for error reports).
    fn owned_path(&self) -> PathBuf {
        PathBuf::from(&self.path)
    }
}

fn build_path<'a>(
    path: &'a mut std::ffi::OsString,
    suffix: &mut String,
    root: &Path,
    tail: std::fmt::Arguments<'_>,
) -> &'a Path {
    use std::fmt::Write;
    suffix.clear();
    let _ = suffix.write_fmt(tail);
    path.clear();
    path.push(root.as_os_str());
    path.push(&*suffix);
    Path::new(path)
}

enum StatReadError {
    Gone,
    Unreadable(PathBuf),
}

fn is_gone(error: &io::Error) -> bool {
    // ESRCH: the process exited while its file was open.
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(libc::ESRCH)
}

/// Reads a whole proc file from offset 0 with positioned reads (one `pread` for a small
/// file; a re-read regenerates the content). Returns the length read into `buf`.
pub(crate) fn read_full(file: &fs::File, buf: &mut Vec<u8>) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    if buf.len() < 4096 {
        buf.resize(4096, 0);
    }
    let mut filled = 0;
    loop {
        let n = loop {
            match file.read_at(&mut buf[filled..], filled as u64) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        filled += n;
        // A proc (seq_file) read fills the buffer unless the content ended.
        if n == 0 || filled < buf.len() {
            return Ok(filled);
        }
        let grown = buf.len() * 2;
        buf.resize(grown, 0);
    }
}

struct Listed {
    pid: u32,
    tids: Vec<u32>,
    children: Vec<u32>,
}

/// Whether the proc mount at `root` hides other users' processes (`hidepid=1|2`,
/// `invisible`, `ptraceable`), read from `<root>/self/mountinfo`. A root without that file
/// (a fixture tree) hides nothing.
fn proc_hides_processes(root: &Path) -> bool {
    let Ok(text) = fs::read_to_string(root.join("self").join("mountinfo")) else {
        return false;
    };
    let canonical = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    text.lines().any(|line| {
        // `id parent major:minor root mount-point options ... - fstype source super-options`
        let mut halves = line.splitn(2, " - ");
        let (Some(head), Some(tail)) = (halves.next(), halves.next()) else {
            return false;
        };
        let mount_point = head.split(' ').nth(4);
        let mut tail = tail.split(' ');
        let fstype = tail.next();
        let super_options = tail.nth(1).unwrap_or_default();
        fstype == Some("proc")
            && mount_point.is_some_and(|mp| Path::new(mp) == canonical)
            && super_options.split(',').any(|option| {
                matches!(
                    option,
                    "hidepid=1" | "hidepid=2" | "hidepid=invisible" | "hidepid=ptraceable"
                )
            })
    })
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
