//! The structured error shape shared by every surface (`ErrorInfo`) and its stages.

use crate::codes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod rules;

pub use rules::ConfigRule;

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
    /// Structured context (for example `path`, `adapter_id`); always present, `{}` when
    /// none, as upstream.
    #[serde(default)]
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
        write!(
            f,
            "{} [{}]: {}",
            self.stage.as_str(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ErrorInfo {}

/// One validation finding: a rule and the JSON path of the offending field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigFinding {
    /// The violated rule.
    pub rule: ConfigRule,
    /// JSON path, for example `models.default.top_p` or `environment.env_names[0]`.
    pub path: String,
    /// Optional secret-free detail (a field or tool name, never a value).
    pub detail: Option<String>,
}

impl ConfigFinding {
    /// Stable code of the rule.
    pub fn code(&self) -> &'static str {
        self.rule.code()
    }
}

impl std::fmt::Display for ConfigFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.path, self.rule.description())?;
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

/// Category of a structural decode failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A key that is not part of the vocabulary, outside an extension point.
    UnknownField,
    /// A required key is absent.
    MissingField,
    /// A value has the wrong JSON type.
    InvalidType,
    /// A value has the right type but an invalid value.
    InvalidValue,
    /// A string is not one of an enum's spellings.
    UnknownVariant,
}

impl DecodeErrorKind {
    /// Every kind.
    pub const ALL: &'static [DecodeErrorKind] = &[
        DecodeErrorKind::UnknownField,
        DecodeErrorKind::MissingField,
        DecodeErrorKind::InvalidType,
        DecodeErrorKind::InvalidValue,
        DecodeErrorKind::UnknownVariant,
    ];

    /// Stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            DecodeErrorKind::UnknownField => codes::UNKNOWN_FIELD,
            DecodeErrorKind::MissingField => codes::MISSING_FIELD,
            DecodeErrorKind::InvalidType => codes::INVALID_TYPE,
            DecodeErrorKind::InvalidValue => codes::INVALID_VALUE,
            DecodeErrorKind::UnknownVariant => codes::UNKNOWN_VARIANT,
        }
    }
}

/// A config that could not be decoded or violates a rule.
///
/// Messages and `Debug` output never contain values of environment variables, header values
/// or other string values from the input; they name the path instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The input is not JSON (or not a single JSON value).
    #[error("config is not valid JSON: {reason} (line {line}, column {column})")]
    InvalidJson {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there, in words ([`crate::json_syntax_reason`]: "the text ends
        /// inside an object: a `}` is missing"); syntax reasons never quote the input.
        reason: String,
    },
    /// The JSON does not have the shape of the vocabulary.
    #[error("`{path}`: {message}")]
    Decode {
        /// Failure category.
        kind: DecodeErrorKind,
        /// JSON path of the offending field (empty for the root).
        path: String,
        /// Secret-free description.
        message: String,
    },
    /// A validation rule is violated.
    #[error("{0}")]
    Invalid(ConfigFinding),
}

impl ConfigError {
    /// Every code `code()` can return (decode codes, then rule codes).
    pub fn all_codes() -> Vec<&'static str> {
        let mut codes = vec![codes::INVALID_JSON];
        codes.extend(DecodeErrorKind::ALL.iter().map(|kind| kind.code()));
        codes.extend(ConfigRule::ALL.iter().map(|rule| rule.code()));
        codes
    }

    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::InvalidJson { .. } => codes::INVALID_JSON,
            ConfigError::Decode { kind, .. } => kind.code(),
            ConfigError::Invalid(finding) => finding.code(),
        }
    }

    /// JSON path of the offending field (`None` for JSON syntax errors).
    pub fn path(&self) -> Option<&str> {
        match self {
            ConfigError::InvalidJson { .. } => None,
            ConfigError::Decode { path, .. } => Some(path),
            ConfigError::Invalid(finding) => Some(&finding.path),
        }
    }

    /// The violated rule, when this is a validation error.
    pub fn rule(&self) -> Option<ConfigRule> {
        match self {
            ConfigError::Invalid(finding) => Some(finding.rule),
            _ => None,
        }
    }
}

impl From<ConfigFinding> for ConfigError {
    fn from(finding: ConfigFinding) -> Self {
        ConfigError::Invalid(finding)
    }
}

impl From<ConfigError> for ErrorInfo {
    fn from(error: ConfigError) -> Self {
        let mut info = ErrorInfo::new(Stage::Config, error.code(), error.to_string());
        match &error {
            ConfigError::InvalidJson { line, column, .. } => {
                info = info
                    .with_metadata("line", *line as u64)
                    .with_metadata("column", *column as u64);
            }
            ConfigError::Decode { path, .. } => info = info.with_metadata("path", path.as_str()),
            ConfigError::Invalid(finding) => {
                info = info.with_metadata("path", finding.path.as_str());
            }
        }
        info
    }
}
