//! Artifact collection from an environment's `artifacts/`.
//!
//! Code inside the environment controls that directory (the container provider's is the
//! host side of a bind mount), so every path is resolved beneath the environment directory
//! with [`fabric_reactor::beneath`]: a symbolic link anywhere on the way (`artifacts`
//! itself included), a FIFO, socket or device, or a file above the per-file limit is
//! refused on its own (`refused`, code `path_refused`) and the other paths are still
//! collected; nothing blocks and nothing outside the directory is ever read.

use std::path::{Component, Path};

use fabric_config::codes;
use fabric_config::provider::{
    ArtifactFile, ArtifactRefusal, ArtifactsOutput, MAX_ARTIFACT_FILE_BYTES,
};
use fabric_reactor::beneath::{Beneath, Refusal};
use serde_json::Value;

use super::Failure;

/// A `collect_artifacts` output: the files of `paths` under `dir/artifacts` (missing ones
/// left out, unsafe ones refused one by one).
pub(super) fn collect(dir: &Path, paths: &[String]) -> Result<Value, Failure> {
    for path in paths {
        if path.is_empty()
            || Path::new(path)
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err((
                "invalid_path",
                format!("`{path}` is not a relative path inside the artifact root"),
            ));
        }
    }
    let root = Beneath::open(dir).map_err(|error| {
        (
            "read_failed",
            format!("cannot open the environment directory: {error}"),
        )
    })?;
    let mut output = ArtifactsOutput {
        files: Vec::new(),
        refused: Vec::new(),
    };
    for path in paths {
        let relative = Path::new("artifacts").join(path);
        match root.read(&relative, MAX_ARTIFACT_FILE_BYTES as u64) {
            Ok(bytes) => output.files.push(ArtifactFile {
                path: path.clone(),
                content_hex: hex::encode(bytes),
            }),
            Err(Refusal::Missing) => {}
            Err(refusal) if refusal.is_unsafe_path() => output.refused.push(ArtifactRefusal {
                path: path.clone(),
                code: codes::PATH_REFUSED.into(),
                reason: refusal.reason().into(),
                message: format!("artifact `{path}` refused: {refusal}"),
            }),
            Err(error) => {
                return Err(("read_failed", format!("cannot read `{path}`: {error}")));
            }
        }
    }
    serde_json::to_value(output).map_err(|error| ("internal", error.to_string()))
}
