//! The objects behind handles, and the glue from C arguments to the core.

use std::path::PathBuf;
use std::sync::Arc;

use fabric_config::plan::RunPlan;
use fabric_config::{ErrorInfo, FabricConfig, RunRequest, Stage};
use fabric_host::{Environment, ErrorClass, Fabric, HostError, RunOptions, Runtime};

use crate::error::FfiError;
use crate::status::FabricStatus;

/// A started runtime (registered under a `fabric_runtime` id). Dropping the last reference
/// terminates and reaps its host process (the core's `Runtime` drop).
#[derive(Debug)]
pub(crate) struct RuntimeObject {
    pub(crate) runtime: Runtime,
}

/// A prepared environment (registered under a `fabric_environment` id).
#[derive(Debug)]
pub(crate) struct EnvironmentObject {
    pub(crate) environment: Arc<Environment>,
}

impl From<HostError> for FfiError {
    fn from(error: HostError) -> Self {
        let status = match error.class() {
            ErrorClass::Config => FabricStatus::Config,
            ErrorClass::Capability => FabricStatus::Capability,
            ErrorClass::State => FabricStatus::State,
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
    FabricConfig::parse(text).map_err(|error| {
        let mut info = ErrorInfo::from(error);
        info.stage = stage;
        FfiError::new(FabricStatus::Config, info)
    })
}

/// Decodes a RunRequest; errors name the JSON path, never the value.
pub(crate) fn parse_request(stage: Stage, text: &str) -> Result<RunRequest, FfiError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let request: RunRequest = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| request_error(stage, error.path().to_string(), error.inner()))?;
    deserializer
        .end()
        .map_err(|error| request_error(stage, String::new(), &error))?;
    Ok(request)
}

fn request_error(stage: Stage, path: String, error: &serde_json::Error) -> FfiError {
    let syntax = error.is_syntax() || error.is_eof();
    let path = if syntax || path == "?" || path == "." {
        String::new()
    } else {
        path
    };
    let what = if syntax {
        format!(
            "request is not valid JSON (line {}, column {})",
            error.line(),
            error.column()
        )
    } else if path.is_empty() {
        "request must be a JSON object with the RunRequest shape".to_owned()
    } else {
        format!("`{path}` has an invalid type or value")
    };
    let mut info = ErrorInfo::new(stage, "invalid_request", what);
    if !path.is_empty() {
        info = info.with_metadata("path", path);
    }
    FfiError::new(FabricStatus::Config, info)
}

/// Resolves the optional `base_dir` argument (NULL → the current directory).
pub(crate) fn run_options(base_dir: Option<&str>) -> RunOptions {
    RunOptions {
        base_dir: base_dir.map(PathBuf::from),
        ..RunOptions::default()
    }
}

/// Parses and plans a config (discovery from the config and the environment).
pub(crate) fn plan_config(
    stage: Stage,
    config_json: &str,
    base_dir: Option<&str>,
) -> Result<(RunPlan, RunOptions), FfiError> {
    let config = parse_config(stage, config_json)?;
    let options = run_options(base_dir);
    let plan = Fabric::new().plan(&config, &options)?;
    Ok((plan, options))
}
