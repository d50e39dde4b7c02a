//! The corpus of spec example configs (`tests/fixtures/configs/*.json`): each validates,
//! round-trips losslessly through canonical JSON, and conforms to upstream's agent schema.
//!
//! Upstream (nemo-fabric 0.5.0, located by `support::upstream`: `FABRIC_TEST_PYTHON` or the
//! `.venv` of `scripts/setup.sh`) provides the schema and the SDK checks at test time; without
//! it those tests fail, unless `FABRIC_ALLOW_SKIPS=1` (tests/dependency.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::upstream;
use fabric_config::FabricConfig;
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate lives in the workspace root")
        .to_path_buf()
}

fn corpus() -> Vec<(String, Value)> {
    let dir = repo_root().join("tests/fixtures/configs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "corpus too small: {}", files.len());
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

/// True when everything `input` states is present in `output`. Empty objects/lists in the
/// input may be absent from the output (canonical form drops them); nothing else may.
fn preserved(input: &Value, output: Option<&Value>, path: &str) -> Result<(), String> {
    match input {
        Value::Object(map) if map.is_empty() && output.is_none() => Ok(()),
        Value::Array(items) if items.is_empty() && output.is_none() => Ok(()),
        Value::Object(map) => {
            let Some(Value::Object(out)) = output else {
                return Err(format!("{path}: object lost"));
            };
            for (key, item) in map {
                preserved(item, out.get(key), &format!("{path}.{key}"))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            let Some(Value::Array(out)) = output else {
                return Err(format!("{path}: list lost"));
            };
            if items.len() != out.len() {
                return Err(format!("{path}: list length changed"));
            }
            for (index, item) in items.iter().enumerate() {
                preserved(item, out.get(index), &format!("{path}[{index}]"))?;
            }
            Ok(())
        }
        scalar => match output {
            Some(out) if out == scalar => Ok(()),
            _ => Err(format!("{path}: value changed or lost")),
        },
    }
}

#[test]
fn every_corpus_config_validates() {
    for (name, value) in corpus() {
        let config = FabricConfig::from_value(value)
            .unwrap_or_else(|e| panic!("{name}: decode failed: {e}"));
        if let Err(error) = config.validate() {
            panic!("{name}: {error}");
        }
    }
}

#[test]
fn round_trip_is_lossless_and_canonical_is_a_fixpoint() {
    for (name, value) in corpus() {
        let config = FabricConfig::from_value(value.clone()).unwrap();
        let canonical = config.to_canonical_value();
        preserved(&value, Some(&canonical), "")
            .unwrap_or_else(|e| panic!("{name}: round trip lost data at {e}"));
        // Always written.
        assert_eq!(
            canonical["schema_version"], "fabric.agent/v1alpha1",
            "{name}"
        );
        assert!(canonical["runtime"].is_object(), "{name}");
        // Decoding the canonical form gives the same canonical form, and the same struct.
        let again = FabricConfig::from_value(canonical.clone()).unwrap();
        assert_eq!(again.to_canonical_value(), canonical, "{name}");
        let text = config.to_canonical_json();
        let from_text = FabricConfig::from_json_str(&text).unwrap();
        assert_eq!(from_text.to_canonical_json(), text, "{name}");
        assert_eq!(from_text, again, "{name}");
    }
}

#[test]
fn canonical_form_keeps_meaningful_nulls_and_empty_lists() {
    let corpus = corpus();
    let get = |file: &str| {
        let value = corpus
            .iter()
            .find(|(name, _)| name == file)
            .unwrap()
            .1
            .clone();
        FabricConfig::from_value(value)
            .unwrap()
            .to_canonical_value()
    };
    assert_eq!(
        get("system-stats-disabled.json")["system_stats"],
        Value::Null
    );
    assert!(
        get("system-stats-disabled.json")
            .as_object()
            .unwrap()
            .contains_key("system_stats")
    );
    assert!(
        !get("first-example.json")
            .as_object()
            .unwrap()
            .contains_key("system_stats")
    );
    assert_eq!(
        get("mcp-empty-allowlist.json")["mcp"]["servers"]["github"]["allowed_tools"],
        serde_json::json!([])
    );
    assert_eq!(
        get("tool-definitions.json")["tools"]["enabled"],
        serde_json::json!([])
    );
    // Fabric-owned defaults are written (upstream's Rust schema requires them).
    let first = get("env-forwarding.json");
    assert_eq!(first["environment"]["provider"], "local");
    assert_eq!(first["environment"]["ownership"], "caller_owned");
    assert_eq!(first["environment"]["control_location"], "in_env_control");
    assert_eq!(
        get("mcp-oauth2.json")["mcp"]["servers"]["github"]["exposure"],
        "harness_native"
    );
    // Absent = default (all groups at endpoints), null = disabled.
    let default = FabricConfig::from_value(corpus[0].1.clone()).unwrap();
    assert!(default.system_stats.effective().is_some());
}

fn strip_fields_upstream_lacks(value: &mut Value) {
    // Upstream 0.5.0's agent schema predates these spec fields. Its root and most sections
    // allow additional properties anyway, but strip them so the check is only about the
    // fields upstream models: `system_stats`, `provenance`, `environment.env_names`,
    // `relay.plugins`, `relay.observability.opentelemetry.file_sinks`.
    let Value::Object(root) = value else { return };
    root.remove("system_stats");
    root.remove("provenance");
    if let Some(Value::Object(environment)) = root.get_mut("environment") {
        environment.remove("env_names");
    }
    if let Some(Value::Object(relay)) = root.get_mut("relay") {
        relay.remove("plugins");
        if let Some(Value::Object(otel)) = relay
            .get_mut("observability")
            .and_then(|o| o.get_mut("opentelemetry"))
        {
            otel.remove("file_sinks");
        }
    }
}

#[test]
fn serialized_corpus_conforms_to_upstream_agent_schema() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    // The JSON Schema of upstream's `FabricConfig` model, generated by the installed SDK.
    let schema = upstream.agent_schema();
    let validator = jsonschema::validator_for(&schema).expect("upstream schema compiles");
    // The oracle is live: upstream requires `metadata` and knows the MCP transports.
    let minimal = serde_json::json!({
        "schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "x"}, "runtime": {}
    });
    assert!(validator.is_valid(&minimal));
    assert!(!validator.is_valid(&serde_json::json!({"runtime": {}})));
    let unknown_transport = serde_json::json!({
        "schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "x"}, "runtime": {},
        "mcp": {"servers": {"gh": {"transport": "carrier-pigeon", "url": "x"}}}
    });
    assert!(!validator.is_valid(&unknown_transport));
    for (name, value) in corpus() {
        let mut canonical = FabricConfig::from_value(value)
            .unwrap()
            .to_canonical_value();
        strip_fields_upstream_lacks(&mut canonical);
        let errors: Vec<String> = validator
            .iter_errors(&canonical)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

/// Runs `script` under `python` with the path of a file holding `documents` (a JSON array)
/// as its first argument.
fn run_upstream(python: &Path, script: &str, documents: &impl serde::Serialize) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("configs.json");
    std::fs::write(&input, serde_json::to_vec(documents).unwrap()).unwrap();
    Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&input)
        .output()
        .expect("run the upstream interpreter")
}

/// The upstream Python SDK (0.5.0) accepts our canonical output.
#[test]
fn upstream_python_sdk_accepts_canonical_output() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let python = upstream.python();
    // Spec-newer than 0.5.0: OTel file sinks without an endpoint (0.5.0 requires one).
    let skip = ["relay-otel-file-sinks.json"];
    let documents: Vec<Value> = corpus()
        .into_iter()
        .filter(|(name, _)| !skip.contains(&name.as_str()))
        .map(|(_, value)| {
            FabricConfig::from_value(value)
                .unwrap()
                .to_canonical_value()
        })
        .collect();
    let script = "import json,sys\nfrom nemo_fabric import FabricConfig\n\
                  docs=json.load(open(sys.argv[1]))\n\
                  for d in docs: FabricConfig.from_mapping(d)\nprint(len(docs))\n";
    let output = run_upstream(python, script, &documents);
    assert!(
        output.status.success(),
        "upstream rejected our canonical output: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        documents.len().to_string()
    );
}

/// Upstream's own serialization (`FabricConfig.to_mapping()`, which writes many nested
/// defaults) is accepted unchanged, validates, and keeps everything our canonical form says.
#[test]
fn upstream_python_serialization_is_accepted() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let python = upstream.python();
    // 0.5.0 predates OTel file sinks and drops an explicit `system_stats: null` (it only
    // knows the key as an extra); the spec wins for both.
    let skip = ["relay-otel-file-sinks.json", "system-stats-disabled.json"];
    let corpus: Vec<(String, Value)> = corpus()
        .into_iter()
        .filter(|(name, _)| !skip.contains(&name.as_str()))
        .collect();
    let documents: Vec<&Value> = corpus.iter().map(|(_, value)| value).collect();
    let script = "import json,sys\nfrom nemo_fabric import FabricConfig\n\
                  docs=json.load(open(sys.argv[1]))\n\
                  print(json.dumps([FabricConfig.from_mapping(d).to_mapping() for d in docs]))\n";
    let output = run_upstream(python, script, &documents);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mapped: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(mapped.len(), corpus.len());
    for ((name, original), upstream) in corpus.iter().zip(mapped) {
        let ours = FabricConfig::from_value(original.clone())
            .unwrap()
            .to_canonical_value();
        let theirs = FabricConfig::from_value(upstream.clone())
            .unwrap_or_else(|e| panic!("{name}: upstream mapping rejected: {e}\n{upstream}"));
        theirs
            .validate()
            .unwrap_or_else(|e| panic!("{name}: upstream mapping invalid: {e}"));
        preserved(&ours, Some(&theirs.to_canonical_value()), "")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
