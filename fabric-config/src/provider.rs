//! The environment-provider protocol `fabric.environment-provider.v1alpha1` and the provider
//! descriptor.
//!
//! A provider is a child process of the core speaking NDJSON on stdio: one
//! [`ProviderRequest`] line on its stdin, one [`ProviderResponse`] line on its stdout, in
//! order (stderr is diagnostics). It is found like an adapter, through a
//! [`ProviderDescriptor`] file named `<provider>.fabric-environment-provider.json`.
//!
//! ```
//! use fabric_config::provider::{ProviderOperation, ProviderRequest, ProviderResponse};
//!
//! let request = ProviderRequest::new("req-1", ProviderOperation::Inspect {
//!     environment_id: "env-1".into(),
//! });
//! let line = serde_json::to_value(&request).unwrap();
//! assert_eq!(line["protocol_version"], "fabric.environment-provider.v1alpha1");
//! assert_eq!(line["operation"], "inspect");
//!
//! let ok: ProviderResponse = serde_json::from_str(
//!     r#"{"request_id": "req-1", "status": "succeeded", "output": {}}"#,
//! ).unwrap();
//! assert_eq!(ok.request_id, "req-1");
//! let failed: ProviderResponse = serde_json::from_str(
//!     r#"{"request_id": "req-1", "status": "failed", "error": {"code": "x", "message": "y"}}"#,
//! ).unwrap();
//! assert!(failed.outcome.error().is_some());
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::collections::BTreeMap;

use crate::config::JsonObject;
use crate::environment_ops::{FileListRequest, FileReadRequest, FileWriteRequest};
use crate::handles::EnvironmentReference;

/// The protocol version every request carries.
pub const PROTOCOL_VERSION: &str = "fabric.environment-provider.v1alpha1";
/// The `schema_version` of a provider descriptor.
pub const DESCRIPTOR_VERSION: &str = "fabric.environment-provider-descriptor/v1alpha1";
/// File-name suffix of a provider descriptor (`<provider>` before it).
pub const DESCRIPTOR_SUFFIX: &str = ".fabric-environment-provider.json";
/// Largest request line (newline included) the core sends.
pub const MAX_REQUEST_BYTES: usize = 256 * 1024;
/// Largest `stdout` + `stderr` of one `exec` output.
pub const MAX_EXEC_OUTPUT_BYTES: usize = 3 * 1024 * 1024;
/// Most files one `collect_artifacts` output may hold.
pub const MAX_ARTIFACT_FILES: usize = 16;
/// Largest single collected artifact file.
pub const MAX_ARTIFACT_FILE_BYTES: usize = 256 * 1024;
/// Largest total of the files of one `collect_artifacts` output.
pub const MAX_ARTIFACT_TOTAL_BYTES: usize = 512 * 1024;
/// Largest response line the core reads (room for the largest legal output, JSON escaped).
pub const MAX_RESPONSE_BYTES: usize = 24 * 1024 * 1024;

/// One request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderRequest {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// Unique per request; the response echoes it.
    pub request_id: String,
    /// The operation and its members.
    #[serde(flatten)]
    pub operation: ProviderOperation,
}

impl ProviderRequest {
    /// A request of the current protocol version.
    pub fn new(request_id: impl Into<String>, operation: ProviderOperation) -> Self {
        ProviderRequest {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            request_id: request_id.into(),
            operation,
        }
    }
}

/// What a request asks for (`operation` names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "operation", rename_all = "snake_case")]
pub enum ProviderOperation {
    /// Create a Fabric-owned environment.
    Prepare {
        /// The config's `environment.settings` (provider-defined).
        #[serde(default)]
        settings: JsonObject,
        /// The config's `environment.workspace`, unresolved (a path in the environment).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workspace: Option<String>,
    },
    /// Verify and attach to an existing, caller-owned environment.
    Attach {
        /// What to attach to.
        reference: EnvironmentReference,
        /// The config's `environment.settings`.
        #[serde(default)]
        settings: JsonObject,
    },
    /// Describe a prepared or attached environment.
    Inspect {
        /// The provider's environment id.
        environment_id: String,
    },
    /// Send one runtime-server (bridge) request to the environment's `fabric-agent-ctl
    /// serve` and return its response.
    RuntimeControl {
        /// The provider's environment id.
        environment_id: String,
        /// The bridge request object (`interface_version: 2`, docs/sandbox.md).
        request: Value,
    },
    /// Read declared artifact files of one invocation from the environment.
    CollectArtifacts {
        /// The provider's environment id.
        environment_id: String,
        /// Paths in the environment, relative to its artifact root.
        paths: Vec<String>,
    },
    /// Run a command in the environment.
    Exec {
        /// The provider's environment id.
        environment_id: String,
        /// Program and arguments.
        argv: Vec<String>,
        /// Deadline in milliseconds.
        timeout_ms: u64,
        /// Working directory relative to the workspace (absent: the workspace).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// Variables added to the command's environment.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// The command's stdin, lowercase hex (absent: empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stdin_hex: Option<String>,
        /// Bytes kept of each output stream (absent: 1 MiB); see [`ExecOutput`]'s flags.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_limit_bytes: Option<u64>,
    },
    /// Write one file beneath the environment's workspace or artifact root, without
    /// following links.
    WriteFile {
        /// The provider's environment id.
        environment_id: String,
        /// What to write.
        request: FileWriteRequest,
        /// Append the content to the existing regular file instead of replacing it (the
        /// chunks after the first of a file larger than one request line; `mode` is
        /// ignored).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        append: bool,
    },
    /// Read one regular file beneath the workspace or artifact root (output: a `FileContent`).
    ReadFile {
        /// The provider's environment id.
        environment_id: String,
        /// What to read.
        request: FileReadRequest,
    },
    /// List one directory beneath the workspace or artifact root (output: a `FileListing`).
    ListFiles {
        /// The provider's environment id.
        environment_id: String,
        /// What to list.
        request: FileListRequest,
    },
    /// End Fabric's use of the environment: delete it when Fabric owns it, else detach.
    Release {
        /// The provider's environment id.
        environment_id: String,
    },
}

impl ProviderOperation {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            ProviderOperation::Prepare { .. } => "prepare",
            ProviderOperation::Attach { .. } => "attach",
            ProviderOperation::Inspect { .. } => "inspect",
            ProviderOperation::RuntimeControl { .. } => "runtime_control",
            ProviderOperation::CollectArtifacts { .. } => "collect_artifacts",
            ProviderOperation::Exec { .. } => "exec",
            ProviderOperation::WriteFile { .. } => "write_file",
            ProviderOperation::ReadFile { .. } => "read_file",
            ProviderOperation::ListFiles { .. } => "list_files",
            ProviderOperation::Release { .. } => "release",
        }
    }
}

/// One response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderResponse {
    /// The request's id.
    pub request_id: String,
    /// Outcome.
    #[serde(flatten)]
    pub outcome: ProviderOutcome,
}

/// `succeeded` with an output, or `failed` with an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ProviderOutcome {
    /// The operation's output (per operation: [`ProviderEnvironment`], [`ExecOutput`],
    /// [`ArtifactsOutput`], or `{response}` for `runtime_control`, `{}` for `release`).
    Succeeded {
        /// The output object.
        output: Value,
    },
    /// The provider's error.
    Failed {
        /// Code and message.
        error: ProviderError,
    },
}

impl ProviderOutcome {
    /// The error of a failed outcome.
    pub fn error(&self) -> Option<&ProviderError> {
        match self {
            ProviderOutcome::Failed { error } => Some(error),
            ProviderOutcome::Succeeded { .. } => None,
        }
    }
}

/// A provider's error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderError {
    /// Stable snake_case code (provider-defined).
    pub code: String,
    /// Safe message (never a secret).
    pub message: String,
}

/// Output of `prepare`, `attach` and `inspect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderEnvironment {
    /// The provider's id of the environment (later requests name it).
    pub environment_id: String,
    /// A reference `attach` accepts for this environment.
    pub reference: EnvironmentReference,
    /// The workspace path inside the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The artifact root inside the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// Provider connection data (never secrets).
    #[serde(default)]
    pub connection: JsonObject,
}

/// Output of `exec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecOutput {
    /// Exit code (`None`: killed by a signal or the deadline).
    pub exit_code: Option<i32>,
    /// Standard output (UTF-8, lossy).
    pub stdout: String,
    /// Standard error (UTF-8, lossy).
    pub stderr: String,
    /// The signal that ended the command, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Whether stdout was longer than the output limit (the rest was read and dropped).
    #[serde(default)]
    pub stdout_truncated: bool,
    /// Whether stderr was longer than the output limit.
    #[serde(default)]
    pub stderr_truncated: bool,
    /// Whether the deadline passed and the command's process group was killed.
    #[serde(default)]
    pub timed_out: bool,
    /// Wall time from start to exit, milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
}

/// Output of `collect_artifacts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactsOutput {
    /// The files found (missing paths are left out).
    pub files: Vec<ArtifactFile>,
    /// Paths refused one by one (a symbolic link on the way, not a regular file, above
    /// the per-file limit); the other paths are still collected. Absent from providers
    /// that refuse nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<ArtifactRefusal>,
}

/// One path a provider refused to collect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactRefusal {
    /// The requested relative path.
    pub path: String,
    /// A stable code (`path_refused`).
    pub code: String,
    /// Why: `symlink`, `not_regular`, `too_large`, `outside_root`.
    pub reason: String,
    /// A message naming the path.
    pub message: String,
}

/// One collected file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactFile {
    /// The requested relative path.
    pub path: String,
    /// The content, lowercase hex.
    pub content_hex: String,
}

/// A provider descriptor (`<provider>.fabric-environment-provider.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderDescriptor {
    /// Always [`DESCRIPTOR_VERSION`].
    pub schema_version: String,
    /// The `environment.provider` name it serves.
    pub provider: String,
    /// The protocol it speaks ([`PROTOCOL_VERSION`]).
    pub protocol_version: String,
    /// The program (a bare name is looked up next to the descriptor, then next to the
    /// running executable and the core library, then on `PATH`) and its arguments.
    pub command: Vec<String>,
    /// Whether the provider implements `attach`.
    #[serde(default)]
    pub attach: bool,
}
