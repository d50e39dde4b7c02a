//! Process-table readers for hosting: a host's descendants at stop time (those that left
//! its process group are ended too), the processes still carrying a dead runtime's id (the
//! sweeper), and the members of a process group (tests). Every reader takes the proc root so
//! tests can use fixture trees; trees are read by [`ProcReader`], the one tree walker.

use std::fs;
use std::path::Path;

use crate::proc::ProcReader;
use crate::stat::{ProcStat, parse_stat};

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

/// Every descendant of `pid` (children, grandchildren, ...; zombies included), from one
/// consistent reading of its tree; empty when the tree cannot be read (best effort: used
/// to end what a stopping host leaves behind).
pub fn descendants(root: &Path, pid: u32) -> Vec<ProcStat> {
    descendants_with(&ProcReader::new(root), pid)
}

fn descendants_with(reader: &ProcReader, pid: u32) -> Vec<ProcStat> {
    reader
        .read_members(pid)
        .map(|members| members.into_iter().filter(|stat| stat.pid != pid).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proc::TreeDiscovery;

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
        let mut reader = ProcReader::new(dir.path());
        reader.set_discovery(TreeDiscovery::ParentScan);
        let mut pids: Vec<u32> = descendants_with(&reader, 10)
            .iter()
            .map(|s| s.pid)
            .collect();
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
