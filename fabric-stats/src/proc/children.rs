//! Tree discovery through the kernel's children lists (`<pid>/task/<tid>/children`),
//! with a re-check that the lists did not change while the stats were read.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::cache::CachedFd;
use super::read::{Scratch, StatReadError, build_path, is_gone, read_full};
use super::{CHILDREN_PRESENT, ProcReader, Step};
use crate::error::UnavailableReason;
use crate::stat::ProcStat;

impl ProcReader {
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

    pub(super) fn attempt_children(
        &self,
        host_pid: u32,
        scratch: &mut Scratch,
    ) -> Step<Vec<ProcStat>> {
        let host = match self.read_stat(host_pid, scratch) {
            Ok(stat) if stat.is_exited() => return Step::Fail(UnavailableReason::HostExited),
            Ok(stat) => stat,
            Err(StatReadError::Gone) => return Step::Fail(UnavailableReason::HostExited),
            Err(StatReadError::Unreadable(path)) => {
                return Step::Fail(UnavailableReason::ProcessUnreadable { path });
            }
        };
        let mut members = Vec::new();
        let mut seen: HashSet<u32> = HashSet::from([host_pid]);
        let mut queue = vec![(host_pid, host)];
        // Every live process with its open children lists, for the re-check.
        let mut listed: Vec<Listed> = Vec::new();
        while let Some((pid, stat)) = queue.pop() {
            members.push(stat);
            if stat.is_exited() {
                // A zombie's children were already reparented away from it.
                continue;
            }
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
        Step::Done(members)
    }
}

struct Listed {
    pid: u32,
    tids: Vec<u32>,
    children: Vec<u32>,
}
