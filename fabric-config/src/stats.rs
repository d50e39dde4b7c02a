//! Resource snapshots and invocation system stats: the wire shapes of
//! `Runtime.resource_snapshot()`, `RunResult.resource_snapshot` and `RunResult.system_stats`.
//!
//! These are result types: decoding tolerates unknown fields (a newer core may add
//! measurements), and every optional field is omitted when absent, so a serialized value
//! round-trips the spec's JSON fragments unchanged. Timestamps are RFC 3339 UTC strings with
//! millisecond precision (`2026-10-21T09:01:08.000Z`).
//!
//! Every measurement carries an explicit status. A value is present only when the status is
//! `available`; a missing reading is never replaced by zero.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agent::ArtifactRef;
use crate::config::SystemStatsGroup;

/// One reading of a runtime's process tree: the local adapter host and its descendants.
///
/// ```json
/// {"runtime_id": "runtime-1", "started_at": "2026-10-21T09:00:00.000Z",
///  "observed_at": "2026-10-21T09:01:08.000Z", "resident_memory_bytes": 83886080,
///  "process_count": 1, "cpu_time_seconds": 14.5}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeResourceSnapshot {
    /// Runtime the snapshot describes.
    pub runtime_id: String,
    /// When the runtime's adapter host was started (RFC 3339 UTC).
    pub started_at: String,
    /// When the values were read (RFC 3339 UTC).
    pub observed_at: String,
    /// Sum of the resident set sizes of the live processes (shared pages count once per
    /// process).
    pub resident_memory_bytes: u64,
    /// Live processes, including the adapter host; unreaped exited processes are not counted.
    pub process_count: u64,
    /// CPU time used since the adapter host started, including exited descendants. It can
    /// drop when a descendant leaves the tree.
    pub cpu_time_seconds: f64,
}

/// Availability of one observation or measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObservationStatus {
    /// The value was read.
    Available,
    /// The value exists on this platform but could not be read (see `reason`).
    Unavailable,
    /// The platform, provider or kernel has no source for the value.
    Unsupported,
    /// The metric group was excluded by `system_stats.collect`.
    NotCollected,
}

impl ObservationStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ObservationStatus::Available => "available",
            ObservationStatus::Unavailable => "unavailable",
            ObservationStatus::Unsupported => "unsupported",
            ObservationStatus::NotCollected => "not_collected",
        }
    }
}

/// One endpoint observation of the process tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Observation {
    /// Whether the snapshot was read.
    pub status: ObservationStatus,
    /// The reading; present only when `status` is `available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<RuntimeResourceSnapshot>,
    /// Stable reason for `unavailable`/`unsupported` (for example `host_exited`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Observation {
    /// An available observation.
    pub fn available(snapshot: RuntimeResourceSnapshot) -> Self {
        Observation {
            status: ObservationStatus::Available,
            snapshot: Some(snapshot),
            reason: None,
        }
    }

    /// An observation without a reading (`unavailable`, `unsupported` or `not_collected`).
    pub fn missing(status: ObservationStatus, reason: Option<String>) -> Self {
        Observation {
            status,
            snapshot: None,
            reason,
        }
    }
}

/// Invocation system stats: `RunResult.system_stats` of a local runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InvocationSystemStats {
    /// Monotonic duration of the adapter exchange, in seconds.
    pub elapsed_seconds: f64,
    /// Process-tree observation before the adapter exchange.
    pub before: Observation,
    /// Process-tree observation after the adapter exchange.
    pub after: Observation,
    /// `after.cpu_time_seconds - before.cpu_time_seconds`; omitted when either reading is
    /// missing, the runtime identities differ, or the counter decreased.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time_seconds_estimate: Option<f64>,
    /// The selected metric groups, including those unavailable on this platform.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collected_groups: Vec<SystemStatsGroup>,
    /// The adapter host's cgroup v2 observations; omitted when no `cgroup.*` group is
    /// selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupStats>,
    /// Periodic sampling reductions; omitted when sampling is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<SampledStats>,
}

/// One measured value with its availability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Measurement_{T}")]
pub struct Measurement<T> {
    /// Whether the value was read.
    pub status: ObservationStatus,
    /// The value; present only when `status` is `available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<T>,
    /// Stable reason for `unavailable`/`unsupported` (for example `file_missing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl<T> Measurement<T> {
    /// An available value.
    pub fn available(value: T) -> Self {
        Measurement {
            status: ObservationStatus::Available,
            value: Some(value),
            reason: None,
        }
    }

    /// A missing value with its status and reason.
    pub fn missing(status: ObservationStatus, reason: impl Into<String>) -> Self {
        Measurement {
            status,
            value: None,
            reason: Some(reason.into()),
        }
    }

    /// A value of an excluded group.
    pub fn not_collected() -> Self {
        Measurement {
            status: ObservationStatus::NotCollected,
            value: None,
            reason: None,
        }
    }

    /// The value when available.
    pub fn get(&self) -> Option<&T> {
        match self.status {
            ObservationStatus::Available => self.value.as_ref(),
            _ => None,
        }
    }
}

/// Availability of a resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitStatus {
    /// A numeric bound is visible (`value`); the smallest visible one wins.
    Available,
    /// Every visible source says `max` and none gives a numeric bound.
    Unlimited,
    /// A source exists but could not be read.
    Unavailable,
    /// No visible cgroup level has a source for this limit.
    Unsupported,
    /// The metric group was excluded by `system_stats.collect`.
    NotCollected,
}

/// A visible cgroup limit over the host's cgroup and its visible ancestors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Limit_{T}")]
pub struct Limit<T> {
    /// Whether a bound, an explicit `max`, or nothing was found.
    pub status: LimitStatus,
    /// The smallest visible numeric bound; present only when `status` is `available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<T>,
    /// The cgroup path (relative to the cgroup root) that supplied the bound or `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Stable reason for `unavailable`/`unsupported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl<T> Limit<T> {
    /// A limit of an excluded group.
    pub fn not_collected() -> Self {
        Limit {
            status: LimitStatus::NotCollected,
            value: None,
            source: None,
            reason: None,
        }
    }
}

/// cgroup v2 observations of the adapter host's cgroup: endpoints and counter deltas.
///
/// The cgroup can contain other workloads: its totals overlap the process-tree totals and
/// must not be added to them. `memory_peak_bytes` covers the cgroup's lifetime (or the last
/// external reset), not one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CgroupStats {
    /// Reading before the adapter exchange.
    pub before: CgroupObservation,
    /// Reading after the adapter exchange.
    pub after: CgroupObservation,
    /// Counter differences between the endpoints.
    pub deltas: CgroupDeltas,
}

/// One endpoint observation of the host's cgroup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CgroupObservation {
    /// Whether the cgroup was found (`unsupported` without cgroup v2).
    pub status: ObservationStatus,
    /// The reading; present only when `status` is `available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<CgroupSnapshot>,
    /// Stable reason for `unavailable`/`unsupported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The measurements of one cgroup reading. Measurements of excluded groups are
/// `not_collected`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CgroupSnapshot {
    /// The cgroup path of the adapter host, relative to the cgroup root (`/user.slice/...`).
    pub path: String,
    /// When the values were read (RFC 3339 UTC).
    pub observed_at: String,
    /// `cgroup.cpu`: visible CPU bandwidth limit in CPUs (`cpu.max` quota / period).
    pub cpu_limit_cores: Limit<f64>,
    /// `cgroup.cpu`: `cpu.stat usage_usec`, in seconds.
    pub cpu_usage_seconds: Measurement<f64>,
    /// `cgroup.cpu`: `cpu.stat nr_throttled`.
    pub cpu_throttled_periods: Measurement<u64>,
    /// `cgroup.cpu`: `cpu.stat throttled_usec`, in seconds.
    pub cpu_throttled_seconds: Measurement<f64>,
    /// `cgroup.memory`: visible `memory.max`.
    pub memory_max_bytes: Limit<u64>,
    /// `cgroup.memory`: visible `memory.high`.
    pub memory_high_bytes: Limit<u64>,
    /// `cgroup.memory`: visible `memory.swap.max`.
    pub memory_swap_max_bytes: Limit<u64>,
    /// `cgroup.memory`: `memory.current` (container-accounted memory).
    pub memory_current_bytes: Measurement<u64>,
    /// `cgroup.memory`: `memory.peak` (provider high-water mark over the cgroup's lifetime).
    pub memory_peak_bytes: Measurement<u64>,
    /// `cgroup.memory`: `memory.swap.current`.
    pub memory_swap_current_bytes: Measurement<u64>,
    /// `cgroup.memory`: `memory.events oom_kill`.
    pub memory_oom_kills: Measurement<u64>,
    /// `cgroup.pressure`: `cpu.pressure` `some total=`, in seconds.
    pub cpu_pressure_some_seconds: Measurement<f64>,
    /// `cgroup.pressure`: `cpu.pressure` `full total=`, in seconds.
    pub cpu_pressure_full_seconds: Measurement<f64>,
    /// `cgroup.pressure`: `memory.pressure` `some total=`, in seconds.
    pub memory_pressure_some_seconds: Measurement<f64>,
    /// `cgroup.pressure`: `memory.pressure` `full total=`, in seconds.
    pub memory_pressure_full_seconds: Measurement<f64>,
    /// `cgroup.pressure`: `io.pressure` `some total=`, in seconds.
    pub io_pressure_some_seconds: Measurement<f64>,
    /// `cgroup.pressure`: `io.pressure` `full total=`, in seconds.
    pub io_pressure_full_seconds: Measurement<f64>,
}

/// Counter differences (after − before) of the host's cgroup. A delta is `unavailable`
/// when an endpoint is missing, the cgroup path changed, or the counter decreased.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CgroupDeltas {
    /// `cgroup.cpu`: CPU use during the exchange, in seconds.
    pub cpu_usage_seconds: Measurement<f64>,
    /// `cgroup.cpu`: throttled periods during the exchange.
    pub cpu_throttled_periods: Measurement<u64>,
    /// `cgroup.cpu`: throttled time during the exchange, in seconds.
    pub cpu_throttled_seconds: Measurement<f64>,
    /// `cgroup.memory`: OOM kills during the exchange.
    pub memory_oom_kills: Measurement<u64>,
}

/// Reductions over periodic samples (`system_stats.sampling`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SampledStats {
    /// Sampling cadence in milliseconds.
    pub interval_ms: u64,
    /// Bound on retained intermediate samples (both endpoints are always retained).
    pub max_samples: u64,
    /// Samples retained in the series (endpoints included).
    pub retained_samples: u64,
    /// Intermediate samples dropped because `max_samples` was reached.
    pub dropped_samples: u64,
    /// Whether samples were dropped.
    pub truncated: bool,
    /// Total time spent collecting samples, in seconds.
    pub collection_seconds: f64,
    /// Largest interval between consecutive samples, in seconds.
    pub largest_gap_seconds: f64,
    /// Time from the first to the last endpoint sample, in seconds.
    pub span_seconds: f64,
    /// `process`: resident memory of the process tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_memory_bytes: Option<GaugeSummary>,
    /// `process`: live process count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_count: Option<GaugeSummary>,
    /// `cgroup.memory`: `memory.current` of the host's cgroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_memory_current_bytes: Option<GaugeSummary>,
    /// `process`: CPU time over the sampled series; unavailable when a counter reset, a
    /// changed target, a missing observation or a long gap breaks continuity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time_seconds: Option<Measurement<f64>>,
    /// Collection-quality diagnostics (`sample_write_failed`, `late_samples_discarded`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<StatsDiagnostic>,
    /// The `system-stats.jsonl` series, when it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<ArtifactRef>,
    /// The `system-stats-summary.json` file, when it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ArtifactRef>,
}

/// Reductions of one sampled gauge.
///
/// For readings 80 MiB → 400 MiB → 80 MiB at 0, 1 and 2 s: `final` 80 MiB, `sampled_peak`
/// 400 MiB, `min`..`max` 80–400 MiB, `time_weighted_mean` 240 MiB (hold-last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GaugeSummary {
    /// Valid readings.
    pub observations: u64,
    /// The last reading when it belongs to the final endpoint; omitted otherwise.
    #[serde(rename = "final", default, skip_serializing_if = "Option::is_none")]
    pub final_value: Option<f64>,
    /// Largest reading (a sampled maximum, not a true high-water mark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_peak: Option<f64>,
    /// Smallest reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Largest reading (same as `sampled_peak`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Hold-last time-weighted mean over covered intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_weighted_mean: Option<f64>,
    /// Time between adjacent valid readings no further apart than twice the cadence.
    pub covered_seconds: f64,
    /// `covered_seconds / span_seconds` (1.0 when the span is empty and a reading exists).
    pub covered_fraction: f64,
}

/// One collection-quality diagnostic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatsDiagnostic {
    /// Stable snake_case code (`sample_write_failed`, `summary_write_failed`,
    /// `late_samples_discarded`, `sample_unavailable`).
    pub code: String,
    /// Human-readable, secret-free description.
    pub message: String,
    /// How many times it occurred, when it counts events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn spec_fragment() -> Value {
        json!({
            "elapsed_seconds": 8.0,
            "before": {
                "status": "available",
                "snapshot": {
                    "runtime_id": "runtime-1",
                    "started_at": "2026-10-21T09:00:00.000Z",
                    "observed_at": "2026-10-21T09:01:00.000Z",
                    "resident_memory_bytes": 52428800,
                    "process_count": 1,
                    "cpu_time_seconds": 12.0
                }
            },
            "after": {
                "status": "available",
                "snapshot": {
                    "runtime_id": "runtime-1",
                    "started_at": "2026-10-21T09:00:00.000Z",
                    "observed_at": "2026-10-21T09:01:08.000Z",
                    "resident_memory_bytes": 83886080,
                    "process_count": 1,
                    "cpu_time_seconds": 14.5
                }
            },
            "cpu_time_seconds_estimate": 2.5
        })
    }

    #[test]
    fn spec_example_round_trips_unchanged() {
        let stats: InvocationSystemStats = serde_json::from_value(spec_fragment()).unwrap();
        assert_eq!(stats.cpu_time_seconds_estimate, Some(2.5));
        assert_eq!(
            stats.after.snapshot.as_ref().unwrap().resident_memory_bytes,
            83_886_080
        );
        assert_eq!(serde_json::to_value(&stats).unwrap(), spec_fragment());
        // Text form keeps the float spelling of the example.
        let text = serde_json::to_string(&stats).unwrap();
        assert!(text.contains("\"elapsed_seconds\":8.0"), "{text}");
        assert!(text.contains("\"cpu_time_seconds\":12.0"), "{text}");
    }

    #[test]
    fn statuses_and_groups_use_wire_spellings() {
        let observation = Observation::missing(ObservationStatus::NotCollected, None);
        assert_eq!(
            serde_json::to_value(&observation).unwrap(),
            json!({"status": "not_collected"})
        );
        let unavailable =
            Observation::missing(ObservationStatus::Unavailable, Some("host_exited".into()));
        assert_eq!(
            serde_json::to_value(&unavailable).unwrap(),
            json!({"status": "unavailable", "reason": "host_exited"})
        );
        for group in SystemStatsGroup::ALL {
            assert_eq!(serde_json::to_value(group).unwrap(), json!(group.as_str()));
        }
        let limit: Limit<u64> = Limit {
            status: LimitStatus::Unlimited,
            value: None,
            source: Some("/".into()),
            reason: None,
        };
        assert_eq!(
            serde_json::to_value(&limit).unwrap(),
            json!({"status": "unlimited", "source": "/"})
        );
    }

    #[test]
    fn gauge_final_uses_reserved_word() {
        let gauge = GaugeSummary {
            observations: 3,
            final_value: Some(80.0),
            sampled_peak: Some(400.0),
            min: Some(80.0),
            max: Some(400.0),
            time_weighted_mean: Some(240.0),
            covered_seconds: 2.0,
            covered_fraction: 1.0,
        };
        let value = serde_json::to_value(&gauge).unwrap();
        assert_eq!(value["final"], json!(80.0));
        let back: GaugeSummary = serde_json::from_value(value).unwrap();
        assert_eq!(back, gauge);
    }

    #[test]
    fn unknown_result_fields_are_tolerated() {
        let mut fragment = spec_fragment();
        fragment["future_field"] = json!(1);
        let stats: InvocationSystemStats = serde_json::from_value(fragment).unwrap();
        assert_eq!(stats.elapsed_seconds, 8.0);
    }

    #[test]
    fn schema_generates() {
        let schema = schemars::schema_for!(InvocationSystemStats);
        let text = serde_json::to_string(&schema).unwrap();
        assert!(text.contains("cpu_time_seconds_estimate"));
        assert!(text.contains("not_collected"));
    }
}
