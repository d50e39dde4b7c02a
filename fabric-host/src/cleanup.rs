//! Nothing left behind: owner locks on temporary FABRIC_HOME roots, the sweeper of roots
//! whose owner died, and process shutdown ([`shutdown`], [`kill_all_hosts`]).
//!
//! Every temporary root (`<base>/fabric-runtime-<id>/`, see `home.rs`) holds an exclusive
//! `flock` on its `.owner.lock` for as long as the owning process has the runtime. The root
//! is created under a staging name, locked, then renamed into place, so a root with the
//! final name is never unlocked while its owner lives. A process that dies (even by
//! `kill -9`) drops its locks with its descriptors; the first temporary home created by any
//! later core on the machine sweeps `<base>`: every `fabric-runtime-*` (or staging) directory
//! owned by this user whose lock can be taken is removed, after `SIGKILL` to every process of
//! this user still carrying that runtime's `FABRIC_RUNTIME_ID` in its environment (what the
//! dead owner's host left running: its children outlive the host's death signal).

use std::collections::HashSet;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use crate::hosts::{HostsHandle, StopPolicy};
use fabric_reactor::sys;

/// The owner lock inside every temporary root.
pub(crate) const LOCK_FILE: &str = ".owner.lock";
/// Prefix of temporary roots (`fabric-runtime-<uuid>`).
const ROOT_PREFIX: &str = "fabric-runtime-";
/// Prefix of roots being created (`.fabric-staging-runtime-<uuid>`).
const STAGING_PREFIX: &str = ".fabric-staging-";

/// Creates `<base>/<name>` (0700) holding a locked `.owner.lock`; returns the root and the
/// lock (kept open by the home: closing it releases the lock).
pub(crate) fn create_locked_root(base: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    let staging = base.join(format!("{STAGING_PREFIX}{name}"));
    DirBuilder::new().mode(0o700).create(&staging)?;
    let locked = (|| {
        let lock = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(staging.join(LOCK_FILE))?;
        if !sys::try_lock_exclusive(&lock)? {
            return Err(std::io::Error::other(
                "owner lock is held by another process",
            ));
        }
        let root = base.join(name);
        fs::rename(&staging, &root)?;
        Ok((root, lock))
    })();
    if locked.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    let (root, lock) = locked?;
    live_roots().insert(root.clone());
    Ok((root, lock))
}

/// Forgets a root that its home removed.
pub(crate) fn forget_root(root: &Path) {
    live_roots().remove(root);
}

/// The temporary roots this process owns (what [`shutdown`] removes).
fn live_roots() -> std::sync::MutexGuard<'static, HashSet<PathBuf>> {
    static ROOTS: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    ROOTS
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
}

/// Sweeps `base` once per process (the first temporary home created does it).
pub(crate) fn sweep_once(base: &Path) {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| {
        sweep(base);
    });
}

/// Removes every stale temporary root under `base`: a directory named `fabric-runtime-*`
/// (or a staging one), not a symbolic link, owned by this user, whose `.owner.lock` exists
/// and can be locked (its owner is gone). Returns the removed roots.
pub(crate) fn sweep(base: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(base) else {
        return Vec::new();
    };
    let uid = sys::effective_uid();
    let mut removed = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !(name.starts_with(ROOT_PREFIX) || name.starts_with(STAGING_PREFIX)) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let Ok(lock) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path.join(LOCK_FILE))
        else {
            continue;
        };
        if !sys::try_lock_exclusive(&lock).unwrap_or(false) {
            continue;
        }
        if let Some(runtime_id) = name.strip_prefix("fabric-") {
            kill_leftovers(runtime_id);
        }
        if fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// `SIGKILL` to every process of this user whose environment says it belongs to
/// `runtime_id` (`FABRIC_RUNTIME_ID`, set for every host and inherited by its children),
/// when it is still the process that was read (same start time).
pub fn kill_leftovers(runtime_id: &str) {
    let proc_root = Path::new("/proc");
    let entry = format!("FABRIC_RUNTIME_ID={runtime_id}");
    let me = std::process::id();
    let uid = sys::effective_uid();
    for stat in fabric_stats::procs::with_env_entry(proc_root, &entry) {
        let ours = fs::metadata(proc_root.join(stat.pid.to_string())).is_ok_and(|m| m.uid() == uid);
        let same = fabric_stats::procs::read_stat(proc_root, stat.pid)
            .is_some_and(|now| now.start_time == stat.start_time);
        if ours
            && same
            && stat.pid != me
            && let Ok(pid) = i32::try_from(stat.pid)
        {
            let _ = sys::signal_process(pid, sys::SIGKILL);
        }
    }
}

static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);

/// Whether [`shutdown`] began (no host is launched after that).
pub(crate) fn shutting_down() -> bool {
    SHUTTING_DOWN.load(Ordering::SeqCst)
}

/// What [`shutdown`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Host processes still running when the bound ran out (0 when every host ended).
    pub hosts_left: usize,
    /// Temporary FABRIC_HOME roots removed.
    pub homes_removed: usize,
    /// Time the shutdown took.
    pub elapsed: Duration,
}

/// Ends everything this process started, for a process about to exit (the CLI on `SIGINT`
/// or `SIGTERM`): from now on no host is launched; every running host has its stdin
/// closed and its process group `SIGTERM`ed, then `SIGKILL`ed after `policy.term_wait`
/// (escaped descendants too, as at a normal stop); this call waits until every host leader
/// has exited or `policy.term_wait + policy.kill_wait` has passed, then removes every
/// temporary FABRIC_HOME root of this process. Runtimes still held by other threads see
/// their calls fail (`runtime_stopped`, `host_crashed`, or `engine_unavailable` for a
/// start); their own `stop` reports what happened. Idempotent.
pub fn shutdown(policy: StopPolicy) -> ShutdownReport {
    let began = Instant::now();
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    let mut hosts_left = 0;
    if let Some(engine) = HostsHandle::running()
        && engine.stop_all(policy).is_ok()
    {
        let deadline = began + policy.term_wait + policy.kill_wait;
        loop {
            hosts_left = engine.running_hosts().unwrap_or(0);
            if hosts_left == 0 || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let roots: Vec<PathBuf> = live_roots().drain().collect();
    let homes_removed = roots
        .iter()
        .filter(|root| fs::remove_dir_all(root).is_ok())
        .count();
    ShutdownReport {
        hosts_left,
        homes_removed,
        elapsed: began.elapsed(),
    }
}

/// Waits until every stop begun in this process has ended, or `bound` has passed; returns
/// how many stops are still going. For a process about to exit normally after `run()`:
/// `run()` returns at the host's answer to `stop` and its exit, reap and temporary
/// FABRIC_HOME removal finish in the background (each bounded by its stop policy), which the
/// process's end would otherwise cut short (`PR_SET_PDEATHSIG` kills the host; the home is
/// left to the sweeper). Live hosts (a runtime never stopped, an unclaimed prewarmed host)
/// are not waited for: nothing would end them within the bound.
pub fn settle(bound: Duration) -> usize {
    let Some(engine) = HostsHandle::running() else {
        return 0;
    };
    let deadline = Instant::now() + bound;
    loop {
        let left = engine.stopping_hosts().unwrap_or(0);
        if left == 0 || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `SIGKILL` to every host's process group (and escaped descendants recorded at stop) at
/// once, without waiting: the second Ctrl-C. Launches fail from now on, as after
/// [`shutdown`].
pub fn kill_all_hosts() {
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    if let Some(engine) = HostsHandle::running() {
        let _ = engine.kill_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_root_survives_the_sweep_and_an_unlocked_one_does_not() {
        let base = tempfile::tempdir().expect("tempdir");
        let (live, lock) = create_locked_root(base.path(), "fabric-runtime-live").expect("root");
        assert!(live.join(LOCK_FILE).is_file());
        let (dead, dead_lock) =
            create_locked_root(base.path(), "fabric-runtime-dead").expect("root");
        drop(dead_lock);
        // Without a lock file (not ours to judge) and with another name: kept.
        fs::create_dir(base.path().join("fabric-runtime-nolock")).expect("mkdir");
        fs::create_dir(base.path().join("other")).expect("mkdir");
        let removed = sweep(base.path());
        assert_eq!(removed, vec![dead.clone()]);
        assert!(live.is_dir() && !dead.exists());
        assert!(base.path().join("fabric-runtime-nolock").is_dir());
        assert!(base.path().join("other").is_dir());
        drop(lock);
        assert_eq!(sweep(base.path()), vec![live.clone()]);
        forget_root(&live);
        forget_root(&dead);
    }
}
