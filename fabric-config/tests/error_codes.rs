//! `tests/fixtures/error-codes.json` lists every code of this crate's error enums; codes are
//! never renamed or reused, so the list may only grow (and this test forces it to be updated).

use std::collections::BTreeSet;
use std::path::Path;

use fabric_config::ConfigError;
use fabric_config::validate::ProvenanceIncompleteReason;
use serde_json::Value;

fn listed(key: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/error-codes.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("error-codes.json has no list `{key}`"))
        .iter()
        .map(|code| code.as_str().unwrap().to_owned())
        .collect()
}

fn check(key: &str, codes: Vec<&'static str>) {
    let unique: BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(unique.len(), codes.len(), "{key}: duplicate codes");
    for code in &codes {
        assert!(
            !code.is_empty()
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{key}: `{code}` is not snake_case"
        );
    }
    let listed = listed(key);
    let listed_set: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    assert_eq!(
        listed_set, unique,
        "{key}: tests/fixtures/error-codes.json differs from the code"
    );
}

#[test]
fn config_error_codes_match_the_fixture() {
    check("fabric_config::ConfigError", ConfigError::all_codes());
}

#[test]
fn provenance_reason_codes_match_the_fixture() {
    check(
        "fabric_config::ProvenanceIncompleteReason",
        ProvenanceIncompleteReason::ALL
            .iter()
            .map(|r| r.code())
            .collect(),
    );
}

#[test]
fn docs_list_every_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/config.md");
    let docs = std::fs::read_to_string(&path).unwrap();
    let mut codes = ConfigError::all_codes();
    codes.extend(ProvenanceIncompleteReason::ALL.iter().map(|r| r.code()));
    let missing: Vec<&str> = codes
        .into_iter()
        .filter(|code| !docs.contains(&format!("`{code}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/config.md does not document {missing:?}"
    );
}
