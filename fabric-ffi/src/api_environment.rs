//! Environment attach: `fabric_environment_attach` (prepare, start-in, release and free live
//! beside the runtime entry points in `api_runtime.rs`).

use fabric_config::codes;
use std::ffi::c_char;

use fabric_config::handles::EnvironmentReference;
use fabric_config::{ErrorInfo, Stage};
use fabric_host::Fabric;

use crate::api_runtime::register_environment;
use crate::boundary::{ffi_boundary, str_arg};
use crate::error::FfiError;
use crate::fabric_environment;
use crate::objects::plan_args;
use crate::status::FabricStatus;

/// Plans a config and attaches to the existing environment `reference_json` names: an
/// EnvironmentReference `{provider, resource}` whose `provider` is the config's
/// `environment.provider` (the `local` provider takes `resource.workspace`, an existing
/// directory). The environment stays the caller's (`ownership: "caller_owned"`,
/// `attached: true`): `fabric_environment_release` only detaches. `options_json`: NULL or a
/// CallOptions object. Results and handle as `fabric_environment_prepare`; the JSON's
/// `reference` is what a later attach accepts.
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the handle is owned by the caller: release it with
/// `fabric_environment_release`, then `fabric_environment_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (`invalid_environment_reference` with `metadata.path`
/// naming the field, `environment_not_found` for a resource that does not exist,
/// `environment_provider_not_found`, `invalid_provider_descriptor`, config, options, plan,
/// unset `env_names`), `FABRIC_STATUS_CAPABILITY` (`environment_attach_unsupported`: the
/// provider cannot attach), `FABRIC_STATUS_RUNTIME` (`provider_*`: the provider process
/// failed or answered `failed`, docs/sandbox.md), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL
/// `config_json`/`reference_json`/`environment_out`/`out`, invalid UTF-8).
/// Blocking: yes — file system work, or until the provider answered `attach` (60 s at
/// most). Thread-safe.
///
/// # Safety
/// `config_json`, `reference_json` and `options_json` must be NULL or NUL-terminated
/// strings valid for the duration of the call; `environment_out` must be NULL or valid for
/// writing one `fabric_environment`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_attach(
    config_json: *const c_char,
    reference_json: *const c_char,
    options_json: *const c_char,
    environment_out: *mut fabric_environment,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Prepare;
    ffi_boundary!(stage, out, {
        if environment_out.is_null() {
            return Err(FfiError::null_argument(stage, "environment_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { str_arg(Stage::Config, "reference_json", reference_json) }?;
        let reference: EnvironmentReference = serde_json::from_str(text).map_err(|e| {
            let info = ErrorInfo::new(
                Stage::Config,
                codes::INVALID_ENVIRONMENT_REFERENCE,
                format!("reference_json is not an EnvironmentReference: {e}"),
            )
            .with_metadata("argument", "reference_json");
            FfiError::new(FabricStatus::Config, info)
        })?;
        // SAFETY: forwarded from this function's contract.
        let (plan, _options) = unsafe { plan_args(config_json, options_json) }?;
        let environment = Fabric::new().attach_environment_plan(&plan, &reference)?;
        register_environment(stage, environment, environment_out)
    })
}
