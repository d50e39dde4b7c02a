//! Files under a directory that someone else controls: an environment's `artifacts/`, an
//! adapter's artifact root or workspace, a runtime's FABRIC_HOME the adapter can write to.
//!
//! A [`Beneath`] is an open directory (the root, which its caller trusts); every path given
//! to it is relative and resolved beneath it **without following a symbolic link anywhere**
//! (a link on the way or at the end is [`Refusal::Link`]): with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)` where the kernel has it (Linux 5.6), else one `O_NOFOLLOW` `openat`
//! per component. Files are opened with `O_NONBLOCK` (a FIFO never blocks) and only regular
//! files (and directories where a directory is expected) are read or written: anything else
//! is [`Refusal::NotRegular`]. Reads are capped ([`Refusal::TooLarge`], never truncated).
//!
//! ```
//! use fabric_reactor::beneath::{Beneath, Refusal};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let root = Beneath::open(dir.path()).unwrap();
//! root.write("out/a.txt".as_ref(), b"hi", 0o600).unwrap();
//! assert_eq!(root.read("out/a.txt".as_ref(), 1024).unwrap(), b"hi");
//! std::os::unix::fs::symlink("/etc/passwd", dir.path().join("out/link")).unwrap();
//! assert!(matches!(root.read("out/link".as_ref(), 1024), Err(Refusal::Link)));
//! assert!(matches!(root.read("../x".as_ref(), 1024), Err(Refusal::OutsideRoot)));
//! ```

use std::ffi::CString;
use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use crate::sys::beneath as sys;

/// Why a path beneath a root was not read or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum Refusal {
    /// The path is empty, absolute, holds `..` or a NUL byte.
    OutsideRoot,
    /// A symbolic link on the way or at the end.
    Link,
    /// Not a regular file (or not a directory where one is expected): the kind found
    /// (`directory`, `fifo`, `socket`, `char_device`, `block_device`, `file`).
    NotRegular(&'static str),
    /// A file larger than the cap (bytes).
    TooLarge(u64),
    /// Nothing at the path (or a component on the way is not a directory).
    Missing,
    /// Any other failure of the system.
    Io(io::Error),
}

impl Refusal {
    /// A stable word for the reason: `outside_root`, `symlink`, `not_regular`,
    /// `too_large`, `missing`, `io`.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::OutsideRoot => "outside_root",
            Refusal::Link => "symlink",
            Refusal::NotRegular(_) => "not_regular",
            Refusal::TooLarge(_) => "too_large",
            Refusal::Missing => "missing",
            Refusal::Io(_) => "io",
        }
    }

    /// Whether the path itself was refused (an escape, a link, a special file, a size),
    /// as opposed to missing or an I/O failure.
    pub fn is_unsafe_path(&self) -> bool {
        matches!(
            self,
            Refusal::OutsideRoot | Refusal::Link | Refusal::NotRegular(_) | Refusal::TooLarge(_)
        )
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::OutsideRoot => f.write_str("not a relative path inside the root"),
            Refusal::Link => f.write_str("a symbolic link is on the path (links are not followed)"),
            Refusal::NotRegular(kind) => write!(f, "not a regular file (a {kind})"),
            Refusal::TooLarge(cap) => write!(f, "larger than {cap} bytes"),
            Refusal::Missing => f.write_str("no such file"),
            Refusal::Io(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for Refusal {}

impl From<io::Error> for Refusal {
    fn from(error: io::Error) -> Refusal {
        match error.raw_os_error() {
            Some(sys::ELOOP) => Refusal::Link,
            Some(sys::ENOENT | sys::ENOTDIR) => Refusal::Missing,
            Some(sys::EXDEV) => Refusal::OutsideRoot,
            Some(sys::EISDIR) => Refusal::NotRegular("directory"),
            // Opening a FIFO for writing without a reader, or a device without its driver.
            Some(sys::ENXIO) => Refusal::NotRegular("fifo"),
            _ => Refusal::Io(error),
        }
    }
}

/// `openat2` availability: unknown, present, absent (an old kernel or a seccomp filter).
static OPENAT2: AtomicU8 = AtomicU8::new(0);
const PRESENT: u8 = 1;
const ABSENT: u8 = 2;

/// An open directory under which paths are resolved without following links.
#[derive(Debug)]
pub struct Beneath {
    dir: OwnedFd,
    path: PathBuf,
}

impl Beneath {
    /// Opens `root` (a directory; links in `root` itself are followed: the caller trusts
    /// it).
    pub fn open(root: &Path) -> io::Result<Beneath> {
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(sys::O_DIRECTORY)
            .open(root)?;
        Ok(Beneath {
            dir: dir.into(),
            path: root.to_path_buf(),
        })
    }

    /// The root's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the regular file at `relative`, at most `cap` bytes (a larger file is
    /// [`Refusal::TooLarge`]).
    pub fn read(&self, relative: &Path, cap: u64) -> Result<Vec<u8>, Refusal> {
        let file = self.open_file(relative)?;
        let size = file.metadata().map_err(Refusal::Io)?.len();
        if size > cap {
            return Err(Refusal::TooLarge(cap));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(Refusal::Io)?;
        if bytes.len() as u64 > cap {
            return Err(Refusal::TooLarge(cap));
        }
        Ok(bytes)
    }

    /// Opens the regular file at `relative` for reading.
    pub fn open_file(&self, relative: &Path) -> Result<File, Refusal> {
        let names = components(relative)?;
        let flags = sys::O_RDONLY | sys::O_NONBLOCK | sys::O_NOCTTY | sys::O_NOFOLLOW;
        let fd = match self.openat2(&names, flags)? {
            Some(fd) => fd,
            None => {
                let (last, parents) = names.split_last().ok_or(Refusal::OutsideRoot)?;
                let parent = self.walk(parents, None)?;
                opened(&parent, last, sys::openat(parent.as_fd(), last, flags, 0))?
            }
        };
        regular(File::from(fd))
    }

    /// What is at `relative` (a link is [`Refusal::Link`], never followed).
    pub fn metadata(&self, relative: &Path) -> Result<Metadata, Refusal> {
        let names = components(relative)?;
        let (last, parents) = names.split_last().ok_or(Refusal::OutsideRoot)?;
        let parent = self.walk(parents, None)?;
        let fd = sys::openat(parent.as_fd(), last, sys::LOOK, 0)?;
        let meta = File::from(fd).metadata().map_err(Refusal::Io)?;
        if meta.file_type().is_symlink() {
            return Err(Refusal::Link);
        }
        Ok(meta)
    }

    /// Writes `bytes` to `relative` with `mode` (replacing a regular file, whose mode
    /// becomes `mode`; missing parent directories are created with mode 0700).
    pub fn write(&self, relative: &Path, bytes: &[u8], mode: u32) -> Result<(), Refusal> {
        self.write_file(relative, bytes, mode, true)
    }

    /// Appends `bytes` to the existing regular file at `relative` (nothing is created).
    pub fn append_existing(&self, relative: &Path, bytes: &[u8]) -> Result<(), Refusal> {
        let names = components(relative)?;
        let (last, parents) = names.split_last().ok_or(Refusal::OutsideRoot)?;
        let parent = self.walk(parents, None)?;
        let flags =
            sys::O_WRONLY | sys::O_APPEND | sys::O_NONBLOCK | sys::O_NOCTTY | sys::O_NOFOLLOW;
        let fd = opened(&parent, last, sys::openat(parent.as_fd(), last, flags, 0))?;
        let mut file = regular(File::from(fd))?;
        file.write_all(bytes).map_err(Refusal::Io)
    }

    /// Writes `bytes` to `relative` like [`Beneath::write`], but an existing file keeps its
    /// mode (`mode`, less the umask, is for a new one).
    pub fn edit(&self, relative: &Path, bytes: &[u8], mode: u32) -> Result<(), Refusal> {
        self.write_file(relative, bytes, mode, false)
    }

    fn write_file(
        &self,
        relative: &Path,
        bytes: &[u8],
        mode: u32,
        set_mode: bool,
    ) -> Result<(), Refusal> {
        let names = components(relative)?;
        let (last, parents) = names.split_last().ok_or(Refusal::OutsideRoot)?;
        let parent = self.walk(parents, Some(0o700))?;
        let flags =
            sys::O_WRONLY | sys::O_CREAT | sys::O_NONBLOCK | sys::O_NOCTTY | sys::O_NOFOLLOW;
        let fd = opened(
            &parent,
            last,
            sys::openat(parent.as_fd(), last, flags, mode),
        )?;
        let mut file = regular(File::from(fd))?;
        file.set_len(0).map_err(Refusal::Io)?;
        if set_mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(Refusal::Io)?;
        }
        file.write_all(bytes).map_err(Refusal::Io)
    }

    /// Opens the regular file `name` of the root itself (one name, no `/`) for appending,
    /// creating it with `mode`, truncated when `truncate`.
    pub fn append(&self, name: &Path, mode: u32, truncate: bool) -> Result<File, Refusal> {
        let name = single(name)?;
        let mut flags = sys::O_WRONLY
            | sys::O_APPEND
            | sys::O_CREAT
            | sys::O_NONBLOCK
            | sys::O_NOCTTY
            | sys::O_NOFOLLOW;
        if truncate {
            flags |= sys::O_TRUNC;
        }
        let fd = opened(
            &self.dir,
            &name,
            sys::openat(self.dir.as_fd(), &name, flags, mode),
        )?;
        regular(File::from(fd))
    }

    /// Renames `from` to `to`, two names of the root itself (a link is renamed, never
    /// followed; `to` is replaced).
    pub fn rename(&self, from: &Path, to: &Path) -> Result<(), Refusal> {
        let (from, to) = (single(from)?, single(to)?);
        sys::renameat(self.dir.as_fd(), &from, &to).map_err(Refusal::from)
    }

    /// Creates `relative` and its missing parents as directories with `mode` (existing
    /// ones are kept as they are) and returns it as a root of its own.
    pub fn create_dir_all(&self, relative: &Path, mode: u32) -> Result<Beneath, Refusal> {
        let names = components(relative)?;
        let dir = match self.create_last(&names, mode)? {
            Some(dir) => dir,
            None => self.walk(&names, Some(mode))?,
        };
        Ok(Beneath {
            dir,
            path: self.path.join(relative),
        })
    }

    /// Opens the directory `relative` as a root of its own.
    pub fn open_dir(&self, relative: &Path) -> Result<Beneath, Refusal> {
        let names = components(relative)?;
        let dir = self.walk(&names, None)?;
        Ok(Beneath {
            dir,
            path: self.path.join(relative),
        })
    }

    /// The entries of the root directory itself, read through its open descriptor (the
    /// path is never resolved again; `DirEntry::file_type` and `metadata` do not follow
    /// links).
    pub fn read_dir(&self) -> io::Result<std::fs::ReadDir> {
        use std::os::fd::AsRawFd;
        std::fs::read_dir(format!("/proc/self/fd/{}", self.dir.as_raw_fd()))
    }

    /// Removes the file (or link: never its target) at `relative`; `Ok(false)` when
    /// nothing was there. A directory is refused.
    pub fn remove_file(&self, relative: &Path) -> Result<bool, Refusal> {
        let names = components(relative)?;
        let (last, parents) = names.split_last().ok_or(Refusal::OutsideRoot)?;
        let parent = match self.walk(parents, None) {
            Ok(parent) => parent,
            Err(Refusal::Missing) => return Ok(false),
            Err(refusal) => return Err(refusal),
        };
        match sys::unlinkat(parent.as_fd(), last) {
            Ok(()) => Ok(true),
            Err(error) if error.raw_os_error() == Some(sys::ENOENT) => Ok(false),
            // Linux answers EISDIR, POSIX EPERM for a directory.
            Err(error) if matches!(error.raw_os_error(), Some(sys::EISDIR | sys::EPERM)) => {
                Err(Refusal::NotRegular("directory"))
            }
            Err(error) => Err(Refusal::Io(error)),
        }
    }

    /// The whole path in one `openat2` call: `Ok(None)` when the kernel lacks it.
    fn openat2(&self, names: &[CString], flags: i32) -> Result<Option<OwnedFd>, Refusal> {
        if OPENAT2.load(Ordering::Relaxed) == ABSENT {
            return Ok(None);
        }
        let mut joined = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                joined.push(b'/');
            }
            joined.extend_from_slice(name.as_bytes());
        }
        let path = CString::new(joined).map_err(|_| Refusal::OutsideRoot)?;
        match sys::openat2_beneath(self.dir.as_fd(), &path, flags, 0) {
            Ok(fd) => {
                OPENAT2.store(PRESENT, Ordering::Relaxed);
                Ok(Some(fd))
            }
            Err(error)
                if OPENAT2.load(Ordering::Relaxed) != PRESENT
                    && matches!(error.raw_os_error(), Some(sys::ENOSYS | sys::EPERM)) =>
            {
                OPENAT2.store(ABSENT, Ordering::Relaxed);
                Ok(None)
            }
            Err(error) => Err(Refusal::from(error)),
        }
    }

    /// The common case of [`Beneath::create_dir_all`] in three calls: the parents exist
    /// (one `openat2`, no link on the way), the last name is made and opened. `None` when
    /// `openat2` is unavailable or anything differs (a missing parent, a link, something
    /// else in the way): the component walk then creates what is missing or gives the
    /// refusal, exactly as without this path.
    fn create_last(&self, names: &[CString], mode: u32) -> Result<Option<OwnedFd>, Refusal> {
        let Some((last, parents)) = names.split_last() else {
            return Ok(None);
        };
        if parents.is_empty() {
            return Ok(None);
        }
        let Ok(Some(parent)) = self.openat2(parents, sys::DIR_WALK) else {
            return Ok(None);
        };
        if let Err(error) = sys::mkdirat(parent.as_fd(), last, mode)
            && error.raw_os_error() != Some(sys::EEXIST)
        {
            return Err(Refusal::from(error));
        }
        Ok(sys::openat(parent.as_fd(), last, sys::DIR_WALK | sys::O_NOFOLLOW, 0).ok())
    }

    /// Walks `names` as directories from the root, one `O_NOFOLLOW` component at a time,
    /// creating missing ones with `create`'s mode.
    fn walk(&self, names: &[CString], create: Option<u32>) -> Result<OwnedFd, Refusal> {
        let mut current = self.dir.try_clone().map_err(Refusal::Io)?;
        for name in names {
            if let Some(mode) = create
                && let Err(error) = sys::mkdirat(current.as_fd(), name, mode)
                && error.raw_os_error() != Some(sys::EEXIST)
            {
                return Err(Refusal::from(error));
            }
            let flags = sys::DIR_WALK | sys::O_NOFOLLOW;
            current = match sys::openat(current.as_fd(), name, flags, 0) {
                Ok(fd) => fd,
                // A link (or something else) where a directory should be: say which.
                Err(error) if error.raw_os_error() == Some(sys::ENOTDIR) => {
                    return Err(match kind_of(&current, name) {
                        Some(kind) if kind.is_symlink() => Refusal::Link,
                        // Creating: something is in the way; reading: nothing is there.
                        Some(kind) if create.is_some() => Refusal::NotRegular(kind_name(kind)),
                        _ => Refusal::Missing,
                    });
                }
                Err(error) => return Err(Refusal::from(error)),
            };
        }
        Ok(current)
    }
}

/// The result of an `openat` of `name` in `parent`: a refusal names what was found.
fn opened(
    parent: &OwnedFd,
    name: &CString,
    result: io::Result<OwnedFd>,
) -> Result<OwnedFd, Refusal> {
    result.map_err(|error| match error.raw_os_error() {
        Some(sys::ENXIO) => match kind_of(parent, name) {
            Some(kind) => Refusal::NotRegular(kind_name(kind)),
            None => Refusal::Missing,
        },
        _ => Refusal::from(error),
    })
}

/// What `name` in `dir` is, without following or opening it for I/O.
fn kind_of(dir: &OwnedFd, name: &CString) -> Option<std::fs::FileType> {
    let fd = sys::openat(dir.as_fd(), name, sys::LOOK, 0).ok()?;
    File::from(fd).metadata().ok().map(|meta| meta.file_type())
}

fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "fifo"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_char_device() {
        "char_device"
    } else if kind.is_block_device() {
        "block_device"
    } else if kind.is_symlink() {
        "symlink"
    } else {
        "file"
    }
}

/// `file` when it is a regular file.
fn regular(file: File) -> Result<File, Refusal> {
    let kind = file.metadata().map_err(Refusal::Io)?.file_type();
    if kind.is_file() {
        Ok(file)
    } else {
        Err(Refusal::NotRegular(kind_name(kind)))
    }
}

/// The one name of a path that must be a single component.
fn single(name: &Path) -> Result<CString, Refusal> {
    let mut names = components(name)?;
    match (names.pop(), names.is_empty()) {
        (Some(name), true) => Ok(name),
        _ => Err(Refusal::OutsideRoot),
    }
}

/// The names of a relative path (`.` skipped); empty, absolute, `..` or NUL is refused.
fn components(relative: &Path) -> Result<Vec<CString>, Refusal> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => {
                names.push(CString::new(name.as_bytes()).map_err(|_| Refusal::OutsideRoot)?);
            }
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Refusal::OutsideRoot);
            }
        }
    }
    if names.is_empty() {
        return Err(Refusal::OutsideRoot);
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
