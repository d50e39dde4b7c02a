//! Schema version, metadata, adapter selection and discovery paths.

use serde_json::json;

use super::cases::{accepted, problems, rejected};

#[test]
fn schema_version() {
    accepted(json!({"schema_version": "fabric.agent/v1alpha1"}));
    rejected(
        json!({"schema_version": "fabric.agent/v2"}),
        "unknown_schema_version",
        "schema_version",
    );
}

#[test]
fn metadata_name() {
    accepted(json!({"metadata": {"name": "x", "owner": "team-a"}}));
    rejected(
        json!({"metadata": {"name": "  "}}),
        "blank_metadata_name",
        "metadata.name",
    );
    assert_eq!(
        problems(json!({"metadata": {"description": "d"}, "harness": {"adapter_id": "a"}})),
        vec![("missing_field".to_owned(), "metadata.name".to_owned())]
    );
}

#[test]
fn selector() {
    let mut workflow_only = json!({"metadata": {"name": "w"}, "workflow": {"target_id": "echo"}});
    assert!(problems(workflow_only.clone()).is_empty());
    workflow_only["workflow"]["target_id"] = json!(" ");
    assert_eq!(
        problems(workflow_only),
        vec![(
            "blank_target_id".to_owned(),
            "workflow.target_id".to_owned()
        )]
    );
    assert_eq!(
        problems(json!({"metadata": {"name": "w"}})),
        vec![(
            "missing_adapter_selector".to_owned(),
            "harness.adapter_id".to_owned()
        )]
    );
    rejected(
        json!({"harness": {"adapter_id": ""}}),
        "blank_adapter_id",
        "harness.adapter_id",
    );
}

#[test]
fn discovery_and_skill_paths() {
    accepted(json!({"discovery": {"local_paths": ["./adapters"]}, "skills": {"paths": ["s"]}}));
    rejected(
        json!({"discovery": {"local_paths": ["a", " "]}}),
        "blank_discovery_path",
        "discovery.local_paths[1]",
    );
    rejected(
        json!({"skills": {"paths": [""]}}),
        "blank_skill_path",
        "skills.paths[0]",
    );
}
