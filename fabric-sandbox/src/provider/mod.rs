//! Environment providers: finding a provider's descriptor, running the provider process
//! ([`ProviderClient`]) and the limits the core enforces on what it answers.
//!
//! A provider named `P` is served by the descriptor file `P.fabric-environment-provider.json`
//! (`fabric_config::provider::ProviderDescriptor`), found by the adapter discovery sources in
//! their order, first match wins: the config's `discovery.local_paths` (a directory holding
//! it, or holding `environment-providers/P/` with it), `FABRIC_ADAPTER_PATH`, the
//! installed prefixes' `share/nemo-fabric/adapters/environment-providers/P/`, and the bundled
//! adapters directory's `environment-providers/P/`. The provider runs with the descriptor's
//! directory as its working directory; a `command[0]` holding `/` is resolved against it,
//! a bare name is looked up on `PATH`.

mod client;

use fabric_config::codes;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fabric_config::Stage;
use fabric_config::codes::ErrorClass;
use fabric_config::plan::RunPlan;
use fabric_config::provider::{
    ArtifactRefusal, ArtifactsOutput, DESCRIPTOR_SUFFIX, DESCRIPTOR_VERSION, ExecOutput,
    MAX_ARTIFACT_FILE_BYTES, MAX_ARTIFACT_FILES, MAX_ARTIFACT_TOTAL_BYTES, MAX_EXEC_OUTPUT_BYTES,
    PROTOCOL_VERSION, ProviderDescriptor,
};
use fabric_plan::discovery::DiscoveryOptions;

pub use client::ProviderClient;

use crate::error::SandboxError;

/// Default deadline of `prepare`, `attach` and `release`.
pub const LIFECYCLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A provider descriptor and the file it came from.
#[derive(Debug, Clone)]
pub struct FoundProvider {
    /// The decoded descriptor.
    pub descriptor: ProviderDescriptor,
    /// The descriptor file.
    pub path: PathBuf,
}

impl FoundProvider {
    /// Starts the provider process.
    pub fn spawn(&self, stage: Stage) -> Result<ProviderClient, SandboxError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let (first, rest) = self
            .descriptor
            .command
            .split_first()
            .ok_or_else(|| invalid_descriptor(&self.path, "`command` is empty".to_owned()))?;
        let program = if first.contains('/') {
            dir.join(first)
        } else {
            PathBuf::from(first)
        };
        ProviderClient::spawn(&self.descriptor.provider, &program, rest, dir, stage)
    }
}

/// Finds and decodes the descriptor of `plan`'s provider.
pub fn find(plan: &RunPlan, provider: &str) -> Result<FoundProvider, SandboxError> {
    let local_paths = plan
        .config
        .discovery
        .as_ref()
        .map(|d| d.local_paths.clone())
        .unwrap_or_default();
    let options = DiscoveryOptions::from_env(&local_paths, Path::new(&plan.base_dir));
    let name = format!("{provider}{DESCRIPTOR_SUFFIX}");
    let nested = |dir: &Path| {
        [
            dir.join(&name),
            dir.join("environment-providers").join(provider).join(&name),
        ]
    };
    let mut candidates: Vec<PathBuf> = Vec::new();
    for path in options.local_paths.iter().chain(&options.env_paths) {
        candidates.extend(nested(path));
    }
    for prefix in &options.installed_prefixes {
        candidates.extend(nested(&prefix.join("share/nemo-fabric/adapters")));
    }
    for bundled in options.bundled_root.iter().chain(&options.development_root) {
        candidates.extend(nested(bundled));
    }
    let path = candidates
        .into_iter()
        .find(|c| c.is_file())
        .ok_or_else(|| SandboxError::Environment {
            stage: Stage::Prepare,
            code: codes::ENVIRONMENT_PROVIDER_NOT_FOUND,
            class: ErrorClass::Config,
            message: format!(
                "no `{name}` descriptor for environment provider `{provider}` in discovery.local_paths, FABRIC_ADAPTER_PATH, installed or bundled adapters"
            ),
            path: Some("environment.provider".to_owned()),
        })?;
    let text = std::fs::read_to_string(&path)
        .map_err(|error| invalid_descriptor(&path, format!("cannot read it: {error}")))?;
    let descriptor: ProviderDescriptor = serde_json::from_str(&text)
        .map_err(|error| invalid_descriptor(&path, error.to_string()))?;
    if descriptor.schema_version != DESCRIPTOR_VERSION {
        return Err(invalid_descriptor(
            &path,
            format!("`schema_version` is not `{DESCRIPTOR_VERSION}`"),
        ));
    }
    if descriptor.protocol_version != PROTOCOL_VERSION {
        return Err(invalid_descriptor(
            &path,
            format!("`protocol_version` is not `{PROTOCOL_VERSION}`"),
        ));
    }
    if descriptor.provider != provider {
        return Err(invalid_descriptor(
            &path,
            format!("`provider` is not `{provider}`"),
        ));
    }
    Ok(FoundProvider { descriptor, path })
}

fn invalid_descriptor(path: &Path, reason: String) -> SandboxError {
    SandboxError::Environment {
        stage: Stage::Prepare,
        code: codes::INVALID_PROVIDER_DESCRIPTOR,
        class: ErrorClass::Config,
        message: format!("provider descriptor `{}`: {reason}", path.display()),
        path: Some("environment.provider".to_owned()),
    }
}

/// Checks an `exec` output against the 3 MiB limit.
pub fn check_exec(output: &ExecOutput, stage: Stage) -> Result<(), SandboxError> {
    let bytes = output.stdout.len() + output.stderr.len();
    if bytes > MAX_EXEC_OUTPUT_BYTES {
        return Err(too_large(
            stage,
            format!(
                "the exec output is {bytes} bytes, above the {MAX_EXEC_OUTPUT_BYTES}-byte limit; nothing of it is kept"
            ),
        ));
    }
    Ok(())
}

/// What one `collect_artifacts` brought back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collected {
    /// The files read, as `(requested path, bytes)` (missing paths left out).
    pub files: Vec<(String, Vec<u8>)>,
    /// The paths the provider refused one by one (a link, a special file, a size).
    pub refused: Vec<ArtifactRefusal>,
}

/// Checks a `collect_artifacts` output against the limits (16 files, 256 KiB each,
/// 512 KiB in total) and decodes it.
pub fn check_artifacts(output: &ArtifactsOutput, stage: Stage) -> Result<Collected, SandboxError> {
    if output.files.len() > MAX_ARTIFACT_FILES {
        return Err(too_large(
            stage,
            format!(
                "the provider returned {} artifact files, above the limit of {MAX_ARTIFACT_FILES}; none is kept",
                output.files.len()
            ),
        ));
    }
    let mut total = 0usize;
    let mut files = Vec::with_capacity(output.files.len());
    for file in &output.files {
        let bytes = hex::decode(&file.content_hex).map_err(|_| SandboxError::Provider {
            stage,
            code: codes::PROVIDER_PROTOCOL_ERROR,
            message: format!("artifact `{}`: `content_hex` is not hex", file.path),
            provider_code: None,
            stderr_tail: None,
        })?;
        if bytes.len() > MAX_ARTIFACT_FILE_BYTES {
            return Err(too_large(
                stage,
                format!(
                    "artifact `{}` is {} bytes, above the {MAX_ARTIFACT_FILE_BYTES}-byte file limit; none is kept",
                    file.path,
                    bytes.len()
                ),
            ));
        }
        total += bytes.len();
        if total > MAX_ARTIFACT_TOTAL_BYTES {
            return Err(too_large(
                stage,
                format!(
                    "the artifacts exceed {MAX_ARTIFACT_TOTAL_BYTES} bytes in total; none is kept"
                ),
            ));
        }
        files.push((file.path.clone(), bytes));
    }
    Ok(Collected {
        files,
        refused: output.refused.clone(),
    })
}

fn too_large(stage: Stage, message: String) -> SandboxError {
    SandboxError::Provider {
        stage,
        code: codes::PROVIDER_OUTPUT_TOO_LARGE,
        message,
        provider_code: None,
        stderr_tail: None,
    }
}
