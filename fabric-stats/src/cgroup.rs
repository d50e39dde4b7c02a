//! cgroup v2 readings of a process's cgroup (read-only).
//!
//! The cgroup is found from `<proc_root>/<pid>/cgroup` (`0::/path`) under a cgroup root
//! (default `/sys/fs/cgroup`; on a hybrid v1/v2 host the v2 hierarchy at `<root>/unified`
//! is used). Limits account for the cgroup and its visible ancestors: the smallest visible
//! numeric bound wins; `unlimited` needs an explicit `max` source and no numeric bound; no
//! source at all is `unsupported`. Every other measurement is one file; a missing file is
//! `unsupported`, an unreadable or unparsable one `unavailable`. Nothing is ever written.
//!
//! **Descriptor cache.** A reader keeps, per process, its `cgroup` membership file open and,
//! per cgroup, the files it read open; an observation re-reads them with `pread` (a cgroup
//! or proc file is regenerated at offset 0). The membership is re-read at every observation
//! and the cgroup resolved again only when its text changed, so a process that moved is
//! followed; the membership descriptor is bound to the process (`ESRCH` once it is gone), so
//! a reused pid is never confused with it. A file found missing is remembered as missing
//! until its level's `cgroup.controllers` (or, for pressure files, the leaf's
//! `cgroup.pressure`) changes; a level without those files probes missing files again at
//! every observation. A cached file that fails to read (a file removed with its controller
//! reads `ENODEV`) is reopened once. Entries idle for 64 observations are closed, and the
//! whole cache after an observation while more than 256 descriptors are cached process-wide
//! (the budget shared with the process-tree readers, `cached_descriptors()`).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use fabric_config::config::SystemStatsGroup;
use fabric_config::stats::{
    CgroupDeltas, CgroupObservation, CgroupSnapshot, Limit, LimitStatus, Measurement,
    ObservationStatus,
};

use crate::proc::{CACHED_FD_BUDGET, CachedFd, cached_descriptors, read_full, round_micros};
use crate::timestamp::rfc3339_millis;

/// Reads the cgroup v2 measurements of a process. Safe to share between threads; a clone
/// has the same roots and its own descriptor cache.
#[derive(Debug)]
pub struct CgroupReader {
    proc_root: PathBuf,
    cgroup_root: PathBuf,
    cache: Mutex<CgroupCache>,
}

impl Clone for CgroupReader {
    fn clone(&self) -> Self {
        CgroupReader::new(self.proc_root.clone(), self.cgroup_root.clone())
    }
}

/// Observations after which an unused process or cgroup entry is closed.
const CACHE_IDLE_OBSERVATIONS: u64 = 64;

// The files of one cgroup level, by index into `Level::files`.
const CPU_STAT: usize = 0;
const MEMORY_EVENTS: usize = 1;
const CPU_PRESSURE: usize = 2;
const MEMORY_PRESSURE: usize = 3;
const IO_PRESSURE: usize = 4;
const MEMORY_CURRENT: usize = 5;
const MEMORY_PEAK: usize = 6;
const MEMORY_SWAP_CURRENT: usize = 7;
const CPU_MAX: usize = 8;
const MEMORY_MAX: usize = 9;
const MEMORY_HIGH: usize = 10;
const MEMORY_SWAP_MAX: usize = 11;
const FILES: [&str; 12] = [
    "cpu.stat",
    "memory.events",
    "cpu.pressure",
    "memory.pressure",
    "io.pressure",
    "memory.current",
    "memory.peak",
    "memory.swap.current",
    "cpu.max",
    "memory.max",
    "memory.high",
    "memory.swap.max",
];
const PRESSURE_FILES: [usize; 3] = [CPU_PRESSURE, MEMORY_PRESSURE, IO_PRESSURE];
/// Files whose content says which other files a level has.
const CONTROLLERS: usize = 0;
const PRESSURE_SWITCH: usize = 1;
const GUARDS: [&str; 2] = ["cgroup.controllers", "cgroup.pressure"];

#[derive(Debug, Default)]
struct CgroupCache {
    /// Observations done so far (for idle eviction).
    generation: u64,
    /// pid → its membership file and the cgroup it resolved to.
    targets: HashMap<u32, Target>,
    /// cgroup path → its levels (shared by every process in that cgroup).
    cgroups: HashMap<String, Cgroup>,
    buf: Vec<u8>,
}

#[derive(Debug)]
struct Target {
    /// `<proc_root>/<pid>/cgroup`, bound to the process.
    membership: CachedFd,
    /// The membership text `cgroup` was resolved from.
    text: Vec<u8>,
    /// The cgroup path (key of `CgroupCache::cgroups`), when resolved.
    cgroup: Option<String>,
    used: u64,
}

#[derive(Debug)]
struct Cgroup {
    /// The cgroup and its visible ancestors, innermost first.
    levels: Vec<Level>,
    used: u64,
}

#[derive(Debug)]
struct Level {
    dir: PathBuf,
    /// cgroup path of this level (`/` for the hierarchy root).
    path: String,
    files: [Slot; FILES.len()],
    /// `GUARDS` with their last content.
    guards: [(Slot, Vec<u8>); GUARDS.len()],
}

/// One file of a level: not opened yet, open, or known to be missing.
#[derive(Debug, Default)]
enum Slot {
    #[default]
    Unknown,
    Open(CachedFd),
    Missing,
}

/// The outcome of reading one file into the cache's buffer.
#[derive(Debug, Clone, Copy)]
enum FileRead {
    /// The content is `buf[..len]`.
    Len(usize),
    Missing,
    Unreadable,
}

impl Level {
    fn new(dir: PathBuf, path: String) -> Self {
        Level {
            dir,
            path,
            files: Default::default(),
            guards: Default::default(),
        }
    }

    /// Re-reads the guard files (`cgroup.pressure` only with `pressure`); when one changed
    /// (or is absent), files remembered as missing are probed again. A guard that is not
    /// re-read keeps its last content, so a change is still seen when it is next read.
    fn revalidate(&mut self, buf: &mut Vec<u8>, pressure: bool) {
        let mut changed = [false; GUARDS.len()];
        for (index, name) in GUARDS.iter().enumerate() {
            if index == PRESSURE_SWITCH && !pressure {
                continue;
            }
            let (slot, last) = &mut self.guards[index];
            changed[index] = match read_slot(&self.dir, name, slot, buf) {
                FileRead::Len(len) if buf[..len] == last[..] => false,
                FileRead::Len(len) => {
                    last.clear();
                    last.extend_from_slice(&buf[..len]);
                    true
                }
                FileRead::Missing | FileRead::Unreadable => true,
            };
        }
        for (index, slot) in self.files.iter_mut().enumerate() {
            let reprobe = changed[CONTROLLERS]
                || (changed[PRESSURE_SWITCH] && PRESSURE_FILES.contains(&index));
            if reprobe && matches!(slot, Slot::Missing) {
                *slot = Slot::Unknown;
            }
        }
    }

    fn read(&mut self, file: usize, buf: &mut Vec<u8>) -> FileRead {
        read_slot(&self.dir, FILES[file], &mut self.files[file], buf)
    }
}

/// Reads a file through its slot (opening it when needed; a cached descriptor that fails
/// is reopened once).
fn read_slot(dir: &Path, name: &str, slot: &mut Slot, buf: &mut Vec<u8>) -> FileRead {
    let mut reopened = false;
    loop {
        match slot {
            Slot::Missing => return FileRead::Missing,
            Slot::Open(file) => match read_full(&file.0, buf) {
                Ok(len) => return FileRead::Len(len),
                Err(_) => {
                    *slot = Slot::Unknown;
                    if reopened {
                        return FileRead::Unreadable;
                    }
                }
            },
            Slot::Unknown => {
                reopened = true;
                match fs::File::open(dir.join(name)) {
                    Ok(file) => *slot = Slot::Open(CachedFd::new(file)),
                    Err(error) if error.kind() == io::ErrorKind::NotFound => {
                        *slot = Slot::Missing;
                        return FileRead::Missing;
                    }
                    Err(_) => return FileRead::Unreadable,
                }
            }
        }
    }
}

impl CgroupCache {
    fn end_observation(&mut self) {
        let generation = self.generation;
        let fresh = |used: u64| generation.saturating_sub(used) < CACHE_IDLE_OBSERVATIONS;
        self.targets.retain(|_, target| fresh(target.used));
        self.cgroups.retain(|_, cgroup| fresh(cgroup.used));
        if cached_descriptors() > CACHED_FD_BUDGET {
            self.targets.clear();
            self.cgroups.clear();
        }
        self.generation += 1;
    }
}

impl CgroupReader {
    /// A reader of the proc and cgroup file systems at the given roots (normally `/proc` and
    /// `/sys/fs/cgroup`).
    pub fn new(proc_root: impl Into<PathBuf>, cgroup_root: impl Into<PathBuf>) -> Self {
        CgroupReader {
            proc_root: proc_root.into(),
            cgroup_root: cgroup_root.into(),
            cache: Mutex::new(CgroupCache::default()),
        }
    }

    /// Closes the cached descriptors of `pid` (its cgroup's stay while other processes use
    /// them, until idle).
    pub fn forget(&self, pid: u32) {
        self.lock().targets.remove(&pid);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CgroupCache> {
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One observation of the cgroup of `pid`, with the measurements of `groups`
    /// (`process` is ignored; measurements of unselected `cgroup.*` groups are
    /// `not_collected`).
    pub fn observe(&self, pid: u32, groups: &[SystemStatsGroup]) -> CgroupObservation {
        let cpu = groups.contains(&SystemStatsGroup::CgroupCpu);
        let memory = groups.contains(&SystemStatsGroup::CgroupMemory);
        let pressure = groups.contains(&SystemStatsGroup::CgroupPressure);
        let mut guard = self.lock();
        let cache = &mut *guard;
        let observation = match self.cgroup_of(cache, pid, true) {
            Err((status, reason)) => CgroupObservation {
                status,
                snapshot: None,
                reason: Some(reason.to_owned()),
            },
            Ok((cgroup, buf)) => {
                let observed_at = rfc3339_millis(SystemTime::now());
                let limits = cpu || memory;
                for (index, level) in cgroup.levels.iter_mut().enumerate() {
                    if index == 0 || limits {
                        level.revalidate(buf, index == 0 && pressure);
                    }
                }
                let snapshot = read_snapshot(cgroup, buf, observed_at, cpu, memory, pressure);
                CgroupObservation {
                    status: ObservationStatus::Available,
                    reason: None,
                    snapshot: Some(snapshot),
                }
            }
        };
        cache.end_observation();
        observation
    }

    /// Only `memory.current` of `pid`'s cgroup.
    pub fn memory_current(&self, pid: u32) -> Measurement<u64> {
        self.memory_current_with(pid, true)
    }

    /// `memory.current` for a periodic sample: the cgroup last resolved for `pid` is used
    /// without re-reading the membership (the endpoints around the samples re-read it).
    pub(crate) fn memory_current_sample(&self, pid: u32) -> Measurement<u64> {
        self.memory_current_with(pid, false)
    }

    fn memory_current_with(&self, pid: u32, revalidate: bool) -> Measurement<u64> {
        let mut guard = self.lock();
        let cache = &mut *guard;
        let measurement = match self.cgroup_of(cache, pid, revalidate) {
            Err((status, reason)) => Measurement::missing(status, reason),
            Ok((cgroup, buf)) => {
                let leaf = &mut cgroup.levels[0];
                leaf.revalidate(buf, false);
                single_value(leaf.read(MEMORY_CURRENT, buf), buf)
            }
        };
        cache.end_observation();
        measurement
    }

    /// The cached cgroup of `pid` (its membership re-read unless `revalidate` is false and
    /// a cgroup is cached; resolved again when it changed), or the status and reason it has
    /// none.
    fn cgroup_of<'c>(
        &self,
        cache: &'c mut CgroupCache,
        pid: u32,
        revalidate: bool,
    ) -> Result<(&'c mut Cgroup, &'c mut Vec<u8>), (ObservationStatus, &'static str)> {
        if !cfg!(target_os = "linux") {
            return Err((ObservationStatus::Unsupported, "platform_unsupported"));
        }
        let CgroupCache {
            generation,
            targets,
            cgroups,
            buf,
        } = cache;
        let generation = *generation;
        if !revalidate
            && let Some(target) = targets.get_mut(&pid)
            && let Some(key) = &target.cgroup
            && cgroups.contains_key(key)
        {
            target.used = generation;
            let cgroup = cgroups
                .get_mut(key.as_str())
                .ok_or((ObservationStatus::Unavailable, "cgroup_not_visible"))?;
            cgroup.used = generation;
            return Ok((cgroup, buf));
        }
        let read = match targets.get(&pid) {
            Some(target) => read_full(&target.membership.0, buf),
            None => match fs::File::open(self.proc_root.join(pid.to_string()).join("cgroup")) {
                Ok(file) => {
                    let read = read_full(&file, buf);
                    targets.insert(
                        pid,
                        Target {
                            membership: CachedFd::new(file),
                            text: Vec::new(),
                            cgroup: None,
                            used: generation,
                        },
                    );
                    read
                }
                Err(error) => Err(error),
            },
        };
        let len = match read {
            Ok(len) => len,
            Err(error) => {
                targets.remove(&pid);
                if self.hierarchy().is_none() {
                    return Err((ObservationStatus::Unsupported, "cgroup_v2_unavailable"));
                }
                let gone = error.kind() == io::ErrorKind::NotFound
                    || error.raw_os_error() == Some(libc::ESRCH);
                let reason = if gone {
                    "host_exited"
                } else {
                    "process_unreadable"
                };
                return Err((ObservationStatus::Unavailable, reason));
            }
        };
        let Some(target) = targets.get_mut(&pid) else {
            return Err((ObservationStatus::Unavailable, "host_exited"));
        };
        target.used = generation;
        let unchanged = target.text[..] == buf[..len];
        let key = match (&target.cgroup, unchanged) {
            (Some(key), true) if cgroups.contains_key(key) => key,
            _ => {
                target.text.clear();
                target.text.extend_from_slice(&buf[..len]);
                target.cgroup = None;
                let (levels, path) = self.resolve(&target.text)?;
                if !cgroups.contains_key(&path) {
                    cgroups.insert(
                        path.clone(),
                        Cgroup {
                            levels,
                            used: generation,
                        },
                    );
                }
                target.cgroup.insert(path)
            }
        };
        let cgroup = cgroups
            .get_mut(key.as_str())
            .ok_or((ObservationStatus::Unavailable, "cgroup_not_visible"))?;
        cgroup.used = generation;
        Ok((cgroup, buf))
    }

    /// The levels (innermost first) and path of the cgroup named by a membership text.
    fn resolve(
        &self,
        membership: &[u8],
    ) -> Result<(Vec<Level>, String), (ObservationStatus, &'static str)> {
        let Some(hierarchy) = self.hierarchy() else {
            return Err((ObservationStatus::Unsupported, "cgroup_v2_unavailable"));
        };
        let text = String::from_utf8_lossy(membership);
        let Some(path) = text.lines().find_map(|line| line.strip_prefix("0::")) else {
            return Err((ObservationStatus::Unsupported, "cgroup_v2_unavailable"));
        };
        let path = path.trim().to_owned();
        let relative = path.trim_start_matches('/');
        if relative.split('/').any(|part| part == "..") {
            // The cgroup lies outside this cgroup namespace's view.
            return Err((ObservationStatus::Unavailable, "cgroup_not_visible"));
        }
        let dir = if relative.is_empty() {
            hierarchy.clone()
        } else {
            hierarchy.join(relative)
        };
        if !dir.is_dir() {
            return Err((ObservationStatus::Unavailable, "cgroup_not_visible"));
        }
        let levels = ancestors(&hierarchy, &dir, &path)
            .into_iter()
            .map(|(dir, path)| Level::new(dir, path))
            .collect();
        Ok((levels, path))
    }

    /// The mounted v2 hierarchy: the root itself, or `<root>/unified` on hybrid hosts.
    fn hierarchy(&self) -> Option<PathBuf> {
        [self.cgroup_root.clone(), self.cgroup_root.join("unified")]
            .into_iter()
            .find(|dir| dir.join("cgroup.controllers").is_file())
    }
}

/// Reads the selected measurements of a resolved cgroup.
fn read_snapshot(
    cgroup: &mut Cgroup,
    buf: &mut Vec<u8>,
    observed_at: String,
    cpu: bool,
    memory: bool,
    pressure: bool,
) -> CgroupSnapshot {
    let levels = &mut cgroup.levels;
    let path = levels[0].path.clone();
    let [usage, throttled_periods, throttled] = if cpu {
        let read = levels[0].read(CPU_STAT, buf);
        keyed(
            read,
            buf,
            [b"usage_usec", b"nr_throttled", b"throttled_usec"],
        )
    } else {
        std::array::from_fn(|_| Measurement::not_collected())
    };
    let [oom_kills] = if memory {
        let read = levels[0].read(MEMORY_EVENTS, buf);
        keyed(read, buf, [b"oom_kill"])
    } else {
        [Measurement::not_collected()]
    };
    let mut pressure_of = |file: usize| {
        if !pressure {
            return [Measurement::not_collected(), Measurement::not_collected()];
        }
        let read = levels[0].read(file, buf);
        pressure_totals(read, buf)
    };
    let [cpu_some, cpu_full] = pressure_of(CPU_PRESSURE);
    let [memory_some, memory_full] = pressure_of(MEMORY_PRESSURE);
    let [io_some, io_full] = pressure_of(IO_PRESSURE);
    let mut single = |file: usize| {
        if memory {
            let read = levels[0].read(file, buf);
            single_value(read, buf)
        } else {
            Measurement::not_collected()
        }
    };
    let memory_current_bytes = single(MEMORY_CURRENT);
    let memory_peak_bytes = single(MEMORY_PEAK);
    let memory_swap_current_bytes = single(MEMORY_SWAP_CURRENT);
    let mut byte_limit_of = |file: usize| {
        if memory {
            byte_limit(levels, file, buf)
        } else {
            Limit::not_collected()
        }
    };
    let memory_max_bytes = byte_limit_of(MEMORY_MAX);
    let memory_high_bytes = byte_limit_of(MEMORY_HIGH);
    let memory_swap_max_bytes = byte_limit_of(MEMORY_SWAP_MAX);
    let cpu_limit_cores = if cpu {
        cpu_limit(levels, buf)
    } else {
        Limit::not_collected()
    };
    CgroupSnapshot {
        path,
        observed_at,
        cpu_limit_cores,
        cpu_usage_seconds: usec_to_seconds(usage),
        cpu_throttled_periods: throttled_periods,
        cpu_throttled_seconds: usec_to_seconds(throttled),
        memory_max_bytes,
        memory_high_bytes,
        memory_swap_max_bytes,
        memory_current_bytes,
        memory_peak_bytes,
        memory_swap_current_bytes,
        memory_oom_kills: oom_kills,
        cpu_pressure_some_seconds: cpu_some,
        cpu_pressure_full_seconds: cpu_full,
        memory_pressure_some_seconds: memory_some,
        memory_pressure_full_seconds: memory_full,
        io_pressure_some_seconds: io_some,
        io_pressure_full_seconds: io_full,
    }
}

/// (directory, cgroup path) of the cgroup and each visible ancestor, innermost first.
fn ancestors(hierarchy: &Path, dir: &Path, path: &str) -> Vec<(PathBuf, String)> {
    let mut levels = Vec::new();
    let mut dir = dir.to_path_buf();
    let mut path = if path.is_empty() {
        "/".to_owned()
    } else {
        path.to_owned()
    };
    loop {
        levels.push((dir.clone(), path.clone()));
        if dir == hierarchy || path == "/" {
            break;
        }
        let Some(parent) = dir.parent() else { break };
        dir = parent.to_path_buf();
        path = match path.rfind('/') {
            Some(0) | None => "/".to_owned(),
            Some(index) => path[..index].to_owned(),
        };
    }
    levels
}

/// The content of a read, or the measurement that says why there is none.
fn content<T>(read: FileRead, buf: &[u8]) -> Result<&[u8], Measurement<T>> {
    match read {
        FileRead::Len(len) => Ok(&buf[..len]),
        FileRead::Missing => Err(Measurement::missing(
            ObservationStatus::Unsupported,
            "file_missing",
        )),
        FileRead::Unreadable => Err(Measurement::missing(
            ObservationStatus::Unavailable,
            "read_failed",
        )),
    }
}

fn parse_failed<T>() -> Measurement<T> {
    Measurement::missing(ObservationStatus::Unavailable, "parse_failed")
}

/// A decimal `u64` (digits only).
fn parse_u64(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    bytes.iter().try_fold(0u64, |value, &byte| {
        let digit = byte.checked_sub(b'0').filter(|d| *d < 10)?;
        value.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace)
        .filter(|word| !word.is_empty())
}

fn single_value(read: FileRead, buf: &[u8]) -> Measurement<u64> {
    match content(read, buf) {
        Ok(text) => parse_u64(text.trim_ascii())
            .map(Measurement::available)
            .unwrap_or_else(parse_failed),
        Err(missing) => missing,
    }
}

/// The values of `key value` lines of a flat-keyed file (`cpu.stat`, `memory.events`);
/// the first line of a key counts.
fn keyed<const N: usize>(read: FileRead, buf: &[u8], keys: [&[u8]; N]) -> [Measurement<u64>; N] {
    let text = match content::<u64>(read, buf) {
        Ok(text) => text,
        Err(missing) => return std::array::from_fn(|_| missing.clone()),
    };
    let mut found: [Option<Measurement<u64>>; N] = std::array::from_fn(|_| None);
    for line in text.split(|&b| b == b'\n') {
        let mut line_words = words(line);
        let Some(key) = line_words.next() else {
            continue;
        };
        if let Some(index) = keys.iter().position(|k| *k == key)
            && found[index].is_none()
        {
            found[index] = Some(
                line_words
                    .next()
                    .and_then(parse_u64)
                    .map(Measurement::available)
                    .unwrap_or_else(parse_failed),
            );
        }
    }
    found.map(|value| {
        value.unwrap_or_else(|| Measurement::missing(ObservationStatus::Unsupported, "key_missing"))
    })
}

/// `total=` (µs) of the `some` and `full` lines of a pressure file, in seconds.
fn pressure_totals(read: FileRead, buf: &[u8]) -> [Measurement<f64>; 2] {
    let text = match content::<f64>(read, buf) {
        Ok(text) => text,
        Err(missing) => return [missing.clone(), missing],
    };
    let mut found: [Option<Measurement<f64>>; 2] = [None, None];
    for line in text.split(|&b| b == b'\n') {
        let mut line_words = words(line);
        let index = match line_words.next() {
            Some(b"some") => 0,
            Some(b"full") => 1,
            _ => continue,
        };
        if found[index].is_some() {
            continue;
        }
        found[index] = Some(
            line_words
                .find_map(|word| word.strip_prefix(b"total="))
                .and_then(parse_u64)
                .map(|usec| Measurement::available(round_micros(usec as f64 / 1e6)))
                .unwrap_or_else(parse_failed),
        );
    }
    found.map(|value| {
        value.unwrap_or_else(|| Measurement::missing(ObservationStatus::Unsupported, "key_missing"))
    })
}

fn usec_to_seconds(measurement: Measurement<u64>) -> Measurement<f64> {
    Measurement {
        status: measurement.status,
        value: measurement
            .value
            .map(|usec| round_micros(usec as f64 / 1e6)),
        reason: measurement.reason,
    }
}

/// One limit value of one level.
enum LimitValue<T> {
    Max,
    Bound(T),
}

/// The effective limit over `levels`: the smallest numeric bound, else `unlimited` when a
/// `max` source exists, else `unsupported`. An unreadable or unparsable source makes the
/// limit `unavailable` (it could hide a smaller bound).
fn effective_limit<T: PartialOrd + Copy>(
    levels: &mut [Level],
    file: usize,
    buf: &mut Vec<u8>,
    parse: impl Fn(&[u8]) -> Option<LimitValue<T>>,
) -> Limit<T> {
    let mut best: Option<(T, usize)> = None;
    let mut max_source: Option<usize> = None;
    for index in 0..levels.len() {
        let unavailable = |levels: &[Level], reason: &str| Limit {
            status: LimitStatus::Unavailable,
            value: None,
            source: Some(levels[index].path.clone()),
            reason: Some(reason.to_owned()),
        };
        match levels[index].read(file, buf) {
            FileRead::Missing => {}
            FileRead::Unreadable => return unavailable(levels, "read_failed"),
            FileRead::Len(len) => match parse(buf[..len].trim_ascii()) {
                None => return unavailable(levels, "parse_failed"),
                Some(LimitValue::Max) => {
                    max_source.get_or_insert(index);
                }
                Some(LimitValue::Bound(value)) => {
                    if best.is_none_or(|(current, _)| value < current) {
                        best = Some((value, index));
                    }
                }
            },
        }
    }
    match (best, max_source) {
        (Some((value, source)), _) => Limit {
            status: LimitStatus::Available,
            value: Some(value),
            source: Some(levels[source].path.clone()),
            reason: None,
        },
        (None, Some(source)) => Limit {
            status: LimitStatus::Unlimited,
            value: None,
            source: Some(levels[source].path.clone()),
            reason: None,
        },
        (None, None) => Limit {
            status: LimitStatus::Unsupported,
            value: None,
            source: None,
            reason: Some("no_limit_source".to_owned()),
        },
    }
}

fn byte_limit(levels: &mut [Level], file: usize, buf: &mut Vec<u8>) -> Limit<u64> {
    effective_limit(levels, file, buf, |text| match text {
        b"max" => Some(LimitValue::Max),
        number => parse_u64(number).map(LimitValue::Bound),
    })
}

/// `cpu.max` is `<quota|max> <period>`; the limit is quota / period CPUs.
fn cpu_limit(levels: &mut [Level], buf: &mut Vec<u8>) -> Limit<f64> {
    effective_limit(levels, CPU_MAX, buf, |text| {
        let mut fields = words(text);
        let quota = fields.next()?;
        let period: u64 = match fields.next() {
            Some(period) => parse_u64(period)?,
            None => 100_000,
        };
        if quota == b"max" {
            return Some(LimitValue::Max);
        }
        let quota = parse_u64(quota)?;
        if period == 0 {
            return None;
        }
        Some(LimitValue::Bound(round_micros(
            quota as f64 / period as f64,
        )))
    })
}

/// Counter deltas between two observations of the same cgroup.
pub fn deltas(
    before: &CgroupObservation,
    after: &CgroupObservation,
    groups: &[SystemStatsGroup],
) -> CgroupDeltas {
    let cpu = groups.contains(&SystemStatsGroup::CgroupCpu);
    let memory = groups.contains(&SystemStatsGroup::CgroupMemory);
    let pair = match (&before.snapshot, &after.snapshot) {
        (Some(b), Some(a)) if b.path == a.path => Ok((b, a)),
        (Some(_), Some(_)) => Err("cgroup_changed"),
        _ => Err("endpoint_missing"),
    };
    fn diff_f64(
        enabled: bool,
        b: &Measurement<f64>,
        a: &Measurement<f64>,
        pair_ok: Result<(), &str>,
    ) -> Measurement<f64> {
        if !enabled {
            return Measurement::not_collected();
        }
        if let Err(reason) = pair_ok {
            return Measurement::missing(ObservationStatus::Unavailable, reason);
        }
        match (b.get(), a.get()) {
            (Some(&b), Some(&a)) if a >= b => Measurement::available(round_micros(a - b)),
            (Some(_), Some(_)) => {
                Measurement::missing(ObservationStatus::Unavailable, "counter_decreased")
            }
            _ => unavailable_like(b, a),
        }
    }
    fn diff_u64(
        enabled: bool,
        b: &Measurement<u64>,
        a: &Measurement<u64>,
        pair_ok: Result<(), &str>,
    ) -> Measurement<u64> {
        if !enabled {
            return Measurement::not_collected();
        }
        if let Err(reason) = pair_ok {
            return Measurement::missing(ObservationStatus::Unavailable, reason);
        }
        match (b.get(), a.get()) {
            (Some(&b), Some(&a)) if a >= b => Measurement::available(a - b),
            (Some(_), Some(_)) => {
                Measurement::missing(ObservationStatus::Unavailable, "counter_decreased")
            }
            _ => unavailable_like(b, a),
        }
    }
    let ok = pair.map(|_| ());
    match pair {
        Ok((b, a)) => CgroupDeltas {
            cpu_usage_seconds: diff_f64(cpu, &b.cpu_usage_seconds, &a.cpu_usage_seconds, ok),
            cpu_throttled_periods: diff_u64(
                cpu,
                &b.cpu_throttled_periods,
                &a.cpu_throttled_periods,
                ok,
            ),
            cpu_throttled_seconds: diff_f64(
                cpu,
                &b.cpu_throttled_seconds,
                &a.cpu_throttled_seconds,
                ok,
            ),
            memory_oom_kills: diff_u64(memory, &b.memory_oom_kills, &a.memory_oom_kills, ok),
        },
        Err(_) => {
            let none_f = Measurement::not_collected();
            let none_u = Measurement::not_collected();
            CgroupDeltas {
                cpu_usage_seconds: diff_f64(cpu, &none_f, &none_f, ok),
                cpu_throttled_periods: diff_u64(cpu, &none_u, &none_u, ok),
                cpu_throttled_seconds: diff_f64(cpu, &none_f, &none_f, ok),
                memory_oom_kills: diff_u64(memory, &none_u, &none_u, ok),
            }
        }
    }
}

/// A delta whose endpoint is missing keeps the "worst" endpoint status: `unsupported` when
/// the platform has no source, else `unavailable`.
fn unavailable_like<T, U>(b: &Measurement<T>, a: &Measurement<T>) -> Measurement<U> {
    let unsupported = [b, a]
        .iter()
        .any(|m| m.status == ObservationStatus::Unsupported);
    if unsupported {
        Measurement::missing(ObservationStatus::Unsupported, "endpoint_unsupported")
    } else {
        Measurement::missing(ObservationStatus::Unavailable, "endpoint_missing")
    }
}
