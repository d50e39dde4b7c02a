//! Config entry points: validate, plan, doctor, inspect.

use std::ffi::c_char;

use fabric_config::{ErrorInfo, FabricConfig, Stage};

use crate::boundary::{ffi_boundary, opt_str_arg, str_arg, to_json};
use crate::error::FfiError;

/// Decodes and validates a config; the first violation is the error.
pub(crate) fn parse_config(stage: Stage, text: &str) -> Result<FabricConfig, FfiError> {
    FabricConfig::parse(text).map_err(|error| {
        let mut info = ErrorInfo::from(error);
        info.stage = stage;
        FfiError::from(info)
    })
}

/// Validates a config and returns its canonical JSON.
///
/// `config_json`: a `fabric.agent/v1alpha1` config. `base_dir`: optional (NULL allowed);
/// checked for UTF-8 and reserved for path checks (relative paths are resolved by
/// `fabric_plan`). On success `*out` is the canonical config (defaults written, `None` and
/// empty containers omitted).
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (decode or rule violation; `metadata.path` names the
/// field), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json`/`out`, invalid UTF-8).
/// Blocking: no (pure computation).
///
/// # Safety
/// `config_json` and `base_dir` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_validate(
    config_json: *const c_char,
    base_dir: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Config;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { str_arg(stage, "config_json", config_json) }?;
        // SAFETY: forwarded from this function's contract.
        let _base_dir = unsafe { opt_str_arg(stage, "base_dir", base_dir) }?;
        let config = parse_config(stage, config)?;
        to_json(stage, &config)
    })
}
