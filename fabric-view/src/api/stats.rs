//! `GET /api/batches/{id}/stats`: counts, throughput, latency percentiles and histogram,
//! usage and error codes of a batch's items (and its summary when one was found).

use std::collections::BTreeMap;

use serde_json::Value;

use super::items::sorted;
use super::{Answered, not_found, ok};
use crate::index::Shared;
use crate::index::listing::summary_of;
use crate::wire::{Bucket, Percentiles, StatsAnswer, UsageSum};

/// The upper bounds of the latency histogram's buckets, in milliseconds (the last bucket
/// holds everything above).
const BUCKETS_MS: &[u64] = &[
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 600_000,
];

fn percentile(sorted: &[u64], fraction: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(super) fn stats(shared: &Shared, id: &str) -> Answered {
    let index = shared.read();
    let Some((path, batch)) = index.batch(id) else {
        return not_found("batch");
    };
    let summary = summary_of(&index, path);
    // The cached order of the table's duration column.
    let durations: Vec<u64> = sorted(shared, id, "duration_ms", batch)
        .map(|order| {
            order
                .iter()
                .map(|&row| batch.items[row as usize].duration_ms)
                .collect()
        })
        .unwrap_or_default();
    let mut histogram: Vec<Bucket> = BUCKETS_MS
        .iter()
        .map(|&le_ms| Bucket {
            le_ms: Some(le_ms),
            count: 0,
        })
        .chain([Bucket {
            le_ms: None,
            count: 0,
        }])
        .collect();
    for &duration in &durations {
        let at = BUCKETS_MS.partition_point(|&le| le < duration);
        histogram[at].count += 1;
    }
    let mut usage = UsageSum::default();
    let mut error_codes = BTreeMap::new();
    for item in &batch.items {
        usage.input_tokens += item.input_tokens.unwrap_or(0);
        usage.output_tokens += item.output_tokens.unwrap_or(0);
        usage.total_tokens += item.total_tokens.unwrap_or(0);
        if let Some(code) = &item.error_code {
            *error_codes.entry(code.clone()).or_insert(0) += 1;
        }
    }
    let number = |key: &str| {
        summary
            .as_ref()
            .and_then(|s| s.get(key))
            .and_then(Value::as_f64)
    };
    let wall_seconds = number("wall_ms").map(|ms| ms / 1000.0);
    ok(&StatsAnswer {
        counts: batch.counts.clone(),
        // Without a summary (a batch still running): the rate lines arrived at since the
        // index first read the file.
        items_per_second: number("items_per_second").or_else(|| batch.observed_rate()),
        wall_seconds,
        latency_ms: Percentiles {
            p50: percentile(&durations, 0.5),
            p90: percentile(&durations, 0.9),
            p99: percentile(&durations, 0.99),
        },
        latency_histogram: histogram,
        usage,
        error_codes,
        summary,
    })
}
