//! `fabric_plan`'s memo: the RunPlan JSON of recent (config, options) texts, reused while
//! the plan's inputs are unchanged.
//!
//! A plan is a pure function of the config, the options and its [`PlanInputs`] (the base
//! directory, which follows the current directory, and the descriptors discovery resolves
//! from the environment and the file system). A caller planning the same config again — a
//! binding's `Fabric.plan` in a loop — sends the same two texts; the memo then skips
//! decoding them, the config rules, the compatibility checks, building the plan and encoding
//! it, but never discovery: every use recomputes the inputs (discovery keeps its own caches,
//! validated by file and directory stamps) and compares them with the memo's. Only
//! successful plans are kept, at most [`CAPACITY`], the oldest dropped first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use fabric_config::FabricConfig;
use fabric_host::{Fabric, RunOptions};
use fabric_plan::PlanInputs;

use crate::error::FfiError;

/// Most plans kept.
pub(crate) const CAPACITY: usize = 32;

struct Entry {
    config_json: Box<str>,
    options_json: Option<Box<str>>,
    config: Arc<FabricConfig>,
    options: Arc<RunOptions>,
    inputs: PlanInputs,
    plan_json: Arc<str>,
}

fn memo() -> &'static Mutex<VecDeque<Arc<Entry>>> {
    static MEMO: OnceLock<Mutex<VecDeque<Arc<Entry>>>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(VecDeque::with_capacity(CAPACITY)))
}

/// The RunPlan JSON of `config_json` with `options_json`: the memo's while the inputs match,
/// else `plan` (decode, plan, encode; it returns the decoded config and options, the plan's
/// inputs and its JSON), kept for the next call when it succeeds.
pub(crate) fn plan_json(
    config_json: &str,
    options_json: Option<&str>,
    plan: impl FnOnce() -> Result<(FabricConfig, RunOptions, PlanInputs, String), FfiError>,
) -> Result<String, FfiError> {
    let kept = memo().lock().ok().and_then(|entries| {
        entries
            .iter()
            .find(|entry| {
                &*entry.config_json == config_json && entry.options_json.as_deref() == options_json
            })
            .cloned()
    });
    if let Some(entry) = kept
        && Fabric::new()
            .plan_inputs(&entry.config, &entry.options)
            .is_ok_and(|inputs| inputs == entry.inputs)
    {
        return Ok(entry.plan_json.to_string());
    }
    let (config, options, inputs, text) = plan()?;
    let entry = Arc::new(Entry {
        config_json: config_json.into(),
        options_json: options_json.map(Into::into),
        config: Arc::new(config),
        options: Arc::new(options),
        inputs,
        plan_json: Arc::from(text.as_str()),
    });
    if let Ok(mut entries) = memo().lock() {
        entries.retain(|known| {
            !(known.config_json == entry.config_json && known.options_json == entry.options_json)
        });
        if entries.len() >= CAPACITY {
            entries.pop_front();
        }
        entries.push_back(entry);
    }
    Ok(text)
}
