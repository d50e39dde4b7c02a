//! Durations given in seconds: the one range rule of every timeout option and flag.
//!
//! A duration in seconds must be a finite number above 0 and at most a maximum; the largest
//! any option accepts is [`MAX_TIMEOUT_SECONDS`] (about 31.7 years), so every accepted
//! value converts to a [`Duration`] and can be added to an `Instant` without overflow.
//!
//! ```
//! use fabric_config::seconds::{self, MAX_TIMEOUT_SECONDS};
//!
//! assert!(seconds::in_range(0.25, MAX_TIMEOUT_SECONDS));
//! assert!(!seconds::in_range(1e30, MAX_TIMEOUT_SECONDS));
//! assert!(!seconds::in_range(f64::NAN, MAX_TIMEOUT_SECONDS));
//! assert_eq!(seconds::duration(1.5, MAX_TIMEOUT_SECONDS).map(|d| d.as_millis()), Some(1500));
//! ```

use std::time::Duration;

/// The longest timeout any option or flag accepts, in seconds (10^9).
pub const MAX_TIMEOUT_SECONDS: f64 = 1.0e9;

/// Whether `seconds` is finite, above 0 and at most `max`.
pub fn in_range(seconds: f64, max: f64) -> bool {
    seconds.is_finite() && seconds > 0.0 && seconds <= max.min(MAX_TIMEOUT_SECONDS)
}

/// `seconds` as a duration when [`in_range`].
pub fn duration(seconds: f64, max: f64) -> Option<Duration> {
    in_range(seconds, max).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_finite_positive_values_up_to_the_maximum_are_in_range() {
        for good in [f64::MIN_POSITIVE, 0.001, 1.0, 86_400.0, MAX_TIMEOUT_SECONDS] {
            assert!(in_range(good, MAX_TIMEOUT_SECONDS), "{good}");
            assert!(duration(good, MAX_TIMEOUT_SECONDS).is_some(), "{good}");
        }
        for bad in [
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.0e30,
            f64::MAX,
            MAX_TIMEOUT_SECONDS * 1.000_001,
        ] {
            assert!(!in_range(bad, MAX_TIMEOUT_SECONDS), "{bad}");
            assert_eq!(duration(bad, MAX_TIMEOUT_SECONDS), None, "{bad}");
        }
        assert!(!in_range(86_401.0, 86_400.0));
        // A larger `max` never widens the rule past MAX_TIMEOUT_SECONDS.
        assert!(!in_range(2.0e9, f64::MAX));
    }
}
