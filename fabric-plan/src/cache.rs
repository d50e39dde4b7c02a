//! What discovery keeps between plans: each descriptor file parsed once per content, each
//! directory search once per state of its directories. Both are validated by metadata on
//! every use and both are bounded.
//!
//! A file or directory is identified by its [`Stamp`]: device, inode, size, and the
//! modification and status-change times in nanoseconds. Any write changes the ctime; an
//! edit that keeps the size still moves the times; a replacement (editor's rename, `git
//! checkout`) changes the inode. Timestamps are only as fine as the file system's clock,
//! though (a kernel tick; whole seconds on some file systems), so two writes in one tick can
//! leave the same stamp. As git does for its index ("racy git"), an entry is trusted on its
//! stamp alone only when its newest timestamp is at least [`RACY_NS`] older than the moment
//! its content was last read; until then every use re-reads the content (a file's bytes, a
//! directory search) and compares it.

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::fs::Metadata;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::PlanError;

/// How much older than the last read a timestamp must be for its stamp to be trusted alone:
/// coarser than any file-system clock we meet (2 s covers FAT and second-granularity NFS).
pub(crate) const RACY_NS: i128 = 2_000_000_000;

/// Most descriptor files kept parsed (each with its bytes, a few KiB).
pub(crate) const MAX_FILES: usize = 1024;

/// Most directory searches kept (per root and descriptor kind).
pub(crate) const MAX_SEARCHES: usize = 256;

/// The identity of one state of a file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    pub(crate) fn of(meta: &Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The stamp of `path` (symlinks followed), naming the file in the error.
    pub(crate) fn read(path: &Path) -> Result<Stamp, PlanError> {
        std::fs::metadata(path)
            .map(|meta| Stamp::of(&meta))
            .map_err(|source| PlanError::DescriptorRead {
                file: path.to_path_buf(),
                source,
            })
    }

    /// Whether a content read at `read_at_ns` may have missed a later write with the same
    /// stamp (see the module docs).
    pub(crate) fn racy(&self, read_at_ns: i128) -> bool {
        self.mtime_ns.max(self.ctime_ns) + RACY_NS > read_at_ns
    }
}

/// Nanoseconds since the Unix epoch on the clock file systems stamp with.
pub(crate) fn now_ns() -> i128 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(elapsed) => elapsed.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

/// A map that keeps at most `cap` entries, dropping the oldest insertion first.
#[derive(Debug)]
pub(crate) struct Bounded<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
    cap: usize,
}

impl<K: Eq + Hash + Clone, V> Bounded<K, V> {
    pub(crate) fn new(cap: usize) -> Self {
        Bounded {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key)
    }

    pub(crate) fn insert(&mut self, key: K, value: V) {
        if self.map.insert(key.clone(), value).is_none() {
            self.order.push_back(key);
        }
        while self.map.len() > self.cap {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.map.remove(&oldest);
        }
    }

    pub(crate) fn remove(&mut self, key: &K) {
        if self.map.remove(key).is_some() {
            self.order.retain(|known| known != key);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

/// One parsed descriptor file: its stamp, its bytes, when they were read, the parse.
#[derive(Debug)]
struct Parsed<T> {
    stamp: Stamp,
    bytes: Arc<[u8]>,
    read_at_ns: i128,
    loaded: Arc<T>,
}

/// Descriptor files parsed once per content (see the module docs). Keyed by the path's
/// bytes (hashing a `Path` walks its components).
#[derive(Debug)]
pub(crate) struct FileCache<T> {
    entries: Mutex<Bounded<OsString, Parsed<T>>>,
}

impl<T> FileCache<T> {
    pub(crate) fn new() -> Self {
        FileCache {
            entries: Mutex::new(Bounded::new(MAX_FILES)),
        }
    }

    /// The parse of `file`'s current content: the kept one when the stamp matches (and is
    /// not racy, or the bytes are unchanged), else `parse` of the bytes just read.
    pub(crate) fn load(
        &self,
        file: &Path,
        parse: impl FnOnce(&[u8], &Path) -> Result<T, PlanError>,
    ) -> Result<Arc<T>, PlanError> {
        // Stamp first, then read: a write between the two leaves a stamp older than the
        // content, which the next use sees as a change.
        let stamp = Stamp::read(file)?;
        let kept = self.entries.lock().ok().and_then(|entries| {
            entries.get(file.as_os_str()).and_then(|entry| {
                (entry.stamp == stamp).then(|| {
                    (
                        Arc::clone(&entry.bytes),
                        entry.read_at_ns,
                        Arc::clone(&entry.loaded),
                    )
                })
            })
        });
        if let Some((_, read_at_ns, loaded)) = &kept
            && !stamp.racy(*read_at_ns)
        {
            return Ok(Arc::clone(loaded));
        }
        let read_at_ns = now_ns();
        let bytes: Arc<[u8]> = std::fs::read(file)
            .map_err(|source| PlanError::DescriptorRead {
                file: file.to_path_buf(),
                source,
            })?
            .into();
        let loaded = match kept {
            Some((kept_bytes, _, loaded)) if kept_bytes == bytes => loaded,
            _ => match parse(&bytes, file) {
                Ok(parsed) => Arc::new(parsed),
                Err(error) => {
                    if let Ok(mut entries) = self.entries.lock() {
                        entries.remove(&file.as_os_str().to_owned());
                    }
                    return Err(error);
                }
            },
        };
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(
                file.as_os_str().to_owned(),
                Parsed {
                    stamp,
                    bytes,
                    read_at_ns,
                    loaded: Arc::clone(&loaded),
                },
            );
        }
        Ok(loaded)
    }
}

/// One directory search: every directory it read with its stamp, and what it found.
#[derive(Debug)]
struct Search {
    dirs: Vec<(PathBuf, Stamp)>,
    read_at_ns: i128,
    files: Arc<Vec<PathBuf>>,
}

/// Directory searches kept per (root, key) and reused while no directory they read changed.
#[derive(Debug)]
pub(crate) struct SearchCache<K> {
    entries: Mutex<Bounded<(OsString, K), Search>>,
}

/// The directories a search read, with their stamps taken before reading them.
pub(crate) type SearchedDirs = Vec<(PathBuf, Stamp)>;

impl<K: Eq + Hash + Clone> SearchCache<K> {
    pub(crate) fn new() -> Self {
        SearchCache {
            entries: Mutex::new(Bounded::new(MAX_SEARCHES)),
        }
    }

    /// The files under `root` found by `search`: the kept result while every directory it
    /// read has the same stamp (and none is racy), else a new search. `search` records each
    /// directory it reads (stamped before the read) in the vector it is given.
    pub(crate) fn files(
        &self,
        root: &Path,
        key: K,
        search: impl FnOnce(&mut SearchedDirs) -> Result<Vec<PathBuf>, PlanError>,
    ) -> Result<Arc<Vec<PathBuf>>, PlanError> {
        let slot = (root.as_os_str().to_owned(), key);
        let kept = self.entries.lock().ok().and_then(|entries| {
            entries.get(&slot).map(|entry| {
                (
                    entry.dirs.clone(),
                    entry.read_at_ns,
                    Arc::clone(&entry.files),
                )
            })
        });
        if let Some((dirs, read_at_ns, files)) = kept
            && dirs.iter().all(|(dir, stamp)| {
                !stamp.racy(read_at_ns)
                    && std::fs::metadata(dir).is_ok_and(|meta| Stamp::of(&meta) == *stamp)
            })
        {
            return Ok(files);
        }
        let read_at_ns = now_ns();
        let mut dirs = Vec::new();
        let files = Arc::new(search(&mut dirs)?);
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(
                slot,
                Search {
                    dirs,
                    read_at_ns,
                    files: Arc::clone(&files),
                },
            );
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounded_map_drops_the_oldest_insertion() {
        let mut map = Bounded::new(2);
        map.insert("a", 1);
        map.insert("b", 2);
        map.insert("a", 3); // an update keeps its place
        map.insert("c", 4);
        assert_eq!(map.len(), 2);
        assert_eq!(map.get(&"a"), None);
        assert_eq!(map.get(&"b"), Some(&2));
        assert_eq!(map.get(&"c"), Some(&4));
        map.remove(&"b");
        assert_eq!(map.len(), 1);
    }

    #[test]
    fn a_stamp_is_racy_until_its_times_are_older_than_the_read_by_the_window() {
        let stamp = Stamp {
            dev: 1,
            ino: 2,
            len: 3,
            mtime_ns: 10_000_000_000,
            ctime_ns: 10_500_000_000,
        };
        assert!(stamp.racy(10_500_000_000));
        assert!(stamp.racy(10_500_000_000 + RACY_NS - 1));
        assert!(!stamp.racy(10_500_000_000 + RACY_NS));
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("fabric-plan-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_same_size_rewrite_within_the_same_tick_is_seen() {
        // Parsing counts its calls; the second write keeps the size and happens right away,
        // so the stamp may be equal (coarse clock): the racy rule must re-read the bytes.
        let dir = scratch("racy");
        let file = dir.join("one.json");
        std::fs::write(&file, b"aaaa").unwrap();
        let cache: FileCache<Vec<u8>> = FileCache::new();
        let parse = |bytes: &[u8], _: &Path| Ok(bytes.to_vec());
        assert_eq!(*cache.load(&file, parse).unwrap(), b"aaaa");
        std::fs::write(&file, b"bbbb").unwrap();
        assert_eq!(*cache.load(&file, parse).unwrap(), b"bbbb");
        // Unchanged bytes keep the same parse (no new allocation).
        let first = cache.load(&file, parse).unwrap();
        let again = cache
            .load(&file, |_: &[u8], _: &Path| panic!("parsed again"))
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_old_unchanged_file_is_not_read_again() {
        let dir = scratch("old");
        let file = dir.join("one.json");
        std::fs::write(&file, b"aaaa").unwrap();
        // Backdate both times past the racy window (utimes moves mtime; ctime is "now", so
        // the entry's read time is moved instead).
        let cache: FileCache<Vec<u8>> = FileCache::new();
        cache
            .load(&file, |bytes: &[u8], _: &Path| Ok(bytes.to_vec()))
            .unwrap();
        if let Ok(mut entries) = cache.entries.lock()
            && let Some(entry) = entries.map.get_mut(file.as_os_str())
        {
            entry.read_at_ns += 2 * RACY_NS;
            entry.bytes = Arc::from(&b"something else"[..]);
        }
        // The stamp is trusted: the kept parse comes back without reading (the kept bytes
        // were replaced above, so a read would have produced a new parse).
        let loaded = cache
            .load(&file, |_: &[u8], _: &Path| panic!("read and parsed again"))
            .unwrap();
        assert_eq!(*loaded, b"aaaa");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_search_is_kept_until_a_directory_it_read_changes() {
        let root = scratch("search");
        let nested = root.join("a").join("b");
        std::fs::create_dir_all(&nested).unwrap();
        let cache: SearchCache<u8> = SearchCache::new();
        let search = |dirs: &mut SearchedDirs| {
            let mut found = Vec::new();
            for dir in [&root, &root.join("a"), &nested] {
                dirs.push((dir.clone(), Stamp::read(dir)?));
                for entry in std::fs::read_dir(dir).unwrap().flatten() {
                    if entry.file_type().unwrap().is_file() {
                        found.push(entry.path());
                    }
                }
            }
            found.sort();
            Ok(found)
        };
        let age = |cache: &SearchCache<u8>| {
            // As if the search had run long after the directories' last change.
            let mut entries = cache.entries.lock().unwrap();
            entries
                .map
                .values_mut()
                .for_each(|entry| entry.read_at_ns += 2 * RACY_NS);
        };
        assert!(cache.files(&root, 0, search).unwrap().is_empty());
        age(&cache);
        let kept = cache.files(&root, 0, |_| panic!("searched again")).unwrap();
        assert!(kept.is_empty());

        // A file added to the innermost directory changes only that directory's stamp (its
        // modification time is moved away from the search's tick, as a later write's is).
        std::fs::write(nested.join("x.json"), b"{}").unwrap();
        let earlier = SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::open(&nested)
            .unwrap()
            .set_modified(earlier)
            .unwrap();
        assert_eq!(
            *cache.files(&root, 0, search).unwrap(),
            vec![nested.join("x.json")]
        );
        // Another key of the same root is a search of its own.
        assert_eq!(cache.files(&root, 1, search).unwrap().len(), 1);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
