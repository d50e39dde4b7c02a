//! The running counts of a batch and the summary they reduce to.

use std::time::Duration;

use fabric_config::result::RunResult;

use crate::wire::{BatchLine, BatchSummary, Latency, SystemStatsTotals, UsageTotals, Verdict};

/// Counts kept while a batch runs.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) summary: BatchSummary,
    latencies: Vec<u64>,
}

fn add_usage(totals: &mut UsageTotals, result: &RunResult) {
    let Some(usage) = &result.usage else {
        return;
    };
    totals.input_tokens += usage.input_tokens.unwrap_or(0);
    totals.cached_input_tokens += usage.cached_input_tokens.unwrap_or(0);
    totals.output_tokens += usage.output_tokens.unwrap_or(0);
    totals.total_tokens += usage.total_tokens.unwrap_or(0);
    if let Some(cost) = usage.cost_usd {
        *totals.cost_usd.get_or_insert(0.0) += cost;
    }
}

fn add_system_stats(totals: &mut Option<SystemStatsTotals>, result: &RunResult) {
    let Some(stats) = &result.system_stats else {
        return;
    };
    let totals = totals.get_or_insert_with(SystemStatsTotals::default);
    totals.invocations += 1;
    totals.elapsed_seconds += stats.elapsed_seconds;
    totals.cpu_time_seconds += stats.cpu_time_seconds_estimate.unwrap_or(0.0);
    let after = stats
        .after
        .snapshot
        .as_ref()
        .map_or(0, |snapshot| snapshot.resident_memory_bytes);
    let sampled = stats
        .sampled
        .as_ref()
        .and_then(|sampled| sampled.resident_memory_bytes.as_ref())
        .and_then(|gauge| gauge.sampled_peak)
        .map_or(0, |peak| peak as u64);
    totals.peak_resident_memory_bytes = totals.peak_resident_memory_bytes.max(after).max(sampled);
}

/// Usage, system stats and captured model calls of one result.
fn add_result(summary: &mut BatchSummary, result: &RunResult) {
    add_usage(&mut summary.usage, result);
    add_system_stats(&mut summary.system_stats, result);
    if let Some(calls) = &result.model_calls {
        let totals = summary.model_calls.get_or_insert_with(Default::default);
        totals.invocations += 1;
        totals.calls += calls.count;
    }
}

/// The nearest-rank percentile `p` (0..=100) of sorted `values`.
pub(crate) fn percentile(sorted: &[u64], p: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted[usize::try_from(rank - 1).unwrap_or(0).min(sorted.len() - 1)]
}

impl Tally {
    /// Counts a finished item.
    pub(crate) fn finished(&mut self, line: &BatchLine) {
        let summary = &mut self.summary;
        match line.verdict() {
            Verdict::Succeeded => summary.succeeded += 1,
            Verdict::Failed => summary.failed += 1,
            Verdict::Errored => summary.errored += 1,
        }
        summary.retries += u64::from(line.attempts.saturating_sub(1));
        // A multi-turn item's `result` is the last of its `results`.
        match &line.results {
            Some(turns) => turns.iter().for_each(|r| add_result(summary, r)),
            None => line.result.iter().for_each(|r| add_result(summary, r)),
        }
        self.latencies.push(line.duration_ms);
        summary.items += 1;
    }

    /// Counts an item skipped by resume.
    pub(crate) fn skipped(&mut self) {
        self.summary.skipped += 1;
        self.summary.items += 1;
    }

    /// Counts an item not run (or stopped) by cancellation.
    pub(crate) fn cancelled(&mut self, count: u64) {
        self.summary.cancelled += count;
        self.summary.items += count;
    }

    /// The summary after `wall` of running.
    pub(crate) fn summary(&self, wall: Duration) -> BatchSummary {
        let mut summary = self.summary.clone();
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        summary.latency = Latency {
            p50_ms: percentile(&sorted, 50),
            p90_ms: percentile(&sorted, 90),
            p99_ms: percentile(&sorted, 99),
        };
        summary.wall_ms = u64::try_from(wall.as_millis()).unwrap_or(u64::MAX);
        let seconds = wall.as_secs_f64();
        summary.items_per_second = if seconds > 0.0 {
            self.latencies.len() as f64 / seconds
        } else {
            0.0
        };
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50), 50);
        assert_eq!(percentile(&values, 90), 90);
        assert_eq!(percentile(&values, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
    }
}
