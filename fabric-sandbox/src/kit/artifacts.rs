//! Artifact collection from an environment's `artifacts/`.

use std::io::Read;
use std::path::{Component, Path};

use fabric_config::provider::{ArtifactFile, ArtifactsOutput};
use serde_json::Value;

use super::Failure;

/// Bytes of one artifact file read (the core's limit is lower: a larger file reaches it
/// and is refused there, never truncated here).
const ARTIFACT_READ_CAP: u64 = 1024 * 1024;

/// A `collect_artifacts` output: the files of `paths` under `root` (missing ones left out).
pub(super) fn collect(root: &Path, paths: &[String]) -> Result<Value, Failure> {
    let mut files = Vec::new();
    for path in paths {
        let relative = Path::new(path);
        if path.is_empty()
            || relative
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err((
                "invalid_path",
                format!("`{path}` is not a relative path inside the artifact root"),
            ));
        }
        let Ok(file) = std::fs::File::open(root.join(relative)) else {
            continue;
        };
        let mut bytes = Vec::new();
        file.take(ARTIFACT_READ_CAP)
            .read_to_end(&mut bytes)
            .map_err(|error| ("read_failed", format!("cannot read `{path}`: {error}")))?;
        files.push(ArtifactFile {
            path: path.clone(),
            content_hex: hex::encode(bytes),
        });
    }
    serde_json::to_value(ArtifactsOutput { files }).map_err(|error| ("internal", error.to_string()))
}
