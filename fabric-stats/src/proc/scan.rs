//! Tree discovery by scanning every process's parent id (the fallback on kernels without
//! children lists), with a re-scan that the tree kept its shape.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;

use super::read::{Scratch, StatReadError};
use super::{ProcReader, Step};
use crate::error::UnavailableReason;
use crate::stat::ProcStat;

impl ProcReader {
    pub(super) fn attempt_scan(&self, host_pid: u32, scratch: &mut Scratch) -> Step<Vec<ProcStat>> {
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
        let mut members = Vec::with_capacity(tree.len());
        // The host first, as the children walk reports it.
        for pid in std::iter::once(&host_pid).chain(tree.iter().filter(|&&pid| pid != host_pid)) {
            let Some(stat) = first.get(pid) else {
                return Step::Retry;
            };
            members.push(*stat);
        }
        Step::Done(members)
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
