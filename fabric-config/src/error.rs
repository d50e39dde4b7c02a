//! The structured error shape shared by every surface (`ErrorInfo`) and its stages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The lifecycle stage an error belongs to. Spellings follow upstream `ErrorInfo.stage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Config decoding or validation.
    Config,
    /// Planning against a descriptor.
    Plan,
    /// Environment preparation.
    Prepare,
    /// Runtime start.
    Start,
    /// One invocation.
    Invoke,
    /// Runtime stop.
    Stop,
    /// Environment release.
    Release,
    /// Artifact collection.
    Artifact,
}

impl Stage {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Config => "config",
            Stage::Plan => "plan",
            Stage::Prepare => "prepare",
            Stage::Start => "start",
            Stage::Invoke => "invoke",
            Stage::Stop => "stop",
            Stage::Release => "release",
            Stage::Artifact => "artifact",
        }
    }
}

/// A structured error: what every surface (CLI, C ABI, bindings) reports.
///
/// `code` and `stage` are always set; `message` never contains secret values
/// (environment values, header values, credentials).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorInfo {
    /// Lifecycle stage that failed.
    pub stage: Stage,
    /// Stable snake_case error code.
    pub code: String,
    /// Human-readable, secret-free description.
    pub message: String,
    /// Whether retrying at the consumer boundary is safe.
    #[serde(default)]
    pub retryable: bool,
    /// Structured context (for example `path`, `adapter_id`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

impl ErrorInfo {
    /// A non-retryable error without metadata.
    pub fn new(stage: Stage, code: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorInfo {
            stage,
            code: code.into(),
            message: message.into(),
            retryable: false,
            metadata: Map::new(),
        }
    }

    /// Adds one metadata entry (builder style).
    pub fn with_metadata(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }

    /// The JSON path of the offending field, when the error names one.
    pub fn path(&self) -> Option<&str> {
        self.metadata.get("path").and_then(Value::as_str)
    }
}

impl std::fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]: {}", self.stage.as_str(), self.code, self.message)
    }
}

impl std::error::Error for ErrorInfo {}
