//! RFC 3339 UTC timestamps with millisecond precision (`2026-10-21T09:01:08.000Z`).

use std::time::{SystemTime, UNIX_EPOCH};

/// Formats a wall-clock time as RFC 3339 UTC with milliseconds. Times before the Unix epoch
/// are clamped to the epoch.
pub fn rfc3339_millis(time: SystemTime) -> String {
    let millis = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let millis = u64::try_from(millis).unwrap_or(u64::MAX);
    let secs = millis / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        millis % 1000
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`, restricted to non-negative day counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2026-10-21T09:01:08Z = 1792573268 s.
        let t = UNIX_EPOCH + Duration::from_millis(1_792_573_268_000);
        assert_eq!(rfc3339_millis(t), "2026-10-21T09:01:08.000Z");
        let leap = UNIX_EPOCH + Duration::from_millis(951_782_400_123); // 2000-02-29
        assert_eq!(rfc3339_millis(leap), "2000-02-29T00:00:00.123Z");
        let end = UNIX_EPOCH + Duration::from_millis(1_735_689_599_999);
        assert_eq!(rfc3339_millis(end), "2024-12-31T23:59:59.999Z");
    }
}
