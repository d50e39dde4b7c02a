//! The process-wide spawner thread: every adapter host is forked here.
//!
//! Hosts get `PR_SET_PDEATHSIG(SIGKILL)` (see `sys/spawn.rs`), and Linux sends
//! that signal when the *thread* that forked the child ends, not the process. Callers of the
//! core are arbitrary threads (a Python worker thread, a goroutine's OS thread, a Node worker)
//! that may end while their runtime lives on, so no host is forked on a caller's thread: one
//! thread, started on first use and never ending before the process does, forks them all.
//! The death signal therefore fires exactly when this process dies.
//!
//! Cost: one channel round trip per launch (a few µs next to the fork and exec).

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc::{self, Sender, SyncSender};

use crate::sys::{SpawnSpec, Spawned};

struct Job {
    spec: SpawnSpec,
    reply: SyncSender<io::Result<Spawned>>,
}

static SPAWNER: OnceLock<Result<Sender<Job>, String>> = OnceLock::new();

fn start() -> io::Result<Sender<Job>> {
    let (sender, receiver) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("fabric-spawner".into())
        .spawn(move || {
            // The sender lives in a static, so this loop ends only with the process.
            for job in receiver {
                let result = std::panic::catch_unwind(|| crate::sys::spawn_host(&job.spec))
                    .unwrap_or_else(|_| Err(io::Error::other("spawning the host panicked")));
                let _ = job.reply.send(result);
            }
        })?;
    Ok(sender)
}

/// Spawns a host on the spawner thread and returns it.
pub fn spawn(spec: SpawnSpec) -> io::Result<Spawned> {
    let sender = SPAWNER
        .get_or_init(|| start().map_err(|error| error.to_string()))
        .as_ref()
        .map_err(|reason| io::Error::other(format!("spawner thread unavailable: {reason}")))?;
    let (reply, wait) = mpsc::sync_channel(1);
    sender
        .send(Job { spec, reply })
        .map_err(|_| io::Error::other("the spawner thread has exited"))?;
    wait.recv()
        .map_err(|_| io::Error::other("the spawner thread has exited"))?
}
