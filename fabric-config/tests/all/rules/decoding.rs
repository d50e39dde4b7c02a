//! Unknown fields, extension points, decode-path errors, `ErrorInfo`, collecting every
//! finding, and run-request decoding.

use fabric_config::{ConfigRule, ErrorInfo, FabricConfig};
use serde_json::json;

use super::cases::{accepted, base, rejected, with};

#[test]
fn unknown_fields_are_rejected_outside_extension_points() {
    for (patch, path) in [
        (json!({"bogus": 1}), "bogus"),
        (
            json!({"provenance": {"enabled": true, "mode": "x"}}),
            "provenance.mode",
        ),
        (
            json!({"system_stats": {"sampling": {"interval": 1}}}),
            "system_stats.sampling.interval",
        ),
    ] {
        rejected(patch, "unknown_field", path);
    }
    // Upstream 0.5.0 tolerates unknown keys in these Fabric-owned sections: accepted, kept,
    // and listed by `tolerated_unknown_keys` (validate and doctor warn).
    for (patch, path, suggestion) in [
        (
            json!({"environment": {"shell": "bash"}}),
            "environment.shell",
            None,
        ),
        (
            json!({"discovery": {"local_path": []}}),
            "discovery.local_path",
            Some("local_paths"),
        ),
        (
            json!({"telemetry": {"providers": {"relay": {"x": 1}}}}),
            "telemetry.providers.relay.x",
            None,
        ),
        (
            json!({"telemetry": {"provider": {}}}),
            "telemetry.provider",
            Some("providers"),
        ),
        (
            json!({"relay": {"projct": "x"}}),
            "relay.projct",
            Some("project"),
        ),
    ] {
        let config = FabricConfig::from_value(with(patch.clone()))
            .unwrap_or_else(|e| panic!("{patch} rejected: {e}"));
        let keys = config.tolerated_unknown_keys();
        assert_eq!(keys.len(), 1, "{patch}");
        assert_eq!(keys[0].path, path);
        assert_eq!(keys[0].suggestion.as_deref(), suggestion, "{patch}");
        let canonical = config.to_canonical_value();
        assert_eq!(
            FabricConfig::from_value(canonical.clone())
                .unwrap()
                .to_canonical_value(),
            canonical,
            "kept through the canonical form"
        );
    }
    rejected(
        json!({"telemetry": {"providers": {"datadog": {}}}}),
        "unknown_telemetry_provider",
        "telemetry.providers.datadog",
    );
    accepted(json!({"telemetry": {"providers": {"relay": {}, "native": {"config": {"k": 1}}}}}));
}

#[test]
fn extension_points_keep_unknown_keys() {
    let value = with(json!({
        "metadata": {"owner": "team-a"},
        "harness": {"x_harness": 1},
        "models": {"default": {"provider": "nvidia", "model": "m", "x_model": true}},
        "instructions": {"x_instructions": 1, "system": {"content": "c", "x_instruction": 2}},
        "runtime": {"x_runtime": "r"},
        "skills": {"paths": ["s"], "x_skills": []},
        "mcp": {"x_mcp": 1, "servers": {"gh": {"transport": "sse", "url": "https://x", "x_server": {"a": 1}}}},
        "tools": {"x_tools": 1, "definitions": {"t": {"kind": "function", "ref": "r", "x_def": 1}}},
        "relay": {"observability": {"x_relay": 1, "atof": {"enabled": true, "x_atof": 2}}}
    }));
    let config = FabricConfig::from_value(value.clone()).unwrap();
    config.validate().unwrap();
    assert_eq!(config.metadata.annotations["owner"], json!("team-a"));
    assert_eq!(
        config.harness.as_ref().unwrap().extensions["x_harness"],
        json!(1)
    );
    assert_eq!(config.models["default"].extensions["x_model"], json!(true));
    let mcp = config.mcp.as_ref().unwrap();
    assert_eq!(mcp.servers["gh"].extensions["x_server"], json!({"a": 1}));
    // Serialized back flat, exactly where they were.
    let canonical = config.to_canonical_value();
    assert_eq!(canonical["harness"]["x_harness"], json!(1));
    assert_eq!(
        canonical["instructions"]["system"]["x_instruction"],
        json!(2)
    );
    assert_eq!(canonical["tools"]["definitions"]["t"]["x_def"], json!(1));
    assert_eq!(
        canonical["relay"]["observability"]["atof"]["x_atof"],
        json!(2)
    );
    assert_eq!(canonical["skills"]["x_skills"], json!([]));
}

#[test]
fn decode_errors_name_the_path() {
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": "high"}}}),
        "invalid_type",
        "models.default.top_p",
    );
    rejected(
        json!({"runtime": {"max_turns": -1}}),
        "invalid_value",
        "runtime.max_turns",
    );
    rejected(
        json!({"relay": {"observability": {"atof": {"sinks": [{"type": "file"}, {"type": "stream"}]}}}}),
        "missing_field",
        "relay.observability.atof.sinks[1].url",
    );
    let error = FabricConfig::from_json_str("{\"metadata\": ").unwrap_err();
    assert_eq!(error.code(), "invalid_json");
    assert_eq!(error.path(), None);
    let error = FabricConfig::from_json_str(&format!("{} {{}}", base())).unwrap_err();
    assert_eq!(error.code(), "invalid_json");
}

#[test]
fn error_info_carries_stage_code_and_path() {
    let error =
        FabricConfig::parse(&with(json!({"runtime": {"max_turns": 0}})).to_string()).unwrap_err();
    assert_eq!(error.rule(), Some(ConfigRule::MaxTurnsOutOfRange));
    let info = ErrorInfo::from(error);
    assert_eq!(info.stage.as_str(), "config");
    assert_eq!(info.code, "max_turns_out_of_range");
    assert_eq!(info.path(), Some("runtime.max_turns"));
    assert!(
        info.message.contains("runtime.max_turns"),
        "{}",
        info.message
    );
}

#[test]
fn validate_all_collects_every_finding() {
    let config = FabricConfig::from_value(json!({
        "schema_version": "fabric.agent/v0",
        "metadata": {"name": " "},
        "runtime": {"max_turns": 0},
        "models": {"default": {"provider": "nvidia", "model": "m", "top_p": 2.0}}
    }))
    .unwrap();
    let codes: Vec<&str> = config.validate_all().iter().map(|f| f.code()).collect();
    assert_eq!(
        codes,
        [
            "unknown_schema_version",
            "blank_metadata_name",
            "missing_adapter_selector",
            "top_p_out_of_range",
            "max_turns_out_of_range"
        ]
    );
}

#[test]
fn run_request_decoding_and_request_id() {
    use fabric_config::RunRequest;
    let request = RunRequest::from_value(json!({
        "input": {"task": "fix"}, "request_id": "trial-42", "context": {"k": 1},
        "relay_session_root": "not-a-uuid", "x_ext": true
    }))
    .unwrap();
    request.validate().unwrap();
    // Unknown top-level keys are dropped, as upstream 0.5.0 does (they never reach the
    // adapter); adapter extensions travel in `overrides`.
    assert_eq!(
        serde_json::to_value(&request).unwrap().get("x_ext"),
        None,
        "unknown keys are dropped"
    );
    let error = RunRequest::from_value(json!({"overrides": 5})).unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        ("invalid_type", Some("overrides"))
    );
    assert_eq!(RunRequest::from_json_str("{}").unwrap().input, json!(""));
    let blank = RunRequest::from_value(json!({"input": "hi", "request_id": " "})).unwrap();
    let error = blank.validate().unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        ("blank_request_id", Some("request_id"))
    );
    let error = RunRequest::from_value(json!({"context": ["not", "an", "object"]})).unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        ("invalid_type", Some("context"))
    );
    let error = RunRequest::from_json_str("{\"input\": ").unwrap_err();
    assert_eq!(error.code(), "invalid_json");
}
