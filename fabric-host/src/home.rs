//! FABRIC_HOME and per-invocation records: private directories (0700) and files (0600).
//!
//! Layout under the root (the configured artifact root, else a private temporary
//! directory removed when the runtime stops):
//! `<root>/.fabric/<runtime_id>/` is the runtime's FABRIC_HOME (with `host.stderr.log`),
//! and `<root>/.fabric/<runtime_id>/<invocation_id>/adapter-invocation.json` is written
//! for every invocation with environment values redacted.

use std::fs::{self, DirBuilder};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use fabric_config::Stage;

use crate::error::HostError;
use fabric_reactor::beneath::{Beneath, Refusal};

/// One runtime's FABRIC_HOME.
#[derive(Debug)]
pub(crate) struct FabricHome {
    root: PathBuf,
    home: PathBuf,
    temporary: bool,
    /// The owner lock of a temporary root (`cleanup.rs`): held while this home exists.
    _lock: Option<fs::File>,
    /// Set once the removal was handed to the host's stop ([`FabricHome::removal_after_exit`]).
    handed_off: AtomicBool,
}

pub(crate) fn fs_error(stage: Stage, path: &Path, error: &std::io::Error) -> HostError {
    HostError::Filesystem {
        stage,
        path: path.to_string_lossy().into_owned(),
        reason: error.to_string(),
    }
}

/// The error of a refused path (`path_refused`) or of a failed write (`filesystem_error`).
pub(crate) fn refusal_error(stage: Stage, path: &Path, refusal: &Refusal) -> HostError {
    match refusal {
        Refusal::Io(error) => fs_error(stage, path, error),
        Refusal::Missing => fs_error(stage, path, &std::io::ErrorKind::NotFound.into()),
        refusal => HostError::PathRefused {
            stage,
            path: path.to_string_lossy().into_owned(),
            reason: refusal.reason(),
            detail: refusal.to_string(),
        },
    }
}

/// `path` relative to `root` (`path` must be beneath it, lexically).
fn beneath<'a>(
    root: &Path,
    path: &'a Path,
    stage: Stage,
) -> Result<(Beneath, &'a Path), HostError> {
    let relative = path
        .strip_prefix(root)
        .map_err(|_| HostError::PathRefused {
            stage,
            path: path.to_string_lossy().into_owned(),
            reason: Refusal::OutsideRoot.reason(),
            detail: Refusal::OutsideRoot.to_string(),
        })?;
    let root = Beneath::open(root).map_err(|e| fs_error(stage, root, &e))?;
    Ok((root, relative))
}

/// Creates `path` (and missing parents) below `root` with mode 0700. The adapter can write
/// under `root` (its artifact root, its FABRIC_HOME): nothing is followed through a
/// symbolic link (`path_refused`).
pub(crate) fn private_dir(root: &Path, path: &Path, stage: Stage) -> Result<(), HostError> {
    let (root, relative) = beneath(root, path, stage)?;
    root.create_dir_all(relative, 0o700)
        .map(drop)
        .map_err(|refusal| refusal_error(stage, path, &refusal))
}

/// Writes `bytes` to `path` below `root` with mode 0600 (replacing a regular file; never
/// through a symbolic link, never into a FIFO or device: `path_refused`).
pub(crate) fn private_file(
    root: &Path,
    path: &Path,
    bytes: &[u8],
    stage: Stage,
) -> Result<(), HostError> {
    let (root, relative) = beneath(root, path, stage)?;
    root.write(relative, bytes, 0o600)
        .map_err(|refusal| refusal_error(stage, path, &refusal))
}

/// Where temporary FABRIC_HOMEs live: `$XDG_RUNTIME_DIR` when it is a directory, else
/// `/dev/shm` when it is one (memory-backed like a typical `$XDG_RUNTIME_DIR`: per-invocation
/// records of a temporary home are small and removed at stop, and a disk journal would
/// dominate invoke latency), else the system temporary directory.
fn temporary_base() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
    {
        return dir;
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

impl FabricHome {
    /// Creates the runtime's FABRIC_HOME under `artifact_root`, or under a new private
    /// temporary directory (created atomically with mode 0700: an existing path is never
    /// reused).
    pub(crate) fn create(
        runtime_id: &str,
        artifact_root: Option<&Path>,
    ) -> Result<FabricHome, HostError> {
        let (root, temporary, lock) = match artifact_root {
            Some(root) => {
                DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(root)
                    .map_err(|e| fs_error(Stage::Start, root, &e))?;
                (root.to_path_buf(), false, None)
            }
            None => {
                let base = temporary_base();
                crate::cleanup::sweep_once(&base);
                let name = format!("fabric-{runtime_id}");
                let (root, lock) = crate::cleanup::create_locked_root(&base, &name)
                    .map_err(|e| fs_error(Stage::Start, &base.join(&name), &e))?;
                (root, true, Some(lock))
            }
        };
        let home = root.join(".fabric").join(runtime_id);
        private_dir(&root, &home, Stage::Start)?;
        Ok(FabricHome {
            root,
            home,
            temporary,
            _lock: lock,
            handed_off: AtomicBool::new(false),
        })
    }

    /// The FABRIC_HOME directory.
    pub(crate) fn path(&self) -> &Path {
        &self.home
    }

    /// The root the home lives under (`<root>/.fabric/<runtime_id>`): the artifact root,
    /// or the temporary directory.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the home is removed at stop.
    #[cfg(test)]
    pub(crate) fn is_temporary(&self) -> bool {
        self.temporary
    }

    /// `host.stderr.log`.
    pub(crate) fn stderr_log(&self) -> PathBuf {
        self.home.join("host.stderr.log")
    }

    /// Creates `<home>/<invocation_id>/` (0700) and writes `name` (0600) in it, resolving
    /// the path from the root once (the record of every invocation: one walk instead of
    /// one for the directory and one for the file). Returns the directory and the file.
    pub(crate) fn invocation_record(
        &self,
        invocation_id: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<(PathBuf, PathBuf), HostError> {
        let dir = self.home.join(invocation_id);
        let path = dir.join(name);
        let (root, relative) = beneath(&self.root, &dir, Stage::Invoke)?;
        let created = root
            .create_dir_all(relative, 0o700)
            .map_err(|refusal| refusal_error(Stage::Invoke, &dir, &refusal))?;
        created
            .write(Path::new(name), bytes, 0o600)
            .map_err(|refusal| refusal_error(Stage::Invoke, &path, &refusal))?;
        Ok((dir, path))
    }

    /// Creates `<home>/<invocation_id>/` (0700).
    #[cfg(test)]
    pub(crate) fn invocation_dir(&self, invocation_id: &str) -> Result<PathBuf, HostError> {
        let dir = self.home.join(invocation_id);
        private_dir(&self.root, &dir, Stage::Invoke)?;
        Ok(dir)
    }

    /// Removes a temporary home (never a caller's artifact root).
    pub(crate) fn remove_if_temporary(&self) {
        if self.temporary && !self.handed_off.load(Ordering::Acquire) {
            let _ = fs::remove_dir_all(&self.root);
            crate::cleanup::forget_root(&self.root);
        }
    }

    /// The removal of a temporary home as work for after the host's exit (the host may
    /// still write to it while it shuts down): the returned action keeps the owner lock
    /// (a duplicate of its descriptor) until it removed the root; this home no longer
    /// removes it. `None` for an artifact root (kept) or when already handed off.
    pub(crate) fn removal_after_exit(&self) -> Option<crate::hosts::AfterExit> {
        if !self.temporary || self.handed_off.swap(true, Ordering::AcqRel) {
            return None;
        }
        let lock = self._lock.as_ref().and_then(|lock| lock.try_clone().ok());
        let root = self.root.clone();
        Some(crate::hosts::AfterExit::new(move || {
            let _ = fs::remove_dir_all(&root);
            crate::cleanup::forget_root(&root);
            drop(lock);
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("metadata").permissions().mode() & 0o777
    }

    #[test]
    fn artifact_root_layout_is_private_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("artifacts");
        let home = FabricHome::create("runtime-x", Some(&root)).expect("home");
        assert_eq!(home.path(), root.join(".fabric/runtime-x"));
        assert_eq!(mode(home.path()), 0o700);
        assert_eq!(mode(&root.join(".fabric")), 0o700);
        let inv = home.invocation_dir("invocation-y").expect("inv");
        assert_eq!(mode(&inv), 0o700);
        let file = inv.join("adapter-invocation.json");
        private_file(&root, &file, b"{}", Stage::Invoke).expect("write");
        assert_eq!(mode(&file), 0o600);
        home.remove_if_temporary();
        assert!(file.exists(), "caller-owned artifact root must be kept");
    }

    #[test]
    fn temporary_home_is_private_and_removed() {
        let home = FabricHome::create(&crate::ids::new_id("runtime"), None).expect("home");
        assert!(home.is_temporary());
        let root = home
            .path()
            .parent()
            .and_then(Path::parent)
            .expect("root")
            .to_path_buf();
        assert_eq!(mode(&root), 0o700);
        home.remove_if_temporary();
        assert!(!root.exists());
    }
}
