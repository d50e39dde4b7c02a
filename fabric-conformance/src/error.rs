//! Bad input to the kit (exit 2 of `fabric adapters check`). What the adapter does wrong is
//! never an error: it is a failed check in the report.

use fabric_config::{ConfigRule, ErrorInfo, Stage, codes};
use fabric_plan::PlanError;

/// Why the kit could not run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConformanceError {
    /// Neither an adapter id nor a descriptor was given.
    #[error("name the adapter to check (an adapter id or a descriptor file)")]
    NoAdapter,
    /// The descriptor file could not be read or is not a valid descriptor.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Discovery found no adapter with this id.
    #[error(
        "discovery found no adapter descriptor for `{adapter_id}` (`fabric adapters list` shows what it finds)"
    )]
    NotFound {
        /// The adapter id asked for.
        adapter_id: String,
    },
    /// `only` names a group the kit does not have.
    #[error(
        "unknown check group `{group}` (groups: descriptor, configs, doctor, lifecycle, streaming, relay)"
    )]
    UnknownGroup {
        /// The group asked for.
        group: String,
    },
    /// The working directory (the default base directory) cannot be read.
    #[error("the current directory cannot be read (pass a base directory)")]
    BaseDir,
    /// A model stub was asked for, but the config has no models to point at it.
    #[error("the model stub needs a config with models (models.*.base_url is pointed at it)")]
    ModelStubWithoutModels,
    /// A stub model server could not start.
    #[error("the stub model server could not start: {detail}")]
    ModelStubStart {
        /// Why (the address and the OS error).
        detail: String,
    },
    /// An inline reply script (`ConformanceRequest.model_stub`) is invalid.
    #[error("invalid `model_stub`: {detail}")]
    ModelStubScript {
        /// What is wrong, naming the field (`replies[1].error.status`).
        detail: String,
    },
    /// The stop deadline is not a finite number of seconds above 0 and at most 10^9.
    #[error("`stop_deadline_seconds` must be a finite number of seconds above 0 and at most 10^9")]
    StopDeadline,
    /// The config built from the descriptor does not decode (a descriptor problem the
    /// `descriptor` group reports too).
    #[error("the config built from the descriptor is invalid at `{path}`")]
    BuiltConfig {
        /// Where it is invalid.
        path: String,
    },
}

impl ConformanceError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            ConformanceError::Plan(error) => error.code(),
            ConformanceError::NotFound { .. } => codes::ADAPTER_NOT_FOUND,
            ConformanceError::ModelStubStart { .. } => codes::STUB_MODEL_START_FAILED,
            ConformanceError::ModelStubScript { .. } => codes::STUB_MODEL_SCRIPT_INVALID,
            ConformanceError::StopDeadline => ConfigRule::TimeoutSecondsInvalid.code(),
            ConformanceError::NoAdapter
            | ConformanceError::UnknownGroup { .. }
            | ConformanceError::BaseDir
            | ConformanceError::ModelStubWithoutModels
            | ConformanceError::BuiltConfig { .. } => codes::INVALID_ARGUMENT,
        }
    }
}

impl From<ConformanceError> for ErrorInfo {
    fn from(error: ConformanceError) -> Self {
        match error {
            ConformanceError::Plan(error) => ErrorInfo::from(error),
            other => {
                let info = ErrorInfo::new(Stage::Config, other.code(), other.to_string());
                match &other {
                    ConformanceError::BuiltConfig { path } => {
                        info.with_metadata("path", path.clone())
                    }
                    ConformanceError::ModelStubWithoutModels => {
                        info.with_metadata("field", "models")
                    }
                    ConformanceError::ModelStubScript { .. } => {
                        info.with_metadata("field", "model_stub")
                    }
                    ConformanceError::StopDeadline => {
                        info.with_metadata("field", "stop_deadline_seconds")
                    }
                    _ => info,
                }
            }
        }
    }
}
