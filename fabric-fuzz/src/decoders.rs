//! The pure decoders: config (decode, rules, canonical form, paths) and descriptors.

use std::path::Path;

use fabric_config::{CallOptions, ErrorInfo, FabricConfig, RunRequest};
use fabric_plan::PlanError;
use serde_json::{Value, json};

/// Config decoder and validator, plus the other documents a config travels with (call
/// options, run request). A config that validates must re-validate from its canonical JSON
/// to the same canonical JSON (what `fabric validate` prints can be fed back).
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(decoded) = FabricConfig::from_json_str(text) {
        let _ = decoded.validate_all();
    }
    match FabricConfig::parse(text) {
        Ok(config) => {
            let canonical = config.to_canonical_json();
            let again = FabricConfig::parse(&canonical);
            assert!(
                again.is_ok(),
                "canonical JSON of a valid config must validate: {canonical} -> {again:?}"
            );
            if let Ok(again) = again {
                assert_eq!(
                    again.to_canonical_json(),
                    canonical,
                    "canonical JSON is stable"
                );
            }
            let _ = config
                .resolve_paths(Path::new("/fuzz/base"))
                .to_canonical_json();
        }
        Err(error) => encode(ErrorInfo::from(error)),
    }
    if let Err(error) = CallOptions::from_json_str(text) {
        encode(ErrorInfo::from(error));
    }
    match RunRequest::from_json_str(text) {
        Ok(request) => {
            if let Err(error) = request.validate() {
                encode(ErrorInfo::from(error));
            }
        }
        Err(error) => encode(ErrorInfo::from(error)),
    }
}

/// Adapter and target descriptor decoders, fingerprints, and `inspect` of two configs (a
/// bare one and one asking for skills, MCP and telemetry) against a descriptor that
/// validates.
pub fn descriptor(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let target = match fabric_plan::parse_target_descriptor(
        value.clone(),
        Path::new("fuzz.fabric-target.json"),
    ) {
        Ok(target) => {
            let _ = fabric_plan::target_sha256(&target);
            Some(target)
        }
        Err(error) => {
            plan_error(error);
            None
        }
    };
    let adapter =
        match fabric_plan::parse_adapter_descriptor(value, Path::new("fuzz.fabric-adapter.json")) {
            Ok(adapter) => adapter,
            Err(error) => return plan_error(error),
        };
    let _ = fabric_plan::descriptor_sha256(&adapter);
    let _ = fabric_plan::combined_sha256(&adapter, target.as_ref());
    for config in configs(&adapter.adapter_id) {
        let Ok(config) = FabricConfig::from_value(config) else {
            continue;
        };
        for target in [None, target.as_ref()] {
            match fabric_plan::inspect(&config, Some(&adapter), target) {
                Ok(profile) => {
                    let _ = serde_json::to_string(&profile);
                }
                Err(error) => plan_error(error),
            }
        }
    }
}

/// The configs `inspect` runs against a decoded descriptor: a bare one and the capability
/// fixture (skills, MCP, Relay telemetry), both selecting the descriptor's adapter.
fn configs(adapter_id: &str) -> Vec<Value> {
    const RICH: &str = include_str!("../../tests/fixtures/configs/capability-config.json");
    let mut rich: Value = serde_json::from_str(RICH).unwrap_or(Value::Null);
    if let Some(harness) = rich.get_mut("harness") {
        harness["adapter_id"] = json!(adapter_id);
    }
    vec![
        json!({"metadata": {"name": "fuzz"}, "harness": {"adapter_id": adapter_id}}),
        rich,
    ]
}

fn plan_error(error: PlanError) {
    encode(ErrorInfo::from(error));
}

/// An error as a surface reports it: it must encode.
fn encode(info: ErrorInfo) {
    assert!(!info.code.is_empty(), "an error has a code");
    let encoded = serde_json::to_string(&info);
    assert!(encoded.is_ok(), "an ErrorInfo must encode");
}
