//! Collects check outcomes with their timings; knows which groups were asked for.

use std::time::Instant;

use fabric_config::conformance::{ConformanceCheck, ConformanceStatus};
use serde_json::Value;

/// What one check concluded.
pub(crate) enum Outcome {
    Passed(String),
    Failed(String, Value),
    Skipped(String),
}

pub(crate) struct Recorder {
    only: Vec<String>,
    checks: Vec<ConformanceCheck>,
}

impl Recorder {
    pub fn new(only: &[String]) -> Recorder {
        Recorder {
            only: only.to_vec(),
            checks: Vec::new(),
        }
    }

    /// Whether `group` runs.
    pub fn wants(&self, group: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|g| g == group)
    }

    /// Runs `check` as `id` (its group is the part before the first dot) and records it.
    pub fn check(&mut self, id: &str, check: impl FnOnce() -> Outcome) {
        let began = Instant::now();
        let outcome = check();
        let elapsed = began.elapsed();
        self.push(
            id,
            outcome,
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        );
    }

    /// Records an outcome measured elsewhere.
    pub fn push(&mut self, id: &str, outcome: Outcome, elapsed_ms: u64) {
        let group = id.split('.').next().unwrap_or(id).to_owned();
        let (status, reason, evidence) = match outcome {
            Outcome::Passed(reason) => (ConformanceStatus::Passed, reason, Value::Null),
            Outcome::Failed(reason, evidence) => (ConformanceStatus::Failed, reason, evidence),
            Outcome::Skipped(reason) => (ConformanceStatus::Skipped, reason, Value::Null),
        };
        self.checks.push(ConformanceCheck {
            id: id.to_owned(),
            group,
            status,
            reason,
            evidence,
            elapsed_ms,
        });
    }

    /// Whether any check of `group` recorded so far failed.
    pub fn failed(&self, group: &str) -> bool {
        self.checks
            .iter()
            .any(|c| c.group == group && c.status == ConformanceStatus::Failed)
    }

    pub fn checks(&self) -> &[ConformanceCheck] {
        &self.checks
    }

    pub fn finish(self) -> Vec<ConformanceCheck> {
        self.checks
    }
}
