//! One attempt of one item: a runtime (started, or the worker's kept one), its turns under
//! the item's deadline and the batch's cancellation, then stop (fresh) or keep (reuse).

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use fabric_config::plan::RunPlan;
use fabric_config::result::RunResult;
use fabric_config::{ErrorInfo, RunRequest, Stage, codes};
use fabric_host::{Fabric, Runtime, RuntimeOptions};

use crate::item::Item;
use crate::options::{BatchOptions, Cancel, Isolation};

/// How long a waiting worker sleeps before looking at the cancellation again.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// How an attempt ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// Every turn's result.
    Results(Vec<RunResult>),
    /// The error that ended it (the runtime is stopped).
    Error(ErrorInfo),
    /// The batch's cancellation stopped it (the runtime is stopped).
    Cancelled,
}

/// How one turn ended.
enum Turn {
    Done(Box<Result<RunResult, fabric_host::HostError>>),
    TimedOut,
    Cancelled,
}

/// What every attempt of a batch shares.
#[derive(Debug)]
pub(crate) struct Runner<'a> {
    pub(crate) plan: &'a RunPlan,
    pub(crate) runtime: &'a RuntimeOptions,
    pub(crate) options: &'a BatchOptions,
    pub(crate) cancel: &'a Cancel,
}

impl Runner<'_> {
    /// Runs `item` once on `slot`'s runtime (started when empty); a reused runtime is put
    /// back into `slot` after a run that left it usable.
    pub(crate) fn attempt(
        &self,
        slot: &mut Option<Runtime>,
        item: &Item,
        deadline: Option<Instant>,
    ) -> Ended {
        let runtime = match slot.take() {
            Some(runtime) => runtime,
            None => match Fabric::new().start_runtime_plan(self.plan, self.runtime) {
                Ok(runtime) => runtime,
                Err(error) => return Ended::Error(error.into()),
            },
        };
        let mut results = Vec::with_capacity(item.requests.len());
        for request in &item.requests {
            match self.turn(&runtime, request.clone(), deadline) {
                Turn::Done(outcome) => match *outcome {
                    Ok(result) => results.push(result),
                    Err(error) => {
                        runtime.stop();
                        return Ended::Error(error.into());
                    }
                },
                Turn::TimedOut => {
                    runtime.stop();
                    let seconds = self.options.timeout.map_or(0.0, |t| t.as_secs_f64());
                    let info = ErrorInfo::new(
                        Stage::Invoke,
                        codes::BATCH_ITEM_TIMEOUT,
                        format!(
                            "item `{}` ran past timeout_seconds ({seconds}): its invocation was cancelled and its runtime stopped",
                            item.id
                        ),
                    )
                    .with_metadata("timeout_seconds", seconds);
                    return Ended::Error(info);
                }
                Turn::Cancelled => {
                    runtime.stop();
                    return Ended::Cancelled;
                }
            }
        }
        match self.options.isolation {
            Isolation::Fresh => {
                if let Some(last) = results.last_mut() {
                    runtime.stop_into(last);
                } else {
                    runtime.stop();
                }
            }
            Isolation::Reuse => *slot = Some(runtime),
        }
        Ended::Results(results)
    }

    /// One invocation, waited for until it answers, `deadline` passes (the runtime is
    /// stopped, which ends the invocation) or the batch must stop now.
    fn turn(&self, runtime: &Runtime, request: RunRequest, deadline: Option<Instant>) -> Turn {
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Turn::TimedOut;
        }
        let answered = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&answered);
        let notify: fabric_host::Notify = Arc::new(move || {
            let (flag, changed) = &*signal;
            *flag.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
            changed.notify_all();
        });
        let pending = match runtime.begin_invoke(request, notify) {
            Ok(pending) => pending,
            Err(error) => return Turn::Done(Box::new(Err(error))),
        };
        let mut cut = None;
        {
            let (flag, changed) = &*answered;
            let mut done = flag.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            while !*done {
                let now = Instant::now();
                if deadline.is_some_and(|deadline| now >= deadline) {
                    cut = Some(Turn::TimedOut);
                    break;
                }
                if self.cancel.stop_now() {
                    cut = Some(Turn::Cancelled);
                    break;
                }
                let wait = deadline.map_or(CANCEL_POLL, |deadline| {
                    deadline.saturating_duration_since(now).min(CANCEL_POLL)
                });
                done = changed
                    .wait_timeout(done, wait)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        }
        match cut {
            Some(turn) => {
                // Stopping the runtime ends the pending invocation (its host is stopped).
                runtime.stop();
                drop(runtime.finish_invoke(pending));
                turn
            }
            None => Turn::Done(Box::new(runtime.finish_invoke(pending))),
        }
    }
}
