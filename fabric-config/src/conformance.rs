//! The adapter conformance report (`fabric adapters check`, `Fabric.check_adapter`).
//!
//! One [`ConformanceReport`] per checked adapter: what was checked ([`ConformanceAdapter`]),
//! one [`ConformanceCheck`] per check id in the order they ran, and a [`ConformanceSummary`].
//! A check the kit cannot cause from outside is `skipped` with its reason, never `failed`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Outcome of one conformance check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConformanceStatus {
    /// The adapter behaved as the contract asks.
    Passed,
    /// It did not; `evidence` says what was seen.
    Failed,
    /// Not applicable or not causable from outside; `reason` says why.
    Skipped,
}

/// One check of the kit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceCheck {
    /// Stable check id (`lifecycle.stop`, `configs.settings.unknown_field`, …).
    pub id: String,
    /// The group the id starts with (`descriptor`, `configs`, `doctor`, `lifecycle`, …).
    pub group: String,
    /// Outcome.
    pub status: ConformanceStatus,
    /// What the check did (passed), why it failed, or why it was skipped.
    pub reason: String,
    /// What was seen on failure: the request, the response, the process tree left.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub evidence: Value,
    /// Wall time of the check in whole milliseconds.
    pub elapsed_ms: u64,
}

/// The adapter that was checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceAdapter {
    /// `adapter_id` of its descriptor (empty when the descriptor could not be read).
    pub adapter_id: String,
    /// `adapter_kind` of its descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_kind: Option<String>,
    /// `contract_version` of its descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_version: Option<String>,
    /// The descriptor file checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor_path: Option<String>,
    /// Fingerprint of the normalized descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor_sha256: Option<String>,
    /// Package and version the adapter reported in its software evidence, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Version of that package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Optional capabilities: `supported`, `unsupported` or `claimed_but_failing`.
    #[serde(default)]
    pub capabilities: std::collections::BTreeMap<String, String>,
}

/// Counts of the report's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceSummary {
    /// Checks that passed.
    pub passed: u32,
    /// Checks that failed.
    pub failed: u32,
    /// Checks that were skipped.
    pub skipped: u32,
    /// Whether every check of the required profile (descriptor, configs, doctor,
    /// lifecycle) passed or was skipped.
    pub required_profile_passed: bool,
    /// Wall time of the whole suite in whole milliseconds.
    pub elapsed_ms: u64,
}

/// The groups of the required profile; every other group is optional (claimed capabilities).
pub const REQUIRED_GROUPS: &[&str] = &["descriptor", "configs", "doctor", "lifecycle"];

/// The report of one `fabric adapters check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceReport {
    /// What was checked.
    pub adapter: ConformanceAdapter,
    /// Every check, in the order it ran.
    pub checks: Vec<ConformanceCheck>,
    /// Counts and the required-profile result.
    pub summary: ConformanceSummary,
}

impl ConformanceReport {
    /// A report of `checks`, deriving the summary.
    pub fn new(
        adapter: ConformanceAdapter,
        checks: Vec<ConformanceCheck>,
        elapsed_ms: u64,
    ) -> Self {
        let count = |status| {
            let n = checks.iter().filter(|c| c.status == status).count();
            u32::try_from(n).unwrap_or(u32::MAX)
        };
        let summary = ConformanceSummary {
            passed: count(ConformanceStatus::Passed),
            failed: count(ConformanceStatus::Failed),
            skipped: count(ConformanceStatus::Skipped),
            required_profile_passed: !checks.iter().any(|c| {
                c.status == ConformanceStatus::Failed && REQUIRED_GROUPS.contains(&c.group.as_str())
            }),
            elapsed_ms,
        };
        ConformanceReport {
            adapter,
            checks,
            summary,
        }
    }

    /// Whether no check failed.
    pub fn passed(&self) -> bool {
        self.summary.failed == 0
    }

    /// The check with `id`, if it ran.
    pub fn check(&self, id: &str) -> Option<&ConformanceCheck> {
        self.checks.iter().find(|c| c.id == id)
    }
}

/// What `fabric_adapter_check` (the bindings' `check_adapter`) checks: the adapter by id
/// or descriptor file, the accepted config to start from, the groups to run, the stub model
/// server and the stop deadline (as `fabric adapters check` flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConformanceRequest {
    /// The adapter id, as discovery finds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// A descriptor file to check (its directory is searched first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<String>,
    /// An accepted `fabric.agent/v1alpha1` config to start from. Default: built from the
    /// descriptor (every required setting at its schema default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// Anchors the config's relative paths. Default: the current directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<String>,
    /// Run only these groups (`descriptor`, `configs`, `doctor`, `lifecycle`, `streaming`,
    /// `relay`).
    /// Default: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
    /// Serve the config's models from stub model servers answering this reply script
    /// (`--model-stub`, docs/stub-model.md): every `models.*.base_url` points at one, and the
    /// target checks run against stubs answering an error and a malformed body. `{}`: every
    /// call answered "stub reply". The config must have models. Default: no stub (the target
    /// checks are skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_stub: Option<crate::stub_model::StubModelScript>,
    /// Seconds an adapter has to exit after `stop` or EOF (`--stop-deadline`): above 0, at
    /// most 10^9. Default 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_deadline_seconds: Option<f64>,
}
