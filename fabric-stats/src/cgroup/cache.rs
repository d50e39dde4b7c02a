//! The cgroup reader's descriptor cache: per process its membership file, per cgroup its
//! levels with their files open (or known missing), revalidated through the guard files.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::proc::{CACHED_FD_BUDGET, CachedFd, cached_descriptors, read_full};

/// Observations after which an unused process or cgroup entry is closed.
const CACHE_IDLE_OBSERVATIONS: u64 = 64;

// The files of one cgroup level, by index into `Level::files`.
pub(super) const CPU_STAT: usize = 0;
pub(super) const MEMORY_EVENTS: usize = 1;
pub(super) const CPU_PRESSURE: usize = 2;
pub(super) const MEMORY_PRESSURE: usize = 3;
pub(super) const IO_PRESSURE: usize = 4;
pub(super) const MEMORY_CURRENT: usize = 5;
pub(super) const MEMORY_PEAK: usize = 6;
pub(super) const MEMORY_SWAP_CURRENT: usize = 7;
pub(super) const CPU_MAX: usize = 8;
pub(super) const MEMORY_MAX: usize = 9;
pub(super) const MEMORY_HIGH: usize = 10;
pub(super) const MEMORY_SWAP_MAX: usize = 11;
pub(super) const FILES: [&str; 12] = [
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
pub(super) struct CgroupCache {
    /// Observations done so far (for idle eviction).
    pub(super) generation: u64,
    /// pid → its membership file and the cgroup it resolved to.
    pub(super) targets: HashMap<u32, Target>,
    /// cgroup path → its levels (shared by every process in that cgroup).
    pub(super) cgroups: HashMap<String, Cgroup>,
    pub(super) buf: Vec<u8>,
}

#[derive(Debug)]
pub(super) struct Target {
    /// `<proc_root>/<pid>/cgroup`, bound to the process.
    pub(super) membership: CachedFd,
    /// The membership text `cgroup` was resolved from.
    pub(super) text: Vec<u8>,
    /// The cgroup path (key of `CgroupCache::cgroups`), when resolved.
    pub(super) cgroup: Option<String>,
    pub(super) used: u64,
}

#[derive(Debug)]
pub(super) struct Cgroup {
    /// The cgroup and its visible ancestors, innermost first.
    pub(super) levels: Vec<Level>,
    pub(super) used: u64,
}

#[derive(Debug)]
pub(super) struct Level {
    pub(super) dir: PathBuf,
    /// cgroup path of this level (`/` for the hierarchy root).
    pub(super) path: String,
    pub(super) files: [Slot; FILES.len()],
    /// `GUARDS` with their last content.
    pub(super) guards: [(Slot, Vec<u8>); GUARDS.len()],
}

/// One file of a level: not opened yet, open, or known to be missing.
#[derive(Debug, Default)]
pub(super) enum Slot {
    #[default]
    Unknown,
    Open(CachedFd),
    Missing,
}

/// The outcome of reading one file into the cache's buffer.
#[derive(Debug, Clone, Copy)]
pub(super) enum FileRead {
    /// The content is `buf[..len]`.
    Len(usize),
    Missing,
    Unreadable,
}

impl Level {
    pub(super) fn new(dir: PathBuf, path: String) -> Self {
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
    pub(super) fn revalidate(&mut self, buf: &mut Vec<u8>, pressure: bool) {
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

    pub(super) fn read(&mut self, file: usize, buf: &mut Vec<u8>) -> FileRead {
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
    pub(super) fn end_observation(&mut self) {
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
