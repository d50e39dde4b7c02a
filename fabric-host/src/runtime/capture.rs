//! A runtime's model-call capture (`capture_model_calls`): its registration with the
//! gateway, the adapter's config with the gateway's URLs, and what an invocation's calls
//! came to (`RunResult.model_calls`, `budget_exceeded` events).

use std::path::{Path, PathBuf};

use fabric_config::Stage;
use fabric_config::agent::AgentConfig;
use fabric_config::config::JsonObject;
use fabric_config::model_call::ModelCallsSummary;
use fabric_config::result::FabricEvent;
use fabric_gateway::{Capture, CaptureOptions, Upstream};

use crate::error::HostError;
use crate::result::event;

/// Where a runtime's records go: its `.fabric/<runtime>` under the artifact root, else
/// (the home is temporary and removed at stop) `<system temp>/fabric-model-calls/<runtime>`,
/// which is kept for the caller to read.
pub(super) fn records_dir(runtime_id: &str, home: &Path, artifact_root: Option<&Path>) -> PathBuf {
    match artifact_root {
        Some(_) => home.to_path_buf(),
        None => std::env::temp_dir()
            .join("fabric-model-calls")
            .join(runtime_id),
    }
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

/// Ends the invocation's recording: its summary, and one `budget_exceeded` event per
/// refused call.
pub(super) fn finish(
    capture: &Capture,
    ids: &JsonObject,
    events: &mut Vec<FabricEvent>,
) -> ModelCallsSummary {
    let summary = capture.end();
    for over in &summary.budget_exceeded {
        let mut details = ids.clone();
        details.insert("budget".into(), over.budget.into());
        details.insert("limit".into(), over.limit.into());
        details.insert("calls".into(), over.calls.into());
        details.insert("total_tokens".into(), over.total_tokens.into());
        events.push(event(
            "budget_exceeded",
            format!(
                "model call refused: {} of {} reached",
                over.budget, over.limit
            ),
            details,
        ));
    }
    ModelCallsSummary {
        count: summary.records,
        path: summary.path.map(|p| p.to_string_lossy().into_owned()),
    }
}
