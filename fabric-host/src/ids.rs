//! Generated identifiers (`runtime-…`, `invocation-…`, `request-…`, ...).

use std::time::{SystemTime, UNIX_EPOCH};

/// `<prefix>-<32 hex digits>` from a random v4 UUID.
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

/// Unix time in milliseconds.
pub(crate) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
