//! Pure reductions over a time-ordered series of readings.
//!
//! Gauges (RSS, process count, cgroup memory) reduce to final, sampled peak, min/max range,
//! a hold-last time-weighted mean and covered time. The mean holds each valid reading until
//! the next one, but only across *adjacent* valid readings at most twice the cadence apart:
//! a missing reading or a longer gap is excluded from both the integral and the covered
//! time. Counters (CPU seconds) reduce to last − first, invalidated by a decrease, a missing
//! reading or a long gap.

use std::time::Duration;

use fabric_config::stats::{GaugeSummary, Measurement, ObservationStatus};

use crate::proc::round_micros;

/// Streaming gauge reduction. Feed readings in time order with [`GaugeAccumulator::push`].
#[derive(Debug, Clone)]
pub struct GaugeAccumulator {
    max_gap: f64,
    observations: u64,
    min: Option<f64>,
    max: Option<f64>,
    /// The previous reading when it was valid: (offset seconds, value).
    previous: Option<(f64, f64)>,
    /// Value of the most recent reading (None when it was missing).
    last: Option<f64>,
    integral: f64,
    covered: f64,
}

impl GaugeAccumulator {
    /// An empty accumulator for a series sampled every `cadence`.
    pub fn new(cadence: Duration) -> Self {
        GaugeAccumulator {
            max_gap: 2.0 * cadence.as_secs_f64(),
            observations: 0,
            min: None,
            max: None,
            previous: None,
            last: None,
            integral: 0.0,
            covered: 0.0,
        }
    }

    /// Adds one reading at `offset` from the series start; `None` is a missing reading.
    pub fn push(&mut self, offset: Duration, value: Option<f64>) {
        let t = offset.as_secs_f64();
        self.last = value;
        let Some(value) = value else {
            self.previous = None;
            return;
        };
        self.observations += 1;
        self.min = Some(self.min.map_or(value, |m| m.min(value)));
        self.max = Some(self.max.map_or(value, |m| m.max(value)));
        if let Some((t0, v0)) = self.previous {
            let gap = t - t0;
            // A small tolerance keeps a gap of exactly twice the cadence covered despite
            // scheduling jitter in the float conversion.
            if gap >= 0.0 && gap <= self.max_gap * (1.0 + 1e-9) {
                self.integral += v0 * gap;
                self.covered += gap;
            }
        }
        self.previous = Some((t, value));
    }

    /// The summary over a series spanning `span` (first to last endpoint).
    pub fn summary(&self, span: Duration) -> GaugeSummary {
        let span = span.as_secs_f64();
        let covered_fraction = if span > 0.0 {
            (self.covered / span).min(1.0)
        } else if self.observations > 0 {
            1.0
        } else {
            0.0
        };
        GaugeSummary {
            observations: self.observations,
            final_value: self.last,
            sampled_peak: self.max,
            min: self.min,
            max: self.max,
            time_weighted_mean: (self.covered > 0.0).then(|| self.integral / self.covered),
            covered_seconds: round_micros(self.covered),
            covered_fraction: round_micros(covered_fraction),
        }
    }
}

/// Reduces a whole gauge series: `readings` are (offset, value) in time order, `span` the
/// time from the first to the last endpoint.
pub fn reduce_gauge(
    readings: &[(Duration, Option<f64>)],
    cadence: Duration,
    span: Duration,
) -> GaugeSummary {
    let mut accumulator = GaugeAccumulator::new(cadence);
    for &(offset, value) in readings {
        accumulator.push(offset, value);
    }
    accumulator.summary(span)
}

/// Streaming counter reduction (CPU seconds over the sampled series).
#[derive(Debug, Clone)]
pub struct CounterAccumulator {
    max_gap: f64,
    first: Option<f64>,
    previous: Option<(f64, f64)>,
    broken: Option<&'static str>,
}

impl CounterAccumulator {
    /// An empty accumulator for a series sampled every `cadence`.
    pub fn new(cadence: Duration) -> Self {
        CounterAccumulator {
            max_gap: 2.0 * cadence.as_secs_f64(),
            first: None,
            previous: None,
            broken: None,
        }
    }

    /// Adds one reading; `None` is a missing reading (it invalidates the estimate).
    pub fn push(&mut self, offset: Duration, value: Option<f64>) {
        let t = offset.as_secs_f64();
        let Some(value) = value else {
            self.broken.get_or_insert("missing_observation");
            return;
        };
        if let Some((t0, v0)) = self.previous {
            if value < v0 {
                self.broken.get_or_insert("counter_decreased");
            } else if t - t0 > self.max_gap * (1.0 + 1e-9) {
                self.broken.get_or_insert("long_gap");
            }
        }
        self.first.get_or_insert(value);
        self.previous = Some((t, value));
    }

    /// Marks the series as broken by a changed target.
    pub fn target_changed(&mut self) {
        self.broken.get_or_insert("target_changed");
    }

    /// last − first, or `unavailable` with the first reason continuity broke.
    pub fn estimate(&self) -> Measurement<f64> {
        if let Some(reason) = self.broken {
            return Measurement::missing(ObservationStatus::Unavailable, reason);
        }
        match (self.first, self.previous) {
            (Some(first), Some((_, last))) => Measurement::available(round_micros(last - first)),
            _ => Measurement::missing(ObservationStatus::Unavailable, "missing_observation"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    fn s(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    #[test]
    fn spec_worked_example() {
        // 80 MiB → 400 MiB → 80 MiB at 0, 1 and 2 s, sampled every second.
        let readings = [
            (s(0.0), Some(80.0 * MIB)),
            (s(1.0), Some(400.0 * MIB)),
            (s(2.0), Some(80.0 * MIB)),
        ];
        let summary = reduce_gauge(&readings, s(1.0), s(2.0));
        assert_eq!(summary.final_value, Some(80.0 * MIB));
        assert_eq!(summary.sampled_peak, Some(400.0 * MIB));
        assert_eq!(
            (summary.min, summary.max),
            (Some(80.0 * MIB), Some(400.0 * MIB))
        );
        assert_eq!(summary.time_weighted_mean, Some(240.0 * MIB));
        assert_eq!(summary.covered_seconds, 2.0);
        assert_eq!(summary.covered_fraction, 1.0);
        assert_eq!(summary.observations, 3);
    }

    #[test]
    fn gaps_over_twice_the_cadence_are_excluded() {
        // 100 for [0,1), then a 3 s gap (excluded), then 300 for [4,5).
        let readings = [
            (s(0.0), Some(100.0)),
            (s(1.0), Some(200.0)),
            (s(4.0), Some(300.0)),
            (s(5.0), Some(50.0)),
        ];
        let summary = reduce_gauge(&readings, s(1.0), s(5.0));
        assert_eq!(summary.time_weighted_mean, Some((100.0 + 300.0) / 2.0));
        assert_eq!(summary.covered_seconds, 2.0);
        assert_eq!(summary.covered_fraction, 0.4);
        // Exactly twice the cadence is still covered.
        let readings = [(s(0.0), Some(10.0)), (s(2.0), Some(20.0))];
        assert_eq!(reduce_gauge(&readings, s(1.0), s(2.0)).covered_seconds, 2.0);
    }

    #[test]
    fn missing_readings_break_adjacency_and_final() {
        let readings = [
            (s(0.0), Some(10.0)),
            (s(1.0), None),
            (s(2.0), Some(30.0)),
            (s(3.0), None),
        ];
        let summary = reduce_gauge(&readings, s(1.0), s(3.0));
        assert_eq!(summary.covered_seconds, 0.0);
        assert_eq!(summary.time_weighted_mean, None);
        // The final endpoint was missing: no old value is reported as final.
        assert_eq!(summary.final_value, None);
        assert_eq!(summary.sampled_peak, Some(30.0));
        assert_eq!(summary.observations, 2);
    }

    #[test]
    fn counter_estimate_and_its_invalidations() {
        let mut ok = CounterAccumulator::new(s(1.0));
        for (t, v) in [(0.0, 12.0), (1.0, 13.0), (2.0, 14.5)] {
            ok.push(s(t), Some(v));
        }
        assert_eq!(ok.estimate(), Measurement::available(2.5));

        let mut decreased = CounterAccumulator::new(s(1.0));
        decreased.push(s(0.0), Some(5.0));
        decreased.push(s(1.0), Some(4.0));
        assert_eq!(
            decreased.estimate().reason.as_deref(),
            Some("counter_decreased")
        );

        let mut gap = CounterAccumulator::new(s(1.0));
        gap.push(s(0.0), Some(1.0));
        gap.push(s(3.5), Some(2.0));
        assert_eq!(gap.estimate().reason.as_deref(), Some("long_gap"));

        let mut missing = CounterAccumulator::new(s(1.0));
        missing.push(s(0.0), Some(1.0));
        missing.push(s(1.0), None);
        missing.push(s(2.0), Some(2.0));
        assert_eq!(missing.estimate().status, ObservationStatus::Unavailable);
        assert_eq!(
            missing.estimate().reason.as_deref(),
            Some("missing_observation")
        );
    }
}
