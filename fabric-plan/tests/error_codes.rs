//! `PlanError` codes: stable, snake_case, unique, listed in `tests/fixtures/error-codes.json`,
//! and every variant maps to `ErrorInfo` with stage `plan`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fabric_config::{ErrorInfo, Stage};
use fabric_plan::{PLAN_ERROR_CODES, PlanError};
use serde_json::Value;

fn one_of_each() -> Vec<PlanError> {
    let file = PathBuf::from("x.fabric-adapter.json");
    vec![
        PlanError::DescriptorRead {
            file: file.clone(),
            source: std::io::Error::other("gone"),
        },
        PlanError::DescriptorJson {
            file: file.clone(),
            line: 1,
            column: 2,
        },
        PlanError::DescriptorContract {
            file: file.clone(),
            path: "contract_version".into(),
            reason: "r".into(),
        },
        PlanError::DescriptorInvalid {
            file: file.clone(),
            path: "adapter_id".into(),
            reason: "r".into(),
        },
        PlanError::DescriptorSchema {
            file: file.clone(),
            path: "settings_schema".into(),
            reason: "r".into(),
        },
        PlanError::DescriptorAmbiguous {
            kind: "adapter",
            id: "a".into(),
            first: file.clone(),
            second: file,
        },
        PlanError::AdapterNotFound {
            adapter_id: "a".into(),
            available: vec![],
            skipped: vec![],
        },
        PlanError::TargetNotFound {
            target_id: "t".into(),
            available: vec![],
            skipped: vec![],
        },
        PlanError::ConfigInvalid {
            path: "p".into(),
            reason: "r".into(),
            code: String::new(),
        },
        PlanError::Incompatible {
            adapter_id: "a".into(),
            path: "p".into(),
            reason: "r".into(),
        },
        PlanError::SchemaViolation {
            adapter_id: "a".into(),
            schema: "s",
            path: "p".into(),
            reason: "r".into(),
            origin: None,
        },
        PlanError::ModelRoleAmbiguous {
            adapter_id: "a".into(),
        },
        PlanError::TargetMismatch {
            target_id: "t".into(),
            path: "p".into(),
            reason: "r".into(),
        },
        PlanError::DescriptorMismatch {
            adapter_id: "a".into(),
            expected: "e".into(),
            actual: "f".into(),
        },
    ]
}

#[test]
fn codes_are_listed_and_complete() {
    let codes: Vec<&str> = one_of_each().iter().map(PlanError::code).collect();
    let unique: BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(unique.len(), codes.len(), "duplicate codes");
    assert_eq!(
        unique,
        PLAN_ERROR_CODES.iter().copied().collect::<BTreeSet<_>>()
    );
    for code in &codes {
        assert!(
            code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{code}"
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/error-codes.json");
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let listed: BTreeSet<&str> = value["fabric_plan::PlanError"]
        .as_array()
        .expect("fabric_plan::PlanError list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        listed, unique,
        "tests/fixtures/error-codes.json differs from the code"
    );
}

#[test]
fn every_error_maps_to_error_info_with_stage_plan() {
    for error in one_of_each() {
        let info = ErrorInfo::from(&error);
        assert_eq!(info.stage, Stage::Plan);
        assert!(!info.message.is_empty());
        assert_eq!(info.path(), error.path());
        if let Some(adapter_id) = error.adapter_id() {
            assert_eq!(info.metadata["adapter_id"], Value::from(adapter_id));
        }
    }
    // A config finding keeps fabric-config's own code.
    let finding = PlanError::ConfigInvalid {
        path: "models".into(),
        reason: "r".into(),
        code: "blank_model_role".into(),
    };
    assert_eq!(ErrorInfo::from(finding).code, "blank_model_role");
}
