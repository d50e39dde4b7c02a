//! Walking the paths: the files that may be ours (`.json`, `.jsonl`) and the invocation
//! directories, with the stamps that tell whether they changed. Links are never followed.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::wire::Problem;

/// Directories never entered.
const SKIPPED: &[&str] = &[".git", "node_modules"];

/// How deep a walk goes below a root.
const MAX_DEPTH: usize = 32;

/// Entries one walk looks at before it stops (and says so in the problems).
const MAX_ENTRIES: usize = 2_000_000;

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

/// Every candidate under `roots`, and what could not be walked.
pub(crate) fn walk(roots: &[PathBuf]) -> (Vec<(PathBuf, Stamp, Found)>, Vec<Problem>) {
    let mut walk = Walk::default();
    for root in roots {
        match std::fs::symlink_metadata(root) {
            Ok(metadata) if metadata.is_dir() => walk.dir(root, 0),
            Ok(metadata) if metadata.is_file() => walk.file(root, &metadata),
            Ok(_) => {}
            Err(error) => walk.problem(root, &error.to_string()),
        }
    }
    (walk.found, walk.problems)
}

#[derive(Default)]
struct Walk {
    found: Vec<(PathBuf, Stamp, Found)>,
    problems: Vec<Problem>,
    entries: usize,
}

impl Walk {
    fn problem(&mut self, path: &Path, message: &str) {
        self.problems.push(Problem {
            path: path.display().to_string(),
            message: message.to_owned(),
        });
    }

    fn file(&mut self, path: &Path, metadata: &std::fs::Metadata) {
        let ours = path
            .extension()
            .is_some_and(|extension| extension == "json" || extension == "jsonl");
        if ours && path.file_name().is_some_and(|n| n != INVOCATION_RECORD) {
            self.found
                .push((path.to_path_buf(), Stamp::of(metadata), Found::File));
        }
    }

    fn dir(&mut self, dir: &Path, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => return self.problem(dir, &format!("cannot list: {error}")),
        };
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            self.entries += 1;
            if self.entries == MAX_ENTRIES {
                self.problem(dir, "over 2,000,000 entries: the walk stopped here");
            }
            if self.entries >= MAX_ENTRIES {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if !SKIPPED.iter().any(|skip| entry.file_name() == *skip) {
                    subdirs.push(path);
                }
            } else if kind.is_file() {
                let Ok(metadata) = entry.metadata() else {
                    continue;
                };
                if entry.file_name() == INVOCATION_RECORD {
                    self.found
                        .push((dir.to_path_buf(), Stamp::of(&metadata), Found::Invocation));
                } else {
                    self.file(&path, &metadata);
                }
            }
        }
        subdirs.sort();
        for subdir in subdirs {
            self.dir(&subdir, depth + 1);
        }
    }
}

/// The record of an invocation in its `.fabric/<runtime>/<invocation>/` directory.
pub(crate) const INVOCATION_RECORD: &str = "adapter-invocation.json";
