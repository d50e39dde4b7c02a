//! Walking the paths: the files that may be ours (`.json`, `.jsonl`) and the invocation
//! directories, with the stamps that tell whether they changed. Links are never followed.
//!
//! A directory whose modification time did not change since the last walk is not listed
//! again: its subdirectories and candidate files are taken from the [`DirCache`] and only
//! stamped (a file rewritten or appended to in place changes its own stamp, not its
//! directory's).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::wire::Problem;

/// Directories never entered.
const SKIPPED: &[&str] = &[".git", "node_modules"];

/// Files read with their invocation, never on their own.
const PARTS: &[&str] = &["system-stats.jsonl", "model-calls.jsonl"];

/// How deep a walk goes below a root.
const MAX_DEPTH: usize = 32;

/// Entries one walk looks at before it stops (and says so in the problems).
const MAX_ENTRIES: usize = 2_000_000;

/// The record of an invocation in its `.fabric/<runtime>/<invocation>/` directory.
pub(crate) const INVOCATION_RECORD: &str = "adapter-invocation.json";

/// The size and modification time of a file: a change of either is a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stamp {
    pub(crate) len: u64,
    pub(crate) mtime_ns: u128,
}

impl Stamp {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Stamp {
        Stamp {
            len: metadata.len(),
            mtime_ns: metadata
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
        }
    }
}

/// What a walk found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// A `.json` or `.jsonl` file.
    File,
    /// A directory holding `adapter-invocation.json` (stamped by that file).
    Invocation,
}

/// What one directory held when it was last listed.
#[derive(Debug, Clone, Default)]
struct Listed {
    stamp: Stamp,
    subdirs: Vec<PathBuf>,
    /// Candidate files (and the invocation record, when there is one).
    files: Vec<PathBuf>,
}

/// The directories listed by the last walk, by path.
#[derive(Debug, Default)]
pub(crate) struct DirCache {
    dirs: HashMap<PathBuf, Listed>,
}

/// Every candidate under `roots`, and what could not be walked.
pub(crate) fn walk(
    roots: &[PathBuf],
    cache: &mut DirCache,
) -> (Vec<(PathBuf, Stamp, Found)>, Vec<Problem>) {
    let mut walk = Walk {
        old: std::mem::take(&mut cache.dirs),
        ..Walk::default()
    };
    for root in roots {
        match std::fs::symlink_metadata(root) {
            Ok(metadata) if metadata.is_dir() => walk.dir(root, &metadata, 0),
            Ok(metadata) if metadata.is_file() => walk.file(root, &metadata),
            Ok(_) => {}
            Err(error) => walk.problem(root, &error.to_string()),
        }
    }
    cache.dirs = walk.new;
    (walk.found, walk.problems)
}

#[derive(Default)]
struct Walk {
    found: Vec<(PathBuf, Stamp, Found)>,
    problems: Vec<Problem>,
    entries: usize,
    old: HashMap<PathBuf, Listed>,
    new: HashMap<PathBuf, Listed>,
}

/// Whether a file name may be ours.
fn candidate(name: &std::ffi::OsStr) -> bool {
    let path = Path::new(name);
    path.extension()
        .is_some_and(|extension| extension == "json" || extension == "jsonl")
        && !PARTS.iter().any(|part| name == *part)
}

impl Walk {
    fn problem(&mut self, path: &Path, message: &str) {
        self.problems.push(Problem {
            path: path.display().to_string(),
            message: message.to_owned(),
        });
    }

    fn file(&mut self, path: &Path, metadata: &std::fs::Metadata) {
        let Some(name) = path.file_name() else {
            return;
        };
        if name == INVOCATION_RECORD {
            if let Some(dir) = path.parent() {
                self.found
                    .push((dir.to_path_buf(), Stamp::of(metadata), Found::Invocation));
            }
        } else if candidate(name) {
            self.found
                .push((path.to_path_buf(), Stamp::of(metadata), Found::File));
        }
    }

    /// What `dir` holds: from the cache when its stamp is the same, else listed.
    fn listing(&mut self, dir: &Path, stamp: Stamp) -> Option<Listed> {
        if let Some(listed) = self.old.remove(dir)
            && listed.stamp == stamp
        {
            self.entries += listed.subdirs.len() + listed.files.len();
            return Some(listed);
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => {
                self.problem(dir, &format!("cannot list: {error}"));
                return None;
            }
        };
        let mut listed = Listed {
            stamp,
            ..Listed::default()
        };
        for entry in entries.flatten() {
            self.entries += 1;
            if self.entries >= MAX_ENTRIES {
                break;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() && !SKIPPED.iter().any(|skip| name == *skip) {
                listed.subdirs.push(entry.path());
            } else if kind.is_file() && (name == INVOCATION_RECORD || candidate(&name)) {
                listed.files.push(entry.path());
            }
        }
        listed.subdirs.sort();
        listed.files.sort();
        Some(listed)
    }

    fn dir(&mut self, dir: &Path, metadata: &std::fs::Metadata, depth: usize) {
        if depth > MAX_DEPTH || self.entries >= MAX_ENTRIES {
            return;
        }
        let Some(listed) = self.listing(dir, Stamp::of(metadata)) else {
            return;
        };
        if self.entries >= MAX_ENTRIES {
            self.problem(dir, "over 2,000,000 entries: the walk stopped here");
        }
        for file in &listed.files {
            // Stamped again every walk: appends and in-place rewrites show here.
            if let Ok(metadata) = std::fs::symlink_metadata(file)
                && metadata.is_file()
            {
                self.file(file, &metadata);
            }
        }
        for subdir in &listed.subdirs {
            if let Ok(metadata) = std::fs::symlink_metadata(subdir)
                && metadata.is_dir()
            {
                self.dir(subdir, &metadata, depth + 1);
            }
        }
        self.new.insert(dir.to_path_buf(), listed);
    }
}
