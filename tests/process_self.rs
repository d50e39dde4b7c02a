//! This process's footprint from `/proc/self`: RSS, descriptors and named threads with their
//! CPU ticks. Shared by `fabric-host`'s scale test and the `scale` bench program
//! (`#[path]`-included, like `alone.rs`).

#![allow(dead_code)]

/// A `kB` field of `/proc/self/status` (e.g. `"VmRSS:"`), in KiB.
pub fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// This process's threads named `name` (`/proc/self/task/*/comm`), with their CPU ticks
/// (utime + stime of `/proc/self/task/<tid>/stat`).
pub fn threads_named(name: &str) -> Vec<(u32, u64)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").expect("task dir") {
        let dir = entry.expect("task").path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        // Fields after the parenthesised comm: state is field 3, utime 14, stime 15.
        let rest = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |index: usize| fields.get(index - 3).and_then(|v| v.parse::<u64>().ok());
        let tid = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse().ok())
            .expect("tid");
        found.push((tid, ticks(14).unwrap_or(0) + ticks(15).unwrap_or(0)));
    }
    found
}

/// Open descriptors of this process.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("fd dir").count()
}
