//! The bounds of composed evidence: 16 inventories, 128 entries, 64 KiB of compact JSON.
//! Over a bound, whole inventories or whole entries are dropped (never shortened) and the
//! coverage records why.

use fabric_config::codes;
use fabric_config::evidence::{
    Availability, ExecutionEvidence, MAX_BYTES, MAX_CONTEXTS, MAX_ENTRIES,
};

fn owner(evidence: &ExecutionEvidence, index: usize) -> String {
    evidence.inventories[index]
        .participants
        .first()
        .cloned()
        .unwrap_or_else(|| "core".to_owned())
}

/// Applies every bound to `evidence` in place.
pub(crate) fn apply(evidence: &mut ExecutionEvidence) {
    // Contexts: later inventories go first (the core's own stays).
    while evidence.inventories.len() > MAX_CONTEXTS {
        let last = evidence.inventories.len() - 1;
        let who = owner(evidence, last);
        let dropped = evidence.inventories.remove(last);
        evidence
            .infrastructure
            .retain(|r| r.context_ref.as_deref() != Some(dropped.context_ref.as_str()));
        evidence
            .coverage
            .add_gap(&who, codes::EVIDENCE_CONTEXTS_DROPPED);
    }
    // Entries: drop from the end of the latest inventories.
    while evidence.entry_count() > MAX_ENTRIES {
        let Some(index) = evidence
            .inventories
            .iter()
            .rposition(|i| !i.entries.is_empty())
        else {
            break;
        };
        drop_entry(evidence, index, None, codes::EVIDENCE_ENTRIES_DROPPED);
    }
    // Bytes: drop the largest entry until the document fits; then infrastructure reports,
    // then whole inventories (the last resort for oversized participants lists).
    while evidence.compact_len() > MAX_BYTES {
        if let Some((index, entry)) = largest_entry(evidence) {
            drop_entry(evidence, index, Some(entry), codes::EVIDENCE_TOO_LARGE);
        } else if evidence.infrastructure.pop().is_some() {
            evidence.coverage.add_gap("core", codes::EVIDENCE_TOO_LARGE);
        } else if evidence.inventories.len() > 1 {
            let last = evidence.inventories.len() - 1;
            let who = owner(evidence, last);
            evidence.inventories.remove(last);
            evidence.coverage.add_gap(&who, codes::EVIDENCE_TOO_LARGE);
        } else {
            break;
        }
    }
}

fn largest_entry(evidence: &ExecutionEvidence) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None;
    for (i, inventory) in evidence.inventories.iter().enumerate() {
        for (j, entry) in inventory.entries.iter().enumerate() {
            let size = serde_json::to_string(entry).map_or(usize::MAX, |t| t.len());
            if best.is_none_or(|(_, _, s)| size > s) {
                best = Some((i, j, size));
            }
        }
    }
    best.map(|(i, j, _)| (i, j))
}

fn drop_entry(evidence: &mut ExecutionEvidence, index: usize, entry: Option<usize>, reason: &str) {
    let who = owner(evidence, index);
    let inventory = &mut evidence.inventories[index];
    match entry {
        Some(j) => {
            inventory.entries.remove(j);
        }
        None => {
            inventory.entries.pop();
        }
    }
    inventory.availability = Availability::of(&inventory.entries);
    inventory.coverage.add_gap(&who, reason);
    evidence.coverage.add_gap(&who, reason);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GuestReport, Parts, compose};
    use fabric_config::validate::ProvenanceReportsStatus;
    use serde_json::{Value, json};

    fn entry(name: &str, value: &str) -> Value {
        json!({"role": "dependency", "kind": "package", "name": name,
               "version": {"value": value, "source": "adapter:test", "origin": "adapter",
                           "observed_at": "2025-01-01T00:00:00Z"}})
    }

    fn guest(inventories: usize, entries: usize, value: &str) -> Value {
        let list: Vec<Value> = (0..inventories)
            .map(|i| {
                let entries: Vec<Value> = (0..entries)
                    .map(|j| entry(&format!("p{i}-{j}"), value))
                    .collect();
                json!({"context_ref": format!("g{i}"), "participants": ["guest_sdk"],
                       "availability": "available", "entries": entries})
            })
            .collect();
        json!({"inventories": list})
    }

    fn composed(report: Value) -> ExecutionEvidence {
        compose(Parts {
            core: crate::core_inventory(None),
            caller: None,
            guest: GuestReport::Reported(report),
            host_observed: Vec::new(),
        })
    }

    fn reasons(evidence: &ExecutionEvidence) -> Vec<&str> {
        evidence
            .coverage
            .gaps
            .iter()
            .map(|g| g.reason.as_str())
            .collect()
    }

    #[test]
    fn more_than_16_contexts_drops_the_later_inventories() {
        let evidence = composed(guest(20, 1, "1.0"));
        assert_eq!(evidence.inventories.len(), MAX_CONTEXTS);
        assert_eq!(evidence.inventories[0].entries[0].name, "fabric-core");
        assert_eq!(reasons(&evidence), ["evidence_contexts_dropped"]);
    }

    #[test]
    fn more_than_128_entries_drops_entries_whole() {
        let evidence = composed(guest(2, 100, "1.0"));
        assert_eq!(evidence.entry_count(), MAX_ENTRIES);
        assert_eq!(reasons(&evidence), ["evidence_entries_dropped"]);
        assert!(!evidence.inventories[2].coverage.is_complete());
        assert!(evidence.inventories[1].coverage.is_complete());
    }

    #[test]
    fn over_64_kib_drops_the_largest_entries_and_never_shortens_values() {
        let mut report = guest(1, 10, "1.0");
        let big = "9".repeat(20_000);
        let entries = report["inventories"][0]["entries"]
            .as_array_mut()
            .expect("entries");
        for slot in entries.iter_mut().take(4) {
            slot["version"]["value"] = json!(big);
        }
        let evidence = composed(report);
        assert!(evidence.compact_len() <= MAX_BYTES);
        assert_eq!(reasons(&evidence), ["evidence_too_large"]);
        let values: Vec<usize> = evidence.inventories[1]
            .entries
            .iter()
            .filter_map(|e| e.version.value.as_ref().map(String::len))
            .collect();
        // One or more 20,000-byte values were dropped whole; the rest are intact.
        assert!(
            values.iter().all(|len| *len == 3 || *len == 20_000),
            "{values:?}"
        );
        assert_eq!(values.len(), 10 - 1, "exactly one large entry had to go");
    }

    #[test]
    fn over_budget_caller_reports_are_recorded_as_incomplete() {
        let caller = guest(1, 1, "1.0");
        let status = ProvenanceReportsStatus::Incomplete {
            reason: fabric_config::validate::ProvenanceIncompleteReason::TooManyEntries,
            size: fabric_config::validate::ProvenanceReportsSize::default(),
        };
        let evidence = compose(Parts {
            core: crate::core_inventory(None),
            caller: Some((&caller, status)),
            guest: GuestReport::Missing,
            host_observed: Vec::new(),
        });
        assert_eq!(
            reasons(&evidence),
            [
                "provenance_reports_too_many_entries",
                "guest_report_missing"
            ]
        );
        assert_eq!(evidence.inventories.len(), 2);
    }
}
