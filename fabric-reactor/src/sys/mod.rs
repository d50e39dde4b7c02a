//! Operating-system calls: the only module of this crate that contains `unsafe`.
//!
//! Every function is a thin, documented wrapper over one libc call; callers above this
//! module never see raw libc types except pids and signal numbers.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

pub mod beneath;
mod spawn;

pub use spawn::{HostChild, SpawnSpec, Spawned, spawn_host};

/// `SIGTERM`.
pub const SIGTERM: i32 = libc::SIGTERM;
/// `SIGKILL`.
pub const SIGKILL: i32 = libc::SIGKILL;

/// The file mode creation mask of every adapter host: files and directories the adapter
/// creates (artifacts, workspace files) are private to the user unless it widens them.
pub const HOST_UMASK: u32 = 0o077;

/// Tries to take an exclusive `flock` on `file` without blocking: `Ok(true)` when taken,
/// `Ok(false)` when another open file description holds it.
pub fn try_lock_exclusive(file: &std::fs::File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: `flock` takes a descriptor that `file` keeps open for the call, and flags.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(true);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(error),
        }
    }
}

/// The effective user id of this process.
pub fn effective_uid() -> u32 {
    // SAFETY: `geteuid` takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// Opens a pidfd for `pid`: it becomes readable when the process exits (before reaping).
#[cfg(target_os = "linux")]
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: `pidfd_open(pid, 0)` takes two integers and returns a new file descriptor or
    // -1; no memory is shared with the kernel.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("pidfd out of range"))?;
    // SAFETY: `fd` was just returned by the kernel, is open, and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// pidfds are Linux-only; other systems fall back to polling with [`has_exited`].
#[cfg(not(target_os = "linux"))]
pub fn pidfd_open(_pid: i32) -> io::Result<OwnedFd> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Sends `signal` to every process of the process group `pgid`.
///
/// `ESRCH` (the group is empty) is not an error.
pub fn signal_group(pgid: i32, signal: i32) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: `killpg` takes two integers; a positive pgid > 1 never addresses "all
    // processes" (that needs pgid 0 or -1).
    let rc = unsafe { libc::killpg(pgid, signal) };
    esrch_is_ok(rc)
}

/// Sends `signal` to the single process `pid`. `ESRCH` is not an error.
pub fn signal_process(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 1 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: `kill` takes two integers; a positive pid > 1 addresses one process only.
    let rc = unsafe { libc::kill(pid, signal) };
    esrch_is_ok(rc)
}

/// The result of a signal call returning `rc`: `-1` is the last OS error, except `ESRCH`
/// (no such process or group), which is success.
fn esrch_is_ok(rc: i32) -> io::Result<()> {
    if rc == -1 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ESRCH) {
            return Ok(());
        }
        return Err(error);
    }
    Ok(())
}

/// Whether our child `pid` has exited, without reaping it (`waitid(.., WNOWAIT)`), so its
/// pid — and therefore its process-group id — stays reserved until we reap it.
pub fn has_exited(pid: i32) -> io::Result<bool> {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    loop {
        // SAFETY: `info` is a zeroed, properly aligned `siginfo_t` owned by this frame
        // that the kernel fills in; the other arguments are integers.
        let (rc, pid_out) = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                id,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            (rc, info.si_pid())
        };
        if rc == -1 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(error);
        }
        return Ok(pid_out != 0);
    }
}

/// What `wait4` reported of a reaped child: how it ended and the resources it and the
/// descendants it reaped used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reaped {
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// User plus system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// The largest resident set of it or any reaped descendant, in KiB (`ru_maxrss`).
    pub max_rss_kib: u64,
}

/// Reaps our child `pid` (blocking until it exits) with `wait4`, returning its status and
/// resource usage.
pub fn reap_with_usage(pid: i32) -> io::Result<Reaped> {
    loop {
        // SAFETY: `status` and `usage` are zeroed locals owned by this frame that the
        // kernel fills in; `pid` and the options are integers.
        let (rc, status, usage) = unsafe {
            let mut status: libc::c_int = 0;
            let mut usage: libc::rusage = std::mem::zeroed();
            let rc = libc::wait4(pid, &mut status, 0, &mut usage);
            (rc, status, usage)
        };
        if rc == -1 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(error);
        }
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        return Ok(Reaped {
            exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            cpu_seconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        });
    }
}

/// Raises the soft `RLIMIT_NOFILE` towards the hard limit (at most `want`): every host
/// costs four descriptors on the reactor, and the common soft default (1024) is too low
/// for a few hundred runtimes. Errors are ignored by the caller.
pub fn raise_open_file_limit(want: u64) -> io::Result<u64> {
    // SAFETY: `limit` is a properly aligned `rlimit` owned by this frame.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `getrlimit` writes into `limit`, which is valid for writes.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == -1 {
        return Err(io::Error::last_os_error());
    }
    let target = want.min(limit.rlim_max as u64);
    if (limit.rlim_cur as u64) >= target {
        return Ok(limit.rlim_cur as u64);
    }
    limit.rlim_cur = target as libc::rlim_t;
    // SAFETY: `setrlimit` reads `limit`, which is a valid `rlimit`.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(target)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of `/proc/<pid>/stat` CPU
/// times. Falls back to 100 (the Linux ABI value) if the call fails.
pub fn clock_ticks_per_second() -> u64 {
    // SAFETY: `sysconf` takes an integer name, reads no caller memory and returns a long.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// The page size in bytes (`sysconf(_SC_PAGESIZE)`), the unit of the `rss` field of
/// `/proc/<pid>/stat`. Falls back to 4096 if the call fails.
pub fn page_size() -> u64 {
    // SAFETY: `sysconf` takes an integer name, reads no caller memory and returns a long.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// A per-process resource limit ([`hard_limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `RLIMIT_NOFILE`.
    OpenFiles,
    /// `RLIMIT_NPROC`.
    Processes,
}

/// The hard limit of `resource` (`getrlimit`); `u64::MAX` when unlimited.
pub fn hard_limit(resource: Limit) -> io::Result<u64> {
    let resource = match resource {
        Limit::OpenFiles => libc::RLIMIT_NOFILE,
        Limit::Processes => libc::RLIMIT_NPROC,
    };
    // SAFETY: `limit` is a properly aligned `rlimit` owned by this frame.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `getrlimit` writes into `limit`, which is valid for writes.
    if unsafe { libc::getrlimit(resource, &mut limit) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(limit.rlim_max as u64)
}

/// Blocks `SIGPIPE` for the calling thread, so a write to a pipe whose reader is gone fails
/// with `EPIPE` instead of killing a host application that did not ignore the signal (C,
/// Go or other embedders). Only the reactor thread writes to host pipes.
pub fn block_sigpipe_in_this_thread() -> io::Result<()> {
    // SAFETY: `set` is a zeroed `sigset_t` owned by this frame, initialized by
    // `sigemptyset`/`sigaddset` before `pthread_sigmask` reads it; the old mask is not
    // requested (null pointer is allowed).
    let rc = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Sets the process file-mode creation mask and returns the previous one.
pub fn set_umask(mask: u32) -> u32 {
    // SAFETY: `umask` only swaps the process's creation mask; it cannot fail.
    unsafe { libc::umask(mask as libc::mode_t) as u32 }
}

/// Writes `buf` to the non-blocking pipe `fd` from any thread without risking `SIGPIPE`:
/// the signal is blocked for the calling thread around the `write` (unless it already was),
/// and one the write raised (`EPIPE`: the reader is gone) is consumed before the old mask
/// comes back, so an embedder that did not ignore `SIGPIPE` is never killed by it. Returns
/// the bytes written (`WouldBlock` when the pipe is full). The caller keeps `fd` open for
/// the duration of the call.
pub fn write_pipe_without_sigpipe(fd: i32, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `set` and `old` are owned by this frame; `sigemptyset`/`sigaddset` initialize
    // `set` before `pthread_sigmask` reads it and `pthread_sigmask` fills `old`.
    let (set, old) = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        (set, old)
    };
    // SAFETY: `old` was filled by `pthread_sigmask` above.
    let was_blocked = unsafe { libc::sigismember(&old, libc::SIGPIPE) } == 1;
    // SAFETY: `buf` is a valid slice for `buf.len()` bytes for the whole call; `write` does
    // not keep the pointer.
    let written = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    let result = if written < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(written as usize)
    };
    if !was_blocked {
        if matches!(&result, Err(error) if error.raw_os_error() == Some(libc::EPIPE)) {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `set` is initialized above and `zero` is a valid timespec owned by this
            // frame; no siginfo is requested (null). Consumes the pending `SIGPIPE` the
            // failed write raised, if any (EAGAIN when none is pending).
            unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) };
        }
        // SAFETY: `old` is the mask `pthread_sigmask` returned above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    }
    result
}

/// Whether a kept connection's peer has neither closed it nor sent anything unasked (so a
/// request may be written to it): one `recv(MSG_PEEK | MSG_DONTWAIT)`, whatever the
/// socket's blocking mode. `false` at end of stream, on pending bytes or on an error.
pub fn socket_idle(stream: &std::net::TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut byte = 0u8;
    // SAFETY: `byte` is a valid one-byte buffer owned by this frame and the descriptor is
    // borrowed from `stream` for the call; `recv` with `MSG_PEEK` neither keeps the pointer
    // nor consumes input.
    let got = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            (&raw mut byte).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    got < 0 && {
        let error = io::Error::last_os_error();
        matches!(
            error.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        )
    }
}
