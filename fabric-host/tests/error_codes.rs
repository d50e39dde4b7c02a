//! `HostError` codes: stable, snake_case, unique, listed in `tests/fixtures/error-codes.json`
//! and in docs/hosting.md; every variant reports a listed code and its stage as fields.

use std::collections::BTreeSet;
use std::path::Path;

use fabric_config::{ErrorInfo, Stage};
use fabric_host::{CODES, Diagnostics, ErrorClass, HostError, ProtocolViolation};
use serde_json::{Map, Value};

fn every_variant() -> Vec<HostError> {
    let diagnostics = Diagnostics::default();
    vec![
        HostError::Launch {
            stage: Stage::Start,
            program: "p".into(),
            reason: "r".into(),
        },
        HostError::Protocol {
            stage: Stage::Invoke,
            violation: ProtocolViolation::InvalidJson,
            diagnostics: diagnostics.clone(),
        },
        HostError::HostCrashed {
            stage: Stage::Invoke,
            diagnostics: diagnostics.clone(),
        },
        HostError::Timeout {
            stage: Stage::Start,
            timeout_ms: 1,
            diagnostics: diagnostics.clone(),
        },
        HostError::HostIo {
            stage: Stage::Invoke,
            reason: "r".into(),
            diagnostics: diagnostics.clone(),
        },
        HostError::TerminationFailed {
            stage: Stage::Stop,
            timeout_ms: 1,
            diagnostics,
        },
        HostError::EngineUnavailable {
            stage: Stage::Start,
            reason: "r".into(),
        },
        HostError::RuntimeBusy {
            stage: Stage::Invoke,
        },
        HostError::RuntimeStopped {
            stage: Stage::Invoke,
        },
        HostError::RuntimeFailed {
            stage: Stage::Invoke,
            cause: "host_crashed".into(),
        },
        HostError::Capability {
            stage: Stage::Start,
            code: "adapter_kind_unsupported",
            message: "m".into(),
        },
        HostError::InvalidRequest {
            stage: Stage::Invoke,
            path: "request".into(),
            reason: "r".into(),
        },
        HostError::EnvNameUnset {
            stage: Stage::Start,
            name: "N".into(),
        },
        HostError::EnvNameChanged {
            stage: Stage::Invoke,
            name: "N".into(),
        },
        HostError::InvalidAgentRunResult {
            stage: Stage::Invoke,
            reason: "r".into(),
        },
        HostError::Filesystem {
            stage: Stage::Invoke,
            path: "/x".into(),
            reason: "r".into(),
        },
        HostError::EnvironmentReleased {
            stage: Stage::Start,
        },
        HostError::Resource {
            stage: Stage::Invoke,
            source: fabric_stats::StatsError::Unsupported {
                reason: fabric_stats::UnsupportedReason::Platform,
            },
        },
        HostError::ResourceRuntimeStopped {
            stage: Stage::Invoke,
            runtime_id: "runtime-1".into(),
        },
        HostError::ResourceKindUnsupported {
            stage: Stage::Invoke,
            adapter_kind: "http",
        },
    ]
}

#[test]
fn codes_are_unique_snake_case_and_listed_in_the_fixture() {
    let unique: BTreeSet<&str> = CODES.iter().copied().collect();
    assert_eq!(unique.len(), CODES.len(), "duplicate codes");
    for code in CODES {
        assert!(
            code.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "`{code}` is not snake_case"
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/error-codes.json");
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let listed: BTreeSet<&str> = value["fabric_host::HostError"]
        .as_array()
        .expect("fabric_host::HostError list")
        .iter()
        .map(|v| v.as_str().expect("string"))
        .collect();
    assert_eq!(listed, unique, "tests/fixtures/error-codes.json differs");
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hosting.md"))
            .expect("docs/hosting.md");
    for code in CODES {
        assert!(
            docs.contains(&format!("`{code}`")),
            "docs/hosting.md lacks `{code}`"
        );
    }
}

#[test]
fn every_variant_reports_a_listed_code_and_its_stage_as_fields() {
    for error in every_variant() {
        assert!(CODES.contains(&error.code()), "{error:?}");
        let stage = error.stage();
        let code = error.code().to_owned();
        let class = error.class();
        let info = ErrorInfo::from(error);
        assert_eq!(info.code, code);
        assert_eq!(info.stage, stage);
        assert!(!info.message.is_empty());
        if class == ErrorClass::State {
            assert!(matches!(
                code.as_str(),
                "runtime_busy" | "runtime_stopped" | "runtime_failed" | "environment_released"
            ));
        }
    }
}

#[test]
fn adapter_lifecycle_failures_keep_the_adapter_code() {
    let error = HostError::Lifecycle {
        stage: Stage::Start,
        code: "lifecycle_invalid_config".into(),
        message: "Adapter config does not match its typed contract".into(),
        retryable: true,
        metadata: Map::new(),
        diagnostics: Default::default(),
    };
    assert_eq!(error.code(), "lifecycle_invalid_config");
    assert_eq!(error.class(), ErrorClass::Runtime);
    let info = ErrorInfo::from(error);
    assert_eq!(info.code, "lifecycle_invalid_config");
    assert!(info.retryable);
}
