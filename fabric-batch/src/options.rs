//! Options of a batch and its cancellation.

use std::sync::Mutex;

use fabric_config::batch::{BatchIsolation, BatchSettings};
use fabric_config::{ErrorInfo, Stage, codes};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// How runtimes are used across items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Isolation {
    /// A new runtime per item attempt (evaluation semantics). The default.
    #[default]
    Fresh,
    /// Runtimes are kept and handed to the next item (a runtime keeps its conversation:
    /// only for harnesses whose state between items does not matter).
    Reuse,
}

impl Isolation {
    /// `fresh` or `reuse`.
    pub fn parse(text: &str) -> Option<Isolation> {
        match text {
            "fresh" => Some(Isolation::Fresh),
            "reuse" => Some(Isolation::Reuse),
            _ => None,
        }
    }
}

/// Options of a batch.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Items run at once. Default: the number of cores.
    pub concurrency: usize,
    /// Default: [`Isolation::Fresh`].
    pub isolation: Isolation,
    /// Attempts per item (at least 1). Default 1.
    pub attempts: u32,
    /// Retry a `failed` RunResult too (not only runtime failures). Default false.
    pub retry_failed: bool,
    /// Bound of one item (every turn). Default: none.
    pub timeout: Option<Duration>,
    /// First retry's backoff; doubled per retry, capped at [`BatchOptions::backoff_cap`],
    /// with jitter (half to all of it). Default 200 ms.
    pub backoff: Duration,
    /// Largest backoff. Default 10 s.
    pub backoff_cap: Duration,
    /// After a first cancel, how long in-flight items may finish before their runtimes
    /// are stopped. Default 10 s.
    pub grace: Duration,
    /// `fresh` isolation: keep up to `concurrency` prewarmed hosts (closed when the batch
    /// ends). Default true.
    pub prewarm: bool,
}

impl Default for BatchOptions {
    fn default() -> BatchOptions {
        BatchOptions {
            concurrency: std::thread::available_parallelism().map_or(1, usize::from),
            isolation: Isolation::Fresh,
            attempts: 1,
            retry_failed: false,
            timeout: None,
            backoff: Duration::from_millis(200),
            backoff_cap: Duration::from_secs(10),
            grace: Duration::from_secs(10),
            prewarm: true,
        }
    }
}

impl BatchOptions {
    /// The backoff before attempt `attempt` (2 or more): `backoff · 2^(attempt-2)`, capped,
    /// times a jitter factor in [0.5, 1].
    pub fn backoff_before(&self, attempt: u32, jitter: f64) -> Duration {
        let doublings = attempt.saturating_sub(2).min(30);
        let full = self
            .backoff
            .saturating_mul(1u32 << doublings)
            .min(self.backoff_cap);
        full.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
    }
}

impl BatchOptions {
    /// Options from a [`BatchSettings`] document (absent fields keep their defaults).
    pub fn from_settings(settings: &BatchSettings) -> Result<BatchOptions, ErrorInfo> {
        let invalid = |field: &str, rule: &str| {
            ErrorInfo::new(
                Stage::Config,
                codes::BATCH_SETTINGS_INVALID,
                format!("batch `{field}`: {rule}"),
            )
            .with_metadata("path", field)
        };
        let seconds = |value: Option<f64>, field: &str| {
            value
                .map(|value| {
                    fabric_config::seconds::duration(
                        value,
                        fabric_config::seconds::MAX_TIMEOUT_SECONDS,
                    )
                    .ok_or_else(|| {
                        invalid(field, "must be a finite number of seconds greater than 0")
                    })
                })
                .transpose()
        };
        let defaults = BatchOptions::default();
        if settings.concurrency == Some(0) {
            return Err(invalid("concurrency", "must be at least 1"));
        }
        if settings.attempts == Some(0) {
            return Err(invalid("attempts", "must be at least 1"));
        }
        Ok(BatchOptions {
            concurrency: settings.concurrency.map_or(defaults.concurrency, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
            isolation: match settings.isolation.unwrap_or_default() {
                BatchIsolation::Fresh => Isolation::Fresh,
                BatchIsolation::Reuse => Isolation::Reuse,
            },
            attempts: settings.attempts.unwrap_or(1),
            retry_failed: settings.retry_failed.unwrap_or(false),
            timeout: seconds(settings.timeout_seconds, "timeout_seconds")?,
            grace: seconds(settings.grace_seconds, "grace_seconds")?.unwrap_or(defaults.grace),
            prewarm: settings.prewarm.unwrap_or(defaults.prewarm),
            ..defaults
        })
    }
}

/// A random number in [0, 1] for jitter.
pub(crate) fn jitter() -> f64 {
    let mut bytes = [0u8; 4];
    if getrandom::fill(&mut bytes).is_err() {
        return 1.0;
    }
    f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX)
}

/// Cancels a batch from any thread: the first [`Cancel::cancel`] stops taking items and
/// gives in-flight items the grace period; the second stops them at once.
#[derive(Debug, Default)]
pub struct Cancel {
    level: AtomicU8,
    grace_end: Mutex<Option<Instant>>,
}

impl Cancel {
    /// A token nobody cancelled yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Escalates: first call drains (with `grace`), second stops at once.
    pub fn cancel(&self, grace: Duration) {
        let before = self.level.fetch_add(1, Ordering::SeqCst);
        if before == 0 {
            *self
                .grace_end
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now() + grace);
        }
    }

    /// Whether new items must not start.
    pub fn draining(&self) -> bool {
        self.level.load(Ordering::SeqCst) > 0
    }

    /// Whether in-flight items must stop now (second cancel, or grace over).
    pub fn stop_now(&self) -> bool {
        match self.level.load(Ordering::SeqCst) {
            0 => false,
            1 => self
                .grace_end
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .is_some_and(|end| Instant::now() >= end),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_cap() {
        let options = BatchOptions {
            backoff: Duration::from_millis(100),
            backoff_cap: Duration::from_millis(300),
            ..BatchOptions::default()
        };
        assert_eq!(options.backoff_before(2, 1.0), Duration::from_millis(100));
        assert_eq!(options.backoff_before(3, 1.0), Duration::from_millis(200));
        assert_eq!(options.backoff_before(4, 1.0), Duration::from_millis(300));
        assert_eq!(options.backoff_before(2, 0.0), Duration::from_millis(50));
    }

    #[test]
    fn cancel_escalates() {
        let cancel = Cancel::new();
        assert!(!cancel.draining() && !cancel.stop_now());
        cancel.cancel(Duration::from_secs(60));
        assert!(cancel.draining() && !cancel.stop_now());
        cancel.cancel(Duration::from_secs(60));
        assert!(cancel.stop_now());
    }
}
