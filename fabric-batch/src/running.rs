//! A batch running on its own thread, fed and drained by the caller: item lines are pushed
//! into a queue as small as the concurrency (a push waits while it is full: back-pressure),
//! finished lines are pulled in completion order (as the JSON text the engine encoded once,
//! one at a time or every ready one at once), then the summary; an event loop can wait on
//! the readiness descriptor instead of a blocking call. This is what the C ABI
//! (`fabric_batch_*`) and so every binding drive.

use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fabric_config::plan::RunPlan;
use fabric_config::{ErrorInfo, codes};
use fabric_host::RuntimeOptions;

use crate::engine::Batch;
use crate::item::{Checker, Item};
use crate::options::{BatchOptions, Cancel};
use crate::output::Output;
use crate::ready::Ready;
use crate::wire::{BatchLine, BatchSummary};

/// What a push did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// The line is queued.
    Queued,
    /// The queue stayed full for the whole timeout.
    Full,
    /// The input was closed (or the batch cancelled or stopped): the line is dropped.
    Closed,
}

/// What a pull got.
#[derive(Debug, Clone, PartialEq)]
pub enum Pulled<T> {
    /// The next value.
    Value(T),
    /// Nothing more will come.
    End,
    /// Nothing came within the timeout.
    Timeout,
}

#[derive(Debug, Default)]
struct State {
    lines: VecDeque<String>,
    closed: bool,
    /// Finished lines' JSON text.
    finished: VecDeque<String>,
    summary: Option<BatchSummary>,
    /// Queued lines a cancel dropped (counted as cancelled items).
    dropped: u64,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    capacity: usize,
    cancel: Cancel,
    grace: Duration,
    ready: Ready,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wakes blocked calls and the readiness descriptor (call after releasing the lock).
    fn changed(&self) {
        self.changed.notify_all();
        self.ready.wake();
    }

    /// Waits on the condition until `ready` or `deadline` (`None`: forever); returns the
    /// guard and whether `ready` held.
    fn wait<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        deadline: Option<Instant>,
        ready: impl Fn(&State) -> bool,
    ) -> (MutexGuard<'a, State>, bool) {
        while !ready(&state) {
            let wait = match deadline {
                None => Duration::from_secs(3600),
                Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left,
                    _ => return (state, false),
                },
            };
            state = self
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        (state, true)
    }
}

/// The pushed lines as items: each waits for a line, checked as it is taken.
struct Feed {
    shared: Arc<Shared>,
    checker: Checker,
}

impl Iterator for Feed {
    type Item = Result<Item, ErrorInfo>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let state = self.shared.lock();
            let (mut state, _) = self
                .shared
                .wait(state, None, |s| !s.lines.is_empty() || s.closed);
            let text = state.lines.pop_front()?;
            drop(state);
            self.shared.changed();
            if let Some(item) = self.checker.check(&text) {
                return Some(item);
            }
        }
    }
}

/// A batch running on its own thread. Dropping it cancels the batch at once.
#[derive(Debug)]
pub struct Running {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.map(|timeout| Instant::now() + timeout)
}

impl Running {
    /// Starts a batch of `plan`; `output` (if any) is opened first (its ids are skipped).
    pub fn start(
        plan: RunPlan,
        runtime: RuntimeOptions,
        options: BatchOptions,
        output: Option<&Path>,
    ) -> Result<Running, ErrorInfo> {
        let (output, done) = match output {
            Some(path) => {
                let (output, done) = Output::open(path)?;
                (Some(output), done)
            }
            None => (None, Default::default()),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            capacity: options.concurrency.max(1),
            cancel: Cancel::new(),
            grace: options.grace,
            ready: Ready::default(),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("fabric-batch".into())
            .spawn(move || {
                let feed = Feed {
                    shared: Arc::clone(&worker),
                    checker: Checker::new("items"),
                };
                let batch = Batch {
                    plan: &plan,
                    runtime: &runtime,
                    options: &options,
                    done: &done,
                    output: output.as_ref(),
                    cancel: &worker.cancel,
                };
                let observe = |_: &BatchLine, json: &str, _: &BatchSummary| {
                    worker.lock().finished.push_back(json.to_owned());
                    worker.changed();
                };
                let mut summary = batch.run(feed, &observe);
                let mut state = worker.lock();
                summary.cancelled += state.dropped;
                summary.items += state.dropped;
                state.closed = true;
                state.lines.clear();
                state.summary = Some(summary);
                drop(state);
                worker.changed();
            })
            .map_err(|error| {
                ErrorInfo::new(
                    fabric_config::Stage::Start,
                    codes::ENGINE_UNAVAILABLE,
                    format!("cannot start the batch thread: {error}"),
                )
            })?;
        Ok(Running {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues one item line, waiting up to `timeout` (`None`: forever) while the queue is
    /// full.
    pub fn push(&self, line: String, timeout: Option<Duration>) -> Pushed {
        let state = self.shared.lock();
        let capacity = self.shared.capacity;
        let (mut state, ready) = self.shared.wait(state, deadline(timeout), |s| {
            s.closed || s.lines.len() < capacity
        });
        if state.closed {
            return Pushed::Closed;
        }
        if !ready {
            self.shared.ready.arm();
            return Pushed::Full;
        }
        state.lines.push_back(line);
        drop(state);
        self.shared.changed.notify_all();
        Pushed::Queued
    }

    /// Ends the input: the batch finishes once the queued items are done.
    pub fn close(&self) {
        self.shared.lock().closed = true;
        self.shared.changed();
    }

    /// First call: stop taking items, in-flight items get the grace period; second: stop
    /// them now. Queued lines are dropped.
    pub fn cancel(&self) {
        self.shared.cancel.cancel(self.shared.grace);
        let mut state = self.shared.lock();
        state.closed = true;
        state.dropped += state.lines.len() as u64;
        state.lines.clear();
        drop(state);
        self.shared.changed();
    }

    /// The next finished line's JSON text, waiting up to `timeout` (`None`: forever).
    pub fn next(&self, timeout: Option<Duration>) -> Pulled<String> {
        match self.next_lines(1, timeout) {
            Pulled::Value(mut lines) => lines.pop().map_or(Pulled::Timeout, Pulled::Value),
            Pulled::End => Pulled::End,
            Pulled::Timeout => Pulled::Timeout,
        }
    }

    /// Every finished line ready now (at most `max`; 0: no limit), in completion order,
    /// waiting up to `timeout` (`None`: forever) for the first. A pull that found nothing
    /// arms the readiness descriptor.
    pub fn next_lines(&self, max: usize, timeout: Option<Duration>) -> Pulled<Vec<String>> {
        let state = self.shared.lock();
        let (mut state, _) = self.shared.wait(state, deadline(timeout), |s| {
            !s.finished.is_empty() || s.summary.is_some()
        });
        let take = match max {
            0 => state.finished.len(),
            max => max.min(state.finished.len()),
        };
        if take > 0 {
            return Pulled::Value(state.finished.drain(..take).collect());
        }
        if state.summary.is_some() {
            return Pulled::End;
        }
        self.shared.ready.arm();
        Pulled::Timeout
    }

    /// A descriptor that becomes readable when pulling or pushing again is worth it (see
    /// `ready.rs`): after a pull that found nothing or a push that found the queue full,
    /// when a line finishes, a queue slot frees or the batch ends. Owned by the batch.
    pub fn ready_fd(&self) -> Result<RawFd, ErrorInfo> {
        self.shared.ready.fd()
    }

    /// The summary once the batch ended, waiting up to `timeout` (`None`: forever).
    pub fn summary(&self, timeout: Option<Duration>) -> Pulled<BatchSummary> {
        let state = self.shared.lock();
        let (state, _) = self
            .shared
            .wait(state, deadline(timeout), |s| s.summary.is_some());
        state.summary.clone().map_or(Pulled::Timeout, Pulled::Value)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.shared.lock().summary.is_none() {
            self.cancel();
            self.cancel();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
