//! The error a failed entry point reports: a status class plus an ErrorInfo.

use fabric_config::codes;
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
                codes::NULL_ARGUMENT,
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
                codes::INVALID_UTF8,
                format!("`{param}` is not valid UTF-8 (first invalid byte at offset {offset})"),
            )
            .with_metadata("argument", param)
            .with_metadata("offset", offset),
        )
    }

    /// A document argument that is not JSON (syntax error, trailing data, nesting deeper
    /// than 128 levels): `FABRIC_STATUS_CONFIG`, code `invalid_json` — the one rule for every
    /// JSON argument of every entry point (docs/abi.md). Names the parameter and position;
    /// never echoes the input.
    pub(crate) fn invalid_json(
        stage: Stage,
        param: &'static str,
        error: &serde_json::Error,
    ) -> Self {
        FfiError::invalid_json_at(stage, param, error.line(), error.column())
    }

    /// As [`FfiError::invalid_json`], from a position already extracted.
    pub(crate) fn invalid_json_at(
        stage: Stage,
        param: &'static str,
        line: usize,
        column: usize,
    ) -> Self {
        FfiError::new(
            FabricStatus::Config,
            ErrorInfo::new(
                stage,
                codes::INVALID_JSON,
                format!("`{param}` is not valid JSON (line {line}, column {column})"),
            )
            .with_metadata("argument", param)
            .with_metadata("line", line)
            .with_metadata("column", column),
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
                codes::INTERNAL_PANIC,
                "an internal error occurred in the Fabric library (a panic was caught at the C ABI boundary)",
            ),
        )
    }

    /// An internal invariant failed (for example, serializing a result).
    pub(crate) fn internal(stage: Stage, code: &'static str, message: impl Into<String>) -> Self {
        FfiError::new(FabricStatus::Internal, ErrorInfo::new(stage, code, message))
    }
}
