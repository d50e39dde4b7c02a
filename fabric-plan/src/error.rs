//! The planning error type.

use fabric_config::codes;
use std::path::{Path, PathBuf};

use fabric_config::plan::DescriptorSource;
use fabric_config::validate::SelectorError;
use fabric_config::{ConfigFinding, ErrorInfo, Stage};

/// Everything that can fail while loading descriptors, planning, doctoring or inspecting.
///
/// Variants carry structured context (file, JSON path, adapter id); messages never contain
/// config values, environment values or header values.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A descriptor file (or discovery directory) could not be read.
    #[error("cannot read descriptor `{}`: {source}", file.display())]
    DescriptorRead {
        /// The file or directory.
        file: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A descriptor file is not JSON.
    #[error("descriptor `{}` is not valid JSON: line {line}, column {column}", file.display())]
    DescriptorJson {
        /// The file.
        file: PathBuf,
        /// 1-based line of the syntax error.
        line: usize,
        /// 1-based column of the syntax error.
        column: usize,
    },
    /// A descriptor declares a contract version other than `fabric.adapter/v1alpha2`.
    #[error("descriptor `{}` at `{path}`: {reason}", file.display())]
    DescriptorContract {
        /// The file.
        file: PathBuf,
        /// JSON path of the offending field.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A descriptor violates the descriptor contract's structure or rules.
    #[error("descriptor `{}` at `{path}`: {reason}", file.display())]
    DescriptorInvalid {
        /// The file.
        file: PathBuf,
        /// JSON path of the offending field.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// An embedded JSON Schema is not valid JSON Schema 2020-12 or uses a non-local reference.
    #[error("descriptor `{}` at `{path}`: invalid embedded JSON Schema: {reason}", file.display())]
    DescriptorSchema {
        /// The file.
        file: PathBuf,
        /// JSON path of the embedded schema (or the offending keyword inside it).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Two different descriptors with the same id were found at the same precedence level.
    #[error(
        "ambiguous {kind} descriptor `{id}`; conflicting files: `{}` and `{}`",
        first.display(),
        second.display()
    )]
    DescriptorAmbiguous {
        /// `adapter` or `target`.
        kind: &'static str,
        /// The duplicated id.
        id: String,
        /// One file.
        first: PathBuf,
        /// The other file.
        second: PathBuf,
    },
    /// No descriptor for the selected adapter was discovered.
    #[error("unknown adapter `{adapter_id}`; available adapters: [{}]{}", available.join(", "), skipped_note(skipped))]
    AdapterNotFound {
        /// The requested adapter id.
        adapter_id: String,
        /// Adapter ids that were discovered.
        available: Vec<String>,
        /// Invalid descriptor files that were skipped while searching.
        skipped: Vec<PathBuf>,
    },
    /// No target descriptor for `workflow.target_id` was discovered.
    #[error("unknown workflow target `{target_id}`; available targets: [{}]{}", available.join(", "), skipped_note(skipped))]
    TargetNotFound {
        /// The requested target id.
        target_id: String,
        /// Target ids that were discovered.
        available: Vec<String>,
        /// Invalid descriptor files that were skipped while searching.
        skipped: Vec<PathBuf>,
    },
    /// The config is invalid on its own (before any descriptor is consulted).
    #[error("invalid config at `{path}`: {reason}")]
    ConfigInvalid {
        /// JSON path of the offending field.
        path: String,
        /// What is wrong.
        reason: String,
        /// The stable code reported by config validation.
        code: String,
    },
    /// The selected adapter cannot implement a configured field.
    #[error("adapter `{adapter_id}` cannot implement configuration at `{path}`: {reason}")]
    Incompatible {
        /// The selected adapter.
        adapter_id: String,
        /// JSON path of the offending field.
        path: String,
        /// Why.
        reason: String,
    },
    /// A configured value violates a descriptor-owned JSON Schema.
    #[error(
        "adapter `{adapter_id}` rejects configuration at `{path}`: {reason} ({schema}{})",
        origin_note(origin)
    )]
    SchemaViolation {
        /// The selected adapter.
        adapter_id: String,
        /// The descriptor schema that rejected it (for example `adapter settings schema`).
        schema: &'static str,
        /// JSON path of the offending value.
        path: String,
        /// Why (values masked).
        reason: String,
        /// The descriptor that owns the schema, when it came from a file.
        origin: Option<DescriptorOrigin>,
    },
    /// Several model roles without a `default` role.
    #[error(
        "cannot select a model for adapter `{adapter_id}` at `models`: multiple model roles are configured and no default role selects one"
    )]
    ModelRoleAmbiguous {
        /// The selected adapter.
        adapter_id: String,
    },
    /// A target descriptor does not belong to the selected adapter.
    #[error("workflow target `{target_id}` at `{path}`: {reason}")]
    TargetMismatch {
        /// The target id.
        target_id: String,
        /// JSON path of the offending field.
        path: String,
        /// Why.
        reason: String,
    },
    /// The base directory is not valid UTF-8: the config's relative paths are anchored at it
    /// and cross JSON documents (the plan, the adapter's config), which cannot hold it, so
    /// it is refused rather than converted lossily (`\u{FFFD}` would name another path).
    #[error(
        "the base directory {} is not valid UTF-8: the config's paths are anchored at it and passed on in JSON, which cannot hold it; move the config or choose a UTF-8 base directory (--base-dir, options.base_dir)",
        escaped(base_dir)
    )]
    BaseDirNotUtf8 {
        /// The directory.
        base_dir: PathBuf,
    },
    /// The planned descriptor fingerprint differs from the expected one.
    #[error("adapter descriptor mismatch for `{adapter_id}`: expected {expected}, found {actual}")]
    DescriptorMismatch {
        /// The selected adapter.
        adapter_id: String,
        /// The caller's fingerprint.
        expected: String,
        /// The fingerprint of the planned descriptor(s).
        actual: String,
    },
}

/// Where a descriptor that owns a schema came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescriptorOrigin {
    /// Discovery source.
    pub source: DescriptorSource,
    /// The descriptor file.
    pub file: PathBuf,
}

fn origin_note(origin: &Option<DescriptorOrigin>) -> String {
    match origin {
        Some(origin) => format!(
            " of {} descriptor `{}`",
            origin.source.as_str(),
            origin.file.display()
        ),
        None => String::new(),
    }
}

/// `path` with every byte that is not UTF-8 escaped (`/srv/d\xFF`), in backquotes.
fn escaped(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    format!(
        "`{}`",
        path.as_os_str()
            .as_bytes()
            .utf8_chunks()
            .fold(String::new(), |mut text, chunk| {
                text.push_str(chunk.valid());
                for byte in chunk.invalid() {
                    text.push_str(&format!("\\x{byte:02X}"));
                }
                text
            })
    )
}

fn skipped_note(skipped: &[PathBuf]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let files: Vec<String> = skipped
        .iter()
        .map(|file| format!("`{}`", file.display()))
        .collect();
    format!("; invalid descriptor files skipped: {}", files.join(", "))
}

/// Every code [`PlanError::code`] can return (listed in `tests/fixtures/error-codes.json`).
pub const PLAN_ERROR_CODES: &[&str] = &[
    codes::DESCRIPTOR_READ_FAILED,
    codes::DESCRIPTOR_INVALID_JSON,
    codes::DESCRIPTOR_UNSUPPORTED_CONTRACT,
    codes::DESCRIPTOR_INVALID,
    codes::DESCRIPTOR_INVALID_SCHEMA,
    codes::DESCRIPTOR_AMBIGUOUS,
    codes::ADAPTER_NOT_FOUND,
    codes::TARGET_NOT_FOUND,
    codes::CONFIG_INVALID,
    codes::CONFIG_INCOMPATIBLE,
    codes::CONFIG_SCHEMA_VIOLATION,
    codes::MODEL_ROLE_AMBIGUOUS,
    codes::TARGET_MISMATCH,
    codes::DESCRIPTOR_MISMATCH,
    codes::BASE_DIR_NOT_UTF8,
];

impl PlanError {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            PlanError::DescriptorRead { .. } => codes::DESCRIPTOR_READ_FAILED,
            PlanError::DescriptorJson { .. } => codes::DESCRIPTOR_INVALID_JSON,
            PlanError::DescriptorContract { .. } => codes::DESCRIPTOR_UNSUPPORTED_CONTRACT,
            PlanError::DescriptorInvalid { .. } => codes::DESCRIPTOR_INVALID,
            PlanError::DescriptorSchema { .. } => codes::DESCRIPTOR_INVALID_SCHEMA,
            PlanError::DescriptorAmbiguous { .. } => codes::DESCRIPTOR_AMBIGUOUS,
            PlanError::AdapterNotFound { .. } => codes::ADAPTER_NOT_FOUND,
            PlanError::TargetNotFound { .. } => codes::TARGET_NOT_FOUND,
            PlanError::ConfigInvalid { .. } => codes::CONFIG_INVALID,
            PlanError::Incompatible { .. } => codes::CONFIG_INCOMPATIBLE,
            PlanError::SchemaViolation { .. } => codes::CONFIG_SCHEMA_VIOLATION,
            PlanError::ModelRoleAmbiguous { .. } => codes::MODEL_ROLE_AMBIGUOUS,
            PlanError::TargetMismatch { .. } => codes::TARGET_MISMATCH,
            PlanError::DescriptorMismatch { .. } => codes::DESCRIPTOR_MISMATCH,
            PlanError::BaseDirNotUtf8 { .. } => codes::BASE_DIR_NOT_UTF8,
        }
    }

    /// The JSON path the error names, when it names one.
    pub fn path(&self) -> Option<&str> {
        match self {
            PlanError::DescriptorContract { path, .. }
            | PlanError::DescriptorInvalid { path, .. }
            | PlanError::DescriptorSchema { path, .. }
            | PlanError::ConfigInvalid { path, .. }
            | PlanError::Incompatible { path, .. }
            | PlanError::SchemaViolation { path, .. }
            | PlanError::TargetMismatch { path, .. } => Some(path),
            PlanError::ModelRoleAmbiguous { .. } => Some("models"),
            PlanError::AdapterNotFound { .. } => Some("harness.adapter_id"),
            PlanError::TargetNotFound { .. } => Some("workflow.target_id"),
            PlanError::BaseDirNotUtf8 { .. } => Some("base_dir"),
            _ => None,
        }
    }

    /// The adapter the error concerns, when known.
    pub fn adapter_id(&self) -> Option<&str> {
        match self {
            PlanError::Incompatible { adapter_id, .. }
            | PlanError::SchemaViolation { adapter_id, .. }
            | PlanError::ModelRoleAmbiguous { adapter_id }
            | PlanError::AdapterNotFound { adapter_id, .. }
            | PlanError::DescriptorMismatch { adapter_id, .. } => Some(adapter_id),
            _ => None,
        }
    }

    /// The descriptor file the error concerns, when known.
    pub fn file(&self) -> Option<&Path> {
        match self {
            PlanError::DescriptorRead { file, .. }
            | PlanError::DescriptorJson { file, .. }
            | PlanError::DescriptorContract { file, .. }
            | PlanError::DescriptorInvalid { file, .. }
            | PlanError::DescriptorSchema { file, .. } => Some(file),
            PlanError::DescriptorAmbiguous { first, .. } => Some(first),
            PlanError::SchemaViolation {
                origin: Some(origin),
                ..
            } => Some(&origin.file),
            _ => None,
        }
    }

    pub(crate) fn invalid(file: &Path, path: impl Into<String>, reason: impl Into<String>) -> Self {
        PlanError::DescriptorInvalid {
            file: file.to_path_buf(),
            path: path.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn incompatible(
        adapter_id: &str,
        path: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        PlanError::Incompatible {
            adapter_id: adapter_id.to_owned(),
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// A config rule violation, reported at the plan stage with the rule's code.
impl From<ConfigFinding> for PlanError {
    fn from(finding: ConfigFinding) -> Self {
        PlanError::ConfigInvalid {
            reason: match &finding.detail {
                Some(detail) => format!("{} ({detail})", finding.rule.description()),
                None => finding.rule.description().to_owned(),
            },
            code: finding.code().to_owned(),
            path: finding.path,
        }
    }
}

/// The selector rule's errors: the missing-selector finding, or `target_mismatch`.
impl From<SelectorError> for PlanError {
    fn from(error: SelectorError) -> Self {
        let path = error.path().to_owned();
        let reason = error.to_string();
        match error {
            SelectorError::Missing(finding) => PlanError::from(finding),
            SelectorError::TargetMismatch { target_id, .. } => PlanError::TargetMismatch {
                target_id,
                path,
                reason,
            },
        }
    }
}

impl From<PlanError> for ErrorInfo {
    fn from(error: PlanError) -> Self {
        ErrorInfo::from(&error)
    }
}

impl From<&PlanError> for ErrorInfo {
    fn from(error: &PlanError) -> Self {
        let code = match error {
            PlanError::ConfigInvalid { code, .. } if !code.is_empty() => code.clone(),
            _ => error.code().to_owned(),
        };
        let mut info = ErrorInfo::new(Stage::Plan, code, error.to_string());
        if let Some(path) = error.path() {
            info = info.with_metadata("path", path);
        }
        if let Some(adapter_id) = error.adapter_id() {
            info = info.with_metadata("adapter_id", adapter_id);
        }
        if let Some(file) = error.file() {
            info = info.with_metadata("file", file.display().to_string());
        }
        if let PlanError::SchemaViolation {
            origin: Some(origin),
            ..
        } = error
        {
            info = info.with_metadata("descriptor_source", origin.source.as_str());
        }
        if let PlanError::DescriptorMismatch {
            expected, actual, ..
        } = error
        {
            info = info
                .with_metadata("expected_sha256", expected.as_str())
                .with_metadata("actual_sha256", actual.as_str());
        }
        if let PlanError::DescriptorAmbiguous { second, .. } = error {
            info = info.with_metadata("conflicting_file", second.display().to_string());
        }
        info
    }
}
