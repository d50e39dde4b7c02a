//! A runtime's model-call capture (`capture_model_calls`): its registration with the
//! gateway, the adapter's config with the gateway's URLs, and what an invocation's calls
//! came to (`RunResult.model_calls`, `budget_exceeded` events).

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use fabric_config::Stage;
use fabric_config::agent::AgentConfig;
use fabric_config::config::JsonObject;
use fabric_config::model_call::ModelCallsSummary;
use fabric_config::result::FabricEvent;
use fabric_gateway::{BudgetExceeded, Capture, CaptureOptions, CaptureSummary, Upstream};
use fabric_reactor::beneath::Refusal;

use crate::error::HostError;
use crate::result::event;

/// Where a runtime's records go: its `.fabric/<runtime>` under the artifact root, else
/// (the home is temporary and removed at stop) `<system temp>/fabric-model-calls-<uid>/<runtime>`,
/// which is kept for the caller to read.
pub(super) fn records_dir(
    runtime_id: &str,
    home: &Path,
    artifact_root: Option<&Path>,
) -> Result<PathBuf, HostError> {
    match artifact_root {
        Some(_) => Ok(home.to_path_buf()),
        None => {
            let base = std::env::temp_dir().join(format!(
                "fabric-model-calls-{}",
                fabric_reactor::sys::effective_uid()
            ));
            user_dir(&base)?;
            let dir = base.join(runtime_id);
            crate::home::private_dir(&base, &dir, Stage::Start)?;
            Ok(dir)
        }
    }
}

/// Creates `dir` (mode 0700) or accepts it only as the effective user's own private
/// directory: a symbolic link, another owner's directory, or one other users can enter is
/// refused (`path_refused`): the shared temporary directory is writable by every user.
fn user_dir(dir: &Path) -> Result<(), HostError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(crate::home::fs_error(Stage::Start, dir, &error)),
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|error| crate::home::fs_error(Stage::Start, dir, &error))?;
    let refused = |reason: &'static str, detail: &str| HostError::PathRefused {
        stage: Stage::Start,
        path: dir.to_string_lossy().into_owned(),
        reason,
        detail: detail.to_owned(),
    };
    if meta.file_type().is_symlink() {
        return Err(refused(
            Refusal::Link.reason(),
            "the model-call records' directory is a symbolic link",
        ));
    }
    if !meta.is_dir() {
        return Err(refused(
            Refusal::NotRegular("").reason(),
            "the model-call records' directory is not a directory",
        ));
    }
    if meta.uid() != fabric_reactor::sys::effective_uid() || meta.mode() & 0o077 != 0 {
        return Err(refused(
            "not_private",
            "the model-call records' directory is not private to this user (owner, mode 0700)",
        ));
    }
    Ok(())
}

/// Registers the runtime's models that have a `base_url` with the gateway and points the
/// adapter's config at it (`None` when no model has a `base_url`).
pub(super) fn register(
    config: &mut AgentConfig,
    runtime_id: &str,
    runtime_dir: &Path,
    options: CaptureOptions,
) -> Result<Option<Capture>, HostError> {
    let upstreams: Vec<Upstream> = config
        .models
        .iter()
        .filter_map(|(role, model)| {
            let base_url = model.base_url.as_deref()?;
            Some(Upstream::new(role, &model.model, base_url))
        })
        .collect();
    if upstreams.is_empty() {
        return Ok(None);
    }
    let capture =
        Capture::register(runtime_id, upstreams, runtime_dir, options).map_err(|error| {
            HostError::EngineUnavailable {
                stage: Stage::Start,
                reason: error.to_string(),
            }
        })?;
    for (role, model) in &mut config.models {
        if let Some(url) = capture.base_url(role) {
            model.base_url = Some(url);
        }
    }
    Ok(Some(capture))
}

/// A refused call's counts: the `budget_exceeded` event's details, and an entry of a
/// failed invocation's `metadata.budget_exceeded`.
fn budget_details(over: &BudgetExceeded, mut details: JsonObject) -> JsonObject {
    details.insert("budget".into(), over.budget.into());
    details.insert("limit".into(), over.limit.into());
    details.insert("calls".into(), over.calls.into());
    details.insert("total_tokens".into(), over.total_tokens.into());
    details
}

fn summary_of(summary: &CaptureSummary) -> ModelCallsSummary {
    ModelCallsSummary {
        count: summary.records,
        path: summary
            .path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
    }
}

/// Ends the invocation's recording: its summary, and one `budget_exceeded` event per
/// refused call.
pub(super) fn finish(
    capture: &Capture,
    ids: &JsonObject,
    events: &mut Vec<FabricEvent>,
) -> ModelCallsSummary {
    let summary = capture.end();
    for over in &summary.budget_exceeded {
        events.push(event(
            "budget_exceeded",
            format!(
                "model call refused: {} of {} reached",
                over.budget, over.limit
            ),
            budget_details(over, ids.clone()),
        ));
    }
    summary_of(&summary)
}

/// Ends the recording of an invocation that failed with no RunResult (the harness gave up,
/// say on the gateway's 429): an adapter failure's `metadata` gets `budget_exceeded` (one
/// entry per refused call, as the events of a RunResult) and `model_calls` (the summary),
/// so the error still says a budget refused calls and where the calls are.
pub(super) fn failed(capture: &Capture, mut error: HostError) -> HostError {
    let summary = capture.end();
    if let HostError::Lifecycle { metadata, .. } = &mut error {
        if !summary.budget_exceeded.is_empty() {
            let refused = summary
                .budget_exceeded
                .iter()
                .map(|over| {
                    serde_json::Value::Object(
                        budget_details(over, JsonObject::new())
                            .into_iter()
                            .collect(),
                    )
                })
                .collect::<Vec<serde_json::Value>>();
            metadata.insert("budget_exceeded".into(), refused.into());
        }
        if summary.records > 0 {
            if let Ok(calls) = serde_json::to_value(summary_of(&summary)) {
                metadata.insert("model_calls".into(), calls);
            }
        }
    }
    error
}
