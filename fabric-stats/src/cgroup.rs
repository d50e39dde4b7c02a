//! cgroup v2 readings of a process's cgroup (read-only).
//!
//! The cgroup is found from `<proc_root>/<pid>/cgroup` (`0::/path`) under a cgroup root
//! (default `/sys/fs/cgroup`; on a hybrid v1/v2 host the v2 hierarchy at `<root>/unified`
//! is used). Limits account for the cgroup and its visible ancestors: the smallest visible
//! numeric bound wins; `unlimited` needs an explicit `max` source and no numeric bound; no
//! source at all is `unsupported`. Every other measurement is one file; a missing file is
//! `unsupported`, an unreadable or unparsable one `unavailable`. Nothing is ever written.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use fabric_config::config::SystemStatsGroup;
use fabric_config::stats::{
    CgroupDeltas, CgroupObservation, CgroupSnapshot, Limit, LimitStatus, Measurement,
    ObservationStatus,
};

use crate::proc::round_micros;
use crate::timestamp::rfc3339_millis;

/// Reads the cgroup v2 measurements of a process.
#[derive(Debug, Clone)]
pub struct CgroupReader {
    proc_root: PathBuf,
    cgroup_root: PathBuf,
}

impl CgroupReader {
    /// A reader of the proc and cgroup file systems at the given roots (normally `/proc` and
    /// `/sys/fs/cgroup`).
    pub fn new(proc_root: impl Into<PathBuf>, cgroup_root: impl Into<PathBuf>) -> Self {
        CgroupReader {
            proc_root: proc_root.into(),
            cgroup_root: cgroup_root.into(),
        }
    }

    /// One observation of the cgroup of `pid`, with the measurements of `groups`
    /// (`process` is ignored; measurements of unselected `cgroup.*` groups are
    /// `not_collected`).
    pub fn observe(&self, pid: u32, groups: &[SystemStatsGroup]) -> CgroupObservation {
        let Resolved {
            hierarchy,
            dir,
            path,
        } = match self.resolve(pid) {
            Ok(resolved) => resolved,
            Err((status, reason)) => {
                return CgroupObservation {
                    status,
                    snapshot: None,
                    reason: Some(reason.to_owned()),
                };
            }
        };
        let path = path.as_str();
        let observed_at = rfc3339_millis(SystemTime::now());
        let levels = ancestors(&hierarchy, &dir, path);
        let selected: HashSet<SystemStatsGroup> = groups.iter().copied().collect();
        let cpu = selected.contains(&SystemStatsGroup::CgroupCpu);
        let memory = selected.contains(&SystemStatsGroup::CgroupMemory);
        let pressure = selected.contains(&SystemStatsGroup::CgroupPressure);

        let cpu_stat = if cpu {
            Some(read_file(&dir.join("cpu.stat")))
        } else {
            None
        };
        let cpu_key = |key: &str| match &cpu_stat {
            None => Measurement::not_collected(),
            Some(file) => keyed(file, key),
        };
        let usage = cpu_key("usage_usec");
        let throttled = cpu_key("throttled_usec");
        let events = if memory {
            Some(read_file(&dir.join("memory.events")))
        } else {
            None
        };
        let pressure_of = |name: &str| -> (Measurement<f64>, Measurement<f64>) {
            if !pressure {
                return (Measurement::not_collected(), Measurement::not_collected());
            }
            let file = read_file(&dir.join(name));
            (pressure_total(&file, "some"), pressure_total(&file, "full"))
        };
        let (cpu_some, cpu_full) = pressure_of("cpu.pressure");
        let (memory_some, memory_full) = pressure_of("memory.pressure");
        let (io_some, io_full) = pressure_of("io.pressure");
        let single = |enabled: bool, name: &str| {
            if enabled {
                single_value(&read_file(&dir.join(name)))
            } else {
                Measurement::not_collected()
            }
        };

        CgroupObservation {
            status: ObservationStatus::Available,
            reason: None,
            snapshot: Some(CgroupSnapshot {
                path: path.to_owned(),
                observed_at,
                cpu_limit_cores: if cpu {
                    cpu_limit(&levels)
                } else {
                    Limit::not_collected()
                },
                cpu_usage_seconds: usec_to_seconds(usage),
                cpu_throttled_periods: cpu_key("nr_throttled"),
                cpu_throttled_seconds: usec_to_seconds(throttled),
                memory_max_bytes: if memory {
                    byte_limit(&levels, "memory.max")
                } else {
                    Limit::not_collected()
                },
                memory_high_bytes: if memory {
                    byte_limit(&levels, "memory.high")
                } else {
                    Limit::not_collected()
                },
                memory_swap_max_bytes: if memory {
                    byte_limit(&levels, "memory.swap.max")
                } else {
                    Limit::not_collected()
                },
                memory_current_bytes: single(memory, "memory.current"),
                memory_peak_bytes: single(memory, "memory.peak"),
                memory_swap_current_bytes: single(memory, "memory.swap.current"),
                memory_oom_kills: match &events {
                    None => Measurement::not_collected(),
                    Some(file) => keyed(file, "oom_kill"),
                },
                cpu_pressure_some_seconds: cpu_some,
                cpu_pressure_full_seconds: cpu_full,
                memory_pressure_some_seconds: memory_some,
                memory_pressure_full_seconds: memory_full,
                io_pressure_some_seconds: io_some,
                io_pressure_full_seconds: io_full,
            }),
        }
    }

    /// Only `memory.current` of `pid`'s cgroup.
    pub fn memory_current(&self, pid: u32) -> Measurement<u64> {
        match self.resolve(pid) {
            Ok(resolved) => memory_current_in(&resolved.dir),
            Err((status, reason)) => Measurement::missing(status, reason),
        }
    }

    /// The cgroup directory of `pid`, or the status and reason it has none.
    pub(crate) fn resolve(&self, pid: u32) -> Result<Resolved, (ObservationStatus, &'static str)> {
        if !cfg!(target_os = "linux") {
            return Err((ObservationStatus::Unsupported, "platform_unsupported"));
        }
        let Some(hierarchy) = self.hierarchy() else {
            return Err((ObservationStatus::Unsupported, "cgroup_v2_unavailable"));
        };
        let membership =
            match fs::read_to_string(self.proc_root.join(pid.to_string()).join("cgroup")) {
                Ok(text) => text,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    return Err((ObservationStatus::Unavailable, "host_exited"));
                }
                Err(_) => return Err((ObservationStatus::Unavailable, "process_unreadable")),
            };
        let Some(path) = membership.lines().find_map(|line| line.strip_prefix("0::")) else {
            return Err((ObservationStatus::Unsupported, "cgroup_v2_unavailable"));
        };
        let path = path.trim().to_owned();
        let relative = path.trim_start_matches('/');
        if relative.split('/').any(|part| part == "..") {
            // The cgroup lies outside this cgroup namespace's view.
            return Err((ObservationStatus::Unavailable, "cgroup_not_visible"));
        }
        let dir = if relative.is_empty() {
            hierarchy.clone()
        } else {
            hierarchy.join(relative)
        };
        if !dir.is_dir() {
            return Err((ObservationStatus::Unavailable, "cgroup_not_visible"));
        }
        Ok(Resolved {
            hierarchy,
            dir,
            path,
        })
    }

    /// The mounted v2 hierarchy: the root itself, or `<root>/unified` on hybrid hosts.
    fn hierarchy(&self) -> Option<PathBuf> {
        [self.cgroup_root.clone(), self.cgroup_root.join("unified")]
            .into_iter()
            .find(|dir| dir.join("cgroup.controllers").is_file())
    }
}

/// A resolved cgroup: the v2 hierarchy, the cgroup's directory and its path.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub(crate) hierarchy: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) path: String,
}

/// `memory.current` in a cgroup directory.
pub(crate) fn memory_current_in(dir: &Path) -> Measurement<u64> {
    single_value(&read_file(&dir.join("memory.current")))
}

/// (directory, cgroup path) of the cgroup and each visible ancestor, innermost first.
fn ancestors(hierarchy: &Path, dir: &Path, path: &str) -> Vec<(PathBuf, String)> {
    let mut levels = Vec::new();
    let mut dir = dir.to_path_buf();
    let mut path = if path.is_empty() {
        "/".to_owned()
    } else {
        path.to_owned()
    };
    loop {
        levels.push((dir.clone(), path.clone()));
        if dir == hierarchy || path == "/" {
            break;
        }
        let Some(parent) = dir.parent() else { break };
        dir = parent.to_path_buf();
        path = match path.rfind('/') {
            Some(0) | None => "/".to_owned(),
            Some(index) => path[..index].to_owned(),
        };
    }
    levels
}

enum FileRead {
    Text(String),
    Missing,
    Unreadable,
}

fn read_file(path: &Path) -> FileRead {
    match fs::read_to_string(path) {
        Ok(text) => FileRead::Text(text),
        Err(error) if error.kind() == io::ErrorKind::NotFound => FileRead::Missing,
        Err(_) => FileRead::Unreadable,
    }
}

fn missing_measurement<T>(file: &FileRead) -> Option<Measurement<T>> {
    match file {
        FileRead::Text(_) => None,
        FileRead::Missing => Some(Measurement::missing(
            ObservationStatus::Unsupported,
            "file_missing",
        )),
        FileRead::Unreadable => Some(Measurement::missing(
            ObservationStatus::Unavailable,
            "read_failed",
        )),
    }
}

fn parse_failed<T>() -> Measurement<T> {
    Measurement::missing(ObservationStatus::Unavailable, "parse_failed")
}

fn single_value(file: &FileRead) -> Measurement<u64> {
    if let Some(missing) = missing_measurement(file) {
        return missing;
    }
    let FileRead::Text(text) = file else {
        return parse_failed();
    };
    text.trim()
        .parse()
        .map(Measurement::available)
        .unwrap_or_else(|_| parse_failed())
}

/// A `key value` line of a flat-keyed file (`cpu.stat`, `memory.events`).
fn keyed(file: &FileRead, key: &str) -> Measurement<u64> {
    if let Some(missing) = missing_measurement(file) {
        return missing;
    }
    let FileRead::Text(text) = file else {
        return parse_failed();
    };
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        if words.next() == Some(key) {
            return words
                .next()
                .and_then(|value| value.parse().ok())
                .map(Measurement::available)
                .unwrap_or_else(parse_failed);
        }
    }
    Measurement::missing(ObservationStatus::Unsupported, "key_missing")
}

/// `total=` (µs) of the `some`/`full` line of a pressure file, in seconds.
fn pressure_total(file: &FileRead, kind: &str) -> Measurement<f64> {
    if let Some(missing) = missing_measurement(file) {
        return missing;
    }
    let FileRead::Text(text) = file else {
        return parse_failed();
    };
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        if words.next() == Some(kind) {
            return words
                .find_map(|word| word.strip_prefix("total="))
                .and_then(|value| value.parse::<u64>().ok())
                .map(|usec| Measurement::available(round_micros(usec as f64 / 1e6)))
                .unwrap_or_else(parse_failed);
        }
    }
    Measurement::missing(ObservationStatus::Unsupported, "key_missing")
}

fn usec_to_seconds(measurement: Measurement<u64>) -> Measurement<f64> {
    Measurement {
        status: measurement.status,
        value: measurement
            .value
            .map(|usec| round_micros(usec as f64 / 1e6)),
        reason: measurement.reason,
    }
}

/// One limit value of one level.
enum LimitValue<T> {
    Max,
    Bound(T),
}

/// The effective limit over `levels`: the smallest numeric bound, else `unlimited` when a
/// `max` source exists, else `unsupported`. An unreadable or unparsable source makes the
/// limit `unavailable` (it could hide a smaller bound).
fn effective_limit<T: PartialOrd + Copy>(
    levels: &[(PathBuf, String)],
    file: &str,
    parse: impl Fn(&str) -> Option<LimitValue<T>>,
) -> Limit<T> {
    let mut best: Option<(T, &str)> = None;
    let mut max_source: Option<&str> = None;
    for (dir, path) in levels {
        match read_file(&dir.join(file)) {
            FileRead::Missing => {}
            FileRead::Unreadable => {
                return Limit {
                    status: LimitStatus::Unavailable,
                    value: None,
                    source: Some(path.clone()),
                    reason: Some("read_failed".to_owned()),
                };
            }
            FileRead::Text(text) => match parse(text.trim()) {
                None => {
                    return Limit {
                        status: LimitStatus::Unavailable,
                        value: None,
                        source: Some(path.clone()),
                        reason: Some("parse_failed".to_owned()),
                    };
                }
                Some(LimitValue::Max) => {
                    max_source.get_or_insert(path);
                }
                Some(LimitValue::Bound(value)) => {
                    if best.is_none_or(|(current, _)| value < current) {
                        best = Some((value, path));
                    }
                }
            },
        }
    }
    match (best, max_source) {
        (Some((value, source)), _) => Limit {
            status: LimitStatus::Available,
            value: Some(value),
            source: Some(source.to_owned()),
            reason: None,
        },
        (None, Some(source)) => Limit {
            status: LimitStatus::Unlimited,
            value: None,
            source: Some(source.to_owned()),
            reason: None,
        },
        (None, None) => Limit {
            status: LimitStatus::Unsupported,
            value: None,
            source: None,
            reason: Some("no_limit_source".to_owned()),
        },
    }
}

fn byte_limit(levels: &[(PathBuf, String)], file: &str) -> Limit<u64> {
    effective_limit(levels, file, |text| match text {
        "max" => Some(LimitValue::Max),
        number => number.parse().ok().map(LimitValue::Bound),
    })
}

/// `cpu.max` is `<quota|max> <period>`; the limit is quota / period CPUs.
fn cpu_limit(levels: &[(PathBuf, String)]) -> Limit<f64> {
    effective_limit(levels, "cpu.max", |text| {
        let mut words = text.split_ascii_whitespace();
        let quota = words.next()?;
        let period: u64 = match words.next() {
            Some(period) => period.parse().ok()?,
            None => 100_000,
        };
        if quota == "max" {
            return Some(LimitValue::Max);
        }
        let quota: u64 = quota.parse().ok()?;
        if period == 0 {
            return None;
        }
        Some(LimitValue::Bound(round_micros(
            quota as f64 / period as f64,
        )))
    })
}

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
