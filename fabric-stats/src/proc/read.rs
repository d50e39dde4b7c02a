//! File reads of the process-tree reader: `stat` (cached or not), whole proc files by
//! positioned reads, and the reusable path and buffer scratch of one reading.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::ProcReader;
use super::cache::{CachedFd, CachedProc, FdCache};
use crate::stat::{ProcStat, parse_stat};

impl ProcReader {
    /// Reads `<pid>/stat` through the descriptor cache (opening and caching it when absent
    /// or stale).
    pub(super) fn read_stat(
        &self,
        pid: u32,
        scratch: &mut Scratch,
    ) -> Result<ProcStat, StatReadError> {
        let generation = scratch.cache.generation;
        if let Some(entry) = scratch.cache.procs.get_mut(&pid) {
            let cached = read_full(&entry.stat.0, &mut scratch.buf)
                .ok()
                .and_then(|len| parse_stat(&scratch.buf[..len]));
            if let Some(stat) = cached {
                entry.used = generation;
                return Ok(stat);
            }
            // That process is gone (or its cached file no longer reads whole); the pid may
            // belong to a new one: open afresh, and judge by the fresh read.
            scratch.cache.procs.remove(&pid);
        }
        let file = match fs::File::open(scratch.path(&self.root, format_args!("/{pid}/stat"))) {
            Ok(file) => file,
            Err(error) if is_gone(&error) => return Err(StatReadError::Gone),
            Err(_) => return Err(StatReadError::Unreadable(scratch.owned_path())),
        };
        let stat = match read_full(&file, &mut scratch.buf) {
            Ok(len) => parse_stat(&scratch.buf[..len])
                .ok_or_else(|| StatReadError::Unreadable(scratch.owned_path()))?,
            Err(error) if is_gone(&error) => return Err(StatReadError::Gone),
            Err(_) => return Err(StatReadError::Unreadable(scratch.owned_path())),
        };
        scratch.cache.procs.insert(
            pid,
            CachedProc {
                stat: CachedFd::new(file),
                children: HashMap::new(),
                used: generation,
            },
        );
        Ok(stat)
    }

    /// Reads `<pid>/stat` without caching (the parent scan reads every process).
    pub(super) fn read_stat_uncached(
        &self,
        pid: u32,
        scratch: &mut Scratch,
    ) -> Result<ProcStat, StatReadError> {
        let read = fs::File::open(scratch.path(&self.root, format_args!("/{pid}/stat")))
            .and_then(|file| read_full(&file, &mut scratch.buf));
        match read {
            Ok(len) => parse_stat(&scratch.buf[..len])
                .ok_or_else(|| StatReadError::Unreadable(scratch.owned_path())),
            Err(error) if is_gone(&error) => Err(StatReadError::Gone),
            Err(_) => Err(StatReadError::Unreadable(scratch.owned_path())),
        }
    }
}

/// Reusable buffers of one reading: file contents, the path being read, and the
/// reader's descriptor cache (taken out of its lock for the reading).
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) buf: Vec<u8>,
    pub(super) path: std::ffi::OsString,
    pub(super) suffix: String,
    pub(super) cache: FdCache,
}

impl Scratch {
    /// `root` followed by the formatted suffix, without allocating after warm-up.
    pub(super) fn path(&mut self, root: &Path, suffix: std::fmt::Arguments<'_>) -> &Path {
        build_path(&mut self.path, &mut self.suffix, root, suffix)
    }

    /// The last path built, owned (for error reports).
    pub(super) fn owned_path(&self) -> PathBuf {
        PathBuf::from(&self.path)
    }
}

pub(super) fn build_path<'a>(
    path: &'a mut std::ffi::OsString,
    suffix: &mut String,
    root: &Path,
    tail: std::fmt::Arguments<'_>,
) -> &'a Path {
    use std::fmt::Write;
    suffix.clear();
    let _ = suffix.write_fmt(tail);
    path.clear();
    path.push(root.as_os_str());
    path.push(&*suffix);
    Path::new(path)
}

pub(super) enum StatReadError {
    Gone,
    Unreadable(PathBuf),
}

pub(super) fn is_gone(error: &io::Error) -> bool {
    // ESRCH: the process exited while its file was open.
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(libc::ESRCH)
}

/// Reads a whole proc file from offset 0 with positioned reads (one `pread` for a small
/// file; a re-read regenerates the content). Returns the length read into `buf`.
pub(crate) fn read_full(file: &fs::File, buf: &mut Vec<u8>) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    if buf.len() < 4096 {
        buf.resize(4096, 0);
    }
    let mut filled = 0;
    loop {
        let n = loop {
            match file.read_at(&mut buf[filled..], filled as u64) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        filled += n;
        // A proc (seq_file) read fills the buffer unless the content ended.
        if n == 0 || filled < buf.len() {
            return Ok(filled);
        }
        let grown = buf.len() * 2;
        buf.resize(grown, 0);
    }
}
