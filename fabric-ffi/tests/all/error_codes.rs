//! Every error and reason code a crate produces is registered in `fabric_config::codes`
//! (the one declaration of each code) with the right origin and kind, each crate's own list
//! of its codes matches what its errors produce, every error maps to an `ErrorInfo` with its
//! code and stage as fields, and the docs name every code. One test for every crate (this
//! crate links them all); the registry's snapshot `tests/fixtures/error-codes.json` is
//! written by `cargo xtask codegen` and checked for drift by xtask.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fabric_config::codes::{self, CodeKind, ErrorClass, Origin};
use fabric_config::validate::ProvenanceIncompleteReason;
use fabric_config::{ConfigError, ErrorInfo, Stage};
use fabric_host::{Diagnostics, HostError, ProtocolViolation};
use fabric_plan::{PLAN_ERROR_CODES, PlanError};
use fabric_stats::{StatsError, UnavailableReason, UnsupportedReason};
use serde_json::{Map, Value};

/// Asserts every code is registered with `origin` and `kind`, and that `listed` (a crate's
/// own list, if it keeps one) holds exactly the produced codes.
fn registered(
    what: &str,
    produced: &[&str],
    listed: Option<&[&str]>,
    origin: Origin,
    kind: CodeKind,
) {
    for code in produced {
        let entry =
            codes::find(code).unwrap_or_else(|| panic!("{what}: `{code}` is not registered"));
        assert_eq!(
            entry.origin, origin,
            "{what}: `{code}` is registered for another origin"
        );
        assert_eq!(
            entry.kind, kind,
            "{what}: `{code}` is registered as another kind"
        );
    }
    if let Some(listed) = listed {
        let listed_set: BTreeSet<&str> = listed.iter().copied().collect();
        assert_eq!(
            listed_set.len(),
            listed.len(),
            "{what}: duplicate codes in its list"
        );
        let produced_set: BTreeSet<&str> = produced.iter().copied().collect();
        assert_eq!(
            listed_set, produced_set,
            "{what}: its list differs from what it produces"
        );
    }
}

/// Codes missing from a document (each must appear in backticks).
fn undocumented<'a>(doc: &str, codes: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(doc))
        .unwrap_or_else(|error| panic!("{doc}: {error}"));
    codes
        .into_iter()
        .filter(|code| !text.contains(&format!("`{code}`")))
        .collect()
}

mod config {
    use super::*;

    #[test]
    fn config_codes_are_registered_and_documented() {
        registered(
            "ConfigError",
            &ConfigError::all_codes(),
            None,
            Origin::Config,
            CodeKind::Error,
        );
        let reasons: Vec<&str> = ProvenanceIncompleteReason::ALL
            .iter()
            .map(|r| r.code())
            .collect();
        registered(
            "ProvenanceIncompleteReason",
            &reasons,
            None,
            Origin::Config,
            CodeKind::Reason,
        );
        let mut all = ConfigError::all_codes();
        all.extend(reasons);
        let missing = undocumented("docs/config.md", all);
        assert!(
            missing.is_empty(),
            "docs/config.md does not document {missing:?}"
        );
    }
}

mod plan {
    use super::*;

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
            PlanError::BaseDirNotUtf8 {
                base_dir: PathBuf::from("/srv/job"),
            },
        ]
    }

    #[test]
    fn plan_codes_are_registered_and_complete() {
        let produced: Vec<&str> = one_of_each().iter().map(PlanError::code).collect();
        registered(
            "PlanError",
            &produced,
            Some(PLAN_ERROR_CODES),
            Origin::Plan,
            CodeKind::Error,
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
}

mod stats {
    use super::*;

    /// One of each variant (the crate's own unit test checks exhaustiveness of `ALL_CODES`).
    fn every_unavailable() -> Vec<UnavailableReason> {
        vec![
            UnavailableReason::HostExited,
            UnavailableReason::ProcessUnreadable {
                path: PathBuf::from("/proc/1/stat"),
            },
            UnavailableReason::ProcessHidden { pid: 2 },
            UnavailableReason::ProcessTableUnreadable {
                path: PathBuf::from("/proc"),
            },
            UnavailableReason::ProcessTableHidden,
            UnavailableReason::TreeChanging { attempts: 8 },
        ]
    }

    #[test]
    fn stats_codes_are_registered_and_complete() {
        let errors = [
            StatsError::Unavailable {
                pid: 1,
                reason: UnavailableReason::HostExited,
            },
            StatsError::Unsupported {
                reason: UnsupportedReason::Platform,
            },
        ];
        let produced: Vec<&str> = errors.iter().map(StatsError::code).collect();
        registered(
            "StatsError",
            &produced,
            Some(&StatsError::ALL_CODES),
            Origin::Stats,
            CodeKind::Error,
        );
        for error in errors {
            let info = ErrorInfo::from(error.clone());
            assert_eq!(info.code, error.code());
            assert_eq!(info.metadata["reason"], error.reason_code());
        }
        let unavailable = every_unavailable();
        let produced: Vec<&str> = unavailable.iter().map(UnavailableReason::code).collect();
        registered(
            "UnavailableReason",
            &produced,
            Some(&UnavailableReason::ALL_CODES),
            Origin::Stats,
            CodeKind::Reason,
        );
        let unsupported = [
            UnsupportedReason::Platform,
            UnsupportedReason::NoProcFilesystem,
            UnsupportedReason::NoChildrenLists,
        ];
        let produced: Vec<&str> = unsupported.iter().map(UnsupportedReason::code).collect();
        registered(
            "UnsupportedReason",
            &produced,
            Some(&UnsupportedReason::ALL_CODES),
            Origin::Stats,
            CodeKind::Reason,
        );
    }

    #[test]
    fn messages_name_paths_not_values() {
        let error = StatsError::Unavailable {
            pid: 7,
            reason: UnavailableReason::ProcessUnreadable {
                path: PathBuf::from("/proc/9/stat"),
            },
        };
        let info = ErrorInfo::from(error);
        assert!(info.message.contains("/proc/9/stat"));
        assert_eq!(info.metadata["path"], "/proc/9/stat");
        assert_eq!(info.metadata["pid"], 7);
    }
}

mod host {
    use super::*;

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
    fn every_variant_reports_a_registered_code_and_its_stage_as_fields() {
        let mut produced = BTreeSet::new();
        for error in every_variant() {
            let stage = error.stage();
            let code = error.code().to_owned();
            let class = error.class();
            let entry = codes::find(&code).unwrap_or_else(|| panic!("`{code}` is not registered"));
            assert_eq!(entry.kind, CodeKind::Error, "{code}");
            // The registry's class override and the error's own class agree.
            if let Some(registered_class) = entry.class {
                assert_eq!(registered_class, class, "{code}");
            }
            if class == ErrorClass::State {
                assert_eq!(entry.class, Some(ErrorClass::State), "{code}");
            }
            let info = ErrorInfo::from(error);
            assert_eq!(info.code, code);
            assert_eq!(info.stage, stage);
            assert!(!info.message.is_empty());
            produced.insert(code);
        }
        // docs/hosting.md names every code the host produces.
        let missing = undocumented("docs/hosting.md", produced.iter().map(String::as_str));
        assert!(missing.is_empty(), "docs/hosting.md lacks {missing:?}");
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
}

mod abi {
    use super::*;

    #[test]
    fn abi_codes_are_registered() {
        // The C ABI also reports a document that is not JSON as config decoding does.
        let (shared, own): (Vec<&str>, Vec<&str>) = fabric_ffi::ABI_ERROR_CODES
            .iter()
            .partition(|code| **code == codes::INVALID_JSON);
        registered("ABI", &own, None, Origin::Abi, CodeKind::Error);
        registered("ABI", &shared, None, Origin::Config, CodeKind::Error);
    }
}
