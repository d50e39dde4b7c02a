//! Wall-clock helpers: RFC 3339 UTC timestamps with millisecond precision.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::macros::format_description;

/// `2026-11-30T12:00:00.123Z` for `at`.
pub fn rfc3339(at: SystemTime) -> String {
    let format =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    OffsetDateTime::from(at)
        .format(&format)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

/// Whether `text` is an RFC 3339 timestamp in UTC (`Z` suffix).
pub fn is_rfc3339_utc(text: &str) -> bool {
    text.ends_with('Z')
        && OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).is_ok()
}

/// Unix milliseconds now (0 if the clock is before 1970).
pub fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Whole milliseconds of `d`, rounded down.
pub fn whole_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_millis() {
        let at = UNIX_EPOCH + Duration::from_millis(1_796_040_000_123);
        let text = rfc3339(at);
        assert_eq!(text, "2026-11-30T12:00:00.123Z");
        assert!(is_rfc3339_utc(&text));
        assert!(!is_rfc3339_utc("2026-11-30T12:00:00.123+01:00"));
        assert!(!is_rfc3339_utc("yesterday"));
        assert_eq!(unix_ms(at), 1_796_040_000_123);
    }
}
