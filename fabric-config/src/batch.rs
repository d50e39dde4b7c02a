//! Batches (`fabric-batch`, `fabric batch`, `fabric_batch_*`): the options a caller gives
//! ([`BatchSettings`]), one [`BatchLine`] per finished item, and a [`BatchSummary`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ErrorInfo;
use crate::options::CallOptions;
use crate::result::RunResult;

/// How one attempt of an item ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttemptRecord {
    /// 1-based attempt number.
    pub attempt: u32,
    /// Wall time of the attempt (start, turns, stop) in milliseconds.
    pub duration_ms: u64,
    /// `succeeded`, `failed`, `cancelled` (the RunResult's status) or `error`.
    pub outcome: String,
    /// The error code of a failed result or an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// One output line: a finished item, with its RunResult (the last turn's for a
/// multi-turn item, every turn in `results`) or the error that ended it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BatchLine {
    /// The item's id.
    pub id: String,
    /// How many attempts ran.
    pub attempts: u32,
    /// The item's result (last turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<RunResult>,
    /// Every turn's result of a multi-turn item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<RunResult>>,
    /// The error of an item that has no result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Every attempt, in order.
    pub attempt_log: Vec<AttemptRecord>,
    /// Wall time of the item (every attempt and backoff) in milliseconds.
    pub duration_ms: u64,
}

impl BatchLine {
    /// `succeeded`, `failed` (a result that did not succeed) or `errored`.
    pub fn verdict(&self) -> Verdict {
        match &self.result {
            Some(result) if result.status == crate::agent::RunStatus::Succeeded => {
                Verdict::Succeeded
            }
            Some(_) => Verdict::Failed,
            None => Verdict::Errored,
        }
    }
}

/// How a finished item counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its RunResult succeeded.
    Succeeded,
    /// Its RunResult failed or was cancelled.
    Failed,
    /// It ended with an error (no result).
    Errored,
}

/// Latency percentiles of finished items, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    /// Median.
    pub p50_ms: u64,
    /// 90th percentile.
    pub p90_ms: u64,
    /// 99th percentile.
    pub p99_ms: u64,
}

/// Usage summed over the finished items' results (absent fields add nothing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UsageTotals {
    /// Input tokens.
    pub input_tokens: u64,
    /// Cached input tokens.
    pub cached_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Cost in USD, when any result reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// System stats summed over the finished items' results that carry them (runs with
/// `system_stats` collected); a multi-turn item counts each turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SystemStatsTotals {
    /// Results that carried system stats.
    pub invocations: u64,
    /// Adapter-exchange time summed, in seconds.
    pub elapsed_seconds: f64,
    /// CPU time of the adapter process trees summed (the results that had an estimate),
    /// in seconds.
    pub cpu_time_seconds: f64,
    /// The largest resident memory of one adapter process tree seen (after each exchange,
    /// and sampled peaks when sampling is on), in bytes.
    pub peak_resident_memory_bytes: u64,
}

/// Captured model calls summed over the finished items' results (batches run with
/// `capture_model_calls`); a multi-turn item counts each turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCallTotals {
    /// Results that carried `model_calls`.
    pub invocations: u64,
    /// Calls recorded over those results.
    pub calls: u64,
}

/// The summary of a batch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BatchSummary {
    /// Items seen (finished, skipped and cancelled).
    pub items: u64,
    /// Items whose result succeeded.
    pub succeeded: u64,
    /// Items whose result failed or was cancelled.
    pub failed: u64,
    /// Items that ended with an error.
    pub errored: u64,
    /// Items skipped because the output already held a line for their id (resume).
    pub skipped: u64,
    /// Items not run (or stopped) because the batch was cancelled.
    pub cancelled: u64,
    /// Retries (attempts after the first) over every item.
    pub retries: u64,
    /// Wall time of the batch in milliseconds.
    pub wall_ms: u64,
    /// Finished items per second of wall time.
    pub items_per_second: f64,
    /// Latency of the finished items.
    pub latency: Latency,
    /// Usage totals.
    pub usage: UsageTotals,
    /// System stats totals; absent when no result carried system stats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_stats: Option<SystemStatsTotals>,
    /// Items whose runtime started on one of the batch's prewarmed hosts (`fresh`
    /// isolation with `prewarm` on); 0 otherwise.
    #[serde(default)]
    pub prewarmed: u64,
    /// Captured model calls totals; absent when no result carried `model_calls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<ModelCallTotals>,
    /// Whether the batch was cancelled.
    pub interrupted: bool,
    /// The input error that stopped a streamed batch (its line is named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_error: Option<ErrorInfo>,
}

/// `isolation` of a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BatchIsolation {
    /// A new runtime per item attempt (evaluation semantics).
    #[default]
    Fresh,
    /// Runtimes kept and handed to the next item (a runtime keeps its conversation).
    Reuse,
}

/// The options of a batch (`fabric_batch_start`'s `batch_json`); absent fields keep their
/// defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchSettings {
    /// Items run at once (at least 1). Default: the number of cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Default `fresh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<BatchIsolation>,
    /// Attempts per item (at least 1). Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// Retry a failed RunResult too. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_failed: Option<bool>,
    /// Seconds one item (every turn) may take. Default: no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
    /// Seconds in-flight items may finish after a first cancel. Default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_seconds: Option<f64>,
    /// `fresh` isolation: keep up to `concurrency` adapter hosts launched ahead of the
    /// items, so an item's start does not wait for the interpreter's start-up (closed
    /// when the batch ends). Default true; ignored for `reuse` and for configs that
    /// cannot be prewarmed (another environment provider, Relay streaming).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prewarm: Option<bool>,
    /// A results file: lines are appended whole, ids it already holds are skipped (resume).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Call options (`base_dir`, timeouts, ...), as for `fabric_runtime_start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<CallOptions>,
}
