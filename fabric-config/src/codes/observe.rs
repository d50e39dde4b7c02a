//! Codes of resource observation (`fabric-stats`) and health listeners (`fabric-health`).

use super::{ErrorCode, Origin as O, code};
use crate::error::Stage as S;

/// fabric-stats.
pub(super) const STATS: &[ErrorCode] = &[
    code(
        "resource_observation_unavailable",
        None,
        O::Stats,
        "a resource observation could not be read now",
    ),
    code(
        "resource_observation_unsupported",
        None,
        O::Stats,
        "no resource reader exists for this runtime",
    ),
];

/// fabric-health.
pub(super) const HEALTH: &[ErrorCode] = &[
    code(
        "invalid_check_request",
        Some(S::Config),
        O::Health,
        "a CheckRequest is malformed or names an unknown level",
    ),
    code(
        "health_listener_bind_failed",
        Some(S::Start),
        O::Health,
        "the health listener could not bind its socket",
    ),
    code(
        "health_secret_unavailable",
        Some(S::Start),
        O::Health,
        "no random secret could be drawn for the health channel",
    ),
    code(
        "health_endpoint_write_failed",
        Some(S::Start),
        O::Health,
        "the health endpoint file could not be written",
    ),
    code(
        "health_listener_thread_failed",
        Some(S::Start),
        O::Health,
        "the health listener thread could not be started",
    ),
];
