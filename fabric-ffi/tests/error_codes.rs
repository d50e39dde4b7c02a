//! The C ABI layer's own error codes are stable, unique, snake_case, and listed in
//! `tests/fixtures/error-codes.json` (codes are never renamed or reused).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

#[test]
fn abi_error_codes_match_the_fixture() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/error-codes.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let listed: Vec<&str> = value["fabric_ffi::abi"]
        .as_array()
        .expect("error-codes.json has a `fabric_ffi::abi` list")
        .iter()
        .map(|code| code.as_str().unwrap())
        .collect();
    let codes = fabric_ffi::ABI_ERROR_CODES;
    let unique: BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(unique.len(), codes.len(), "duplicate codes");
    for code in codes {
        assert!(
            !code.is_empty()
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{code} is not snake_case"
        );
    }
    assert_eq!(
        listed, codes,
        "tests/fixtures/error-codes.json differs from ABI_ERROR_CODES"
    );
}
