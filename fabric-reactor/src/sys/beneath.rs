//! The system calls of [`crate::beneath`]: opening, creating and removing one name relative
//! to a directory descriptor, and `openat2` resolving a whole path beneath one.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// Flags of a directory opened only to walk through it (`O_PATH` on Linux: no read
/// permission needed, no side effect).
#[cfg(target_os = "linux")]
pub const DIR_WALK: i32 = libc::O_PATH | libc::O_DIRECTORY;
#[cfg(not(target_os = "linux"))]
pub const DIR_WALK: i32 = libc::O_RDONLY | libc::O_DIRECTORY;

/// Flags of a name opened only to look at what it is (never a side effect: no read, no
/// FIFO open, a symbolic link is the link itself).
#[cfg(target_os = "linux")]
pub const LOOK: i32 = libc::O_PATH | libc::O_NOFOLLOW;
#[cfg(not(target_os = "linux"))]
pub const LOOK: i32 = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;

pub use libc::{
    EEXIST, EINTR, EINVAL, EISDIR, ELOOP, ENOENT, ENOSYS, ENOTDIR, ENXIO, EPERM, EXDEV, O_APPEND,
    O_CREAT, O_DIRECTORY, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_TRUNC, O_WRONLY,
};

fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("descriptor out of range"))?;
    // SAFETY: `fd` was just returned by the kernel, is open, and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `openat2(dir, path, flags | O_CLOEXEC, mode)` with `RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`: every component of `path` is resolved
/// beneath `dir` and none may be a symbolic link (`ELOOP`), none may climb out (`EXDEV`).
/// `ENOSYS` (before Linux 5.6) or `EPERM` (a seccomp filter) when unavailable.
#[cfg(target_os = "linux")]
pub fn openat2_beneath(
    dir: BorrowedFd<'_>,
    path: &CStr,
    flags: i32,
    mode: u32,
) -> io::Result<OwnedFd> {
    // SAFETY: `open_how` is plain integers; all-zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u32 as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        u64::from(mode)
    } else {
        0
    };
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    loop {
        // SAFETY: `openat2` reads the NUL-terminated `path` and the `open_how` `how` (its
        // size passed with it), both valid for the call, and returns a new descriptor or -1.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                path.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            return owned(fd);
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINTR) {
            return Err(error);
        }
    }
}

/// `openat2` exists only on Linux.
#[cfg(not(target_os = "linux"))]
pub fn openat2_beneath(
    _dir: BorrowedFd<'_>,
    _path: &CStr,
    _flags: i32,
    _mode: u32,
) -> io::Result<OwnedFd> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}

/// `openat(dir, name, flags | O_CLOEXEC, mode)` (retried on `EINTR`).
pub fn openat(dir: BorrowedFd<'_>, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    loop {
        // SAFETY: `openat` reads the NUL-terminated `name`, valid for the call, and returns a
        // new descriptor or -1.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd >= 0 {
            return owned(libc::c_long::from(fd));
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINTR) {
            return Err(error);
        }
    }
}

/// `mkdirat(dir, name, mode)`.
pub fn mkdirat(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: `mkdirat` reads the NUL-terminated `name`, valid for the call.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `renameat(dir, from, dir, to)`: renames a name of `dir` (a link itself, never its
/// target; `to` is replaced).
pub fn renameat(dir: BorrowedFd<'_>, from: &CStr, to: &CStr) -> io::Result<()> {
    // SAFETY: `renameat` reads the two NUL-terminated names, valid for the call.
    if unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) } == -1
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `unlinkat(dir, name, 0)`: removes a name that is not a directory (a symbolic link
/// itself, never its target).
pub fn unlinkat(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `unlinkat` reads the NUL-terminated `name`, valid for the call.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
