//! The index: every file under the paths that is ours, by kind, with opaque ids. Built once
//! at start, then updated by a rescan every second: a new or changed file is classified
//! again, a batch output that grew is read from where it stopped, a removed file leaves.

mod batch;
pub(crate) mod classify;
pub(crate) mod listing;
mod walk;

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

pub(crate) use batch::{Batch, Item, Status};
pub(crate) use classify::Kind;
use walk::{Found, Stamp};

use crate::wire::Problem;

/// An opaque id: `prefix` and a hash of the path (stable for the same path).
pub(crate) fn id_of(prefix: &str, path: &Path) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    path.hash(&mut hasher);
    format!("{prefix}{:016x}", hasher.finish())
}

/// A batch's rows sorted by one column, and the batch version it was computed at.
pub(crate) type Order = (u64, Arc<Vec<u32>>);

/// One indexed path.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    stamp: Stamp,
    pub(crate) kind: Kind,
    pub(crate) id: String,
}

/// What the rescans keep.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Bumped by every change.
    pub(crate) generation: u64,
    pub(crate) entries: BTreeMap<PathBuf, Entry>,
    /// Ids of entries.
    ids: HashMap<String, PathBuf>,
    /// Files served by id: the ones a listed run or trajectory names, under a root.
    files: HashMap<String, PathBuf>,
    /// What the last walk could not read.
    walk_problems: Vec<Problem>,
}

impl Index {
    /// The path of an entry id.
    pub(crate) fn entry(&self, id: &str) -> Option<(&Path, &Entry)> {
        let path = self.ids.get(id)?;
        self.entries.get(path).map(|entry| (path.as_path(), entry))
    }

    /// The batch of an id.
    pub(crate) fn batch(&self, id: &str) -> Option<(&Path, &Batch)> {
        match self.entry(id)? {
            (
                path,
                Entry {
                    kind: Kind::Batch(batch),
                    ..
                },
            ) => Some((path, batch)),
            _ => None,
        }
    }

    /// The path of a file id.
    pub(crate) fn file(&self, id: &str) -> Option<&Path> {
        self.files.get(id).map(PathBuf::as_path)
    }

    /// The run whose RunResult has `invocation_id`, or the invocation directory of it.
    pub(crate) fn invocation_dir(&self, invocation_id: &str) -> Option<&Path> {
        self.entries
            .iter()
            .find_map(|(path, entry)| match &entry.kind {
                Kind::Invocation(meta) if meta.invocation_id.as_deref() == Some(invocation_id) => {
                    Some(path.as_path())
                }
                _ => None,
            })
    }
}

/// The index and its roots, shared by the server's workers and the rescan thread.
#[derive(Debug)]
pub(crate) struct Shared {
    /// (as given, canonical).
    pub(crate) roots: Vec<(String, PathBuf)>,
    index: RwLock<Index>,
    /// Sorted row orders of batches by (batch id, column), with the batch version they were
    /// computed at: paging through a sorted table sorts once.
    pub(crate) orders: Mutex<HashMap<(String, String), Order>>,
    /// The directories the last walk listed.
    dirs: Mutex<walk::DirCache>,
    closed: Mutex<bool>,
    wakeup: Condvar,
}

/// What a rescan does to one path (decided under the read lock, done without a lock).
enum Work {
    Classify(PathBuf, Stamp, Found),
    Append(PathBuf, Stamp, u64),
}

impl Shared {
    pub(crate) fn new(roots: Vec<(String, PathBuf)>) -> Shared {
        Shared {
            roots,
            index: RwLock::new(Index::default()),
            orders: Mutex::new(HashMap::new()),
            dirs: Mutex::new(walk::DirCache::default()),
            closed: Mutex::new(false),
            wakeup: Condvar::new(),
        }
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives `path` a file id when it is a regular file under a root (links are not
    /// followed out of the roots: the canonical path must stay under one).
    pub(crate) fn register_file(&self, path: &Path) -> Option<String> {
        let canonical = std::fs::canonicalize(path).ok()?;
        if !std::fs::metadata(&canonical).ok()?.is_file() {
            return None;
        }
        if !self
            .roots
            .iter()
            .any(|(_, root)| canonical.starts_with(root))
        {
            return None;
        }
        let id = id_of("f", &canonical);
        let mut index = self.write();
        index.files.entry(id.clone()).or_insert(canonical);
        Some(id)
    }

    /// Walks the roots and applies what changed.
    pub(crate) fn rescan(&self) {
        let roots: Vec<PathBuf> = self.roots.iter().map(|(_, root)| root.clone()).collect();
        let (found, walk_problems) = {
            let mut cache = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
            walk::walk(&roots, &mut cache)
        };
        let mut work = Vec::new();
        let mut removed = Vec::new();
        {
            let index = self.read();
            let seen: std::collections::HashSet<&PathBuf> =
                found.iter().map(|(path, _, _)| path).collect();
            removed.extend(
                index
                    .entries
                    .keys()
                    .filter(|path| !seen.contains(path))
                    .cloned(),
            );
            for (path, stamp, what) in &found {
                match index.entries.get(path) {
                    Some(entry) if entry.stamp == *stamp => {}
                    Some(Entry {
                        kind: Kind::Batch(batch),
                        ..
                    }) if stamp.len >= batch.offset => {
                        work.push(Work::Append(path.clone(), *stamp, batch.offset));
                    }
                    _ => work.push(Work::Classify(path.clone(), *stamp, *what)),
                }
            }
        }
        let done: Vec<(PathBuf, Stamp, Change)> = work
            .into_iter()
            .map(|work| match work {
                Work::Classify(path, stamp, Found::File) => {
                    let kind = classify::file(&path);
                    (path, stamp, Change::Kind(kind))
                }
                Work::Classify(path, stamp, Found::Invocation) => {
                    let kind = classify::invocation(&path);
                    (path, stamp, Change::Kind(kind))
                }
                Work::Append(path, stamp, offset) => {
                    let mut more = Batch::starting_at(offset);
                    let change = match more.read_more(&path) {
                        Ok(_) => Change::More(Box::new(more)),
                        Err(error) => Change::Kind(Kind::Problem(format!("cannot read: {error}"))),
                    };
                    (path, stamp, change)
                }
            })
            .collect();
        let mut index = self.write();
        let changed = !done.is_empty() || !removed.is_empty();
        for path in removed {
            if let Some(entry) = index.entries.remove(&path) {
                index.ids.remove(&entry.id);
            }
        }
        for (path, stamp, change) in done {
            let kind = match change {
                Change::Kind(kind) => kind,
                Change::More(more) => {
                    if let Some(Entry {
                        kind: Kind::Batch(batch),
                        stamp: known,
                        ..
                    }) = index.entries.get_mut(&path)
                        && batch.offset == more.start
                    {
                        batch.absorb(*more);
                        *known = stamp;
                    }
                    continue; // otherwise it changed meanwhile: the next rescan reads it
                }
            };
            let id = id_of(prefix(&kind), &path);
            index.ids.insert(id.clone(), path.clone());
            index.entries.insert(path, Entry { stamp, kind, id });
        }
        if changed || index.walk_problems != walk_problems {
            index.generation += 1;
        }
        index.walk_problems = walk_problems;
    }

    /// Rescans every `every` until [`Shared::close`].
    pub(crate) fn rescan_until_closed(&self, every: Duration) {
        loop {
            let closed = self.closed.lock().unwrap_or_else(PoisonError::into_inner);
            let (closed, _) = self
                .wakeup
                .wait_timeout_while(closed, every, |closed| !*closed)
                .unwrap_or_else(PoisonError::into_inner);
            if *closed {
                return;
            }
            drop(closed);
            self.rescan();
        }
    }

    pub(crate) fn close(&self) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.wakeup.notify_all();
    }
}

/// What a rescan found for one path.
enum Change {
    Kind(Kind),
    /// Lines appended to a batch.
    More(Box<Batch>),
}

/// The id prefix of a kind.
fn prefix(kind: &Kind) -> &'static str {
    match kind {
        Kind::Batch(_) => "b",
        Kind::Result(_) => "r",
        Kind::Invocation(_) => "i",
        Kind::Atif | Kind::Atof => "t",
        Kind::Gym { .. } => "g",
        Kind::Summary(_) | Kind::Other | Kind::Problem(_) => "x",
    }
}

impl Shared {
    /// The path a file id serves: a file a run named (registered), or an indexed document.
    pub(crate) fn served_file(&self, id: &str) -> Option<PathBuf> {
        let index = self.read();
        index
            .file(id)
            .map(Path::to_path_buf)
            .or_else(|| listing::served_entry(&index, id))
    }
}
