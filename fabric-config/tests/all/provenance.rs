//! `provenance.reports` bounds: over-budget or malformed reports are incomplete evidence,
//! never a config error.

use fabric_config::FabricConfig;
use fabric_config::validate::{ProvenanceIncompleteReason, ProvenanceReportsStatus};
use serde_json::{Value, json};

fn with_reports(reports: Value) -> FabricConfig {
    let config = FabricConfig::from_value(json!({
        "metadata": {"name": "p"},
        "harness": {"adapter_id": "nvidia.fabric.hermes"},
        "provenance": {"enabled": true, "reports": reports}
    }))
    .unwrap();
    config
        .validate()
        .expect("reports never make a config invalid");
    config
}

fn inventories(contexts: usize, entries_each: usize, pad: usize) -> Value {
    let inventories: Vec<Value> = (0..contexts)
        .map(|index| {
            json!({
                "context_ref": format!("ctx-{index}"),
                "entries": (0..entries_each)
                    .map(|e| json!({"name": format!("pkg-{e}"), "pad": "x".repeat(pad)}))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    json!({ "inventories": inventories })
}

fn reason(config: &FabricConfig) -> Option<ProvenanceIncompleteReason> {
    match config.provenance_reports_status() {
        ProvenanceReportsStatus::Incomplete { reason, .. } => Some(reason),
        _ => None,
    }
}

#[test]
fn within_bounds_is_complete() {
    let config = with_reports(inventories(16, 8, 0));
    match config.provenance_reports_status() {
        ProvenanceReportsStatus::Complete(size) => {
            assert_eq!(size.contexts, 16);
            assert_eq!(size.entries, 128);
            assert!(size.bytes < 64 * 1024);
        }
        other => panic!("expected complete, got {other:?}"),
    }
}

#[test]
fn over_bounds_is_incomplete() {
    assert_eq!(
        reason(&with_reports(inventories(17, 1, 0))),
        Some(ProvenanceIncompleteReason::TooManyContexts)
    );
    assert_eq!(
        reason(&with_reports(inventories(2, 65, 0))),
        Some(ProvenanceIncompleteReason::TooManyEntries)
    );
    assert_eq!(
        reason(&with_reports(inventories(1, 2, 40 * 1024))),
        Some(ProvenanceIncompleteReason::TooLarge)
    );
    assert_eq!(
        reason(&with_reports(json!(["not", "an", "object"]))),
        Some(ProvenanceIncompleteReason::Malformed)
    );
}

#[test]
fn absent_or_disabled_reports_are_absent() {
    let config = FabricConfig::new("p", "nvidia.fabric.hermes");
    assert_eq!(
        config.provenance_reports_status(),
        ProvenanceReportsStatus::Absent
    );
    assert!(config.provenance_enabled());
    let disabled = FabricConfig::from_value(json!({
        "metadata": {"name": "p"},
        "harness": {"adapter_id": "nvidia.fabric.hermes"},
        "provenance": {"enabled": false, "reports": {"inventories": []}}
    }))
    .unwrap();
    assert!(!disabled.provenance_enabled());
    assert_eq!(
        disabled.provenance_reports_status(),
        ProvenanceReportsStatus::Absent
    );
}
