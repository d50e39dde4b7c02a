//! The one parser of `/proc/<pid>/stat` in the workspace (fabric-host reads stat files
//! through it too).

/// The fields of a `<root>/<pid>/stat` file that readers need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id (field 1).
    pub pid: u32,
    /// One-letter state (`R`, `S`, `Z`, ...) (field 3).
    pub state: u8,
    /// Parent pid (field 4).
    pub ppid: u32,
    /// Process-group id (field 5).
    pub pgrp: u32,
    /// Session id (field 6).
    pub session: u32,
    /// utime + stime + cutime + cstime, in clock ticks (fields 14-17).
    pub cpu_ticks: u64,
    /// Number of threads (field 20).
    pub num_threads: u64,
    /// Start time in clock ticks after boot (field 22): with the pid, it identifies a
    /// process across pid reuse.
    pub start_time: u64,
    /// Resident set size in pages (field 24).
    pub rss_pages: u64,
}

impl ProcStat {
    /// Exited but not yet reaped (`Z`) or dead (`X`/`x`).
    pub fn is_exited(&self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }
}

/// Parses the text of a stat file; `None` when it is truncated or malformed. The command name
/// (field 2) may contain spaces and parentheses, so fields after it are counted from the last
/// `)`; the name itself is not kept.
pub fn parse_stat(text: &[u8]) -> Option<ProcStat> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = text.iter().rposition(|&b| b == b')')?;
    let pid = std::str::from_utf8(text.get(..open)?)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    // Numbered as in proc(5): the iterator starts at field 3.
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    let mut fields = fields.skip(7); // 7-13
    let mut cpu_ticks: u64 = 0;
    for _ in 0..4 {
        // 14-17. cutime/cstime are printed as signed longs; negative values never occur for
        // real processes and are treated as zero.
        let ticks: i64 = fields.next()?.parse().ok()?;
        cpu_ticks = cpu_ticks.saturating_add(u64::try_from(ticks).unwrap_or(0));
    }
    let mut fields = fields.skip(2); // 18-19
    let num_threads = fields.next()?.parse().ok()?; // 20
    let mut fields = fields.skip(1); // 21
    let start_time = fields.next()?.parse().ok()?; // 22
    let mut fields = fields.skip(1); // 23
    let rss: i64 = fields.next()?.parse().ok()?; // 24
    Some(ProcStat {
        pid,
        state,
        ppid,
        pgrp,
        session,
        cpu_ticks,
        num_threads,
        start_time,
        rss_pages: u64::try_from(rss).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_hostile_command_names() {
        let text = b"4242 (a) b ) (c) S 17 4240 4239 0 -1 4194560 100 0 0 0 \
                     150 50 7 3 20 0 3 0 12345 1000000 256 18446744073709551615 \
                     0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        let stat = parse_stat(text).unwrap();
        assert_eq!(stat.pid, 4242);
        assert_eq!(stat.state, b'S');
        assert_eq!(stat.ppid, 17);
        assert_eq!(stat.pgrp, 4240);
        assert_eq!(stat.session, 4239);
        assert_eq!(stat.cpu_ticks, 150 + 50 + 7 + 3);
        assert_eq!(stat.num_threads, 3);
        assert_eq!(stat.start_time, 12345);
        assert_eq!(stat.rss_pages, 256);
        assert!(!stat.is_exited());
    }

    #[test]
    fn parses_the_shortest_complete_stat() {
        // Fields 1-24, as fixture trees write them.
        let text = b"11 (p) Z 10 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1100 0 0";
        let stat = parse_stat(text).unwrap();
        assert_eq!((stat.pid, stat.ppid, stat.pgrp), (11, 10, 10));
        assert_eq!(stat.start_time, 1100);
        assert!(stat.is_exited());
    }

    #[test]
    fn rejects_truncated_or_malformed_stat() {
        assert!(parse_stat(b"12 (x) S").is_none());
        assert!(parse_stat(b"12 (x) S 1").is_none());
        assert!(parse_stat(b"garbage").is_none());
        assert!(parse_stat(b"x (p) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0").is_none());
    }

    #[test]
    fn reads_this_process() {
        let text = std::fs::read(format!("/proc/{}/stat", std::process::id())).unwrap();
        let stat = parse_stat(&text).unwrap();
        assert_eq!(stat.pid, std::process::id());
        assert!(stat.num_threads >= 1 && stat.start_time > 0);
    }
}
