//! The committed `schemas/` match the schemas generated from the Rust types.
//! `FABRIC_BLESS=1 cargo test -p fabric-config --test schemas` rewrites them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fabric_config::schema;
use serde_json::Value;

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

fn committed_files(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for group in ["sdk", "adapter-contract"] {
        let Ok(entries) = std::fs::read_dir(dir.join(group)) else {
            continue;
        };
        for entry in entries {
            let file = entry.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(stem) = file.strip_suffix(".schema.json") {
                names.insert(format!("{group}/{stem}"));
            }
        }
    }
    names
}

#[test]
fn committed_schemas_match_generated() {
    let dir = schemas_dir();
    let bless = std::env::var_os("FABRIC_BLESS").is_some_and(|v| v == "1");
    let generated = schema::all();
    let mut drift = Vec::new();
    for (name, value) in &generated {
        let path = dir.join(format!("{name}.schema.json"));
        let text = schema::to_file_text(value);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            drift.push(name.to_string());
        }
    }
    let expected: BTreeSet<String> = generated.iter().map(|(name, _)| name.to_string()).collect();
    for stale in committed_files(&dir).difference(&expected) {
        if bless {
            std::fs::remove_file(dir.join(format!("{stale}.schema.json"))).unwrap();
        } else {
            drift.push(format!("{stale} (no longer generated)"));
        }
    }
    assert!(
        drift.is_empty(),
        "schemas drifted from the Rust types: {drift:?}; run FABRIC_BLESS=1 cargo test -p fabric-config --test schemas"
    );
}

#[test]
fn schemas_are_draft_2020_12_with_unique_names() {
    let all = schema::all();
    let names: BTreeSet<&str> = all.iter().map(|(name, _)| *name).collect();
    assert_eq!(names.len(), all.len());
    for (name, value) in &all {
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
    let agent = schema::get("sdk/agent").unwrap();
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
