//! Minimal `/proc` readers used at stop time (descendants that left the host's process
//! group) and by tests (which processes of a group remain). Every reader takes the proc
//! root so tests can use fixture trees. Stat files are parsed by
//! [`fabric_stats::parse_stat`].

use std::fs;
use std::path::Path;

pub use fabric_stats::ProcStat;
use fabric_stats::parse_stat;

/// Reads `/proc/<pid>/stat` under `root`.
pub fn read_stat(root: &Path, pid: u32) -> Option<ProcStat> {
    let text = fs::read(root.join(pid.to_string()).join("stat")).ok()?;
    parse_stat(&text)
}

/// Every process under `root` (a full scan of numeric entries).
pub fn all_processes(root: &Path) -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| read_stat(root, pid))
        .collect()
}

/// Processes (including zombies) whose process group is `pgid`.
pub fn group_members(root: &Path, pgid: u32) -> Vec<ProcStat> {
    all_processes(root)
        .into_iter()
        .filter(|stat| stat.pgrp == pgid)
        .collect()
}

/// Live processes under `root` whose environment holds exactly `entry` (`KEY=value`), read
/// from `/proc/<pid>/environ` (readable for this user's processes only). Each is returned
/// with its stat as read before the environment, so a caller can check that a pid was not
/// reused before signalling it.
pub fn with_env_entry(root: &Path, entry: &str) -> Vec<ProcStat> {
    let needle = entry.as_bytes();
    all_processes(root)
        .into_iter()
        .filter(|stat| !stat.is_exited())
        .filter(|stat| {
            fs::read(root.join(stat.pid.to_string()).join("environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|item| item == needle))
        })
        .collect()
}

/// Every live descendant of `pid` (children, grandchildren, ...), read from
/// `/proc/<pid>/task/<tid>/children`, falling back to a parent scan of every process.
pub fn descendants(root: &Path, pid: u32) -> Vec<ProcStat> {
    let mut found: Vec<ProcStat> = Vec::new();
    let mut frontier = vec![pid];
    let mut table: Option<Vec<ProcStat>> = None;
    // Bounded walk: a process tree cannot be deeper or wider than the process table.
    let mut budget = 100_000usize;
    while let Some(parent) = frontier.pop() {
        let children = match children_of(root, parent) {
            Some(children) => children,
            None => {
                let table = table.get_or_insert_with(|| all_processes(root));
                table
                    .iter()
                    .filter(|stat| stat.ppid == parent)
                    .map(|stat| stat.pid)
                    .collect()
            }
        };
        for child in children {
            budget = budget.saturating_sub(1);
            if budget == 0 || found.iter().any(|stat| stat.pid == child) {
                continue;
            }
            if let Some(stat) = read_stat(root, child) {
                found.push(stat);
                frontier.push(child);
            }
        }
    }
    found
}

fn children_of(root: &Path, pid: u32) -> Option<Vec<u32>> {
    let tasks = fs::read_dir(root.join(pid.to_string()).join("task")).ok()?;
    let mut out = Vec::new();
    let mut any = false;
    for task in tasks.filter_map(Result::ok) {
        let Ok(text) = fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        any = true;
        out.extend(
            text.split_whitespace()
                .filter_map(|pid| pid.parse::<u32>().ok()),
        );
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_tree_descendants_by_parent_scan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |pid: u32, ppid: u32, pgrp: u32| {
            let path = dir.path().join(pid.to_string());
            fs::create_dir_all(&path).expect("mkdir");
            fs::write(
                path.join("stat"),
                format!(
                    "{pid} (p) S {ppid} {pgrp} {pgrp} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {pid}00 0 0"
                ),
            )
            .expect("write");
        };
        write(10, 1, 10);
        write(11, 10, 10);
        write(12, 11, 12);
        write(13, 1, 13);
        let mut pids: Vec<u32> = descendants(dir.path(), 10).iter().map(|s| s.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, vec![11, 12]);
        let members: Vec<u32> = group_members(dir.path(), 10)
            .iter()
            .map(|s| s.pid)
            .collect();
        assert_eq!(members.len(), 2);
        fs::write(
            dir.path().join("11/environ"),
            b"A=1\0FABRIC_RUNTIME_ID=runtime-x\0",
        )
        .expect("write");
        fs::write(
            dir.path().join("12/environ"),
            b"FABRIC_RUNTIME_ID=runtime-xy\0",
        )
        .expect("write");
        let found: Vec<u32> = with_env_entry(dir.path(), "FABRIC_RUNTIME_ID=runtime-x")
            .iter()
            .map(|s| s.pid)
            .collect();
        assert_eq!(found, vec![11]);
    }
}
