//! Descriptor loading, normalization and fingerprint parity with upstream 0.5.0.
//!
//! Oracles, obtained at test time from the upstream packages that `scripts/setup.sh`
//! installs (see `tests/upstream/mod.rs`): the 0.5.0 adapter catalog (16 adapters, 2 targets)
//! read from the installed `nemo-fabric-adapter-catalog`, and upstream's own normalization
//! and fingerprints (the native core's `inspect_adapter_metadata`, `_descriptor_sha256`) of
//! every catalog descriptor, of synthetic descriptors and of descriptor variants. Without the
//! venv these tests fail, unless `FABRIC_ALLOW_SKIPS=1` (tests/dependency.rs).

use std::path::Path;

use crate::support::upstream;
use fabric_config::canonical::canonical_json;
use fabric_plan::{
    PlanError, check_target_for_adapter, descriptor_sha256, load_adapter_descriptor,
    parse_adapter_descriptor, parse_target_descriptor, target_sha256,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn parse(value: Value) -> Result<fabric_config::descriptor::AdapterDescriptor, PlanError> {
    parse_adapter_descriptor(value, Path::new("test.fabric-adapter.json"))
}

#[test]
fn catalog_raw_hashes_match_canonical_writer() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let catalog = upstream.catalog();
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
    let Some(upstream) = upstream::require() else {
        return;
    };
    let catalog = upstream.catalog();
    let vectors = upstream.catalog_fingerprints();
    let adapters = catalog["adapters"].as_object().expect("adapters");
    assert_eq!(adapters.len(), 16);
    assert_eq!(vectors.len(), 16);
    for (id, entry) in adapters {
        let descriptor = parse(entry["descriptor"].clone()).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(&descriptor.adapter_id, id);
        let vector = &vectors[id];
        let normalized = serde_json::to_value(&descriptor).expect("serialize");
        assert_eq!(normalized, vector["descriptor"], "{id}: normalized form");
        assert_eq!(
            descriptor_sha256(&descriptor),
            vector["sha256"].as_str().expect("hash"),
            "{id}"
        );
        assert_eq!(
            sha(&canonical_json(&entry["descriptor"])),
            vector["raw_sha256"].as_str().expect("raw hash"),
            "{id}: raw hash"
        );
    }
}

/// Small descriptors that each exercise one normalization rule.
fn synthetic() -> Vec<(&'static str, Value)> {
    let python = minimal();
    vec![
        ("minimal_python", python.clone()),
        (
            "minimal_process",
            json!({
                "contract_version": "fabric.adapter/v1alpha2",
                "adapter_id": "t.x",
                "adapter_kind": "process",
                "runner": {"command": "node", "script": "dist/cli.js"}
            }),
        ),
        (
            "capabilities_metadata_kept",
            with(python.clone(), "/capabilities/metadata", json!({"a": 1})),
        ),
        (
            "unknown_capability_key_dropped",
            with(
                with(python.clone(), "/capabilities/health", json!(true)),
                "/capabilities/streaming",
                json!(true),
            ),
        ),
        (
            "unknown_top_level_kept",
            with(python.clone(), "/x_custom", json!(1)),
        ),
        (
            "null_schemas_dropped",
            with(
                with(python.clone(), "/settings_schema", Value::Null),
                "/model_schema",
                Value::Null,
            ),
        ),
        ("empty_collections_dropped", {
            let mut value = python.clone();
            for (pointer, empty) in [
                ("/config/accepts", json!([])),
                ("/config/generates", json!([])),
                ("/requirements/binaries", json!([])),
                ("/requirements/env", json!([])),
                ("/telemetry/providers", json!({})),
                ("/extension_schemas", json!({})),
            ] {
                value = with(value, pointer, empty);
            }
            value
        }),
        (
            "all_capabilities_and_requirements",
            json!({
                "contract_version": "fabric.adapter/v1alpha2",
                "adapter_id": "t.y",
                "adapter_kind": "process",
                "runner": {"command": "t-y"},
                "capabilities": {"streaming": true, "service": true, "updates": true, "cancellation": true},
                "requirements": {"binaries": ["t-y"], "env": ["T_Y_KEY"]},
                "config": {"accepts": ["models", "instructions.system", "skills"],
                           "system_instruction_modes": ["append", "replace"]}
            }),
        ),
    ]
}

#[test]
fn synthetic_normalization_vectors() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let vectors = synthetic();
    let requests: Vec<Value> = vectors
        .iter()
        .map(|(_, raw)| json!({"descriptor": raw}))
        .collect();
    let verdicts = upstream.normalize(&requests);
    assert!(vectors.len() >= 7);
    for ((name, raw), verdict) in vectors.iter().zip(verdicts) {
        assert_eq!(verdict["ok"], json!(true), "{name}: upstream {verdict}");
        let descriptor = parse(raw.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            serde_json::to_value(&descriptor).expect("serialize"),
            verdict["descriptor"],
            "{name}"
        );
        assert_eq!(
            descriptor_sha256(&descriptor),
            verdict["sha256"].as_str().expect("hash"),
            "{name}"
        );
        assert_eq!(
            sha(&canonical_json(raw)),
            verdict["raw_sha256"].as_str().expect("raw"),
            "{name}"
        );
    }
}

#[test]
fn both_catalog_targets_load_and_belong_to_nooa() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let catalog = upstream.catalog();
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
        assert!(!target.spec.entrypoint.kind.is_empty());
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

/// Variants of every catalog descriptor in the shapes older and newer upstream descriptors
/// take (the previous contract version, the legacy `harness` field, an unknown `accepts`
/// entry, an unknown capability, a missing contract version), each admitted or rejected by
/// upstream 0.5.0 at test time; ours must agree, name the offending JSON path and file, and
/// normalize what it accepts exactly as upstream does.
#[test]
fn descriptor_variants_are_accepted_and_rejected_like_upstream() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let catalog = upstream.catalog();
    // (variant, how it changes a descriptor, the JSON path our error names when rejected)
    type Mutation = fn(Value) -> Value;
    let mutations: [(&str, Mutation, &str); 6] = [
        ("as_released", |d| d, ""),
        (
            "previous_contract",
            |d| with(d, "/contract_version", json!("fabric.adapter/v1alpha1")),
            "contract_version",
        ),
        (
            "no_contract",
            |mut d| {
                d.as_object_mut().expect("o").remove("contract_version");
                d
            },
            "contract_version",
        ),
        (
            "legacy_harness",
            |d| with(d, "/harness", json!("x")),
            "harness",
        ),
        (
            "unknown_accepts_entry",
            |mut d| {
                let accepts = d
                    .pointer("/config/accepts")
                    .cloned()
                    .unwrap_or_else(|| json!([]));
                let mut accepts = accepts.as_array().expect("accepts").clone();
                accepts.push(json!("models.api"));
                d = with(d, "/config/accepts", Value::Array(accepts));
                d
            },
            "config.accepts",
        ),
        (
            "unknown_capability",
            |d| with(d, "/capabilities/health", json!(true)),
            "",
        ),
    ];
    let mut cases = Vec::new();
    for (id, entry) in catalog["adapters"].as_object().expect("adapters") {
        for (variant, mutate, path) in &mutations {
            cases.push((
                format!("{id}/{variant}"),
                id.clone(),
                mutate(entry["descriptor"].clone()),
                *path,
            ));
        }
    }
    let requests: Vec<Value> = cases
        .iter()
        .map(|(_, id, descriptor, _)| {
            json!({"adapter_id": id, "descriptor": descriptor,
                   "settings": upstream::satisfying_settings(descriptor)})
        })
        .collect();
    let verdicts = upstream.normalize(&requests);
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut accepted, mut rejected) = (0, 0);
    for ((name, _, descriptor, path_prefix), verdict) in cases.iter().zip(verdicts) {
        let file = dir.path().join("variant.fabric-adapter.json");
        std::fs::write(&file, descriptor.to_string()).expect("write");
        let result = load_adapter_descriptor(&file);
        if verdict["ok"] == json!(true) {
            let ours =
                result.unwrap_or_else(|e| panic!("{name}: upstream accepts, we reject: {e}"));
            assert_eq!(
                serde_json::to_value(&ours).expect("serialize"),
                verdict["descriptor"],
                "{name}"
            );
            assert_eq!(
                Some(descriptor_sha256(&ours).as_str()),
                verdict["sha256"].as_str(),
                "{name}"
            );
            accepted += 1;
        } else {
            let error = match result {
                Ok(_) => panic!("{name}: upstream rejects ({}), we accept", verdict["error"]),
                Err(error) => error,
            };
            assert!(
                !path_prefix.is_empty(),
                "{name}: upstream rejects {verdict}"
            );
            let info = fabric_config::ErrorInfo::from(&error);
            let named = error.path().unwrap_or_default();
            // Upstream reports the first serde failure; we check the contract version first.
            assert!(
                named.starts_with(path_prefix) || named == "contract_version",
                "{name}: {named} ({error})"
            );
            assert_eq!(error.file(), Some(file.as_path()), "{name}");
            assert_eq!(info.stage, fabric_config::Stage::Plan);
            rejected += 1;
        }
    }
    assert_eq!(accepted + rejected, 16 * mutations.len());
    assert_eq!((accepted, rejected), (32, 64));
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
