//! Operating-system calls: the only module of this crate that contains `unsafe`.

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of `/proc/<pid>/stat` CPU
/// times. Falls back to 100 (the Linux ABI value) if the call fails.
pub(crate) fn clock_ticks_per_second() -> u64 {
    // SAFETY: `sysconf` takes an integer name, reads no caller memory and returns a long.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// The page size in bytes (`sysconf(_SC_PAGESIZE)`), the unit of the `rss` field of
/// `/proc/<pid>/stat`. Falls back to 4096 if the call fails.
pub(crate) fn page_size() -> u64 {
    // SAFETY: `sysconf` takes an integer name, reads no caller memory and returns a long.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}
