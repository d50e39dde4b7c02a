//! `RelayError`: what the collectors and Relay streaming report.

use fabric_config::Stage;
use fabric_config::error::ConfigError;

/// A collector could not start (`collector_start_failed`), refused a request
/// (`collector_request_failed`), or the streaming config is invalid (a config finding).
///
/// Exhaustive on purpose: `fabric-host` maps every variant onto its own error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RelayError {
    /// A collector failure, with its stage and code.
    #[error("{message}")]
    Collector {
        /// Stage of the attempted operation.
        stage: Stage,
        /// `collector_start_failed`, `collector_request_failed` or
        /// `collector_registrations_full`.
        code: &'static str,
        /// Safe message (never a token).
        message: String,
    },
    /// The config does not allow the requested streaming.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl RelayError {
    pub(crate) fn collector(stage: Stage, code: &'static str, message: String) -> RelayError {
        RelayError::Collector {
            stage,
            code,
            message,
        }
    }
}

impl From<RelayError> for fabric_config::ErrorInfo {
    fn from(error: RelayError) -> fabric_config::ErrorInfo {
        match error {
            RelayError::Collector {
                stage,
                code,
                message,
            } => fabric_config::ErrorInfo::new(stage, code, message),
            RelayError::Config(error) => fabric_config::ErrorInfo::from(error),
        }
    }
}
