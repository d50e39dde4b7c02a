//! Bounds and status of supplied `provenance.reports` (incomplete evidence, never a config
//! error).

use crate::codes;
use std::collections::BTreeSet;

use serde_json::Value;

use crate::config::FabricConfig;

/// Bounds of `provenance.reports`: contexts.
pub const PROVENANCE_MAX_CONTEXTS: usize = 16;
/// Bounds of `provenance.reports`: total entries.
pub const PROVENANCE_MAX_ENTRIES: usize = 128;
/// Bounds of `provenance.reports`: compact UTF-8 JSON bytes.
pub const PROVENANCE_MAX_BYTES: usize = 64 * 1024;

/// Why supplied provenance reports are incomplete evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProvenanceIncompleteReason {
    /// `reports` is not a JSON object.
    Malformed,
    /// More than 16 contexts.
    TooManyContexts,
    /// More than 128 entries.
    TooManyEntries,
    /// More than 64 KiB of compact JSON.
    TooLarge,
}

impl ProvenanceIncompleteReason {
    /// Every reason.
    pub const ALL: &'static [ProvenanceIncompleteReason] = &[
        ProvenanceIncompleteReason::Malformed,
        ProvenanceIncompleteReason::TooManyContexts,
        ProvenanceIncompleteReason::TooManyEntries,
        ProvenanceIncompleteReason::TooLarge,
    ];

    /// Stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            ProvenanceIncompleteReason::Malformed => codes::PROVENANCE_REPORTS_MALFORMED,
            ProvenanceIncompleteReason::TooManyContexts => {
                codes::PROVENANCE_REPORTS_TOO_MANY_CONTEXTS
            }
            ProvenanceIncompleteReason::TooManyEntries => {
                codes::PROVENANCE_REPORTS_TOO_MANY_ENTRIES
            }
            ProvenanceIncompleteReason::TooLarge => codes::PROVENANCE_REPORTS_TOO_LARGE,
        }
    }
}

/// Measured size of supplied provenance reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ProvenanceReportsSize {
    /// Distinct `context_ref` values found anywhere in the report.
    pub contexts: usize,
    /// Total number of items of every `entries` array anywhere in the report.
    pub entries: usize,
    /// Length of the compact JSON encoding.
    pub bytes: usize,
}

/// Whether supplied provenance reports are usable evidence (never a config error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProvenanceReportsStatus {
    /// No reports supplied (or collection disabled).
    Absent,
    /// Within every bound.
    Complete(ProvenanceReportsSize),
    /// Over a bound or malformed: recorded as incomplete evidence, outcome unchanged.
    Incomplete {
        /// The first bound exceeded.
        reason: ProvenanceIncompleteReason,
        /// What was measured.
        size: ProvenanceReportsSize,
    },
}

fn count_evidence(value: &Value, contexts: &mut BTreeSet<String>, entries: &mut usize) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                if key == "context_ref" {
                    if let Value::String(reference) = item {
                        contexts.insert(reference.clone());
                    }
                }
                if key == "entries" {
                    if let Value::Array(items) = item {
                        *entries += items.len();
                    }
                }
                count_evidence(item, contexts, entries);
            }
        }
        Value::Array(items) => {
            for item in items {
                count_evidence(item, contexts, entries);
            }
        }
        _ => {}
    }
}

impl FabricConfig {
    /// Checks `provenance.reports` against its bounds (16 contexts, 128 entries, 64 KiB of
    /// compact JSON). Over-budget or malformed reports are incomplete evidence, not errors.
    pub fn provenance_reports_status(&self) -> ProvenanceReportsStatus {
        let Some(provenance) = &self.provenance else {
            return ProvenanceReportsStatus::Absent;
        };
        let Some(reports) = provenance.reports.as_ref().filter(|_| provenance.enabled) else {
            return ProvenanceReportsStatus::Absent;
        };
        let bytes = serde_json::to_string(reports).map_or(usize::MAX, |text| text.len());
        let mut contexts = BTreeSet::new();
        let mut entries = 0;
        count_evidence(reports, &mut contexts, &mut entries);
        let size = ProvenanceReportsSize {
            contexts: contexts.len(),
            entries,
            bytes,
        };
        let reason = if !reports.is_object() {
            Some(ProvenanceIncompleteReason::Malformed)
        } else if size.bytes > PROVENANCE_MAX_BYTES {
            Some(ProvenanceIncompleteReason::TooLarge)
        } else if size.contexts > PROVENANCE_MAX_CONTEXTS {
            Some(ProvenanceIncompleteReason::TooManyContexts)
        } else if size.entries > PROVENANCE_MAX_ENTRIES {
            Some(ProvenanceIncompleteReason::TooManyEntries)
        } else {
            None
        };
        match reason {
            Some(reason) => ProvenanceReportsStatus::Incomplete { reason, size },
            None => ProvenanceReportsStatus::Complete(size),
        }
    }
}
