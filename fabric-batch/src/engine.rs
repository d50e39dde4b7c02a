//! The scheduler: `concurrency` worker threads pull items as they free up (so a stream
//! of a million items is never read ahead), run each with its attempts, write its line
//! and count it.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use fabric_config::ErrorInfo;
use fabric_config::codes;
use fabric_config::plan::RunPlan;
use fabric_host::{Runtime, RuntimeOptions};

use crate::attempt::{Ended, Runner};
use crate::item::Item;
use crate::options::{BatchOptions, Cancel, jitter};
use crate::output::Output;
use crate::tally::Tally;
use crate::wire::{AttemptRecord, BatchLine, BatchSummary};

/// Called after each finished item (its line is already written) with the line, its JSON
/// text (encoded once: the same text the output file got) and the counts so far; from the
/// worker thread that ran it.
pub type Observer<'a> = &'a (dyn Fn(&BatchLine, &str, &BatchSummary) + Sync);

/// A batch over one plan.
#[derive(Debug)]
pub struct Batch<'a> {
    /// The plan every runtime starts from.
    pub plan: &'a RunPlan,
    /// Host timeouts and stop policy of the runtimes.
    pub runtime: &'a RuntimeOptions,
    /// Concurrency, isolation, attempts, timeout.
    pub options: &'a BatchOptions,
    /// Ids that already have a line (resume): skipped.
    pub done: &'a HashSet<String>,
    /// Where lines are appended, if anywhere.
    pub output: Option<&'a Output>,
    /// Cancels the batch from another thread.
    pub cancel: &'a Cancel,
}

/// The source and the counts, each behind its own lock: a worker waiting for a streamed
/// item (stdin, a binding's push) never holds up another worker counting a finished one.
struct Shared<I> {
    items: Mutex<I>,
    tally: Mutex<Tally>,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Batch<'_> {
    /// Runs every item of `items` (stopping at the first input error, which the summary
    /// carries) and returns the summary. Lines are written and `observe` called in
    /// completion order.
    pub fn run<I>(&self, items: I, observe: Observer<'_>) -> BatchSummary
    where
        I: Iterator<Item = Result<Item, ErrorInfo>> + Send,
    {
        let began = Instant::now();
        let shared = Shared {
            items: Mutex::new(items),
            tally: Mutex::new(Tally::default()),
        };
        let halted = AtomicBool::new(false);
        let workers = self.options.concurrency.max(1);
        let pool = crate::warm::open(self.plan, self.runtime, self.options);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| self.work(&shared, &halted, observe));
            }
        });
        let prewarmed = crate::warm::close(pool);
        let mut items = shared
            .items
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut tally = shared
            .tally
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.cancel.draining() {
            tally.summary.interrupted = true;
            // Items a file still held were not run; a stream is not read further.
            if let (lower, Some(upper)) = items.size_hint()
                && lower == upper
            {
                let rest = items
                    .by_ref()
                    .filter_map(Result::ok)
                    .filter(|item| !self.done.contains(&item.id))
                    .count();
                tally.cancelled(rest as u64);
            }
        }
        tally.summary.prewarmed = prewarmed;
        tally.summary(began.elapsed())
    }

    /// One worker: take an item, run it, write and count it, until none is left.
    fn work<I>(&self, shared: &Shared<I>, halted: &AtomicBool, observe: Observer<'_>)
    where
        I: Iterator<Item = Result<Item, ErrorInfo>>,
    {
        let mut slot: Option<Runtime> = None;
        loop {
            if self.cancel.draining() || halted.load(Ordering::SeqCst) {
                break;
            }
            let next = locked(&shared.items).next();
            let item = match next {
                None => break,
                Some(Err(error)) => {
                    locked(&shared.tally).summary.input_error = Some(error);
                    halted.store(true, Ordering::SeqCst);
                    break;
                }
                // Taken while another worker stopped the batch: not run.
                Some(Ok(_)) if halted.load(Ordering::SeqCst) => break,
                Some(Ok(item)) if self.done.contains(&item.id) => {
                    locked(&shared.tally).skipped();
                    continue;
                }
                Some(Ok(item)) => item,
            };
            let Some(line) = self.run_item(&mut slot, &item) else {
                locked(&shared.tally).cancelled(1);
                continue;
            };
            let written = crate::output::encode(&line).and_then(|json| {
                if let Some(output) = self.output {
                    output.write(&json)?;
                }
                Ok(json)
            });
            let mut tally = locked(&shared.tally);
            let json = match written {
                Ok(json) => json,
                Err(error) => {
                    tally.summary.input_error = Some(error);
                    halted.store(true, Ordering::SeqCst);
                    break;
                }
            };
            tally.finished(&line);
            let so_far = tally.summary.clone();
            drop(tally);
            observe(&line, &json, &so_far);
        }
        if let Some(runtime) = slot {
            runtime.stop();
        }
    }

    /// Every attempt of `item`; `None` when cancellation stopped it.
    fn run_item(&self, slot: &mut Option<Runtime>, item: &Item) -> Option<BatchLine> {
        let runner = Runner {
            plan: self.plan,
            runtime: self.runtime,
            options: self.options,
            cancel: self.cancel,
        };
        let began = Instant::now();
        let deadline = self.options.timeout.map(|timeout| began + timeout);
        let attempts = self.options.attempts.max(1);
        let mut log = Vec::new();
        let mut attempt = 1;
        loop {
            let started = Instant::now();
            let ended = runner.attempt(slot, item, deadline);
            let (outcome, code, retry) = match &ended {
                Ended::Cancelled => return None,
                Ended::Error(info) => (
                    "error".to_owned(),
                    Some(info.code.clone()),
                    codes::BATCH_RETRYABLE.contains(&info.code.as_str()),
                ),
                Ended::Results(results) => {
                    let last = results.last();
                    let status = last.map_or("succeeded", |r| r.status.as_str());
                    let failed = status != "succeeded";
                    let code = last.and_then(|r| r.error.as_ref()).map(|e| e.code.clone());
                    (status.to_owned(), code, failed && self.options.retry_failed)
                }
            };
            log.push(AttemptRecord {
                attempt,
                duration_ms: millis(started),
                outcome,
                code,
            });
            if !retry || attempt >= attempts || self.cancel.draining() {
                return Some(line(item, log, ended, millis(began)));
            }
            attempt += 1;
            let pause = self.options.backoff_before(attempt, jitter());
            let wake = Instant::now() + pause;
            while Instant::now() < wake {
                if self.cancel.draining() {
                    return Some(line(item, log, ended, millis(began)));
                }
                std::thread::sleep(
                    (wake - Instant::now()).min(std::time::Duration::from_millis(50)),
                );
            }
        }
    }
}

/// The output line of a finished item.
fn line(item: &Item, log: Vec<AttemptRecord>, ended: Ended, duration_ms: u64) -> BatchLine {
    let attempts = u32::try_from(log.len()).unwrap_or(u32::MAX);
    let (result, results, error) = match ended {
        Ended::Results(mut results) => {
            let last = results.pop();
            if results.is_empty() {
                (last, None, None)
            } else {
                results.extend(last.clone());
                (last, Some(results), None)
            }
        }
        Ended::Error(info) => (None, None, Some(info)),
        Ended::Cancelled => (None, None, None),
    };
    BatchLine {
        id: item.id.clone(),
        attempts,
        result,
        results,
        error,
        attempt_log: log,
        duration_ms,
    }
}
