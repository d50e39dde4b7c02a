//! Descriptor loading, normalization and fingerprint parity with upstream 0.5.0.
//!
//! Oracles (read-only, from `../shared/conformance`): the 0.5.0 adapter catalog (16 adapters,
//! 2 targets), `descriptor-fingerprints-0.5.0.json` (normalized descriptors and hashes computed
//! by the 0.5.0 native core), and the saved upstream repository descriptors.

use std::path::{Path, PathBuf};

use fabric_config::canonical::canonical_json;
use fabric_plan::{
    PlanError, check_target_for_adapter, descriptor_sha256, load_adapter_descriptor,
    load_target_descriptor, parse_adapter_descriptor, parse_target_descriptor, target_sha256,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("oracle JSON")
}

fn catalog() -> Value {
    read(&conformance().join("adapter-catalog-0.5.0.json"))
}

fn fingerprints() -> Value {
    read(&conformance().join("descriptor-fingerprints-0.5.0.json"))
}

fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn parse(value: Value) -> Result<fabric_config::descriptor::AdapterDescriptor, PlanError> {
    parse_adapter_descriptor(value, Path::new("test.fabric-adapter.json"))
}

#[test]
fn catalog_raw_hashes_match_canonical_writer() {
    let catalog = catalog();
    let mut count = 0;
    for section in ["adapters", "targets"] {
        for (id, entry) in catalog[section].as_object().expect("section") {
            let expected = entry["sha256"].as_str().expect("sha256");
            assert_eq!(sha(&canonical_json(&entry["descriptor"])), expected, "{id}");
            count += 1;
        }
    }
    assert_eq!(count, 18);
}

#[test]
fn normalized_fingerprints_match_upstream_for_all_16_catalog_adapters() {
    let catalog = catalog();
    let vectors = fingerprints();
    let adapters = catalog["adapters"].as_object().expect("adapters");
    assert_eq!(adapters.len(), 16);
    for (id, entry) in adapters {
        let descriptor = parse(entry["descriptor"].clone()).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(&descriptor.adapter_id, id);
        let vector = &vectors["adapters"][id];
        let normalized = serde_json::to_value(&descriptor).expect("serialize");
        assert_eq!(
            normalized, vector["normalized_descriptor"],
            "{id}: normalized form"
        );
        assert_eq!(
            descriptor_sha256(&descriptor),
            vector["normalized_sha256"].as_str().expect("hash"),
            "{id}"
        );
    }
}

#[test]
fn synthetic_normalization_vectors() {
    let vectors = fingerprints();
    let synthetic = vectors["synthetic"].as_object().expect("synthetic");
    assert!(synthetic.len() >= 7);
    for (name, vector) in synthetic {
        let descriptor = parse(vector["raw"].clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            serde_json::to_value(&descriptor).expect("serialize"),
            vector["normalized_descriptor"],
            "{name}"
        );
        assert_eq!(
            descriptor_sha256(&descriptor),
            vector["normalized_sha256"].as_str().expect("hash"),
            "{name}"
        );
        assert_eq!(
            sha(&canonical_json(&vector["raw"])),
            vector["raw_sha256"].as_str().expect("raw"),
            "{name}"
        );
    }
}

#[test]
fn both_catalog_targets_load_and_belong_to_nooa() {
    let catalog = catalog();
    let nooa =
        parse(catalog["adapters"]["nvidia.fabric.nooa"]["descriptor"].clone()).expect("nooa");
    let claude =
        parse(catalog["adapters"]["nvidia.fabric.claude"]["descriptor"].clone()).expect("claude");
    let targets = catalog["targets"].as_object().expect("targets");
    assert_eq!(targets.len(), 2);
    for (id, entry) in targets {
        let target = parse_target_descriptor(
            entry["descriptor"].clone(),
            Path::new("t.fabric-target.json"),
        )
        .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(&target.id, id);
        // Target normalization keeps the catalog form, so the catalog hash is the target hash.
        assert_eq!(
            target_sha256(&target),
            entry["sha256"].as_str().expect("sha"),
            "{id}"
        );
        check_target_for_adapter(&target, &nooa).expect("nooa declares workflow targets");
        let error = check_target_for_adapter(&target, &claude).expect_err("claude");
        assert_eq!(error.code(), "target_mismatch");
    }
}

#[test]
fn upstream_repository_descriptors_accept_and_reject_like_upstream() {
    // Acceptance observed with nemo-fabric 0.5.0 `inspect_adapter_metadata` over each file.
    let rejected = [
        ("adapters__claude__fabric-adapter.json", "config.accepts"),
        (
            "adapters__codex-cli__fabric-adapter.json",
            "contract_version",
        ),
        ("adapters__codex__fabric-adapter.json", "config.accepts"),
        (
            "adapters__deepagents__fabric-adapter.json",
            "config.accepts",
        ),
        (
            "adapters__hermes-cli__fabric-adapter.json",
            "contract_version",
        ),
        (
            "adapters__hermes-sdk__fabric-adapter.json",
            "config.accepts",
        ),
        ("adapters__hermes__fabric-adapter.json", "config.accepts"),
        (
            "adapters__langchain-react__fabric-adapter.json",
            "config.accepts",
        ),
        (
            "adapters__langgraph__fabric-adapter.json",
            "contract_version",
        ),
        ("adapters__mini-swe-agent__fabric-adapter.json", "harness"),
        (
            "adapters__python__remote-agent__remote-agent.fabric-adapter.json",
            "config.accepts",
        ),
        (
            "tests__fixtures__hermes-shim-agent__adapters__hermes-shim__fabric-adapter.json",
            "config.accepts",
        ),
    ];
    let dir = conformance().join("upstream-descriptors");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_owned();
        if name.ends_with(".fabric-target.json") {
            let target = load_target_descriptor(&path).expect("echo target");
            assert!(!target.spec.entrypoint.kind.is_empty());
            checked += 1;
            continue;
        }
        let result = load_adapter_descriptor(&path);
        match rejected.iter().find(|(file, _)| *file == name) {
            Some((_, path_prefix)) => {
                let error = result.expect_err(&name);
                let info = fabric_config::ErrorInfo::from(&error);
                let named = error.path().unwrap_or_default();
                // Upstream reports the first serde failure; we check the contract version first.
                assert!(
                    named.starts_with(path_prefix) || named == "contract_version",
                    "{name}: {named} ({error})"
                );
                assert_eq!(error.file(), Some(path.as_path()), "{name}");
                assert_eq!(info.stage, fabric_config::Stage::Plan);
            }
            None => {
                result.unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 32);
}

fn minimal() -> Value {
    json!({
        "contract_version": "fabric.adapter/v1alpha2",
        "adapter_id": "t.x",
        "adapter_kind": "python",
        "runner": {"module": "m"}
    })
}

fn with(mut base: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let mut target = &mut base;
    for segment in parent.split('/').skip(1) {
        target = target
            .as_object_mut()
            .expect("object")
            .entry(segment.to_owned())
            .or_insert_with(|| json!({}));
    }
    target
        .as_object_mut()
        .expect("object")
        .insert(key.to_owned(), value);
    base
}

fn rejects(value: Value, code: &str, path: &str) {
    let error = parse(value).expect_err(path);
    assert_eq!(error.code(), code, "{error}");
    assert!(
        error.path().is_some_and(|p| p.starts_with(path)),
        "{path}: {error}"
    );
    assert!(
        error.to_string().contains("test.fabric-adapter.json"),
        "{error}"
    );
}

#[test]
fn structural_rules_name_the_json_path() {
    parse(minimal()).expect("minimal");
    rejects(
        with(
            minimal(),
            "/contract_version",
            json!("fabric.adapter/v1alpha1"),
        ),
        "descriptor_unsupported_contract",
        "contract_version",
    );
    rejects(
        with(minimal(), "/contract_version", json!("fabric.adapter/v9")),
        "descriptor_unsupported_contract",
        "contract_version",
    );
    let mut missing = minimal();
    missing
        .as_object_mut()
        .expect("o")
        .remove("contract_version");
    rejects(
        missing,
        "descriptor_unsupported_contract",
        "contract_version",
    );
    rejects(
        with(minimal(), "/harness", json!("x")),
        "descriptor_invalid",
        "harness",
    );
    rejects(
        with(minimal(), "/adapter_id", json!("  ")),
        "descriptor_invalid",
        "adapter_id",
    );
    rejects(
        with(minimal(), "/adapter_kind", json!("shell")),
        "descriptor_invalid",
        "adapter_kind",
    );
    rejects(
        with(
            minimal(),
            "/config/accepts",
            json!(["models", "models.api"]),
        ),
        "descriptor_invalid",
        "config.accepts[1]",
    );
    rejects(
        with(minimal(), "/capabilities/streaming", json!("yes")),
        "descriptor_invalid",
        "capabilities.streaming",
    );
    rejects(
        with(minimal(), "/requirements/binaries", json!(["node", 3])),
        "descriptor_invalid",
        "requirements.binaries[1]",
    );
    rejects(
        with(minimal(), "/telemetry/providers/otel", json!({})),
        "descriptor_invalid",
        "telemetry.providers.otel",
    );
    rejects(
        with(minimal(), "/extension_schemas/agent", json!({})),
        "descriptor_invalid",
        "extension_schemas.agent",
    );
    rejects(
        with(minimal(), "/target_types", json!(["service"])),
        "descriptor_invalid",
        "target_types[0]",
    );
}

#[test]
fn system_instruction_mode_rules() {
    let accepts = with(minimal(), "/config/accepts", json!(["instructions.system"]));
    parse(with(
        accepts.clone(),
        "/config/system_instruction_modes",
        json!(["replace", "append"]),
    ))
    .expect("both");
    parse(accepts.clone()).expect("absent means replace");
    rejects(
        with(
            accepts.clone(),
            "/config/system_instruction_modes",
            json!([]),
        ),
        "descriptor_invalid",
        "config.system_instruction_modes",
    );
    rejects(
        with(
            accepts.clone(),
            "/config/system_instruction_modes",
            json!(["append", "append"]),
        ),
        "descriptor_invalid",
        "config.system_instruction_modes[1]",
    );
    rejects(
        with(
            accepts,
            "/config/system_instruction_modes",
            json!(["prepend"]),
        ),
        "descriptor_invalid",
        "config.system_instruction_modes[0]",
    );
    rejects(
        with(
            minimal(),
            "/config/system_instruction_modes",
            json!(["replace"]),
        ),
        "descriptor_invalid",
        "config.system_instruction_modes",
    );
}

#[test]
fn embedded_schemas_must_be_2020_12_with_local_refs() {
    for key in ["settings_schema", "model_schema", "tool_definition_schema"] {
        let pointer = format!("/{key}");
        parse(with(minimal(), &pointer, json!({"type": "object", "$defs": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}))).expect(key);
        rejects(
            with(minimal(), &pointer, json!({"type": "objekt"})),
            "descriptor_invalid_schema",
            key,
        );
        rejects(
            with(
                minimal(),
                &pointer,
                json!({"properties": {"x": {"$ref": "https://example.com/s.json"}}}),
            ),
            "descriptor_invalid_schema",
            &format!("{key}.properties.x.$ref"),
        );
        rejects(
            with(minimal(), &pointer, json!(true)),
            "descriptor_invalid",
            key,
        );
    }
    rejects(
        with(
            minimal(),
            "/extension_schemas/model",
            json!({"properties": {"a": {"$ref": "defs.json"}}}),
        ),
        "descriptor_invalid_schema",
        "extension_schemas.model.properties.a.$ref",
    );
    rejects(
        with(minimal(), "/config/schema", json!({"required": "x"})),
        "descriptor_invalid_schema",
        "config.schema.required",
    );
    rejects(
        with(
            minimal(),
            "/settings_schema",
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        ),
        "descriptor_invalid_schema",
        "settings_schema.$schema",
    );
    // Null schemas are absent.
    let descriptor = parse(with(minimal(), "/model_schema", Value::Null)).expect("null");
    assert!(descriptor.model_schema.is_none());
}

#[test]
fn target_rules() {
    let target = json!({
        "contract_version": "fabric.adapter/v1alpha2",
        "id": "t.target",
        "adapter_id": "t.x",
        "type": "workflow",
        "spec": {"entrypoint": {"kind": "factory", "ref": "m:f"}, "settings_schema": {"type": "object"}}
    });
    let file = Path::new("x.fabric-target.json");
    parse_target_descriptor(target.clone(), file).expect("target");
    for (pointer, value, path) in [
        (
            "/contract_version",
            json!("fabric.adapter/v1alpha1"),
            "contract_version",
        ),
        ("/type", json!("service"), "type"),
        ("/id", json!(""), "id"),
        ("/spec/entrypoint/ref", json!(" "), "spec.entrypoint.ref"),
        (
            "/spec/settings_schema",
            json!({"type": 5}),
            "spec.settings_schema.type",
        ),
    ] {
        let error =
            parse_target_descriptor(with(target.clone(), pointer, value), file).expect_err(path);
        assert_eq!(error.path(), Some(path), "{error}");
    }
    let adapter = parse(with(minimal(), "/target_types", json!(["workflow"]))).expect("adapter");
    let parsed = parse_target_descriptor(target.clone(), file).expect("target");
    check_target_for_adapter(&parsed, &adapter).expect("tied");
    let without_types = parse(minimal()).expect("adapter");
    assert_eq!(
        check_target_for_adapter(&parsed, &without_types)
            .expect_err("types")
            .path(),
        Some("type")
    );
    let other = parse_target_descriptor(with(target, "/adapter_id", json!("t.other")), file)
        .expect("target");
    assert_eq!(
        check_target_for_adapter(&other, &adapter)
            .expect_err("id")
            .path(),
        Some("adapter_id")
    );
}
