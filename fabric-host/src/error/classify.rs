//! Reading a `HostError`: its code, stage, class and lifecycle meaning.

use fabric_config::Stage;

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
            HostError::Launch { .. } => "host_launch_failed",
            HostError::Protocol { .. } => "protocol_error",
            HostError::HostCrashed { .. } => "host_crashed",
            HostError::Timeout { .. } => "timeout",
            HostError::HostIo { .. } => "host_io",
            HostError::Lifecycle { code, .. } => code,
            HostError::TerminationFailed { .. } => "host_termination_failed",
            HostError::EngineUnavailable { .. } => "engine_unavailable",
            HostError::RuntimeBusy { .. } => "runtime_busy",
            HostError::RuntimeStopped { .. } => "runtime_stopped",
            HostError::RuntimeFailed { .. } => "runtime_failed",
            HostError::Plan { info, .. } => &info.code,
            HostError::Capability { code, .. } => code,
            HostError::InvalidRequest { .. } => "invalid_request",
            HostError::RequestTooLarge { .. } => "request_too_large",
            HostError::RequestExtensionsUndeclared { .. } => "request_extensions_unsupported",
            HostError::RequestExtensionInvalid { .. } => "request_extension_invalid",
            HostError::EnvNameUnset { .. } => "env_name_unset",
            HostError::EnvNameChanged { .. } => "env_name_changed",
            HostError::InvalidAgentRunResult { .. } => "invalid_agent_run_result",
            HostError::Filesystem { .. } => "filesystem_error",
            HostError::EnvironmentReleased { .. } => "environment_released",
            HostError::Resource { source, .. } => source.code(),
            HostError::ResourceRuntimeStopped { .. } => "resource_observation_unavailable",
            HostError::ResourceKindUnsupported { .. } => "resource_observation_unsupported",
            HostError::StreamActive { .. } => "runtime_busy",
            HostError::StreamProtocol { .. } => "openai_stream_protocol_error",
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
            HostError::RuntimeBusy { .. }
            | HostError::RuntimeStopped { .. }
            | HostError::RuntimeFailed { .. }
            | HostError::StreamActive { .. }
            | HostError::EnvironmentReleased { .. } => ErrorClass::State,
            HostError::Plan { class, .. }
            | HostError::Service { class, .. }
            | HostError::Environment { class, .. } => *class,
            HostError::Capability { .. } => ErrorClass::Capability,
            HostError::Bridge { code, .. }
                if matches!(
                    *code,
                    "validation_failed" | "invalid_request" | "wrong_agent"
                ) =>
            {
                ErrorClass::Config
            }
            // A provider's own codes for settings the caller must change.
            HostError::Provider { code, .. }
                if matches!(
                    *code,
                    "invalid_settings" | "socket_path_too_long" | "sandbox_image_unpinned"
                ) =>
            {
                ErrorClass::Config
            }
            HostError::InvalidRequest { .. } | HostError::RequestTooLarge { .. } => {
                ErrorClass::Config
            }
            HostError::Resource {
                source: fabric_stats::StatsError::Unsupported { .. },
                ..
            }
            | HostError::ResourceKindUnsupported { .. } => ErrorClass::ResourceUnsupported,
            HostError::Resource { .. } | HostError::ResourceRuntimeStopped { .. } => {
                ErrorClass::ResourceUnavailable
            }
            _ => ErrorClass::Runtime,
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
                    "provider_crashed" | "provider_timeout" | "provider_protocol_error" | "provider_failed"
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

    /// The same error reported at another stage.
    pub(crate) fn at_stage(mut self, new_stage: Stage) -> Self {
        with_stage!(&mut self, stage => *stage = new_stage, info => info.stage = new_stage);
        self
    }
}
