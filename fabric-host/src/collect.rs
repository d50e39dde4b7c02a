//! Core-collected artifacts of an invocation, laid out as upstream 0.5.0 lays them out under
//! `<artifact root>/.fabric/<runtime_id>/<invocation_id>/`:
//!
//! - `stdout.txt` (`stdout`, kind `log`, `text/plain`): the compact JSON of the result's
//!   `output` and a newline, written for every invocation that produced a result;
//! - `stderr.txt` (`stderr`, kind `log`, `text/plain`): what the host wrote to stderr during
//!   the invocation, environment values replaced by `***`; only when non-empty;
//! - `workspace.patch` (`workspace_patch`, kind `patch`, `text/x-diff`) and
//!   `workspace-status.txt` (`workspace_status`, kind `log`, `text/plain`) when the workspace
//!   is inside a git checkout with changes (see [`crate::workspace`]), with an
//!   `artifact_collect` event.
//!
//! Nothing is collected without an artifact root (upstream collects into its temporary home
//! and lists nothing). Every file is bounded and ends with a truncation marker when cut; a
//! collection problem is an `artifact_collect_failed` event, never a failed invocation.

use fabric_config::codes;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fabric_config::Stage;
use fabric_config::config::JsonObject;
use fabric_config::result::{ArtifactRef, FabricEvent};
use serde_json::Value;

use crate::home::private_file;
use crate::result::event;
use crate::workspace::{self, Snapshot};
use fabric_reactor::stderr::Capture;

/// Largest `stdout.txt` / `stderr.txt` kept (bytes, before the marker).
pub(crate) const LOG_CAP: usize = 4 * 1024 * 1024;

/// The code of a collection problem (an event, never a failed invocation).
pub(crate) const COLLECT_FAILED: &str = codes::ARTIFACT_COLLECT_FAILED;

/// Where one invocation's files go.
pub(crate) struct InvocationDir<'a> {
    /// The root the directory is under (the artifact root): nothing below it is followed
    /// through a symbolic link.
    pub root: &'a Path,
    /// The directory on disk.
    pub dir: &'a Path,
    /// The same directory relative to the artifact root (`.fabric/<runtime>/<invocation>`).
    pub reference: String,
    /// Metadata every event carries (runtime, invocation and request ids).
    pub ids: JsonObject,
}

/// Per-runtime collection state: the artifact root, the workspace and the last workspace
/// snapshot (so an unchanged workspace costs one `git status`).
#[derive(Debug)]
pub(crate) struct Collector {
    root: Option<PathBuf>,
    workspace: PathBuf,
    last: Mutex<Option<Snapshot>>,
}

impl Collector {
    /// `root`: the artifact root (`None` disables collection).
    pub(crate) fn new(root: Option<&Path>, workspace: &Path) -> Collector {
        Collector {
            root: root.map(Path::to_path_buf),
            workspace: workspace.to_path_buf(),
            last: Mutex::new(None),
        }
    }

    /// Whether anything is collected (an artifact root is configured).
    pub(crate) fn enabled(&self) -> bool {
        self.root.is_some()
    }

    /// Writes `stdout.txt` and (when non-empty) `stderr.txt`; returns their references.
    pub(crate) fn logs(
        &self,
        at: &InvocationDir<'_>,
        output: &Value,
        stderr: Option<Capture>,
        events: &mut Vec<FabricEvent>,
    ) -> Vec<ArtifactRef> {
        if !self.enabled() {
            return Vec::new();
        }
        let mut refs = Vec::new();
        // As upstream: the compact JSON of the output and a newline.
        let mut stdout = serde_json::to_vec(output).unwrap_or_default();
        stdout.push(b'\n');
        let dropped = stdout.len().saturating_sub(LOG_CAP) as u64;
        let kept = &stdout[..stdout.len().min(LOG_CAP)];
        self.log_file(at, "stdout", kept, dropped, &mut refs, events);
        if let Some(capture) = stderr.filter(|c| !c.bytes.is_empty()) {
            self.log_file(
                at,
                "stderr",
                &capture.bytes,
                capture.dropped,
                &mut refs,
                events,
            );
        }
        refs
    }

    fn log_file(
        &self,
        at: &InvocationDir<'_>,
        name: &str,
        bytes: &[u8],
        dropped: u64,
        refs: &mut Vec<ArtifactRef>,
        events: &mut Vec<FabricEvent>,
    ) {
        let file = format!("{name}.txt");
        let mut content = bytes.to_vec();
        if dropped > 0 {
            content.extend_from_slice(
                format!("\n[fabric: {file} truncated, {dropped} bytes dropped]\n").as_bytes(),
            );
        }
        match private_file(at.root, &at.dir.join(&file), &content, Stage::Artifact) {
            Ok(()) => refs.push(reference(at, name, "log", &file, "text/plain", dropped > 0)),
            Err(error) => events.push(failed(at, &file, &error.to_string())),
        }
    }

    /// Collects `workspace.patch` and `workspace-status.txt` when the workspace is a git
    /// checkout with changes. Runs git as a subprocess in the calling thread (never the
    /// reactor); an unchanged workspace since the last invocation reuses the last files.
    pub(crate) fn workspace(
        &self,
        at: &InvocationDir<'_>,
        events: &mut Vec<FabricEvent>,
    ) -> Vec<ArtifactRef> {
        if !self.enabled() {
            return Vec::new();
        }
        let Some(repo) = workspace::find_checkout(&self.workspace) else {
            return Vec::new();
        };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let outcome = workspace::collect(&repo, last.as_ref(), at.root, at.dir);
        match outcome {
            Ok(None) => {
                *last = None;
                Vec::new()
            }
            Ok(Some(snapshot)) => {
                let truncated = snapshot.truncated;
                let mut details = at.ids.clone();
                details.insert(
                    "workspace".into(),
                    self.workspace.to_string_lossy().into_owned().into(),
                );
                details.insert("reused".into(), snapshot.reused.into());
                details.insert("patch_bytes".into(), snapshot.patch_bytes.into());
                details.insert("truncated".into(), truncated.into());
                events.push(event(
                    "artifact_collect",
                    "collected workspace patch artifact".into(),
                    details,
                ));
                *last = Some(snapshot);
                vec![
                    reference(
                        at,
                        "workspace_patch",
                        "patch",
                        workspace::PATCH_FILE,
                        "text/x-diff",
                        truncated,
                    ),
                    reference(
                        at,
                        "workspace_status",
                        "log",
                        workspace::STATUS_FILE,
                        "text/plain",
                        false,
                    ),
                ]
            }
            Err(reason) => {
                *last = None;
                events.push(failed(at, workspace::PATCH_FILE, &reason));
                Vec::new()
            }
        }
    }
}

fn reference(
    at: &InvocationDir<'_>,
    name: &str,
    kind: &str,
    file: &str,
    media_type: &str,
    truncated: bool,
) -> ArtifactRef {
    let mut metadata = JsonObject::new();
    if truncated {
        metadata.insert("truncated".into(), true.into());
    }
    ArtifactRef {
        name: name.to_owned(),
        kind: kind.to_owned(),
        path: format!("{}/{file}", at.reference),
        media_type: Some(media_type.to_owned()),
        metadata,
    }
}

fn failed(at: &InvocationDir<'_>, file: &str, reason: &str) -> FabricEvent {
    let mut details = at.ids.clone();
    details.insert("code".into(), COLLECT_FAILED.into());
    details.insert("file".into(), file.into());
    details.insert("reason".into(), reason.into());
    event(COLLECT_FAILED, format!("could not collect {file}"), details)
}
