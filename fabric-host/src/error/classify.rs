//! Reading a `HostError`: its code, stage, class and lifecycle meaning.

use fabric_config::Stage;
use fabric_config::codes;

use super::{Diagnostics, ErrorClass, HostError};

/// Matches a `HostError` (or a reference to one) on where its stage lives: `$on_stage` with
/// `$stage` bound to the variant's `stage` field, or `$on_info` with `$info` bound to a
/// `Plan` error's info. One list of variants for reading and rewriting the stage.
macro_rules! with_stage {
    ($error:expr, $stage:ident => $on_stage:expr, $info:ident => $on_info:expr) => {
        match $error {
            HostError::Launch { $stage, .. }
            | HostError::Protocol { $stage, .. }
            | HostError::HostCrashed { $stage, .. }
            | HostError::Timeout { $stage, .. }
            | HostError::HostIo { $stage, .. }
            | HostError::Lifecycle { $stage, .. }
            | HostError::TerminationFailed { $stage, .. }
            | HostError::EngineUnavailable { $stage, .. }
            | HostError::RuntimeBusy { $stage, .. }
            | HostError::RuntimeStopped { $stage, .. }
            | HostError::RuntimeFailed { $stage, .. }
            | HostError::Capability { $stage, .. }
            | HostError::Service { $stage, .. }
            | HostError::Environment { $stage, .. }
            | HostError::Provider { $stage, .. }
            | HostError::Bridge { $stage, .. }
            | HostError::InvalidRequest { $stage, .. }
            | HostError::RequestTooLarge { $stage, .. }
            | HostError::RequestExtensionsUndeclared { $stage, .. }
            | HostError::RequestExtensionInvalid { $stage, .. }
            | HostError::EnvNameUnset { $stage, .. }
            | HostError::EnvNameChanged { $stage, .. }
            | HostError::InvalidAgentRunResult { $stage, .. }
            | HostError::Filesystem { $stage, .. }
            | HostError::PathRefused { $stage, .. }
            | HostError::EnvironmentReleased { $stage, .. }
            | HostError::Resource { $stage, .. }
            | HostError::ResourceRuntimeStopped { $stage, .. }
            | HostError::ResourceKindUnsupported { $stage, .. }
            | HostError::StreamActive { $stage, .. }
            | HostError::StreamProtocol { $stage, .. }
            | HostError::Collector { $stage, .. } => $on_stage,
            HostError::Plan { $info, .. } => $on_info,
        }
    };
}

impl HostError {
    /// The stable snake_case code; for [`HostError::Lifecycle`] the adapter's own code.
    pub fn code(&self) -> &str {
        match self {
            HostError::Launch { .. } => codes::HOST_LAUNCH_FAILED,
            HostError::Protocol { .. } => codes::PROTOCOL_ERROR,
            HostError::HostCrashed { .. } => codes::HOST_CRASHED,
            HostError::Timeout { .. } => codes::TIMEOUT,
            HostError::HostIo { .. } => codes::HOST_IO,
            HostError::Lifecycle { code, .. } => code,
            HostError::TerminationFailed { .. } => codes::HOST_TERMINATION_FAILED,
            HostError::EngineUnavailable { .. } => codes::ENGINE_UNAVAILABLE,
            HostError::RuntimeBusy { .. } => codes::RUNTIME_BUSY,
            HostError::RuntimeStopped { .. } => codes::RUNTIME_STOPPED,
            HostError::RuntimeFailed { .. } => codes::RUNTIME_FAILED,
            HostError::Plan { info, .. } => &info.code,
            HostError::Capability { code, .. } => code,
            HostError::InvalidRequest { .. } => codes::INVALID_REQUEST,
            HostError::RequestTooLarge { .. } => codes::REQUEST_TOO_LARGE,
            HostError::RequestExtensionsUndeclared { .. } => codes::REQUEST_EXTENSIONS_UNSUPPORTED,
            HostError::RequestExtensionInvalid { .. } => codes::REQUEST_EXTENSION_INVALID,
            HostError::EnvNameUnset { .. } => codes::ENV_NAME_UNSET,
            HostError::EnvNameChanged { .. } => codes::ENV_NAME_CHANGED,
            HostError::InvalidAgentRunResult { .. } => codes::INVALID_AGENT_RUN_RESULT,
            HostError::Filesystem { .. } => codes::FILESYSTEM_ERROR,
            HostError::PathRefused { .. } => codes::PATH_REFUSED,
            HostError::EnvironmentReleased { .. } => codes::ENVIRONMENT_RELEASED,
            HostError::Resource { source, .. } => source.code(),
            HostError::ResourceRuntimeStopped { .. } => codes::RESOURCE_OBSERVATION_UNAVAILABLE,
            HostError::ResourceKindUnsupported { .. } => codes::RESOURCE_OBSERVATION_UNSUPPORTED,
            HostError::StreamActive { .. } => codes::RUNTIME_BUSY,
            HostError::StreamProtocol { .. } => codes::OPENAI_STREAM_PROTOCOL_ERROR,
            HostError::Collector { code, .. } => code,
            HostError::Service { code, .. } => code,
            HostError::Environment { code, .. } => code,
            HostError::Provider { code, .. } | HostError::Bridge { code, .. } => code,
        }
    }

    /// The lifecycle stage the error belongs to.
    pub fn stage(&self) -> Stage {
        with_stage!(self, stage => *stage, info => info.stage)
    }

    /// The SDK error class.
    pub fn class(&self) -> ErrorClass {
        match self {
            HostError::Plan { class, .. }
            | HostError::Service { class, .. }
            | HostError::Environment { class, .. } => *class,
            HostError::Capability { .. } => ErrorClass::Capability,
            HostError::Resource {
                source: fabric_stats::StatsError::Unsupported { .. },
                ..
            }
            | HostError::ResourceKindUnsupported { .. } => ErrorClass::ResourceUnsupported,
            HostError::Resource { .. } | HostError::ResourceRuntimeStopped { .. } => {
                ErrorClass::ResourceUnavailable
            }
            // The adapter's own code: its class is the adapter's business.
            HostError::Lifecycle { .. } => ErrorClass::Runtime,
            // The registry's class of the code: state errors (`runtime_busy`, ...), and the
            // request, bridge and provider codes a caller fixes in what it sent (config).
            _ => codes::class_of(self.code()).unwrap_or(ErrorClass::Runtime),
        }
    }

    /// Whether this is an invalid state transition (`FabricStateError`).
    pub fn is_state_error(&self) -> bool {
        self.class() == ErrorClass::State
    }

    /// Whether the error made the runtime terminal (no further invocations).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            HostError::Protocol { .. }
                | HostError::HostCrashed { .. }
                | HostError::Timeout { .. }
                | HostError::HostIo { .. }
                | HostError::TerminationFailed { .. }
                | HostError::Bridge {
                    effects: fabric_config::bridge::Effects::Unknown,
                    ..
                }
        ) || matches!(
            self,
            HostError::Provider { code, .. }
                if matches!(
                    *code,
                    codes::PROVIDER_CRASHED | codes::PROVIDER_TIMEOUT | codes::PROVIDER_PROTOCOL_ERROR | codes::PROVIDER_FAILED
                )
        )
    }

    /// The attached diagnostics, if any.
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            HostError::Protocol { diagnostics, .. }
            | HostError::HostCrashed { diagnostics, .. }
            | HostError::Timeout { diagnostics, .. }
            | HostError::HostIo { diagnostics, .. }
            | HostError::TerminationFailed { diagnostics, .. } => Some(diagnostics),
            HostError::Lifecycle { diagnostics, .. } => Some(diagnostics),
            _ => None,
        }
    }

    /// The attached diagnostics, mutably.
    pub(crate) fn diagnostics_mut(&mut self) -> Option<&mut Diagnostics> {
        match self {
            HostError::Protocol { diagnostics, .. }
            | HostError::HostCrashed { diagnostics, .. }
            | HostError::Timeout { diagnostics, .. }
            | HostError::HostIo { diagnostics, .. }
            | HostError::TerminationFailed { diagnostics, .. } => Some(diagnostics),
            HostError::Lifecycle { diagnostics, .. } => Some(diagnostics),
            _ => None,
        }
    }

    /// The same error reported at another stage.
    pub(crate) fn at_stage(mut self, new_stage: Stage) -> Self {
        with_stage!(&mut self, stage => *stage = new_stage, info => info.stage = new_stage);
        self
    }
}
