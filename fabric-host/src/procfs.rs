//! Minimal `/proc` readers used at stop time (descendants that left the host's process
//! group) and by tests (which processes of a group remain). Every reader takes the proc
//! root so tests can use fixture trees.

use std::fs;
use std::path::Path;

/// The fields of `/proc/<pid>/stat` this crate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: i32,
    /// One-letter state (`R`, `S`, `Z`, ...).
    pub state: char,
    /// Parent pid.
    pub ppid: i32,
    /// Process-group id.
    pub pgrp: i32,
    /// Session id.
    pub session: i32,
    /// Start time in clock ticks after boot (identifies the process across pid reuse).
    pub start_time: u64,
}

/// Parses the text of a `/proc/<pid>/stat` file.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] = state (field 3), rest[1] = ppid (4), rest[2] = pgrp (5), rest[3] = session (6),
    // rest[19] = starttime (22).
    Some(ProcStat {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        session: rest.get(3)?.parse().ok()?,
        start_time: rest.get(19)?.parse().ok()?,
    })
}

/// Reads `/proc/<pid>/stat` under `root`.
pub fn read_stat(root: &Path, pid: i32) -> Option<ProcStat> {
    let text = fs::read_to_string(root.join(pid.to_string()).join("stat")).ok()?;
    parse_stat(&text)
}

/// Every process under `root` (a full scan of numeric entries).
pub fn all_processes(root: &Path) -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| read_stat(root, pid))
        .collect()
}

/// Processes (including zombies) whose process group is `pgid`.
pub fn group_members(root: &Path, pgid: i32) -> Vec<ProcStat> {
    all_processes(root)
        .into_iter()
        .filter(|stat| stat.pgrp == pgid)
        .collect()
}

/// Every live descendant of `pid` (children, grandchildren, ...), read from
/// `/proc/<pid>/task/<tid>/children`, falling back to a parent scan of every process.
pub fn descendants(root: &Path, pid: i32) -> Vec<ProcStat> {
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

fn children_of(root: &Path, pid: i32) -> Option<Vec<i32>> {
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
                .filter_map(|pid| pid.parse::<i32>().ok()),
        );
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_parens_in_comm() {
        let text = "4242 (we(ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        let stat = parse_stat(text).expect("parses");
        assert_eq!(stat.pid, 4242);
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.ppid, 1);
        assert_eq!(stat.pgrp, 4242);
        assert_eq!(stat.session, 4242);
        assert_eq!(stat.start_time, 987654);
    }

    #[test]
    fn rejects_truncated_stat() {
        assert_eq!(parse_stat("12 (x) S 1"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn fixture_tree_descendants_by_parent_scan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |pid: i32, ppid: i32, pgrp: i32| {
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
        let mut pids: Vec<i32> = descendants(dir.path(), 10).iter().map(|s| s.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, vec![11, 12]);
        let members: Vec<i32> = group_members(dir.path(), 10)
            .iter()
            .map(|s| s.pid)
            .collect();
        assert_eq!(members.len(), 2);
    }
}
