//! Codes of resource observation (`fabric-stats`) and health listeners (`fabric-health`).

use super::{Origin as O, code, declare};
use crate::error::Stage as S;

declare! {
    /// fabric-stats.
    pub(super) STATS = [
        RESOURCE_OBSERVATION_UNAVAILABLE = "resource_observation_unavailable" => code(
            None,
            O::Stats,
            "a resource observation could not be read now",
        ),
        RESOURCE_OBSERVATION_UNSUPPORTED = "resource_observation_unsupported" => code(
            None,
            O::Stats,
            "no resource reader exists for this runtime",
        ),
    ];
}

declare! {
    /// fabric-health.
    pub(super) HEALTH = [
        INVALID_CHECK_REQUEST = "invalid_check_request" => code(
            Some(S::Config),
            O::Health,
            "a CheckRequest is malformed or names an unknown level",
        ),
        HEALTH_LISTENER_BIND_FAILED = "health_listener_bind_failed" => code(
            Some(S::Start),
            O::Health,
            "the health listener could not bind its socket",
        ),
        HEALTH_SECRET_UNAVAILABLE = "health_secret_unavailable" => code(
            Some(S::Start),
            O::Health,
            "no random secret could be drawn for the health channel",
        ),
        HEALTH_ENDPOINT_WRITE_FAILED = "health_endpoint_write_failed" => code(
            Some(S::Start),
            O::Health,
            "the health endpoint file could not be written",
        ),
        HEALTH_LISTENER_THREAD_FAILED = "health_listener_thread_failed" => code(
            Some(S::Start),
            O::Health,
            "the health listener thread could not be started",
        ),
    ];
}
