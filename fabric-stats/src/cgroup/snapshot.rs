//! One snapshot of a resolved cgroup: the selected measurements read from its files and
//! the parsers of the cgroup v2 file formats.

use fabric_config::stats::{CgroupSnapshot, Limit, Measurement, ObservationStatus};

use super::cache::{
    CPU_PRESSURE, CPU_STAT, Cgroup, FileRead, IO_PRESSURE, MEMORY_CURRENT, MEMORY_EVENTS,
    MEMORY_HIGH, MEMORY_MAX, MEMORY_PEAK, MEMORY_PRESSURE, MEMORY_SWAP_CURRENT, MEMORY_SWAP_MAX,
};
use super::limit::{byte_limit, cpu_limit};
use crate::proc::round_micros;

/// Reads the selected measurements of a resolved cgroup.
pub(super) fn read_snapshot(
    cgroup: &mut Cgroup,
    buf: &mut Vec<u8>,
    observed_at: String,
    cpu: bool,
    memory: bool,
    pressure: bool,
) -> CgroupSnapshot {
    let levels = &mut cgroup.levels;
    let path = levels[0].path.clone();
    let [usage, throttled_periods, throttled] = if cpu {
        let read = levels[0].read(CPU_STAT, buf);
        keyed(
            read,
            buf,
            [b"usage_usec", b"nr_throttled", b"throttled_usec"],
        )
    } else {
        std::array::from_fn(|_| Measurement::not_collected())
    };
    let [oom_kills] = if memory {
        let read = levels[0].read(MEMORY_EVENTS, buf);
        keyed(read, buf, [b"oom_kill"])
    } else {
        [Measurement::not_collected()]
    };
    let mut pressure_of = |file: usize| {
        if !pressure {
            return [Measurement::not_collected(), Measurement::not_collected()];
        }
        let read = levels[0].read(file, buf);
        pressure_totals(read, buf)
    };
    let [cpu_some, cpu_full] = pressure_of(CPU_PRESSURE);
    let [memory_some, memory_full] = pressure_of(MEMORY_PRESSURE);
    let [io_some, io_full] = pressure_of(IO_PRESSURE);
    let mut single = |file: usize| {
        if memory {
            let read = levels[0].read(file, buf);
            single_value(read, buf)
        } else {
            Measurement::not_collected()
        }
    };
    let memory_current_bytes = single(MEMORY_CURRENT);
    let memory_peak_bytes = single(MEMORY_PEAK);
    let memory_swap_current_bytes = single(MEMORY_SWAP_CURRENT);
    let mut byte_limit_of = |file: usize| {
        if memory {
            byte_limit(levels, file, buf)
        } else {
            Limit::not_collected()
        }
    };
    let memory_max_bytes = byte_limit_of(MEMORY_MAX);
    let memory_high_bytes = byte_limit_of(MEMORY_HIGH);
    let memory_swap_max_bytes = byte_limit_of(MEMORY_SWAP_MAX);
    let cpu_limit_cores = if cpu {
        cpu_limit(levels, buf)
    } else {
        Limit::not_collected()
    };
    CgroupSnapshot {
        path,
        observed_at,
        cpu_limit_cores,
        cpu_usage_seconds: usec_to_seconds(usage),
        cpu_throttled_periods: throttled_periods,
        cpu_throttled_seconds: usec_to_seconds(throttled),
        memory_max_bytes,
        memory_high_bytes,
        memory_swap_max_bytes,
        memory_current_bytes,
        memory_peak_bytes,
        memory_swap_current_bytes,
        memory_oom_kills: oom_kills,
        cpu_pressure_some_seconds: cpu_some,
        cpu_pressure_full_seconds: cpu_full,
        memory_pressure_some_seconds: memory_some,
        memory_pressure_full_seconds: memory_full,
        io_pressure_some_seconds: io_some,
        io_pressure_full_seconds: io_full,
    }
}

/// The content of a read, or the measurement that says why there is none.
fn content<T>(read: FileRead, buf: &[u8]) -> Result<&[u8], Measurement<T>> {
    match read {
        FileRead::Len(len) => Ok(&buf[..len]),
        FileRead::Missing => Err(Measurement::missing(
            ObservationStatus::Unsupported,
            "file_missing",
        )),
        FileRead::Unreadable => Err(Measurement::missing(
            ObservationStatus::Unavailable,
            "read_failed",
        )),
    }
}

fn parse_failed<T>() -> Measurement<T> {
    Measurement::missing(ObservationStatus::Unavailable, "parse_failed")
}

/// A decimal `u64` (digits only).
pub(super) fn parse_u64(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    bytes.iter().try_fold(0u64, |value, &byte| {
        let digit = byte.checked_sub(b'0').filter(|d| *d < 10)?;
        value.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

pub(super) fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace)
        .filter(|word| !word.is_empty())
}

pub(super) fn single_value(read: FileRead, buf: &[u8]) -> Measurement<u64> {
    match content(read, buf) {
        Ok(text) => parse_u64(text.trim_ascii())
            .map(Measurement::available)
            .unwrap_or_else(parse_failed),
        Err(missing) => missing,
    }
}

/// The values of `key value` lines of a flat-keyed file (`cpu.stat`, `memory.events`);
/// the first line of a key counts.
fn keyed<const N: usize>(read: FileRead, buf: &[u8], keys: [&[u8]; N]) -> [Measurement<u64>; N] {
    let text = match content::<u64>(read, buf) {
        Ok(text) => text,
        Err(missing) => return std::array::from_fn(|_| missing.clone()),
    };
    let mut found: [Option<Measurement<u64>>; N] = std::array::from_fn(|_| None);
    for line in text.split(|&b| b == b'\n') {
        let mut line_words = words(line);
        let Some(key) = line_words.next() else {
            continue;
        };
        if let Some(index) = keys.iter().position(|k| *k == key)
            && found[index].is_none()
        {
            found[index] = Some(
                line_words
                    .next()
                    .and_then(parse_u64)
                    .map(Measurement::available)
                    .unwrap_or_else(parse_failed),
            );
        }
    }
    found.map(|value| {
        value.unwrap_or_else(|| Measurement::missing(ObservationStatus::Unsupported, "key_missing"))
    })
}

/// `total=` (µs) of the `some` and `full` lines of a pressure file, in seconds.
fn pressure_totals(read: FileRead, buf: &[u8]) -> [Measurement<f64>; 2] {
    let text = match content::<f64>(read, buf) {
        Ok(text) => text,
        Err(missing) => return [missing.clone(), missing],
    };
    let mut found: [Option<Measurement<f64>>; 2] = [None, None];
    for line in text.split(|&b| b == b'\n') {
        let mut line_words = words(line);
        let index = match line_words.next() {
            Some(b"some") => 0,
            Some(b"full") => 1,
            _ => continue,
        };
        if found[index].is_some() {
            continue;
        }
        found[index] = Some(
            line_words
                .find_map(|word| word.strip_prefix(b"total="))
                .and_then(parse_u64)
                .map(|usec| Measurement::available(round_micros(usec as f64 / 1e6)))
                .unwrap_or_else(parse_failed),
        );
    }
    found.map(|value| {
        value.unwrap_or_else(|| Measurement::missing(ObservationStatus::Unsupported, "key_missing"))
    })
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
