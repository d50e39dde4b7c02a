//! An invocation's sampled system stats (`system-stats.jsonl`): time, CPU and resident
//! memory per sample, for the charts.

use std::path::Path;

use serde_json::Value;

use crate::index::classify::MAX_DOCUMENT;
use crate::wire::Sample;

/// Samples kept for a chart (every n-th beyond it).
const MAX_SAMPLES: usize = 10_000;

/// The samples of a `system-stats.jsonl` file (unreadable lines are skipped).
pub(crate) fn read(path: &Path) -> Result<Vec<Sample>, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if size > MAX_DOCUMENT {
        return Err("over 64 MiB: not read".into());
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut samples = Vec::new();
    let mut previous: Option<(f64, f64)> = None;
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(offset_ms) = record.get("offset_ms").and_then(Value::as_f64) else {
            continue;
        };
        let process = record.get("process");
        let number = |key: &str| process.and_then(|p| p.get(key)).and_then(Value::as_f64);
        let cpu = number("cpu_time_seconds");
        let cpu_percent = match (cpu, previous) {
            (Some(cpu), Some((at, before))) if offset_ms > at => {
                Some(((cpu - before) * 1000.0 / (offset_ms - at) * 100.0).max(0.0))
            }
            _ => None,
        };
        if let Some(cpu) = cpu {
            previous = Some((offset_ms, cpu));
        }
        samples.push(Sample {
            t_ms: offset_ms.max(0.0) as u64,
            cpu_percent,
            rss_bytes: number("resident_memory_bytes").map(|bytes| bytes as u64),
        });
    }
    if samples.len() > MAX_SAMPLES {
        let step = samples.len().div_ceil(MAX_SAMPLES);
        samples = samples.into_iter().step_by(step).collect();
    }
    Ok(samples)
}
