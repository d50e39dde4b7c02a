//! Invocation system stats: endpoint observations around one adapter exchange, optional
//! periodic sampling, and the stats artifacts.
//!
//! The host calls [`StatsCollector::begin`] right before sending the invocation and
//! [`InvocationStats::finish`] right after the adapter answered (or failed), both under its
//! invocation lock. `elapsed_seconds` is measured with [`Instant`] from the end of the
//! before-observation to the start of the after-observation, so it covers only the adapter
//! exchange.

use fabric_config::codes;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use fabric_config::agent::ArtifactRef;
use fabric_config::config::{SystemStatsConfig, SystemStatsGroup, SystemStatsSetting};
use fabric_config::stats::{
    CgroupStats, InvocationSystemStats, Observation, ObservationStatus, RuntimeResourceSnapshot,
    SampledStats, StatsDiagnostic,
};
use serde_json::{Value, json};

use crate::cgroup::{self, CgroupReader};
use crate::error::StatsError;
use crate::proc::{CACHED_FD_BUDGET, ProcReader, cached_descriptors, round_micros};
use crate::sampling::{self, Probe, ProcessReading, Registration, Sample, SampleKind, Series};

/// Name of the JSONL sample series.
pub const SAMPLES_FILE: &str = "system-stats.jsonl";
/// Name of the summary file.
pub const SUMMARY_FILE: &str = "system-stats-summary.json";

/// The runtime whose adapter host is observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsTarget {
    /// Runtime id (`runtime-…`).
    pub runtime_id: String,
    /// Pid of the local adapter host process.
    pub host_pid: u32,
    /// When the adapter host was started (wall clock).
    pub started_at: SystemTime,
}

/// Identity of one invocation, written into every sample and the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvocationIds {
    /// Invocation id (`invocation-…`).
    pub invocation_id: String,
    /// Request id.
    pub request_id: String,
}

/// Where the stats artifacts of one invocation go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactLocation {
    /// The root `dir` is under (the artifact root, where the adapter can write): nothing
    /// below it is created or written through a symbolic link.
    pub root: PathBuf,
    /// Directory to write into (created 0700 if missing), normally
    /// `<artifact root>/.fabric/<runtime_id>/<invocation_id>`.
    pub dir: PathBuf,
    /// The same directory as the artifact references should name it (relative to the
    /// artifact root), for example `.fabric/runtime-1/invocation-2`.
    pub reference_dir: String,
}

/// Reads snapshots and collects invocation stats. Cheap to clone (clones share the
/// descriptor caches); share one per process.
///
/// Each target (host pid and start time) gets its own process-tree reader, kept between
/// invocations so its descriptors stay open (at most 64 targets; the least recently used
/// is dropped, and [`StatsCollector::release`] drops one at once). The cgroup reader is
/// shared: processes in the same cgroup share its open files.
#[derive(Debug, Clone)]
pub struct StatsCollector {
    /// Settings template of the per-target readers.
    proc: ProcReader,
    cgroup: Arc<CgroupReader>,
    targets: Arc<Mutex<TargetReaders>>,
}

/// Most targets whose process-tree readers are kept.
const MAX_TARGETS: usize = 64;

/// Per-target process-tree readers.
#[derive(Debug, Default)]
struct TargetReaders {
    uses: u64,
    readers: HashMap<(u32, SystemTime), (Arc<ProcReader>, u64)>,
}

impl TargetReaders {
    /// Drops the least recently used reader other than `keep`'s.
    fn evict_oldest(&mut self, keep: (u32, SystemTime)) {
        let oldest = self
            .readers
            .iter()
            .filter(|(key, _)| **key != keep)
            .min_by_key(|(_, (_, used))| *used)
            .map(|(key, _)| *key);
        if let Some(oldest) = oldest {
            self.readers.remove(&oldest);
        }
    }
}

impl Default for StatsCollector {
    fn default() -> Self {
        StatsCollector::new("/proc", "/sys/fs/cgroup")
    }
}

impl StatsCollector {
    /// A collector reading the proc and cgroup file systems at the given roots (normally
    /// `/proc` and `/sys/fs/cgroup`; see [`StatsCollector::default`]).
    pub fn new(proc_root: impl Into<PathBuf>, cgroup_root: impl Into<PathBuf>) -> Self {
        let proc_root = proc_root.into();
        StatsCollector {
            proc: ProcReader::new(proc_root.clone()),
            cgroup: Arc::new(CgroupReader::new(proc_root, cgroup_root)),
            targets: Arc::default(),
        }
    }

    /// The process-tree reader settings (to adjust discovery or retry bounds). Readers of
    /// targets already seen are dropped (this collector only), so the settings apply to
    /// every later reading.
    pub fn proc_reader_mut(&mut self) -> &mut ProcReader {
        self.targets = Arc::default();
        &mut self.proc
    }

    /// `Runtime::resource_snapshot()`: one reading of the target's process tree.
    pub fn snapshot(&self, target: &StatsTarget) -> Result<RuntimeResourceSnapshot, StatsError> {
        self.proc_for(target)
            .snapshot(target.host_pid, &target.runtime_id, target.started_at)
    }

    /// Closes the cached descriptors of a target (call when its runtime stopped; an
    /// unreleased target is dropped when idle or when 64 others were used since).
    pub fn release(&self, target: &StatsTarget) {
        lock_targets(&self.targets)
            .readers
            .remove(&(target.host_pid, target.started_at));
        self.cgroup.forget(target.host_pid);
    }

    /// The process-tree reader of `target` (created on first use).
    fn proc_for(&self, target: &StatsTarget) -> Arc<ProcReader> {
        let mut targets = lock_targets(&self.targets);
        targets.uses += 1;
        let uses = targets.uses;
        let key = (target.host_pid, target.started_at);
        let reader = match targets.readers.get_mut(&key) {
            Some((reader, used)) => {
                *used = uses;
                Arc::clone(reader)
            }
            None => {
                if targets.readers.len() >= MAX_TARGETS {
                    targets.evict_oldest(key);
                }
                let reader = Arc::new(self.proc.clone());
                targets.readers.insert(key, (Arc::clone(&reader), uses));
                reader
            }
        };
        // Readers of idle targets keep their descriptors: above three quarters of the
        // process-wide budget, the least recently used ones go first, leaving room for this
        // reading (a reading that ends over the budget closes its own cache).
        while cached_descriptors() > CACHED_FD_BUDGET / 4 * 3 && targets.readers.len() > 1 {
            targets.evict_oldest(key);
        }
        reader
    }

    /// Starts invocation stats for the config's `system_stats` setting: `None` when it is an
    /// explicit `null` (no stats at all, no artifacts).
    pub fn begin(
        &self,
        setting: &SystemStatsSetting,
        target: &StatsTarget,
        ids: &InvocationIds,
        artifacts: Option<ArtifactLocation>,
    ) -> Option<InvocationStats> {
        let config = setting.effective()?;
        Some(self.begin_with(&config, target, ids, artifacts))
    }

    /// Starts invocation stats for an effective configuration: takes the before-observation
    /// (and the first sample when sampling) and starts the elapsed clock.
    pub fn begin_with(
        &self,
        config: &SystemStatsConfig,
        target: &StatsTarget,
        ids: &InvocationIds,
        artifacts: Option<ArtifactLocation>,
    ) -> InvocationStats {
        let mut groups = config.groups();
        groups.sort();
        groups.dedup();
        let process = groups.contains(&SystemStatsGroup::Process);
        let cgroup_selected = groups.iter().any(|g| *g != SystemStatsGroup::Process);
        let probe = Arc::new(Probe {
            proc: self.proc_for(target),
            cgroup: Arc::clone(&self.cgroup),
            pid: target.host_pid,
            process,
            cgroup_memory: config.sampling.is_some()
                && groups.contains(&SystemStatsGroup::CgroupMemory),
        });
        let sampling = config.sampling.as_ref().map(|sampling| {
            let cadence = Duration::from_millis(sampling.interval_ms.max(1));
            // Validation enforces the cap on configs; this keeps memory bounded for a
            // config built in code without validation.
            let max_samples = sampling
                .max_samples
                .min(fabric_config::config::MAX_SAMPLING_MAX_SAMPLES);
            let series = Arc::new(Mutex::new(Series::new(
                cadence,
                max_samples,
                self.proc.clock_ticks(),
            )));
            (cadence, max_samples, series)
        });

        let series_start = Instant::now();
        let (before, before_sample) =
            observe_process(&probe, target, SampleKind::Before, series_start);
        let cgroup_before = cgroup_selected.then(|| self.cgroup.observe(target.host_pid, &groups));
        let mut registration = None;
        if let Some((cadence, _, series)) = &sampling {
            sampling::lock_series(series).push(before_sample);
            registration = Some(sampling::register(
                Arc::clone(&probe),
                Arc::clone(series),
                series_start,
                *cadence,
            ));
        }
        InvocationStats {
            target: target.clone(),
            ids: ids.clone(),
            groups,
            probe,
            before,
            cgroup_before,
            sampling,
            registration,
            series_start,
            artifacts,
            exchange_start: Instant::now(),
        }
    }
}

/// Reads one endpoint sample and its process observation.
fn observe_process(
    probe: &Probe,
    target: &StatsTarget,
    kind: SampleKind,
    series_start: Instant,
) -> (Observation, Sample) {
    let sample = probe.read(kind, series_start);
    let observation = match &sample.process {
        ProcessReading::NotCollected => Observation::missing(ObservationStatus::NotCollected, None),
        ProcessReading::Available(totals) => Observation::available(probe.proc.to_snapshot(
            totals,
            &target.runtime_id,
            target.started_at,
            sample.observed_at,
        )),
        ProcessReading::Missing { status, reason } => {
            Observation::missing(*status, Some(reason.clone()))
        }
    };
    (observation, sample)
}

fn lock_targets(targets: &Mutex<TargetReaders>) -> std::sync::MutexGuard<'_, TargetReaders> {
    targets
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Stats of one invocation in progress. Dropping it without [`InvocationStats::finish`]
/// stops its sampling and writes nothing.
#[derive(Debug)]
pub struct InvocationStats {
    target: StatsTarget,
    ids: InvocationIds,
    groups: Vec<SystemStatsGroup>,
    probe: Arc<Probe>,
    before: Observation,
    cgroup_before: Option<fabric_config::stats::CgroupObservation>,
    sampling: Option<(Duration, u64, Arc<Mutex<Series>>)>,
    registration: Option<Registration>,
    series_start: Instant,
    artifacts: Option<ArtifactLocation>,
    exchange_start: Instant,
}

/// The outcome of [`InvocationStats::finish`].
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedStats {
    /// `RunResult.system_stats`.
    pub stats: InvocationSystemStats,
    /// References for `RunResult.artifacts` (samples and summary files that were written).
    pub artifacts: Vec<ArtifactRef>,
}

impl InvocationStats {
    /// The before-observation.
    pub fn before(&self) -> &Observation {
        &self.before
    }

    /// Samples taken so far (endpoints included), retained or not.
    pub fn samples_seen(&self) -> u64 {
        self.sampling
            .as_ref()
            .map_or(0, |(_, _, series)| sampling::lock_series(series).seen)
    }

    /// Stops the elapsed clock, takes the after-observation, closes sampling (late samples
    /// are discarded), reduces and writes the artifacts. Call it whatever the adapter's
    /// outcome was, so samples survive a failed exchange.
    pub fn finish(mut self) -> FinishedStats {
        let elapsed = self.exchange_start.elapsed();
        // Stop scheduling and refuse in-flight periodic samples before the final endpoint,
        // so it stays the last sample.
        drop(self.registration.take());
        if let Some((_, _, series)) = &self.sampling {
            sampling::lock_series(series).closing = true;
        }
        let (after, after_sample) = observe_process(
            &self.probe,
            &self.target,
            SampleKind::After,
            self.series_start,
        );
        let cgroup = self.cgroup_before.take().map(|before| {
            let after = self
                .probe
                .cgroup
                .observe(self.target.host_pid, &self.groups);
            let deltas = cgroup::deltas(&before, &after, &self.groups);
            CgroupStats {
                before,
                after,
                deltas,
            }
        });
        let cpu_time_seconds_estimate = cpu_estimate(&self.before, &after);
        let mut stats = InvocationSystemStats {
            elapsed_seconds: round_micros(elapsed.as_secs_f64()),
            before: self.before.clone(),
            after,
            cpu_time_seconds_estimate,
            collected_groups: self.groups.clone(),
            cgroup,
            sampled: None,
        };
        let mut artifacts = Vec::new();
        if let Some((cadence, max_samples, series)) = self.sampling.take() {
            let mut series = sampling::lock_series(&series);
            series.push(after_sample);
            let mut sampled = self.reduce(&series, cadence, max_samples);
            if let Some(location) = &self.artifacts {
                self.write_artifacts(location, &series, &mut stats, &mut sampled, &mut artifacts);
            }
            stats.sampled = Some(sampled);
        }
        FinishedStats { stats, artifacts }
    }

    fn reduce(&self, series: &Series, cadence: Duration, max_samples: u64) -> SampledStats {
        let span = series.last_offset.unwrap_or_default();
        let process = self.groups.contains(&SystemStatsGroup::Process);
        let memory = self.groups.contains(&SystemStatsGroup::CgroupMemory);
        let mut diagnostics = Vec::new();
        if series.late_discarded > 0 {
            diagnostics.push(StatsDiagnostic {
                code: codes::LATE_SAMPLES_DISCARDED.to_owned(),
                message: "samples that arrived after the invocation closed were discarded"
                    .to_owned(),
                count: Some(series.late_discarded),
            });
        }
        if series.unavailable > 0 {
            diagnostics.push(StatsDiagnostic {
                code: codes::SAMPLE_UNAVAILABLE.to_owned(),
                message: "some process-tree samples could not be read".to_owned(),
                count: Some(series.unavailable),
            });
        }
        SampledStats {
            interval_ms: u64::try_from(cadence.as_millis()).unwrap_or(u64::MAX),
            max_samples,
            retained_samples: series.retained.len() as u64,
            dropped_samples: series.dropped,
            truncated: series.dropped > 0,
            collection_seconds: round_micros(series.collection.as_secs_f64()),
            largest_gap_seconds: round_micros(series.largest_gap.as_secs_f64()),
            span_seconds: round_micros(span.as_secs_f64()),
            resident_memory_bytes: process.then(|| series.rss.summary(span)),
            process_count: process.then(|| series.processes.summary(span)),
            cgroup_memory_current_bytes: memory.then(|| series.cgroup_memory.summary(span)),
            cpu_time_seconds: process.then(|| series.cpu.estimate()),
            diagnostics,
            samples: None,
            summary: None,
        }
    }

    fn write_artifacts(
        &self,
        location: &ArtifactLocation,
        series: &Series,
        stats: &mut InvocationSystemStats,
        sampled: &mut SampledStats,
        artifacts: &mut Vec<ArtifactRef>,
    ) {
        let reference = |name: &str, kind: &str, media: &str| ArtifactRef {
            name: name.to_owned(),
            kind: kind.to_owned(),
            path: join_reference(&location.reference_dir, name),
            media_type: Some(media.to_owned()),
            metadata: Default::default(),
        };
        let mut lines = String::new();
        for sample in &series.retained {
            let line = sample_line(&self.target, &self.ids, sample, series.clock_ticks);
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
        match write_private(location, SAMPLES_FILE, lines.as_bytes()) {
            Ok(()) => {
                let samples =
                    reference(SAMPLES_FILE, "system_stats_samples", "application/x-ndjson");
                sampled.samples = Some(samples.clone());
                artifacts.push(samples);
            }
            Err(error) => sampled.diagnostics.push(StatsDiagnostic {
                code: codes::SAMPLE_WRITE_FAILED.to_owned(),
                message: format!(
                    "cannot write {}: {}",
                    location.dir.join(SAMPLES_FILE).display(),
                    error.kind()
                ),
                count: None,
            }),
        }
        stats.sampled = Some(sampled.clone());
        let summary = json!({
            "runtime_id": self.target.runtime_id,
            "invocation_id": self.ids.invocation_id,
            "request_id": self.ids.request_id,
            "system_stats": stats,
        });
        let text = serde_json::to_vec_pretty(&summary).unwrap_or_default();
        match write_private(location, SUMMARY_FILE, &text) {
            Ok(()) => {
                let summary = reference(SUMMARY_FILE, "system_stats_summary", "application/json");
                sampled.summary = Some(summary.clone());
                artifacts.push(summary);
            }
            Err(error) => sampled.diagnostics.push(StatsDiagnostic {
                code: codes::SUMMARY_WRITE_FAILED.to_owned(),
                message: format!(
                    "cannot write {}: {}",
                    location.dir.join(SUMMARY_FILE).display(),
                    error.kind()
                ),
                count: None,
            }),
        }
    }
}

impl Drop for InvocationStats {
    fn drop(&mut self) {
        // Unregister first, then close the series so an in-flight sample is discarded.
        drop(self.registration.take());
        if let Some((_, _, series)) = &self.sampling {
            sampling::lock_series(series).closed = true;
        }
    }
}

/// `after.cpu − before.cpu`, omitted when either is missing, the runtime identities differ
/// or the counter decreased.
pub fn cpu_estimate(before: &Observation, after: &Observation) -> Option<f64> {
    let (Some(b), Some(a)) = (&before.snapshot, &after.snapshot) else {
        return None;
    };
    if before.status != ObservationStatus::Available
        || after.status != ObservationStatus::Available
        || b.runtime_id != a.runtime_id
        || b.started_at != a.started_at
        || a.cpu_time_seconds < b.cpu_time_seconds
    {
        return None;
    }
    Some(round_micros(a.cpu_time_seconds - b.cpu_time_seconds))
}

fn join_reference(dir: &str, name: &str) -> String {
    let dir = dir.trim_end_matches('/');
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

fn sample_line(
    target: &StatsTarget,
    ids: &InvocationIds,
    sample: &Sample,
    clock_ticks: u64,
) -> Value {
    let process = match &sample.process {
        ProcessReading::NotCollected => json!({"status": "not_collected"}),
        ProcessReading::Available(totals) => json!({
            "status": "available",
            "resident_memory_bytes": totals.resident_memory_bytes,
            "process_count": totals.process_count,
            "cpu_time_seconds": crate::proc::ticks_to_seconds(totals.cpu_ticks, clock_ticks),
        }),
        ProcessReading::Missing { status, reason } => json!({"status": status, "reason": reason}),
    };
    let mut line = json!({
        "runtime_id": target.runtime_id,
        "invocation_id": ids.invocation_id,
        "request_id": ids.request_id,
        "kind": sample.kind,
        "offset_ms": (sample.offset.as_secs_f64() * 1e6).round() / 1e3,
        "observed_at": sampling::sample_time(sample),
        "process": process,
    });
    if let Some(memory) = &sample.cgroup_memory_current {
        line["cgroup_memory_current_bytes"] = serde_json::to_value(memory).unwrap_or(Value::Null);
    }
    line
}

/// Writes `dir/name` (mode 0600; `dir` created 0700 when missing), beneath the root
/// without following a link (a refusal is an `InvalidInput` error).
fn write_private(location: &ArtifactLocation, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let relative = location
        .dir
        .strip_prefix(&location.root)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?
        .join(name);
    fabric_reactor::beneath::Beneath::open(&location.root)?
        .write(&relative, bytes, 0o600)
        .map_err(|refusal| match refusal {
            fabric_reactor::beneath::Refusal::Io(error) => error,
            refusal if refusal.is_unsafe_path() => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, refusal.to_string())
            }
            refusal => std::io::Error::other(refusal.to_string()),
        })
}
