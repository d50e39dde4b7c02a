//! Test helpers: fixture proc/cgroup trees in temporary directories, real process trees, and
//! running a test alone in its own process.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a test alone in its own process of this binary (see `tests/alone.rs` at the
/// workspace root).
#[path = "../../../../tests/alone.rs"]
pub mod alone;

/// A fake proc file system.
pub struct FakeProc {
    pub dir: tempfile::TempDir,
}

/// One fake process.
pub struct Proc<'a> {
    pub pid: u32,
    pub ppid: u32,
    pub state: char,
    /// utime, stime, cutime, cstime.
    pub cpu: [u64; 4],
    pub rss_pages: u64,
    /// (tid, children of that thread).
    pub threads: &'a [(u32, &'a [u32])],
}

impl FakeProc {
    pub fn new() -> Self {
        FakeProc {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn add(&self, proc: Proc<'_>) {
        let dir = self.root().join(proc.pid.to_string());
        fs::create_dir_all(&dir).unwrap();
        let [utime, stime, cutime, cstime] = proc.cpu;
        let stat = format!(
            "{} (fake (x) {}) {} {} {} {} 0 -1 4194560 10 0 0 0 {utime} {stime} {cutime} {cstime} \
             20 0 {} 0 5000 1000000 {} 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
            proc.pid,
            proc.pid,
            proc.state,
            proc.ppid,
            proc.pid,
            proc.pid,
            proc.threads.len().max(1),
            proc.rss_pages,
        );
        fs::write(dir.join("stat"), stat).unwrap();
        // Files the reader must never need.
        fs::write(dir.join("cmdline"), "SECRET-CMDLINE").unwrap();
        fs::write(dir.join("environ"), "SECRET=1").unwrap();
        for (tid, children) in proc.threads {
            let task = dir.join("task").join(tid.to_string());
            fs::create_dir_all(&task).unwrap();
            let list: Vec<String> = children.iter().map(|c| format!("{c} ")).collect();
            fs::write(task.join("children"), list.concat()).unwrap();
        }
    }

    /// Removes every `children` file (a kernel without CONFIG_PROC_CHILDREN).
    pub fn remove_children_files(&self) {
        for entry in fs::read_dir(self.root()).unwrap() {
            let task = entry.unwrap().path().join("task");
            if let Ok(tids) = fs::read_dir(&task) {
                for tid in tids {
                    let _ = fs::remove_file(tid.unwrap().path().join("children"));
                }
            }
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }
}

/// A spawned process tree, killed (group) and reaped on drop.
pub struct RealTree {
    pub child: Child,
}

impl RealTree {
    /// `sh -c script` in its own process group.
    pub fn spawn(script: &str) -> Self {
        use std::os::unix::process::CommandExt;
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        RealTree { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for RealTree {
    fn drop(&mut self) {
        let pgid = self.child.id();
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--"])
            .arg(format!("-{pgid}"))
            .status();
        let _ = self.child.wait();
    }
}

/// Polls `f` until it returns `Some` or the deadline passes.
pub fn until<T>(deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(value) = f() {
            return value;
        }
        assert!(
            Instant::now() < end,
            "condition not reached within {deadline:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
