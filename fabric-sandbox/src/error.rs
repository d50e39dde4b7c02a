//! `SandboxError`: what environment providers report (the runtime server's failures travel
//! as bridge [`Response`](fabric_config::bridge::Response)s instead).

use fabric_config::Stage;
use fabric_config::codes::ErrorClass;

/// A failure of an environment provider: its process, its descriptor, or what it answered.
///
/// Exhaustive on purpose: `fabric-host` maps every variant onto its own error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SandboxError {
    /// The provider process could not be launched (`host_launch_failed`).
    #[error("could not launch `{program}`: {reason}")]
    Launch {
        /// Stage of the attempted operation.
        stage: Stage,
        /// Program that failed to launch.
        program: String,
        /// OS error text.
        reason: String,
    },
    /// The provider failed or broke its protocol (`provider_crashed`, `provider_timeout`,
    /// `provider_protocol_error`, `provider_failed`, `provider_error`,
    /// `provider_request_too_large`, `provider_output_too_large`, or its own code).
    #[error("{message}")]
    Provider {
        /// Stage.
        stage: Stage,
        /// Stable code.
        code: &'static str,
        /// Safe message.
        message: String,
        /// The provider's own code of a `failed` response (`metadata.provider_code`).
        provider_code: Option<String>,
        /// The provider's last stderr (`metadata.stderr_tail`).
        stderr_tail: Option<String>,
    },
    /// The provider cannot be found or its descriptor is invalid
    /// (`environment_provider_not_found`, `invalid_provider_descriptor`).
    #[error("{message}")]
    Environment {
        /// Stage.
        stage: Stage,
        /// Stable code.
        code: &'static str,
        /// SDK class.
        class: ErrorClass,
        /// Safe message naming the field (never a value).
        message: String,
        /// The offending field (`metadata.path`), if one.
        path: Option<String>,
    },
}
