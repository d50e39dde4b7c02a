//! The error a failed entry point reports: a status class plus an ErrorInfo.

use fabric_config::{ErrorInfo, Stage};

use crate::status::FabricStatus;

/// A failed call: the status returned to C and the ErrorInfo written to `*out`.
#[derive(Debug, Clone)]
pub(crate) struct FfiError {
    pub(crate) status: FabricStatus,
    pub(crate) info: ErrorInfo,
}

impl FfiError {
    pub(crate) fn new(status: FabricStatus, info: ErrorInfo) -> Self {
        FfiError { status, info }
    }

    /// A NULL pointer where a value is required. Names the parameter.
    pub(crate) fn null_argument(stage: Stage, param: &'static str) -> Self {
        FfiError::new(
            FabricStatus::InvalidArgument,
            ErrorInfo::new(
                stage,
                "null_argument",
                format!("`{param}` must not be NULL"),
            )
            .with_metadata("argument", param),
        )
    }

    /// A string argument that is not UTF-8. Names the parameter and the byte offset.
    pub(crate) fn invalid_utf8(stage: Stage, param: &'static str, offset: usize) -> Self {
        FfiError::new(
            FabricStatus::InvalidArgument,
            ErrorInfo::new(
                stage,
                "invalid_utf8",
                format!("`{param}` is not valid UTF-8 (first invalid byte at offset {offset})"),
            )
            .with_metadata("argument", param)
            .with_metadata("offset", offset),
        )
    }

    /// A string argument that is not the JSON it must be. Names the parameter and position;
    /// never echoes the input.
    pub(crate) fn invalid_json(
        stage: Stage,
        param: &'static str,
        error: &serde_json::Error,
    ) -> Self {
        FfiError::new(
            FabricStatus::InvalidArgument,
            ErrorInfo::new(
                stage,
                "invalid_json",
                format!(
                    "`{param}` is not valid JSON (line {}, column {})",
                    error.line(),
                    error.column()
                ),
            )
            .with_metadata("argument", param)
            .with_metadata("line", error.line())
            .with_metadata("column", error.column()),
        )
    }

    /// A handle argument that is 0, unknown, released, or of the wrong kind.
    pub(crate) fn invalid_handle(
        stage: Stage,
        code: &'static str,
        param: &'static str,
        id: u64,
        message: String,
    ) -> Self {
        FfiError::new(
            FabricStatus::InvalidArgument,
            ErrorInfo::new(stage, code, message)
                .with_metadata("argument", param)
                .with_metadata("handle", id),
        )
    }

    /// A caught panic. Carries no payload text.
    pub(crate) fn internal_panic(stage: Stage) -> Self {
        FfiError::new(
            FabricStatus::Internal,
            ErrorInfo::new(
                stage,
                "internal_panic",
                "an internal error occurred in the Fabric library (a panic was caught at the C ABI boundary)",
            ),
        )
    }

    /// An internal invariant failed (for example, serializing a result).
    pub(crate) fn internal(stage: Stage, code: &'static str, message: impl Into<String>) -> Self {
        FfiError::new(FabricStatus::Internal, ErrorInfo::new(stage, code, message))
    }

    /// A lifecycle state error (for example, overlapping invocations).
    pub(crate) fn state(stage: Stage, code: &'static str, message: impl Into<String>) -> Self {
        FfiError::new(FabricStatus::State, ErrorInfo::new(stage, code, message))
    }
}

/// Classifies an ErrorInfo produced by the core into the ABI status class.
///
/// The core's crates report structured `ErrorInfo`s; the class follows from the stage and
/// a small set of stable codes: capability rejections, state violations and resource
/// observation failures have their own classes; everything else at `config`/`plan` is a
/// config error and everything at a lifecycle stage is a runtime error.
pub(crate) fn classify(info: &ErrorInfo) -> FabricStatus {
    let code = info.code.as_str();
    match code {
        "resource_observation_unavailable" => return FabricStatus::ResourceUnavailable,
        "resource_observation_unsupported" => return FabricStatus::ResourceUnsupported,
        "internal_panic" | "internal" => return FabricStatus::Internal,
        _ => {}
    }
    if is_state_code(code) {
        return FabricStatus::State;
    }
    if is_capability_code(code) {
        return FabricStatus::Capability;
    }
    match info.stage {
        Stage::Config | Stage::Plan => FabricStatus::Config,
        Stage::Prepare
        | Stage::Start
        | Stage::Invoke
        | Stage::Stop
        | Stage::Release
        | Stage::Artifact => FabricStatus::Runtime,
    }
}

fn is_state_code(code: &str) -> bool {
    matches!(
        code,
        "invalid_state"
            | "runtime_busy"
            | "runtime_stopped"
            | "runtime_not_active"
            | "runtime_failed"
            | "invocation_in_progress"
            | "already_stopped"
            | "environment_released"
            | "environment_in_use"
    ) || code.ends_with("_state")
}

fn is_capability_code(code: &str) -> bool {
    code.starts_with("unsupported_")
        || code.ends_with("_unsupported")
        || code.starts_with("capability_")
        || code.ends_with("_not_supported")
        || code == "streaming_unavailable"
}

impl From<ErrorInfo> for FfiError {
    fn from(info: ErrorInfo) -> Self {
        FfiError::new(classify(&info), info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_by_stage_and_code() {
        let c = |stage, code: &str| classify(&ErrorInfo::new(stage, code, "m"));
        assert_eq!(c(Stage::Config, "invalid_config"), FabricStatus::Config);
        assert_eq!(c(Stage::Plan, "adapter_not_found"), FabricStatus::Config);
        assert_eq!(
            c(Stage::Plan, "unsupported_field"),
            FabricStatus::Capability
        );
        assert_eq!(c(Stage::Start, "host_crashed"), FabricStatus::Runtime);
        assert_eq!(c(Stage::Invoke, "timeout"), FabricStatus::Runtime);
        assert_eq!(c(Stage::Invoke, "runtime_busy"), FabricStatus::State);
        assert_eq!(
            c(Stage::Invoke, "resource_observation_unavailable"),
            FabricStatus::ResourceUnavailable
        );
        assert_eq!(
            c(Stage::Invoke, "resource_observation_unsupported"),
            FabricStatus::ResourceUnsupported
        );
        assert_eq!(c(Stage::Stop, "internal_panic"), FabricStatus::Internal);
    }
}
