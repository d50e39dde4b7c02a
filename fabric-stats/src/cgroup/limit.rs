//! Effective limits over a cgroup and its visible ancestors (`memory.max`, `memory.high`,
//! `memory.swap.max`, `cpu.max`).

use fabric_config::stats::{Limit, LimitStatus};

use super::cache::{CPU_MAX, FileRead, Level};
use super::snapshot::{parse_u64, words};
use crate::proc::round_micros;

/// One limit value of one level.
enum LimitValue<T> {
    Max,
    Bound(T),
}

/// The effective limit over `levels`: the smallest numeric bound, else `unlimited` when a
/// `max` source exists, else `unsupported`. An unreadable or unparsable source makes the
/// limit `unavailable` (it could hide a smaller bound).
fn effective_limit<T: PartialOrd + Copy>(
    levels: &mut [Level],
    file: usize,
    buf: &mut Vec<u8>,
    parse: impl Fn(&[u8]) -> Option<LimitValue<T>>,
) -> Limit<T> {
    let mut best: Option<(T, usize)> = None;
    let mut max_source: Option<usize> = None;
    for index in 0..levels.len() {
        let unavailable = |levels: &[Level], reason: &str| Limit {
            status: LimitStatus::Unavailable,
            value: None,
            source: Some(levels[index].path.clone()),
            reason: Some(reason.to_owned()),
        };
        match levels[index].read(file, buf) {
            FileRead::Missing => {}
            FileRead::Unreadable => return unavailable(levels, "read_failed"),
            FileRead::Len(len) => match parse(buf[..len].trim_ascii()) {
                None => return unavailable(levels, "parse_failed"),
                Some(LimitValue::Max) => {
                    max_source.get_or_insert(index);
                }
                Some(LimitValue::Bound(value)) => {
                    if best.is_none_or(|(current, _)| value < current) {
                        best = Some((value, index));
                    }
                }
            },
        }
    }
    match (best, max_source) {
        (Some((value, source)), _) => Limit {
            status: LimitStatus::Available,
            value: Some(value),
            source: Some(levels[source].path.clone()),
            reason: None,
        },
        (None, Some(source)) => Limit {
            status: LimitStatus::Unlimited,
            value: None,
            source: Some(levels[source].path.clone()),
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

pub(super) fn byte_limit(levels: &mut [Level], file: usize, buf: &mut Vec<u8>) -> Limit<u64> {
    effective_limit(levels, file, buf, |text| match text {
        b"max" => Some(LimitValue::Max),
        number => parse_u64(number).map(LimitValue::Bound),
    })
}

/// `cpu.max` is `<quota|max> <period>`; the limit is quota / period CPUs.
pub(super) fn cpu_limit(levels: &mut [Level], buf: &mut Vec<u8>) -> Limit<f64> {
    effective_limit(levels, CPU_MAX, buf, |text| {
        let mut fields = words(text);
        let quota = fields.next()?;
        let period: u64 = match fields.next() {
            Some(period) => parse_u64(period)?,
            None => 100_000,
        };
        if quota == b"max" {
            return Some(LimitValue::Max);
        }
        let quota = parse_u64(quota)?;
        if period == 0 {
            return None;
        }
        Some(LimitValue::Bound(round_micros(
            quota as f64 / period as f64,
        )))
    })
}
