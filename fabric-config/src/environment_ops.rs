//! Caller operations on a prepared or attached environment: `exec`, `write_file`,
//! `read_file` and `list` (docs/sandbox.md, "Verifying inside the environment").
//!
//! Each is one request document in (the C ABI's `request_json`, the provider protocol's
//! operation members) and one result document out. Paths are relative to the environment's
//! workspace (`root: "workspace"`, the default) or its artifact root (`root: "artifacts"`)
//! and are resolved beneath it without following a symbolic link anywhere.
//!
//! The result of an `exec` is [`ExecOutput`](crate::provider::ExecOutput).
//!
//! ```
//! use fabric_config::environment_ops::{ExecRequest, FileRoot};
//!
//! let request: ExecRequest = serde_json::from_str(r#"{"argv": ["true"]}"#).unwrap();
//! assert_eq!(request.timeout_seconds, 60.0);
//! assert!(request.check().is_ok());
//! let empty: ExecRequest = serde_json::from_str(r#"{"argv": []}"#).unwrap();
//! assert_eq!(empty.check().unwrap_err().0, "argv");
//! assert_eq!(FileRoot::default().dir_name(), "workspace");
//! ```

use std::collections::BTreeMap;
use std::path::{Component, Path};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default and largest `output_limit_bytes` of one stream of an `exec`.
pub const DEFAULT_OUTPUT_LIMIT_BYTES: u64 = 1024 * 1024;
/// Largest `timeout_seconds` of an `exec` (one day).
pub const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;
/// Largest `stdin` of an `exec` (bytes, before hex encoding: the provider request line is at
/// most 256 KiB), and the size of each chunk a `write_file` reaches a provider in.
pub const MAX_WRITE_BYTES: usize = 96 * 1024;
/// Largest content of a `write_file` (bytes, before hex encoding); a provider environment
/// gets it in chunks of [`MAX_WRITE_BYTES`].
pub const MAX_FILE_WRITE_BYTES: usize = 16 * 1024 * 1024;
/// Default and largest `max_bytes` of a `read_file`.
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;
/// Most entries one `list` returns (the rest are left out, `truncated`).
pub const MAX_LIST_ENTRIES: usize = 4096;

/// A field that failed a request check and why (for the error message).
pub type RequestFault = (&'static str, String);

/// Run one command in the environment, never through a shell unless `argv` names one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Working directory relative to the workspace (default: the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables added to the command's environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Bytes written to the command's stdin, lowercase hex (default: stdin is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin_hex: Option<String>,
    /// Deadline: the command's whole process group is killed when it passes (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_seconds: f64,
    /// Bytes kept of each of stdout and stderr; the rest is read and dropped, and the
    /// stream's `*_truncated` flag set (default and at most 1 MiB).
    #[serde(default = "default_output_limit")]
    pub output_limit_bytes: u64,
}

fn default_timeout() -> f64 {
    60.0
}

fn default_output_limit() -> u64 {
    DEFAULT_OUTPUT_LIMIT_BYTES
}

impl ExecRequest {
    /// A request of `argv` with the defaults.
    pub fn new(argv: Vec<String>) -> Self {
        ExecRequest {
            argv,
            cwd: None,
            env: BTreeMap::new(),
            stdin_hex: None,
            timeout_seconds: default_timeout(),
            output_limit_bytes: default_output_limit(),
        }
    }

    /// Checks the members; the fault names the field.
    pub fn check(&self) -> Result<(), RequestFault> {
        if self.argv.first().is_none_or(String::is_empty) {
            return Err(("argv", "`argv` must name a program".into()));
        }
        if !(self.timeout_seconds > 0.0 && self.timeout_seconds <= MAX_TIMEOUT_SECONDS) {
            return Err((
                "timeout_seconds",
                format!("`timeout_seconds` must be above 0 and at most {MAX_TIMEOUT_SECONDS}"),
            ));
        }
        if self.output_limit_bytes > DEFAULT_OUTPUT_LIMIT_BYTES {
            return Err((
                "output_limit_bytes",
                format!("`output_limit_bytes` must be at most {DEFAULT_OUTPUT_LIMIT_BYTES}"),
            ));
        }
        if let Some(cwd) = &self.cwd {
            check_relative("cwd", cwd, true)?;
        }
        if let Some(name) = self
            .env
            .keys()
            .find(|k| k.is_empty() || k.contains(['=', '\0']))
        {
            return Err(("env", format!("`env` holds an invalid name `{name}`")));
        }
        if let Some(stdin) = &self.stdin_hex {
            check_hex("stdin_hex", stdin, MAX_WRITE_BYTES)?;
        }
        Ok(())
    }

    /// The stdin bytes (empty when absent or not hex: [`ExecRequest::check`] refuses that).
    pub fn stdin(&self) -> Vec<u8> {
        self.stdin_hex
            .as_deref()
            .and_then(|h| hex::decode(h).ok())
            .unwrap_or_default()
    }
}

/// Which root a file path is relative to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileRoot {
    /// The environment's workspace.
    #[default]
    Workspace,
    /// The environment's artifact root.
    Artifacts,
}

impl FileRoot {
    /// The directory name of the root in a provider's environment directory.
    pub fn dir_name(self) -> &'static str {
        match self {
            FileRoot::Workspace => "workspace",
            FileRoot::Artifacts => "artifacts",
        }
    }
}

/// Write one file beneath a root (parents are created; an existing file is replaced).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileWriteRequest {
    /// Path relative to the root.
    pub path: String,
    /// The content, lowercase hex (at most 16 MiB decoded).
    pub content_hex: String,
    /// Permission bits (default `0o644`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// The root (default `workspace`).
    #[serde(default)]
    pub root: FileRoot,
}

impl FileWriteRequest {
    /// Checks the members; the fault names the field.
    pub fn check(&self) -> Result<Vec<u8>, RequestFault> {
        check_relative("path", &self.path, false)?;
        check_hex("content_hex", &self.content_hex, MAX_FILE_WRITE_BYTES)?;
        if self.mode.is_some_and(|m| m > 0o7777) {
            return Err((
                "mode",
                "`mode` must be permission bits (at most 0o7777)".into(),
            ));
        }
        let bytes = hex::decode(&self.content_hex).unwrap_or_default();
        if bytes.len() > MAX_FILE_WRITE_BYTES {
            return Err((
                "content_hex",
                format!("the content is above the {MAX_FILE_WRITE_BYTES}-byte write limit"),
            ));
        }
        Ok(bytes)
    }
}

/// Read one regular file beneath a root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileReadRequest {
    /// Path relative to the root.
    pub path: String,
    /// Bytes read at most; a longer file is `truncated` (default and at most 4 MiB).
    #[serde(default = "default_read_limit")]
    pub max_bytes: u64,
    /// The root (default `workspace`).
    #[serde(default)]
    pub root: FileRoot,
}

fn default_read_limit() -> u64 {
    MAX_READ_BYTES
}

impl FileReadRequest {
    /// Checks the members; the fault names the field.
    pub fn check(&self) -> Result<(), RequestFault> {
        check_relative("path", &self.path, false)?;
        if self.max_bytes > MAX_READ_BYTES {
            return Err((
                "max_bytes",
                format!("`max_bytes` must be at most {MAX_READ_BYTES}"),
            ));
        }
        Ok(())
    }
}

/// The result of a `read_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileContent {
    /// The requested path.
    pub path: String,
    /// The bytes read, lowercase hex.
    pub content_hex: String,
    /// The file's size.
    pub size: u64,
    /// Whether the file is longer than what was read.
    #[serde(default)]
    pub truncated: bool,
}

/// List one directory beneath a root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileListRequest {
    /// Path relative to the root (`""` or `"."`: the root itself).
    #[serde(default)]
    pub path: String,
    /// The root (default `workspace`).
    #[serde(default)]
    pub root: FileRoot,
}

impl FileListRequest {
    /// Checks the members; the fault names the field.
    pub fn check(&self) -> Result<(), RequestFault> {
        check_relative("path", &self.path, true)
    }
}

/// The result of a `list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileListing {
    /// The requested path.
    pub path: String,
    /// The entries, by name.
    pub entries: Vec<FileEntry>,
    /// Whether entries were left out (more than 4096).
    #[serde(default)]
    pub truncated: bool,
}

/// One directory entry (a link is listed as a link, never followed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileEntry {
    /// The name.
    pub name: String,
    /// `file`, `directory`, `symlink` or `other`.
    pub kind: String,
    /// Size in bytes (of the link itself for a link).
    pub size: u64,
}

/// Refuses an absolute path or one holding `..` (`empty_ok`: `""` and `.` mean the root).
fn check_relative(field: &'static str, path: &str, empty_ok: bool) -> Result<(), RequestFault> {
    let plain = Path::new(path)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let empty = path.is_empty() || Path::new(path).components().all(|c| c == Component::CurDir);
    if !plain || path.contains('\0') || (empty && !empty_ok) {
        return Err((
            field,
            format!("`{field}` must be a relative path beneath the root (no `..`, not absolute)"),
        ));
    }
    Ok(())
}

fn check_hex(field: &'static str, text: &str, limit: usize) -> Result<(), RequestFault> {
    if text.len() / 2 > limit {
        return Err((field, format!("`{field}` is above the {limit}-byte limit")));
    }
    hex::decode(text)
        .map(drop)
        .map_err(|_| (field, format!("`{field}` must be lowercase hex")))
}
