//! Spawning adapter hosts without copying the caller's address space.
//!
//! `fork` copies the page tables of the whole embedding process (a Python or Node program
//! with the core loaded: tens to hundreds of MiB), and `exec` then tears that copy down;
//! measured in an 85 MiB Python process, `fork` + `exec` of `/bin/true` took 3.7–7.0 ms
//! against 0.9–1.2 ms for `posix_spawn`. `posix_spawn` cannot do what a host needs before
//! `exec` (`setsid`, the host umask, `PR_SET_PDEATHSIG`, `PR_SET_CHILD_SUBREAPER`), so on
//! Linux the child is made the way glibc's `posix_spawn` makes it: `clone(CLONE_VM |
//! CLONE_VFORK)` on a stack of its own, the parent suspended until the child has exec'd or
//! exited, all signals blocked around the clone and every handler reset to the default in
//! the child before it unblocks them. Between `clone` and `exec` the child only makes
//! system calls on data the parent prepared (no allocation, no locks). An `exec` failure
//! reaches the parent as the errno written to a close-on-exec pipe.
//!
//! Before `exec` the child calls `setsid()` (it leads its own session and process group,
//! pgid = its pid, no controlling terminal), sets its umask to [`HOST_UMASK`] (this
//! process's own umask is left alone), and on Linux sets (both survive `exec`):
//! - `PR_SET_PDEATHSIG(SIGKILL)`: the host is killed when the thread that created it ends,
//!   which is the process-wide spawner thread (`spawner.rs`), so in effect when this process
//!   dies, however it dies (`kill -9` included). A parent that died before the `prctl` is
//!   caught by comparing `getppid()` with the parent's pid (the spawn then fails).
//! - `PR_SET_CHILD_SUBREAPER`: descendants the host orphans (a double fork) are re-parented
//!   to the host instead of PID 1, so they stay in its process tree, where the stop-time
//!   descendant snapshot finds them even after they left its process group.
//!
//! - every descriptor above 2 close-on-exec (`close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`, a
//!   `fcntl` per descriptor below `RLIMIT_NOFILE` before Linux 5.11): an embedding
//!   program's files and sockets without `O_CLOEXEC` never reach a host.
//!
//! Other systems use `std::process::Command` with `setsid`, the umask and the same
//! close-on-exec loop in `pre_exec`.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use super::HOST_UMASK;

/// What to run: the program (a path, or a name searched in `env`'s `PATH`), its arguments,
/// its whole environment and its working directory.
#[derive(Debug)]
pub struct SpawnSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

/// A spawned host: its pid and the parent's ends of its stdio pipes.
#[derive(Debug)]
pub struct Spawned {
    pub child: HostChild,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// A child process of this process, reaped through `waitpid` on its pid.
#[derive(Debug)]
pub struct HostChild {
    pid: libc::pid_t,
    status: Option<ExitStatus>,
}

impl HostChild {
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Reaps the child if it has exited (`None` while it runs).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.reap(libc::WNOHANG)
    }

    /// Waits for the child to exit and reaps it.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.reap(0)? {
                return Ok(status);
            }
        }
    }

    /// `SIGKILL` to the child (nothing once it was reaped: its pid may be reused).
    #[cfg(test)]
    pub fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: `kill` takes two integers; `pid` is our unreaped child (> 1).
        if unsafe { libc::kill(self.pid, libc::SIGKILL) } == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn reap(&mut self, flags: i32) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let mut raw = 0;
        loop {
            // SAFETY: `raw` is a valid `int` owned by this frame; `pid` is our child.
            let rc = unsafe { libc::waitpid(self.pid, &mut raw, flags) };
            if rc == -1 {
                let error = io::Error::last_os_error();
                if error.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(error);
            }
            if rc == 0 {
                return Ok(None);
            }
            let status = ExitStatus::from_raw(raw);
            self.status = Some(status);
            return Ok(Some(status));
        }
    }
}

/// Spawns a host in its own session with piped stdio (see the module documentation).
///
/// Must run on the process-wide spawner thread: `PR_SET_PDEATHSIG` follows the thread that
/// created the child.
pub fn spawn_host(spec: &SpawnSpec) -> io::Result<Spawned> {
    let program = resolve(&spec.program, &spec.env)?;
    let (stdin_read, stdin_write) = pipe()?;
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let child = imp::spawn(&program, spec, [&stdin_read, &stdout_write, &stderr_write])?;
    Ok(Spawned {
        child,
        stdin: stdin_write,
        stdout: stdout_read,
        stderr: stderr_read,
    })
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two `int`s for the kernel to fill in.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created by the kernel and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The program to exec: a name without `/` is searched in the child's `PATH` (as
/// `execvp` would, default `/bin:/usr/bin`); the first executable regular file wins.
fn resolve(program: &OsStr, env: &[(OsString, OsString)]) -> io::Result<CString> {
    if program.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "empty program name",
        ));
    }
    if program.as_bytes().contains(&b'/') {
        return cstring(program.as_bytes());
    }
    let path = env.iter().rev().find(|(key, _)| key == "PATH").map_or_else(
        || OsString::from("/bin:/usr/bin"),
        |(_, value)| value.clone(),
    );
    for dir in std::env::split_paths(&path) {
        let candidate = if dir.as_os_str().is_empty() {
            PathBuf::from(program)
        } else {
            dir.join(program)
        };
        if is_executable(&candidate) {
            return cstring(candidate.as_os_str().as_bytes());
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "program not found in PATH",
    ))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// One above the highest descriptor number this process may hold (the soft
/// `RLIMIT_NOFILE`, at least 1024, at most `i32::MAX`).
fn fd_limit() -> libc::c_int {
    // SAFETY: `limit` is a `rlimit` owned by this frame for `getrlimit` to fill in.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `getrlimit` writes only `limit`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    libc::c_int::try_from(limit.rlim_cur)
        .unwrap_or(libc::c_int::MAX)
        .max(1024)
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in an argument"))
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use std::ffi::c_void;
    use std::ptr;

    /// Bytes of stack for the child between `clone` and `exec` (it only makes system calls).
    const CHILD_STACK: usize = 64 * 1024;

    /// Everything the child reads; prepared by the parent, which is suspended while the
    /// child runs (`CLONE_VFORK`), so no borrow ends before the child has exec'd.
    struct Plan {
        program: *const libc::c_char,
        argv: *const *const libc::c_char,
        envp: *const *const libc::c_char,
        cwd: *const libc::c_char,
        stdio: [libc::c_int; 3],
        report: libc::c_int,
        parent: libc::pid_t,
        /// One above the highest descriptor this process may have (`RLIMIT_NOFILE`).
        fd_limit: libc::c_int,
    }

    pub(super) fn spawn(
        program: &CString,
        spec: &SpawnSpec,
        stdio: [&OwnedFd; 3],
    ) -> io::Result<HostChild> {
        let args: Vec<CString> = std::iter::once(Ok(program.clone()))
            .chain(spec.args.iter().map(|arg| cstring(arg.as_bytes())))
            .collect::<io::Result<_>>()?;
        let env: Vec<CString> = spec
            .env
            .iter()
            .map(|(key, value)| {
                let mut entry = key.as_bytes().to_vec();
                entry.push(b'=');
                entry.extend_from_slice(value.as_bytes());
                cstring(&entry)
            })
            .collect::<io::Result<_>>()?;
        let argv: Vec<*const libc::c_char> = args
            .iter()
            .map(|a| a.as_ptr())
            .chain([ptr::null()])
            .collect();
        let envp: Vec<*const libc::c_char> = env
            .iter()
            .map(|e| e.as_ptr())
            .chain([ptr::null()])
            .collect();
        let cwd = cstring(spec.cwd.as_os_str().as_bytes())?;
        let (report_read, report_write) = pipe()?;
        let plan = Plan {
            program: program.as_ptr(),
            argv: argv.as_ptr(),
            envp: envp.as_ptr(),
            cwd: cwd.as_ptr(),
            stdio: stdio.map(AsRawFd::as_raw_fd),
            report: report_write.as_raw_fd(),
            // SAFETY: `getpid` takes no arguments and cannot fail.
            parent: unsafe { libc::getpid() },
            fd_limit: fd_limit(),
        };
        let mut stack = vec![0u8; CHILD_STACK];
        // The stack grows down on every Linux target Rust supports; 16-byte aligned top.
        let top = ((stack.as_mut_ptr() as usize + CHILD_STACK) & !15) as *mut c_void;

        // Block every signal so no handler of this process runs on the child's stack (the
        // child resets the handlers before it unblocks).
        // SAFETY: `all` and `old` are `sigset_t`s owned by this frame; `sigfillset` and
        // `pthread_sigmask` only read and write them.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        }
        // SAFETY: `child_main` only reads `plan` (valid until `clone` returns: with
        // `CLONE_VFORK` this thread is suspended until the child exec'd or exited) and makes
        // async-signal-safe system calls; `top` is the 16-byte aligned top of `stack`, which
        // outlives the child's use of it for the same reason.
        let pid = unsafe {
            libc::clone(
                child_main,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                &plan as *const Plan as *mut c_void,
            )
        };
        let clone_error = io::Error::last_os_error();
        // SAFETY: restores this thread's mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, ptr::null_mut()) };
        drop(stack);
        if pid == -1 {
            return Err(clone_error);
        }
        let mut child = HostChild { pid, status: None };
        drop(report_write);
        let mut errno = [0u8; 4];
        let mut got = 0;
        while got < errno.len() {
            // SAFETY: reads into the unfilled tail of `errno`, a buffer owned by this frame.
            let n = unsafe {
                libc::read(
                    report_read.as_raw_fd(),
                    errno[got..].as_mut_ptr().cast(),
                    errno.len() - got,
                )
            };
            match n {
                0 => break,
                n if n > 0 => got += n as usize,
                _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                _ => break,
            }
        }
        if got == errno.len() {
            let _ = child.wait();
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
        }
        Ok(child)
    }

    /// The child between `clone` and `exec`: system calls only.
    extern "C" fn child_main(arg: *mut c_void) -> libc::c_int {
        // SAFETY: `arg` is the parent's `Plan`, valid while the parent is suspended.
        let plan = unsafe { &*(arg as *const Plan) };
        // SAFETY: every call below is an async-signal-safe system call on integers or on
        // pointers into `plan`'s NUL-terminated strings and NULL-terminated arrays.
        unsafe {
            let fail = |report: libc::c_int| -> libc::c_int {
                let errno = *libc::__errno_location();
                let bytes = errno.to_ne_bytes();
                libc::write(report, bytes.as_ptr().cast(), bytes.len());
                libc::_exit(127)
            };
            // Default handlers (a handler of this process must not run in the child), and
            // SIGPIPE back to the default that `exec`'d programs expect.
            for signal in 1..=libc::SIGRTMAX() {
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, ptr::null(), &mut current) != 0 {
                    continue;
                }
                let ignored = current.sa_sigaction == libc::SIG_IGN;
                if current.sa_sigaction != libc::SIG_DFL && (!ignored || signal == libc::SIGPIPE) {
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(signal, &default, ptr::null_mut());
                }
            }
            for (target, fd) in plan.stdio.iter().enumerate() {
                let target = target as libc::c_int;
                if *fd == target {
                    // dup2 onto itself keeps close-on-exec: clear it instead.
                    if libc::fcntl(target, libc::F_SETFD, 0) == -1 {
                        return fail(plan.report);
                    }
                } else if libc::dup2(*fd, target) == -1 {
                    return fail(plan.report);
                }
            }
            // Nothing of the caller's but stdio crosses `exec`: every descriptor above 2
            // becomes close-on-exec (the report pipe already is, and stays open until then).
            if libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) != 0
            {
                // Before Linux 5.11: one `fcntl` per possible descriptor.
                for fd in 3..plan.fd_limit {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            if libc::chdir(plan.cwd) == -1
                || libc::setsid() == -1
                || {
                    libc::umask(HOST_UMASK as libc::mode_t);
                    false
                }
                || libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) == -1
            {
                return fail(plan.report);
            }
            if libc::getppid() != plan.parent {
                *libc::__errno_location() = libc::ESRCH;
                return fail(plan.report);
            }
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == -1 {
                return fail(plan.report);
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, ptr::null_mut());
            libc::execve(plan.program, plan.argv, plan.envp);
            fail(plan.report)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    pub(super) fn spawn(
        program: &CString,
        spec: &SpawnSpec,
        stdio: [&OwnedFd; 3],
    ) -> io::Result<HostChild> {
        let [stdin, stdout, stderr] = stdio;
        let mut command = Command::new(OsStr::from_bytes(program.as_bytes()));
        command
            .args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.cwd)
            .stdin(Stdio::from(stdin.try_clone()?))
            .stdout(Stdio::from(stdout.try_clone()?))
            .stderr(Stdio::from(stderr.try_clone()?));
        let limit = fd_limit();
        // SAFETY: the closure runs in the forked child before exec; it only calls `setsid`,
        // `umask` and `fcntl`, async-signal-safe system calls that allocate nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                libc::umask(HOST_UMASK as libc::mode_t);
                // Nothing of the caller's but stdio crosses `exec`.
                for fd in 3..limit {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        Ok(HostChild {
            pid: child.id() as libc::pid_t,
            status: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn spawn(program: &str, args: &[&str], cwd: &Path) -> io::Result<Spawned> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let env = vec![
            (OsString::from("PATH"), OsString::from("/usr/bin:/bin")),
            (OsString::from("MARK"), OsString::from("x=1")),
        ];
        spawn_host(&SpawnSpec {
            program: program.into(),
            args,
            env,
            cwd: cwd.to_path_buf(),
        })
    }

    #[test]
    fn the_child_runs_in_its_own_session_with_the_host_umask_env_and_cwd() {
        let dir = std::env::temp_dir();
        let script =
            "echo \"$MARK $(umask) $(pwd)\"; cut -d' ' -f6 /proc/$$/stat; echo $$; echo err >&2";
        let mut spawned = spawn("sh", &["-c", script], &dir).unwrap();
        drop(spawned.stdin);
        let mut out = String::new();
        std::fs::File::from(spawned.stdout)
            .read_to_string(&mut out)
            .unwrap();
        let mut err = String::new();
        std::fs::File::from(spawned.stderr)
            .read_to_string(&mut err)
            .unwrap();
        let status = spawned.child.wait().unwrap();
        assert!(status.success());
        let lines: Vec<&str> = out.lines().collect();
        let canonical = dir.canonicalize().unwrap();
        assert_eq!(lines[0], format!("x=1 0077 {}", canonical.display()));
        assert_eq!(lines[1].trim(), lines[2].trim(), "session id = pid: {out}");
        assert_eq!(err, "err\n");
    }

    #[test]
    fn exec_failures_are_reported_and_the_child_is_reaped() {
        let dir = std::env::temp_dir();
        let missing = spawn("/nonexistent/fabric-no-such-program", &[], &dir).unwrap_err();
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
        let not_in_path = spawn("fabric-no-such-program", &[], &dir).unwrap_err();
        assert_eq!(not_in_path.kind(), io::ErrorKind::NotFound);
        let bad_cwd = spawn("sh", &["-c", "true"], Path::new("/nonexistent-dir")).unwrap_err();
        assert_eq!(bad_cwd.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn descriptors_without_cloexec_do_not_reach_the_child() {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open("/dev/null").unwrap();
        let fd = file.as_raw_fd();
        // SAFETY: `fd` is open (held by `file`); clearing its flags is what is under test.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
        let mut spawned = spawn("sh", &["-c", "ls /proc/$$/fd"], &std::env::temp_dir()).unwrap();
        drop(spawned.stdin);
        let mut out = String::new();
        std::fs::File::from(spawned.stdout)
            .read_to_string(&mut out)
            .unwrap();
        assert!(spawned.child.wait().unwrap().success());
        let fds: Vec<i32> = out
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        assert!(fds.contains(&0) && fds.contains(&2), "{fds:?}");
        assert!(
            !fds.contains(&fd),
            "descriptor {fd} leaked into the child: {fds:?}"
        );
        assert!(
            fds.iter().all(|&n| n <= 2),
            "only stdio crosses exec: {fds:?}"
        );
    }

    #[test]
    fn kill_and_try_wait() {
        let mut spawned = spawn("sleep", &["30"], &std::env::temp_dir()).unwrap();
        assert!(spawned.child.try_wait().unwrap().is_none());
        spawned.child.kill().unwrap();
        let status = spawned.child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        spawned.child.kill().unwrap(); // reaped: a no-op, never a signal to a reused pid
    }
}
