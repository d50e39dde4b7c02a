//! The adapter conformance kit over the C ABI (`fabric-conformance`).

use std::ffi::c_char;

use fabric_config::conformance::ConformanceRequest;
use fabric_config::{ErrorInfo, FabricConfig, Stage};
use fabric_conformance::{CheckOptions, ConformanceError};

use crate::boundary::{ffi_boundary, json_arg, str_arg, to_json};
use crate::error::FfiError;
use crate::objects::config_error;
use crate::status::FabricStatus;

impl From<ConformanceError> for FfiError {
    fn from(error: ConformanceError) -> Self {
        let status = match &error {
            ConformanceError::Plan(_)
            | ConformanceError::NotFound { .. }
            | ConformanceError::ModelStubScript { .. }
            | ConformanceError::StopDeadline => FabricStatus::Config,
            _ => FabricStatus::InvalidArgument,
        };
        FfiError::new(status, ErrorInfo::from(error))
    }
}

/// Runs the adapter conformance checks (docs/checking-adapters.md) and returns the
/// ConformanceReport: every check with its id, group, status, reason, evidence and time.
///
/// `request_json`: a ConformanceRequest (`schemas/sdk/conformance-request.schema.json`):
/// `adapter_id` or `descriptor`, optionally `config`, `base_dir`, `only`, `model_stub` (a
/// reply script for the stub model servers; `{}` for the default) and
/// `stop_deadline_seconds`. A failing check is a report with `summary.failed > 0`, not an
/// error status.
///
/// Ownership: inputs are borrowed for the call only; `*out` (the report JSON or an
/// ErrorInfo) is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (a request or config that does not decode, an unreadable
/// descriptor, an adapter discovery does not find, an invalid `model_stub` script or
/// `stop_deadline_seconds`), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL
/// `request_json` or `out`, invalid UTF-8, neither an adapter id nor a descriptor, an
/// unknown group, a `model_stub` for a config without models).
/// Blocking: yes — starts and stops several runtimes of the adapter (seconds). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_adapter_check(
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Config;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { str_arg(stage, "request_json", request_json) }?;
        let request: ConformanceRequest = json_arg(stage, "request_json", text)?;
        let config = request
            .config
            .as_ref()
            .map(|value| FabricConfig::parse(&value.to_string()))
            .transpose()
            .map_err(|error| config_error(stage, error))?;
        let options = CheckOptions {
            adapter_id: request.adapter_id,
            descriptor: request.descriptor.map(Into::into),
            config,
            base_dir: request.base_dir.map(Into::into),
            only: request.only,
            ..CheckOptions::default()
        }
        .with_request_stub_and_deadline(request.model_stub, request.stop_deadline_seconds)?;
        let report = fabric_conformance::check_adapter(&options)?;
        to_json(stage, &report)
    })
}
