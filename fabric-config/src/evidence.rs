//! Selected software evidence: `RunResult.execution` ([`ExecutionEvidence`]).
//!
//! Evidence is a list of software *inventories*, one per resolution context (the core and
//! its binding, the caller's reports, each adapter host), plus *infrastructure* reports
//! (`infrastructure.container.engine_version`, ...). Each inventory has a result-local
//! opaque `context_ref` (`ctx-1`, `ctx-2`, ... renumbered whenever reports are combined),
//! its `participants` (`core`, `sdk`, `caller`, `guest_sdk`, `adapter`), an `availability`,
//! a `coverage` and component `entries`. A version is either observed
//! (`value`, `source`, `origin`, `observed_at`) or missing (`status`, `reason`).
//!
//! Evidence is bounded: at most [`MAX_CONTEXTS`] inventories, [`MAX_ENTRIES`] entries in
//! total and [`MAX_BYTES`] of compact UTF-8 JSON. Over a bound, whole entries (or whole
//! inventories) are dropped and `coverage` says `incomplete` with a reason: values are never
//! shortened, and evidence never changes an invocation's outcome.
//!
//! Consumers should tolerate unknown fields (result type). Equal versions in two
//! inventories do not establish a shared installation.
//!
//! ```
//! use fabric_config::evidence::{EvidenceEntry, ExecutionEvidence, VersionObservation};
//!
//! let entry = EvidenceEntry::new(
//!     "core",
//!     "native_library",
//!     "fabric-core",
//!     VersionObservation::observed("0.1.0", "core:compiled_version", "core", "2026-01-01T00:00:00Z"),
//! );
//! assert!(entry.version.is_observed());
//! let missing = VersionObservation::unavailable("version_command_not_declared");
//! assert_eq!(serde_json::to_string(&missing).unwrap(),
//!            r#"{"status":"unavailable","reason":"version_command_not_declared"}"#);
//! let evidence: ExecutionEvidence = serde_json::from_str(r#"{"inventories": []}"#).unwrap();
//! assert!(evidence.inventories.is_empty());
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most inventories (resolution contexts) in one evidence document.
pub const MAX_CONTEXTS: usize = crate::validate::PROVENANCE_MAX_CONTEXTS;
/// Most entries over all inventories of one evidence document.
pub const MAX_ENTRIES: usize = crate::validate::PROVENANCE_MAX_ENTRIES;
/// Most bytes of one evidence document's compact UTF-8 JSON.
pub const MAX_BYTES: usize = crate::validate::PROVENANCE_MAX_BYTES;

/// Selected software evidence of one invocation (`RunResult.execution`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecutionEvidence {
    /// Software inventories, one per resolution context.
    #[serde(default)]
    pub inventories: Vec<SoftwareInventory>,
    /// Infrastructure software reports (for example `infrastructure.container.engine_version`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub infrastructure: Vec<InfrastructureReport>,
    /// Whether every expected report is present and within bounds; gaps name the participant.
    #[serde(default)]
    pub coverage: EvidenceCoverage,
}

/// The selected software of one resolution context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SoftwareInventory {
    /// Opaque, result-local reference (`ctx-1`, ...); renumbered when reports are combined.
    pub context_ref: String,
    /// Who shares this context (`core`, `sdk`, `caller`, `guest_sdk`, `adapter`, ...).
    #[serde(default)]
    pub participants: Vec<String>,
    /// Whether versions could be observed at all.
    pub availability: Availability,
    /// Whether the inventory holds every selected component.
    #[serde(default)]
    pub coverage: EvidenceCoverage,
    /// Component observations.
    #[serde(default)]
    pub entries: Vec<EvidenceEntry>,
}

/// One component of an inventory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceEntry {
    /// What the component does here (`core`, `sdk`, `interpreter`, `adapter`, `harness`,
    /// `dependency`, `executable`).
    pub role: String,
    /// What sort of component it is (`native_library`, `package`, `runtime`, `executable`).
    pub kind: String,
    /// Component name (distribution, package or executable name).
    pub name: String,
    /// The observed version, or why it is missing.
    pub version: VersionObservation,
}

/// A version observation: observed (`value`, `source`, `origin`, `observed_at`) or missing
/// (`status`, `reason`). Exactly one of the two shapes is present.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VersionObservation {
    /// The full version string (never shortened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Observer and method (`core:compiled_version`, `python:importlib.metadata`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Which side observed it (`core`, `sdk`, `caller`, `adapter`, `provider`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// UTC RFC 3339 time of the first observation (kept when reports are forwarded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<String>,
    /// Missing version: `unavailable` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<VersionStatus>,
    /// Missing version: a registered reason code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Why a version has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionStatus {
    /// The observer could not obtain it (no metadata, not declared, failed lookup).
    Unavailable,
    /// The observer did not look (bounds reached, unsupported backend).
    Unknown,
}

/// Whether an inventory's versions could be observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// Every entry has a value.
    Available,
    /// Some entries have a value.
    Partial,
    /// No entry has a value (or there are none).
    Unavailable,
}

/// Completeness of an inventory or of the whole evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceCoverage {
    /// `complete` or `incomplete`.
    pub status: CoverageStatus,
    /// Why it is incomplete (empty when complete).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<CoverageGap>,
}

/// `complete` or `incomplete`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageStatus {
    /// Every expected report is present and within bounds.
    #[default]
    Complete,
    /// A report is missing, malformed or over a bound.
    Incomplete,
}

/// One reason for incomplete coverage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageGap {
    /// The participant whose evidence is missing or cut (`guest_sdk`, `caller`, `adapter`,
    /// `core`).
    pub participant: String,
    /// A registered reason code (`guest_report_missing`, `evidence_entries_dropped`, ...).
    pub reason: String,
}

/// One infrastructure software report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InfrastructureReport {
    /// Dotted key (`infrastructure.container.engine_version` = the engine server version).
    pub name: String,
    /// The inventory context this report refers to, when any (renumbered with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_ref: Option<String>,
    /// The observed version, or why it is missing.
    pub version: VersionObservation,
}

impl VersionObservation {
    /// An observed version.
    pub fn observed(
        value: impl Into<String>,
        source: impl Into<String>,
        origin: impl Into<String>,
        observed_at: impl Into<String>,
    ) -> VersionObservation {
        VersionObservation {
            value: Some(value.into()),
            source: Some(source.into()),
            origin: Some(origin.into()),
            observed_at: Some(observed_at.into()),
            status: None,
            reason: None,
        }
    }

    /// A version the observer could not obtain, with a registered reason code.
    pub fn unavailable(reason: impl Into<String>) -> VersionObservation {
        VersionObservation {
            status: Some(VersionStatus::Unavailable),
            reason: Some(reason.into()),
            ..VersionObservation::default()
        }
    }

    /// Whether this is an observed value.
    pub fn is_observed(&self) -> bool {
        self.value.is_some()
    }

    /// Whether exactly one of the two shapes is present (observed: `value`, `source`,
    /// `origin`, `observed_at`; missing: `status`, `reason`).
    pub fn is_well_formed(&self) -> bool {
        let observed = [&self.value, &self.source, &self.origin, &self.observed_at];
        let missing = self.status.is_some() && self.reason.as_deref().is_some_and(nonblank);
        if observed.iter().all(|field| field.is_some()) {
            self.status.is_none()
                && self.reason.is_none()
                && observed.iter().all(|f| f.as_deref().is_some_and(nonblank))
        } else {
            observed.iter().all(|field| field.is_none()) && missing
        }
    }
}

fn nonblank(text: &str) -> bool {
    !text.trim().is_empty()
}

impl EvidenceEntry {
    /// An entry.
    pub fn new(
        role: impl Into<String>,
        kind: impl Into<String>,
        name: impl Into<String>,
        version: VersionObservation,
    ) -> EvidenceEntry {
        EvidenceEntry {
            role: role.into(),
            kind: kind.into(),
            name: name.into(),
            version,
        }
    }

    /// Whether role, kind and name are non-blank and the version is well formed.
    pub fn is_well_formed(&self) -> bool {
        nonblank(&self.role)
            && nonblank(&self.kind)
            && nonblank(&self.name)
            && self.version.is_well_formed()
    }
}

impl EvidenceCoverage {
    /// Complete coverage.
    pub fn complete() -> EvidenceCoverage {
        EvidenceCoverage::default()
    }

    /// Records a gap (and makes the coverage incomplete); a repeated gap is kept once.
    pub fn add_gap(&mut self, participant: &str, reason: &str) {
        self.status = CoverageStatus::Incomplete;
        if !self
            .gaps
            .iter()
            .any(|g| g.participant == participant && g.reason == reason)
        {
            self.gaps.push(CoverageGap {
                participant: participant.to_owned(),
                reason: reason.to_owned(),
            });
        }
    }

    /// Whether the coverage is complete.
    pub fn is_complete(&self) -> bool {
        self.status == CoverageStatus::Complete
    }
}

impl Availability {
    /// The availability of `entries`: every, some or no version observed.
    pub fn of(entries: &[EvidenceEntry]) -> Availability {
        let observed = entries.iter().filter(|e| e.version.is_observed()).count();
        if observed == 0 {
            Availability::Unavailable
        } else if observed == entries.len() {
            Availability::Available
        } else {
            Availability::Partial
        }
    }
}

impl ExecutionEvidence {
    /// Number of entries over all inventories.
    pub fn entry_count(&self) -> usize {
        self.inventories.iter().map(|i| i.entries.len()).sum()
    }

    /// Length of the compact JSON encoding.
    pub fn compact_len(&self) -> usize {
        serde_json::to_string(self).map_or(usize::MAX, |text| text.len())
    }
}
