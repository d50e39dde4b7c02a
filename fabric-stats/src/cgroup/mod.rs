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

mod cache;
mod delta;
mod limit;
mod snapshot;

use fabric_config::codes;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use fabric_config::config::SystemStatsGroup;
use fabric_config::stats::{CgroupObservation, Measurement, ObservationStatus};

use crate::proc::{CachedFd, read_full};
use crate::timestamp::rfc3339_millis;

use cache::{Cgroup, CgroupCache, Level, MEMORY_CURRENT, Target};
pub use delta::deltas;
use snapshot::{read_snapshot, single_value};

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
            return Err((ObservationStatus::Unsupported, codes::PLATFORM_UNSUPPORTED));
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
                    codes::HOST_EXITED
                } else {
                    codes::PROCESS_UNREADABLE
                };
                return Err((ObservationStatus::Unavailable, reason));
            }
        };
        let Some(target) = targets.get_mut(&pid) else {
            return Err((ObservationStatus::Unavailable, codes::HOST_EXITED));
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
