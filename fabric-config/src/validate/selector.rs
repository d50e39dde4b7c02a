//! The adapter selector rule: a config names its adapter through `harness.adapter_id`,
//! `workflow.target_id` (the target's adapter), or both, and with both the target must belong
//! to that adapter.
//!
//! Validation sees the config alone and checks that one of the two is set
//! ([`ConfigRule::SelectorMissing`]); the planner and `fabric inspect` know the target
//! descriptor and ask [`FabricConfig::selected_adapter`], so the three cannot disagree on which
//! adapter runs or on what a mismatch is.

use crate::FabricConfig;
use crate::descriptor::TargetDescriptor;
use crate::error::{ConfigFinding, ConfigRule};

use super::finding;

/// Why a config selects no adapter, or two.
///
/// Exhaustive on purpose: the planner maps each case to its own error (`config_invalid`
/// with the finding's code, `target_mismatch`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// Nothing selects an adapter: the [`ConfigRule::SelectorMissing`] finding, at
    /// `harness.adapter_id`.
    #[error("{0}")]
    Missing(ConfigFinding),
    /// The workflow target belongs to another adapter than `harness.adapter_id` selects.
    #[error(
        "the target belongs to adapter `{target_adapter_id}`, but harness.adapter_id selects `{selected_adapter_id}`"
    )]
    TargetMismatch {
        /// The target descriptor's id.
        target_id: String,
        /// The adapter the target descriptor belongs to.
        target_adapter_id: String,
        /// The adapter `harness.adapter_id` selects.
        selected_adapter_id: String,
    },
}

impl SelectorError {
    /// The JSON path of the config field at fault.
    pub fn path(&self) -> &str {
        match self {
            SelectorError::Missing(finding) => &finding.path,
            SelectorError::TargetMismatch { .. } => "workflow.target_id",
        }
    }
}

impl FabricConfig {
    /// Validation's half of the rule, on the config alone: one of the two selectors is set.
    pub(super) fn check_selector(&self, out: &mut Vec<ConfigFinding>) {
        if self.harness.is_none() && self.workflow.is_none() {
            out.push(selector_missing());
        }
    }

    /// The adapter this config runs: the adapter of `target`, which must then equal
    /// `harness.adapter_id` when that is set too; else `harness.adapter_id`.
    ///
    /// `target` is the descriptor `workflow.target_id` resolved to (`None` without a
    /// workflow). A config with neither is [`SelectorError::Missing`], the finding
    /// validation reports for it.
    ///
    /// ```
    /// use fabric_config::FabricConfig;
    /// use fabric_config::validate::SelectorError;
    ///
    /// let config = FabricConfig::parse(
    ///     r#"{"metadata": {"name": "a"}, "harness": {"adapter_id": "nvidia.fabric.hermes"}}"#,
    /// )?;
    /// assert_eq!(config.selected_adapter(None), Ok("nvidia.fabric.hermes"));
    ///
    /// let none = FabricConfig::from_json_str(r#"{"metadata": {"name": "a"}}"#)?;
    /// let Err(SelectorError::Missing(finding)) = none.selected_adapter(None) else {
    ///     panic!("a config without selectors selects nothing");
    /// };
    /// assert_eq!(finding.code(), "missing_adapter_selector");
    /// # Ok::<(), fabric_config::ConfigError>(())
    /// ```
    pub fn selected_adapter<'a>(
        &'a self,
        target: Option<&'a TargetDescriptor>,
    ) -> Result<&'a str, SelectorError> {
        match (&self.harness, target) {
            (Some(harness), Some(target)) if target.adapter_id != harness.adapter_id => {
                Err(SelectorError::TargetMismatch {
                    target_id: target.id.clone(),
                    target_adapter_id: target.adapter_id.clone(),
                    selected_adapter_id: harness.adapter_id.clone(),
                })
            }
            (_, Some(target)) => Ok(&target.adapter_id),
            (Some(harness), None) => Ok(&harness.adapter_id),
            (None, None) => Err(SelectorError::Missing(selector_missing())),
        }
    }
}

/// The [`ConfigRule::SelectorMissing`] finding, at `harness.adapter_id`.
fn selector_missing() -> ConfigFinding {
    finding(ConfigRule::SelectorMissing, "harness.adapter_id")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(selectors: serde_json::Value) -> FabricConfig {
        let mut value = json!({"metadata": {"name": "selector"}});
        for (key, item) in selectors.as_object().expect("object") {
            value[key] = item.clone();
        }
        FabricConfig::from_value(value).expect("decodes")
    }

    fn target(adapter_id: &str) -> TargetDescriptor {
        serde_json::from_value(json!({
            "contract_version": "fabric.adapter/v1alpha2",
            "id": "test.target",
            "adapter_id": adapter_id,
            "type": "workflow",
            "spec": {"entrypoint": {"kind": "agent_factory", "ref": "m:f"}}
        }))
        .expect("target descriptor")
    }

    #[test]
    fn the_target_selects_its_adapter_and_must_match_the_harness() {
        let workflow = json!({"target_id": "test.target"});
        let only_target = config(json!({"workflow": workflow}));
        assert_eq!(only_target.selected_adapter(Some(&target("a"))), Ok("a"));
        let both = config(json!({"harness": {"adapter_id": "a"}, "workflow": workflow}));
        assert_eq!(both.selected_adapter(Some(&target("a"))), Ok("a"));
        let error = both
            .selected_adapter(Some(&target("b")))
            .expect_err("mismatch");
        assert_eq!(
            error,
            SelectorError::TargetMismatch {
                target_id: "test.target".to_owned(),
                target_adapter_id: "b".to_owned(),
                selected_adapter_id: "a".to_owned(),
            }
        );
        assert_eq!(error.path(), "workflow.target_id");
        assert_eq!(
            error.to_string(),
            "the target belongs to adapter `b`, but harness.adapter_id selects `a`"
        );
    }

    #[test]
    fn nothing_selected_is_the_finding_validation_reports() {
        let none = config(json!({}));
        let error = none.selected_adapter(None).expect_err("missing");
        let reported = none.validate_all();
        assert_eq!(error, SelectorError::Missing(reported[0].clone()));
        assert_eq!(error.path(), "harness.adapter_id");
        let harness = config(json!({"harness": {"adapter_id": "a"}}));
        assert_eq!(harness.selected_adapter(None), Ok("a"));
    }
}
