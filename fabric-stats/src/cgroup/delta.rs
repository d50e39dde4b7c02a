//! Counter deltas between two cgroup observations.

use fabric_config::config::SystemStatsGroup;
use fabric_config::stats::{CgroupDeltas, CgroupObservation, Measurement, ObservationStatus};

use crate::proc::round_micros;

/// Counter deltas between two observations of the same cgroup.
pub fn deltas(
    before: &CgroupObservation,
    after: &CgroupObservation,
    groups: &[SystemStatsGroup],
) -> CgroupDeltas {
    let cpu = groups.contains(&SystemStatsGroup::CgroupCpu);
    let memory = groups.contains(&SystemStatsGroup::CgroupMemory);
    let pair = match (&before.snapshot, &after.snapshot) {
        (Some(b), Some(a)) if b.path == a.path => Ok((b, a)),
        (Some(_), Some(_)) => Err("cgroup_changed"),
        _ => Err("endpoint_missing"),
    };
    fn diff_f64(
        enabled: bool,
        b: &Measurement<f64>,
        a: &Measurement<f64>,
        pair_ok: Result<(), &str>,
    ) -> Measurement<f64> {
        if !enabled {
            return Measurement::not_collected();
        }
        if let Err(reason) = pair_ok {
            return Measurement::missing(ObservationStatus::Unavailable, reason);
        }
        match (b.get(), a.get()) {
            (Some(&b), Some(&a)) if a >= b => Measurement::available(round_micros(a - b)),
            (Some(_), Some(_)) => {
                Measurement::missing(ObservationStatus::Unavailable, "counter_decreased")
            }
            _ => unavailable_like(b, a),
        }
    }
    fn diff_u64(
        enabled: bool,
        b: &Measurement<u64>,
        a: &Measurement<u64>,
        pair_ok: Result<(), &str>,
    ) -> Measurement<u64> {
        if !enabled {
            return Measurement::not_collected();
        }
        if let Err(reason) = pair_ok {
            return Measurement::missing(ObservationStatus::Unavailable, reason);
        }
        match (b.get(), a.get()) {
            (Some(&b), Some(&a)) if a >= b => Measurement::available(a - b),
            (Some(_), Some(_)) => {
                Measurement::missing(ObservationStatus::Unavailable, "counter_decreased")
            }
            _ => unavailable_like(b, a),
        }
    }
    let ok = pair.map(|_| ());
    match pair {
        Ok((b, a)) => CgroupDeltas {
            cpu_usage_seconds: diff_f64(cpu, &b.cpu_usage_seconds, &a.cpu_usage_seconds, ok),
            cpu_throttled_periods: diff_u64(
                cpu,
                &b.cpu_throttled_periods,
                &a.cpu_throttled_periods,
                ok,
            ),
            cpu_throttled_seconds: diff_f64(
                cpu,
                &b.cpu_throttled_seconds,
                &a.cpu_throttled_seconds,
                ok,
            ),
            memory_oom_kills: diff_u64(memory, &b.memory_oom_kills, &a.memory_oom_kills, ok),
        },
        Err(_) => {
            let none_f = Measurement::not_collected();
            let none_u = Measurement::not_collected();
            CgroupDeltas {
                cpu_usage_seconds: diff_f64(cpu, &none_f, &none_f, ok),
                cpu_throttled_periods: diff_u64(cpu, &none_u, &none_u, ok),
                cpu_throttled_seconds: diff_f64(cpu, &none_f, &none_f, ok),
                memory_oom_kills: diff_u64(memory, &none_u, &none_u, ok),
            }
        }
    }
}

/// A delta whose endpoint is missing keeps the "worst" endpoint status: `unsupported` when
/// the platform has no source, else `unavailable`.
fn unavailable_like<T, U>(b: &Measurement<T>, a: &Measurement<T>) -> Measurement<U> {
    let unsupported = [b, a]
        .iter()
        .any(|m| m.status == ObservationStatus::Unsupported);
    if unsupported {
        Measurement::missing(ObservationStatus::Unsupported, "endpoint_unsupported")
    } else {
        Measurement::missing(ObservationStatus::Unavailable, "endpoint_missing")
    }
}
