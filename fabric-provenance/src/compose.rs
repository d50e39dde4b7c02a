//! Composition: core + caller reports + the adapter host's report + what the core observed
//! of a process adapter, into one bounded [`ExecutionEvidence`] with renumbered contexts.

use fabric_config::codes;
use std::collections::HashMap;

use fabric_config::evidence::{
    Availability, EvidenceCoverage, EvidenceEntry, ExecutionEvidence, InfrastructureReport,
    SoftwareInventory, VersionObservation,
};
use fabric_config::validate::ProvenanceReportsStatus;
use serde_json::Value;

/// What the adapter host reported at `start`.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestReport {
    /// The host sent no `execution` report: a `guest_sdk` gap.
    Missing,
    /// The host's `execution` value (checked here; malformed = a gap).
    Reported(Value),
}

/// Everything one runtime's evidence is composed of.
#[derive(Debug, Clone)]
pub struct Parts<'a> {
    /// The core's snapshot ([`crate::core_inventory`]).
    pub core: SoftwareInventory,
    /// The caller's `provenance.reports` and their bounds status, when supplied.
    pub caller: Option<(&'a Value, ProvenanceReportsStatus)>,
    /// The adapter host's report.
    pub guest: GuestReport,
    /// Inventories the core observed of the adapter host (process adapters' executable).
    pub host_observed: Vec<SoftwareInventory>,
}

/// The core's inventory of a process adapter's executable: the spec declares no way to
/// ask an executable for its version, so the version is unavailable with a reason.
pub fn executable_inventory(program: &str) -> SoftwareInventory {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .unwrap_or(program);
    let entries = vec![EvidenceEntry::new(
        "executable",
        "executable",
        name,
        VersionObservation::unavailable(codes::VERSION_COMMAND_NOT_DECLARED),
    )];
    SoftwareInventory {
        context_ref: "ctx-1".to_owned(),
        participants: vec!["adapter".to_owned()],
        availability: Availability::of(&entries),
        coverage: EvidenceCoverage::complete(),
        entries,
    }
}

/// Composes `parts` (contexts renumbered `ctx-1`, `ctx-2`, ... in order core, caller, host
/// observations, guest) and applies the bounds. Never fails: anything malformed becomes a
/// coverage gap.
pub fn compose(parts: Parts<'_>) -> ExecutionEvidence {
    let mut out = ExecutionEvidence::default();
    let mut next = 1usize;
    push_document(
        &mut out,
        &mut next,
        ExecutionEvidence {
            inventories: vec![parts.core],
            ..ExecutionEvidence::default()
        },
        "core",
    );
    if let Some((reports, status)) = parts.caller {
        if let ProvenanceReportsStatus::Incomplete { reason, .. } = status {
            out.coverage.add_gap("caller", reason.code());
        }
        match serde_json::from_value::<ExecutionEvidence>(reports.clone()) {
            Ok(document) => push_document(&mut out, &mut next, document, "caller"),
            Err(_) => out
                .coverage
                .add_gap("caller", codes::PROVENANCE_REPORTS_MALFORMED),
        }
    }
    for inventory in parts.host_observed {
        let document = ExecutionEvidence {
            inventories: vec![inventory],
            ..ExecutionEvidence::default()
        };
        push_document(&mut out, &mut next, document, "adapter");
    }
    match parts.guest {
        GuestReport::Missing => out
            .coverage
            .add_gap("guest_sdk", codes::GUEST_REPORT_MISSING),
        GuestReport::Reported(value) => match serde_json::from_value::<ExecutionEvidence>(value) {
            Ok(document) => push_document(&mut out, &mut next, document, "guest_sdk"),
            Err(_) => out
                .coverage
                .add_gap("guest_sdk", codes::GUEST_REPORT_MALFORMED),
        },
    }
    crate::bounds::apply(&mut out);
    out
}

/// Appends one source document: its inventories get fresh refs, its infrastructure reports
/// follow their inventory's new ref (a ref naming none of its inventories is dropped), its
/// gaps are kept, and entries that are not well formed are dropped (a gap).
fn push_document(
    out: &mut ExecutionEvidence,
    next: &mut usize,
    document: ExecutionEvidence,
    participant: &str,
) {
    let mut renamed: HashMap<String, String> = HashMap::new();
    for mut inventory in document.inventories {
        let fresh = format!("ctx-{next}");
        *next += 1;
        renamed.insert(std::mem::take(&mut inventory.context_ref), fresh.clone());
        inventory.context_ref = fresh;
        let before = inventory.entries.len();
        inventory.entries.retain(EvidenceEntry::is_well_formed);
        if inventory.entries.len() != before {
            let owner = inventory
                .participants
                .first()
                .cloned()
                .unwrap_or_else(|| participant.to_owned());
            inventory
                .coverage
                .add_gap(&owner, codes::EVIDENCE_ENTRIES_DROPPED);
            out.coverage
                .add_gap(&owner, codes::EVIDENCE_ENTRIES_DROPPED);
        }
        if !inventory.coverage.is_complete() {
            for gap in &inventory.coverage.gaps {
                out.coverage.add_gap(&gap.participant, &gap.reason);
            }
        }
        inventory.availability = Availability::of(&inventory.entries);
        out.inventories.push(inventory);
    }
    for report in document.infrastructure {
        if !report.version.is_well_formed() || report.name.trim().is_empty() {
            out.coverage
                .add_gap(participant, codes::EVIDENCE_ENTRIES_DROPPED);
            continue;
        }
        let context_ref = report
            .context_ref
            .as_ref()
            .and_then(|old| renamed.get(old).cloned());
        out.infrastructure.push(InfrastructureReport {
            context_ref,
            ..report
        });
    }
    for gap in document.coverage.gaps {
        out.coverage.add_gap(&gap.participant, &gap.reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabric_config::evidence::CoverageStatus;
    use serde_json::json;

    fn observed(value: &str) -> Value {
        json!({"value": value, "source": "caller:app", "origin": "caller",
               "observed_at": "2025-01-02T03:04:05Z"})
    }

    fn document(refs: &[&str]) -> Value {
        let inventories: Vec<Value> = refs
            .iter()
            .map(|r| {
                json!({"context_ref": r, "participants": ["caller"], "availability": "available",
                       "entries": [{"role": "harness", "kind": "package", "name": "app",
                                    "version": observed("1.2.3")}]})
            })
            .collect();
        json!({"inventories": inventories, "infrastructure": [
            {"name": "infrastructure.container.engine_version", "context_ref": refs[refs.len() - 1],
             "version": observed("27.1.1")}
        ]})
    }

    fn core() -> SoftwareInventory {
        crate::core_inventory(None)
    }

    #[test]
    fn contexts_are_renumbered_and_caller_observations_kept() {
        let caller = document(&["ctx-1", "ctx-7"]);
        let guest = document(&["ctx-1"]);
        let evidence = compose(Parts {
            core: core(),
            caller: Some((&caller, ProvenanceReportsStatus::Absent)),
            guest: GuestReport::Reported(guest),
            host_observed: vec![executable_inventory("/usr/bin/sh")],
        });
        let refs: Vec<&str> = evidence
            .inventories
            .iter()
            .map(|i| i.context_ref.as_str())
            .collect();
        assert_eq!(refs, ["ctx-1", "ctx-2", "ctx-3", "ctx-4", "ctx-5"]);
        assert_eq!(evidence.inventories[3].entries[0].name, "sh");
        assert_eq!(
            evidence.inventories[3].entries[0].version.reason.as_deref(),
            Some("version_command_not_declared")
        );
        // Infrastructure refs follow their inventory: the caller's ctx-7 is now ctx-3, the
        // guest's ctx-1 is ctx-5.
        let infra: Vec<Option<&str>> = evidence
            .infrastructure
            .iter()
            .map(|r| r.context_ref.as_deref())
            .collect();
        assert_eq!(infra, [Some("ctx-3"), Some("ctx-5")]);
        let kept = &evidence.inventories[1].entries[0].version;
        assert_eq!(kept.observed_at.as_deref(), Some("2025-01-02T03:04:05Z"));
        assert_eq!(kept.source.as_deref(), Some("caller:app"));
        assert_eq!(evidence.coverage.status, CoverageStatus::Complete);
    }

    #[test]
    fn missing_or_malformed_reports_are_gaps() {
        let caller = json!({"inventories": "nope"});
        let evidence = compose(Parts {
            core: core(),
            caller: Some((&caller, ProvenanceReportsStatus::Absent)),
            guest: GuestReport::Reported(json!([1, 2])),
            host_observed: Vec::new(),
        });
        assert_eq!(evidence.inventories.len(), 1);
        let gaps: Vec<(&str, &str)> = evidence
            .coverage
            .gaps
            .iter()
            .map(|g| (g.participant.as_str(), g.reason.as_str()))
            .collect();
        assert_eq!(
            gaps,
            [
                ("caller", "provenance_reports_malformed"),
                ("guest_sdk", "guest_report_malformed")
            ]
        );
    }

    #[test]
    fn entries_that_are_not_well_formed_are_dropped_whole() {
        let guest = json!({"inventories": [{"context_ref": "a", "participants": ["guest_sdk"],
            "availability": "available", "entries": [
                {"role": "adapter", "kind": "package", "name": "x", "version": observed("1")},
                {"role": "adapter", "kind": "package", "name": "y",
                 "version": {"value": "2", "status": "unavailable", "reason": "r"}}]}]});
        let evidence = compose(Parts {
            core: core(),
            caller: None,
            guest: GuestReport::Reported(guest),
            host_observed: Vec::new(),
        });
        assert_eq!(evidence.inventories[1].entries.len(), 1);
        assert!(!evidence.inventories[1].coverage.is_complete());
        assert_eq!(evidence.coverage.gaps[0].reason, "evidence_entries_dropped");
    }
}
