//! The completion pool: reusable worker threads for non-blocking runs, starts and stops
//! (work that waits on several steps of a host's life). A job goes to an idle worker; a
//! new worker is spawned only when none is idle, so the pool grows to the peak number of
//! operations in flight and never to one thread per call. Workers block on a condition
//! variable (no spinning) and exit after [`IDLE_EXIT`] without work.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A unit of work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// How long an idle worker waits for work before it exits.
const IDLE_EXIT: Duration = Duration::from_secs(30);
/// Stack of a worker (planning and JSON Schema compilation recurse deeply in debug builds).
const STACK_BYTES: usize = 8 * 1024 * 1024;

struct Queue {
    jobs: VecDeque<Job>,
    idle: usize,
    workers: usize,
}

struct Pool {
    queue: Mutex<Queue>,
    work: Condvar,
}

static POOL: Pool = Pool {
    queue: Mutex::new(Queue {
        jobs: VecDeque::new(),
        idle: 0,
        workers: 0,
    }),
    work: Condvar::new(),
};

fn lock() -> MutexGuard<'static, Queue> {
    POOL.queue.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `job` on a pool worker. When no worker can be started the job runs on the calling
/// thread (it still completes; the caller only loses the non-blocking property).
pub(crate) fn spawn(job: Job) {
    let mut queue = lock();
    queue.jobs.push_back(job);
    if queue.idle >= queue.jobs.len() {
        drop(queue);
        POOL.work.notify_one();
        return;
    }
    queue.workers += 1;
    drop(queue);
    let started = std::thread::Builder::new()
        .name("fabric-operation".into())
        .stack_size(STACK_BYTES)
        .spawn(worker);
    if started.is_err() {
        let mut queue = lock();
        queue.workers -= 1;
        let job = queue.jobs.pop_back();
        drop(queue);
        if let Some(job) = job {
            job();
        }
    }
}

fn worker() {
    let mut queue = lock();
    loop {
        if let Some(job) = queue.jobs.pop_front() {
            drop(queue);
            // A panicking job must not take the worker's bookkeeping with it; the job's
            // operation is completed by its own guard.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            queue = lock();
            continue;
        }
        queue.idle += 1;
        let (next, timeout) = POOL
            .work
            .wait_timeout(queue, IDLE_EXIT)
            .unwrap_or_else(|p| p.into_inner());
        queue = next;
        queue.idle -= 1;
        if timeout.timed_out() && queue.jobs.is_empty() {
            queue.workers -= 1;
            return;
        }
    }
}

/// Live workers and idle workers (for tests).
#[cfg(test)]
pub(crate) fn counts() -> (usize, usize) {
    let queue = lock();
    (queue.workers, queue.idle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn jobs_run_and_workers_are_reused() {
        let (done, finished) = mpsc::channel();
        for index in 0..8 {
            let done = done.clone();
            spawn(Box::new(move || done.send(index).expect("receiver alive")));
        }
        let mut seen: Vec<i32> = (0..8).map(|_| finished.recv().expect("job ran")).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
        let (workers, _) = counts();
        assert!(
            workers <= 8,
            "at most one worker per concurrent job: {workers}"
        );
    }
}
