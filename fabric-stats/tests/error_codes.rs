//! `tests/fixtures/error-codes.json` lists every error and reason code of this crate; codes
//! are never renamed or reused, so the lists may only grow.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fabric_stats::{StatsError, UnavailableReason, UnsupportedReason};
use serde_json::Value;

fn listed(key: &str) -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/error-codes.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("error-codes.json has no list `{key}`"))
        .iter()
        .map(|code| code.as_str().unwrap().to_owned())
        .collect()
}

fn check(key: &str, declared: &[&str], produced: &[&str]) {
    let declared_set: BTreeSet<String> = declared.iter().map(|c| (*c).to_owned()).collect();
    assert_eq!(declared_set.len(), declared.len(), "{key}: duplicate codes");
    let produced_set: BTreeSet<String> = produced.iter().map(|c| (*c).to_owned()).collect();
    assert_eq!(
        produced_set, declared_set,
        "{key}: ALL_CODES differs from code()"
    );
    for code in declared {
        assert!(
            code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{key}: `{code}` is not snake_case"
        );
    }
    assert_eq!(
        listed(key),
        declared_set,
        "{key}: tests/fixtures/error-codes.json differs"
    );
}

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
fn error_codes_match_the_fixture() {
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
    check(
        "fabric_stats::StatsError",
        &StatsError::ALL_CODES,
        &produced,
    );
    for error in errors {
        let info = fabric_config::ErrorInfo::from(error.clone());
        assert_eq!(info.code, error.code());
        assert_eq!(info.metadata["reason"], error.reason_code());
    }
}

#[test]
fn reason_codes_match_the_fixture() {
    let unavailable = every_unavailable();
    let produced: Vec<&str> = unavailable.iter().map(UnavailableReason::code).collect();
    check(
        "fabric_stats::UnavailableReason",
        &UnavailableReason::ALL_CODES,
        &produced,
    );
    let unsupported = [
        UnsupportedReason::Platform,
        UnsupportedReason::NoProcFilesystem,
        UnsupportedReason::NoChildrenLists,
    ];
    let produced: Vec<&str> = unsupported.iter().map(UnsupportedReason::code).collect();
    check(
        "fabric_stats::UnsupportedReason",
        &UnsupportedReason::ALL_CODES,
        &produced,
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
    let info = fabric_config::ErrorInfo::from(error);
    assert!(info.message.contains("/proc/9/stat"));
    assert_eq!(info.metadata["path"], "/proc/9/stat");
    assert_eq!(info.metadata["pid"], 7);
}
