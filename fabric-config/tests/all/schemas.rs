//! The committed `schemas/` (written from `schema::all` by `cargo xtask codegen`; xtask's
//! drift test fails when they are stale) are draft 2020-12 schemas that compile, and the
//! agent schema accepts the config corpus.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fabric_config::schema;
use serde_json::Value;

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

/// The committed file of the schema called `name`, parsed.
fn committed(name: &str) -> Value {
    let path = schemas_dir().join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn schemas_are_draft_2020_12_with_unique_names() {
    let all = schema::all();
    let names: BTreeSet<&str> = all.iter().map(|(name, _)| *name).collect();
    assert_eq!(names.len(), all.len());
    for (name, _) in &all {
        let value = &committed(name);
        assert_eq!(
            value["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert!(
            jsonschema::validator_for(value).is_ok(),
            "{name} does not compile"
        );
        assert!(schema::get(name).is_some());
    }
    assert!(schema::get("sdk/nope").is_none());
}

#[test]
fn agent_schema_accepts_the_corpus_and_rejects_unknown_root_fields() {
    let agent = committed("sdk/agent");
    let validator = jsonschema::validator_for(&agent).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/configs");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        count += 1;
    }
    assert!(count > 0);
    let bogus =
        serde_json::json!({"metadata": {"name": "x"}, "harness": {"adapter_id": "a"}, "bogus": 1});
    assert!(!validator.is_valid(&bogus));
}
