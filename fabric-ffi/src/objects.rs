//! The objects behind handles, and the glue from C arguments to the core.

use std::ffi::c_char;
use std::sync::Arc;

use fabric_config::error::ConfigError;
use fabric_config::plan::RunPlan;
use fabric_config::{CallOptions, ErrorInfo, FabricConfig, RunRequest, Stage};
use fabric_host::{Environment, ErrorClass, Fabric, HostError, PullStream, RunOptions, Runtime};
use serde_json::Value;

use crate::boundary::{opt_str_arg, str_arg};
use crate::error::FfiError;
use crate::status::FabricStatus;

/// A started runtime (registered under a `fabric_runtime` id). Dropping the last reference
/// terminates and reaps its host process (the core's `Runtime` drop).
#[derive(Debug)]
pub(crate) struct RuntimeObject {
    /// Shared with the runtime's open streams (a stream keeps its runtime alive).
    pub(crate) runtime: Arc<Runtime>,
}

/// An open pull stream (registered under a `fabric_stream` id). Dropping the last reference
/// closes it: unread items are dropped and the invocation is waited for, never cancelled.
#[derive(Debug)]
pub(crate) struct StreamObject {
    pub(crate) stream: Box<dyn PullStream>,
}

/// A prepared environment (registered under a `fabric_environment` id).
#[derive(Debug)]
pub(crate) struct EnvironmentObject {
    pub(crate) environment: Arc<Environment>,
}

/// A prepared or attached service (registered under a `fabric_service` id). Dropping the
/// last reference stops its host unless it was released.
#[derive(Debug)]
pub(crate) struct ServiceObject {
    pub(crate) service: fabric_host::Service,
}

impl From<HostError> for FfiError {
    fn from(error: HostError) -> Self {
        let status = match error.class() {
            ErrorClass::Config => FabricStatus::Config,
            ErrorClass::Capability => FabricStatus::Capability,
            ErrorClass::State => FabricStatus::State,
            ErrorClass::ResourceUnavailable => FabricStatus::ResourceUnavailable,
            ErrorClass::ResourceUnsupported => FabricStatus::ResourceUnsupported,
            _ => FabricStatus::Runtime,
        };
        FfiError::new(status, ErrorInfo::from(error))
    }
}

impl From<fabric_plan::PlanError> for FfiError {
    fn from(error: fabric_plan::PlanError) -> Self {
        FfiError::from(HostError::from(error))
    }
}

/// Decodes and validates a config; the first violation is the error (reported at `stage`).
pub(crate) fn parse_config(stage: Stage, text: &str) -> Result<FabricConfig, FfiError> {
    FabricConfig::parse(text).map_err(|error| config_error(stage, error))
}

/// A `config_json` that does not decode or validate: `CONFIG` at `stage`; text that is not
/// JSON names the argument like every other JSON argument.
pub(crate) fn config_error(stage: Stage, error: ConfigError) -> FfiError {
    json_arg_error(stage, "config_json", error, |info| info)
}

/// The one rule for a JSON argument that fails to decode: text that is not JSON is
/// `invalid_json` naming the argument and position ([`FfiError::invalid_json_at`]); any
/// other violation keeps its own code and field path, reported at `stage` and shaped by
/// `adjust` (which argument, which document root).
fn json_arg_error(
    stage: Stage,
    param: &'static str,
    error: ConfigError,
    adjust: impl FnOnce(ErrorInfo) -> ErrorInfo,
) -> FfiError {
    match error {
        ConfigError::InvalidJson { line, column, .. } => {
            FfiError::invalid_json_at(stage, param, line, column)
        }
        other => {
            let mut info = ErrorInfo::from(other);
            info.stage = stage;
            FfiError::new(FabricStatus::Config, adjust(info))
        }
    }
}

/// Decodes and checks a RunRequest; errors name the JSON path, never the value.
pub(crate) fn parse_request(stage: Stage, text: &str) -> Result<RunRequest, FfiError> {
    let request = RunRequest::from_json_str(text).map_err(|error| request_error(stage, error))?;
    request
        .validate()
        .map_err(|error| request_error(stage, error))?;
    Ok(request)
}

fn request_error(stage: Stage, error: ConfigError) -> FfiError {
    json_arg_error(stage, "request_json", error, |mut info| {
        info.message = format!("request: {}", info.message);
        // Paths are rooted at the request document: `request.overrides`.
        if let Some(Value::String(path)) = info.metadata.get_mut("path") {
            *path = format!("request.{path}");
        }
        info
    })
}

/// Reads the optional `options_json` argument (NULL → the defaults): a
/// [`CallOptions`] object. Not JSON → `CONFIG` (`invalid_json`, `metadata.argument`); an
/// unknown key or a value of the wrong type → `CONFIG` naming the field (`options.<key>`).
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn options_arg(ptr: *const c_char) -> Result<CallOptions, FfiError> {
    const PARAM: &str = "options_json";
    let stage = Stage::Config;
    // SAFETY: per this function's contract.
    let Some(text) = (unsafe { opt_str_arg(stage, PARAM, ptr) })? else {
        return Ok(CallOptions::default());
    };
    CallOptions::from_json_str(text).map_err(|error| {
        json_arg_error(stage, PARAM, error, |info| {
            info.with_metadata("argument", PARAM)
        })
    })
}

/// Reads `config_json` (required; NULL or invalid UTF-8 reported at `stage`) and
/// `options_json` (NULL → the defaults). Planning is the caller's: at once, or later on
/// the completion pool for the `_begin` calls.
///
/// # Safety
/// Both must be NULL or NUL-terminated strings valid for the lifetime `'a`.
pub(crate) unsafe fn config_args<'a>(
    stage: Stage,
    config_json: *const c_char,
    options_json: *const c_char,
) -> Result<(&'a str, CallOptions), FfiError> {
    // SAFETY: per this function's contract.
    let config = unsafe { str_arg(stage, "config_json", config_json) }?;
    // SAFETY: per this function's contract.
    let options = unsafe { options_arg(options_json) }?;
    Ok((config, options))
}

/// Reads `config_json` (required) and `options_json` (NULL → the defaults) and plans the
/// config.
///
/// # Safety
/// Both pointers must be NULL or NUL-terminated strings valid for the duration of the call.
pub(crate) unsafe fn plan_args(
    config_json: *const c_char,
    options_json: *const c_char,
) -> Result<(RunPlan, RunOptions), FfiError> {
    // SAFETY: per this function's contract.
    let (config, options) = unsafe { config_args(Stage::Config, config_json, options_json) }?;
    plan_config(Stage::Plan, config, &options)
}

/// The request of `request_json` (already read), or an empty one when it was NULL.
pub(crate) fn request_or_default(request: Option<&str>) -> Result<RunRequest, FfiError> {
    match request {
        Some(text) => parse_request(Stage::Config, text),
        None => Ok(RunRequest::default()),
    }
}

/// Reads and decodes the optional `request_json` argument (NULL → an empty request).
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn request_arg(ptr: *const c_char) -> Result<RunRequest, FfiError> {
    // SAFETY: per this function's contract.
    let text = unsafe { opt_str_arg(Stage::Config, "request_json", ptr) }?;
    request_or_default(text)
}

/// Parses and plans a config (discovery from the config and the environment), enforcing
/// the options' `expected_descriptor_sha256`.
pub(crate) fn plan_config(
    stage: Stage,
    config_json: &str,
    options: &CallOptions,
) -> Result<(RunPlan, RunOptions), FfiError> {
    let config = parse_config(stage, config_json)?;
    let options = RunOptions::from_call_options(options);
    let plan = Fabric::new().plan(&config, &options)?;
    Ok((plan, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_errors_name_the_path_under_request() {
        let error = parse_request(Stage::Invoke, r#"{"input": "x", "overrides": [1]}"#)
            .expect_err("overrides must be an object");
        assert_eq!(error.status, FabricStatus::Config);
        assert_eq!(error.info.metadata["path"], "request.overrides");
        // Unknown top-level keys are dropped, as upstream does.
        assert!(parse_request(Stage::Invoke, r#"{"input": "x", "priority": 1}"#).is_ok());
    }

    #[test]
    fn resource_errors_get_their_own_statuses() {
        let unsupported = FfiError::from(HostError::ResourceKindUnsupported {
            stage: Stage::Invoke,
            adapter_kind: "http",
        });
        assert_eq!(unsupported.status, FabricStatus::ResourceUnsupported);
        assert_eq!(unsupported.info.code, "resource_observation_unsupported");
        let unavailable = FfiError::from(HostError::ResourceRuntimeStopped {
            stage: Stage::Invoke,
            runtime_id: "runtime-1".into(),
        });
        assert_eq!(unavailable.status, FabricStatus::ResourceUnavailable);
        assert_eq!(unavailable.info.code, "resource_observation_unavailable");
    }
}
