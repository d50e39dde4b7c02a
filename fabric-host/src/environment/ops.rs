//! Caller operations on a prepared or attached environment: `exec`, `write_file`,
//! `read_file`, `list_files`. A provider environment forwards each to its provider
//! process; the local provider runs them here with the provider kit's functions (the same
//! process-group, bound and path rules), its workspace as the base.

use std::path::Path;
use std::time::Duration;

use fabric_config::Stage;
use fabric_config::codes::{self, ErrorClass};
use fabric_config::environment_ops::{
    ExecRequest, FileContent, FileListRequest, FileListing, FileReadRequest, FileRoot,
    FileWriteRequest, MAX_WRITE_BYTES, RequestFault,
};
use fabric_config::provider::{ExecOutput, ProviderOperation};
use fabric_sandbox::kit::{self, Failure};
use fabric_sandbox::provider;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::{EXEC_GRACE, Environment};
use crate::error::HostError;

/// How long a provider may take over one file operation.
const FILE_TIMEOUT: Duration = Duration::from_secs(60);

impl Environment {
    /// Runs `request` in the environment: its own process group, killed whole at the
    /// deadline; each output stream bounded (`*_truncated`). Works until release, whether
    /// runtimes run in the environment or not.
    pub fn exec_request(&self, request: &ExecRequest) -> Result<ExecOutput, HostError> {
        let stage = Stage::Invoke;
        request.check().map_err(|fault| invalid(stage, fault))?;
        if self.is_released() {
            return Err(HostError::EnvironmentReleased { stage });
        }
        let Some(remote) = &self.remote else {
            return kit::exec_beneath(self.workspace(), Path::new(""), request, self.host_env())
                .map_err(|f| failure(stage, f));
        };
        let timeout = Duration::from_secs_f64(request.timeout_seconds);
        let output = remote.client.request(
            ProviderOperation::Exec {
                environment_id: remote.environment.environment_id.clone(),
                argv: request.argv.clone(),
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                cwd: request.cwd.clone(),
                env: request.env.clone(),
                stdin_hex: request.stdin_hex.clone(),
                output_limit_bytes: Some(request.output_limit_bytes),
            },
            timeout + EXEC_GRACE,
            stage,
        )?;
        let output: ExecOutput = self.decode(output, stage, "exec")?;
        provider::check_exec(&output, stage)?;
        Ok(output)
    }

    /// Writes one file beneath the workspace (or artifact root), without following links.
    /// A provider gets the content in chunks of [`MAX_WRITE_BYTES`] (one request line each):
    /// the first replaces the file, the others append to it; a failure in between leaves
    /// the chunks written so far.
    pub fn write_file(&self, request: &FileWriteRequest) -> Result<(), HostError> {
        let bytes = request
            .check()
            .map_err(|fault| invalid(Stage::Artifact, fault))?;
        let mut chunks: Vec<&[u8]> = bytes.chunks(MAX_WRITE_BYTES).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        let mut whole = false;
        for (index, chunk) in chunks.into_iter().enumerate() {
            let part = FileWriteRequest {
                path: request.path.clone(),
                content_hex: hex::encode(chunk),
                mode: request.mode,
                root: request.root,
            };
            let _: serde_json::Value = self.file_operation(
                request.root,
                |base| {
                    whole = true;
                    kit::files::write_file(base, Path::new(""), request).map(|()| json!({}))
                },
                |environment_id| ProviderOperation::WriteFile {
                    environment_id,
                    request: part,
                    append: index > 0,
                },
            )?;
            if whole {
                // The local provider wrote it all at once.
                break;
            }
        }
        Ok(())
    }

    /// Reads one regular file beneath the workspace (or artifact root), at most
    /// `max_bytes` of it (`truncated` when it is longer).
    pub fn read_file(&self, request: &FileReadRequest) -> Result<FileContent, HostError> {
        request
            .check()
            .map_err(|fault| invalid(Stage::Artifact, fault))?;
        self.file_operation(
            request.root,
            |base| kit::files::read_file(base, Path::new(""), request),
            |environment_id| ProviderOperation::ReadFile {
                environment_id,
                request: request.clone(),
            },
        )
    }

    /// Lists one directory beneath the workspace (or artifact root); links are listed as
    /// links, never followed.
    pub fn list_files(&self, request: &FileListRequest) -> Result<FileListing, HostError> {
        request
            .check()
            .map_err(|fault| invalid(Stage::Artifact, fault))?;
        self.file_operation(
            request.root,
            |base| kit::files::list_files(base, Path::new(""), request),
            |environment_id| ProviderOperation::ListFiles {
                environment_id,
                request: request.clone(),
            },
        )
    }

    /// One file operation: `local` on the local provider's directory of `root`, else the
    /// provider's answer to `operation` for this environment, decoded.
    fn file_operation<T: DeserializeOwned>(
        &self,
        root: FileRoot,
        local: impl FnOnce(&Path) -> Result<T, Failure>,
        operation: impl FnOnce(String) -> ProviderOperation,
    ) -> Result<T, HostError> {
        let stage = Stage::Artifact;
        match self.live_remote(stage) {
            Err(HostError::Capability { .. }) => {
                local(self.local_root(root, stage)?).map_err(|f| failure(stage, f))
            }
            Err(error) => Err(error),
            Ok(remote) => {
                let operation = operation(remote.environment.environment_id.clone());
                let name = operation.name();
                let output = remote.client.request(operation, FILE_TIMEOUT, stage)?;
                self.decode(output, stage, name)
            }
        }
    }

    /// The local provider's directory of `root`.
    fn local_root(&self, root: FileRoot, stage: Stage) -> Result<&Path, HostError> {
        match root {
            FileRoot::Workspace => Ok(self.workspace()),
            FileRoot::Artifacts => self.artifact_root().ok_or_else(|| {
                invalid(
                    stage,
                    (
                        "root",
                        "`root` is `artifacts` but the environment has no artifact root (`runtime.artifacts` or `environment.artifacts`)".into(),
                    ),
                )
            }),
        }
    }

    fn decode<T: DeserializeOwned>(
        &self,
        output: serde_json::Value,
        stage: Stage,
        operation: &str,
    ) -> Result<T, HostError> {
        let remote = self.live_remote(stage)?;
        serde_json::from_value(output).map_err(|error| {
            HostError::from(remote.client.error(
                stage,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the `{operation}` output is malformed: {error}"),
            ))
        })
    }
}

fn invalid(stage: Stage, (field, message): RequestFault) -> HostError {
    HostError::Environment {
        stage,
        code: codes::INVALID_ENVIRONMENT_REQUEST,
        class: ErrorClass::Config,
        message,
        path: Some(field.to_owned()),
    }
}

fn failure(stage: Stage, (code, message): Failure) -> HostError {
    HostError::Environment {
        stage,
        code,
        class: codes::class_of(code).unwrap_or(ErrorClass::Runtime),
        message,
        path: None,
    }
}
