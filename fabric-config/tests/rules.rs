//! One accepted and one rejected case per config rule, plus decode-path and secret tests.

use fabric_config::{ConfigError, ConfigRule, ErrorInfo, FabricConfig};
use serde_json::{Value, json};

fn base() -> Value {
    json!({
        "metadata": {"name": "rules"},
        "harness": {"adapter_id": "nvidia.fabric.hermes"}
    })
}

/// Deep-merges `patch` into `target` (objects merge, everything else replaces).
fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                match target.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value)
                    }
                    _ => {
                        target.insert(key, value);
                    }
                }
            }
        }
        (target, patch) => *target = patch,
    }
}

fn with(patch: Value) -> Value {
    let mut value = base();
    merge(&mut value, patch);
    value
}

/// Every (code, path) found for a config value: the decode error, or all rule findings.
fn problems(value: Value) -> Vec<(String, String)> {
    match FabricConfig::from_value(value) {
        Err(error) => vec![(
            error.code().to_owned(),
            error.path().unwrap_or_default().to_owned(),
        )],
        Ok(config) => config
            .validate_all()
            .into_iter()
            .map(|finding| (finding.code().to_owned(), finding.path))
            .collect(),
    }
}

fn accepted(patch: Value) {
    let value = with(patch);
    let found = problems(value.clone());
    assert!(
        found.is_empty(),
        "expected {value} to be accepted, got {found:?}"
    );
}

fn rejected(patch: Value, code: &str, path: &str) {
    let value = with(patch);
    let found = problems(value.clone());
    assert!(
        found.iter().any(|(c, p)| c == code && p == path),
        "expected {value} to be rejected with {code} at {path}, got {found:?}"
    );
}

#[test]
fn schema_version() {
    accepted(json!({"schema_version": "fabric.agent/v1alpha1"}));
    rejected(
        json!({"schema_version": "fabric.agent/v2"}),
        "unknown_schema_version",
        "schema_version",
    );
}

#[test]
fn metadata_name() {
    accepted(json!({"metadata": {"name": "x", "owner": "team-a"}}));
    rejected(
        json!({"metadata": {"name": "  "}}),
        "blank_metadata_name",
        "metadata.name",
    );
    assert_eq!(
        problems(json!({"metadata": {"description": "d"}, "harness": {"adapter_id": "a"}})),
        vec![("missing_field".to_owned(), "metadata.name".to_owned())]
    );
}

#[test]
fn selector() {
    let mut workflow_only = json!({"metadata": {"name": "w"}, "workflow": {"target_id": "echo"}});
    assert!(problems(workflow_only.clone()).is_empty());
    workflow_only["workflow"]["target_id"] = json!(" ");
    assert_eq!(
        problems(workflow_only),
        vec![(
            "blank_target_id".to_owned(),
            "workflow.target_id".to_owned()
        )]
    );
    assert_eq!(
        problems(json!({"metadata": {"name": "w"}})),
        vec![(
            "missing_adapter_selector".to_owned(),
            "harness.adapter_id".to_owned()
        )]
    );
    rejected(
        json!({"harness": {"adapter_id": ""}}),
        "blank_adapter_id",
        "harness.adapter_id",
    );
}

#[test]
fn discovery_and_skill_paths() {
    accepted(json!({"discovery": {"local_paths": ["./adapters"]}, "skills": {"paths": ["s"]}}));
    rejected(
        json!({"discovery": {"local_paths": ["a", " "]}}),
        "blank_discovery_path",
        "discovery.local_paths[1]",
    );
    rejected(
        json!({"skills": {"paths": [""]}}),
        "blank_skill_path",
        "skills.paths[0]",
    );
}

#[test]
fn env_and_env_names() {
    accepted(
        json!({"environment": {"env": {"LOG_LEVEL": "debug"}, "env_names": ["GITHUB_TOKEN", "_X1"]}}),
    );
    rejected(
        json!({"environment": {"env": {"GITHUB_TOKEN": "x"}, "env_names": ["A", "GITHUB_TOKEN"]}}),
        "env_names_conflict",
        "environment.env_names[1]",
    );
    rejected(
        json!({"environment": {"env_names": ["1BAD"]}}),
        "invalid_env_name",
        "environment.env_names[0]",
    );
    rejected(
        json!({"environment": {"env_names": ["BAD-NAME"]}}),
        "invalid_env_name",
        "environment.env_names[0]",
    );
    rejected(
        json!({"environment": {"env": {" ": "x"}}}),
        "blank_env_name",
        "environment.env[\" \"]",
    );
}

#[test]
fn env_keys_follow_the_env_name_rule() {
    // A key containing `=` would otherwise override a variable the core sets
    // (`FABRIC_HOME=/tmp/x` + value becomes a second FABRIC_HOME entry).
    rejected(
        json!({"environment": {"env": {"FABRIC_HOME=/tmp/x": "y"}}}),
        "invalid_env_name",
        "environment.env.FABRIC_HOME=/tmp/x",
    );
    rejected(
        json!({"environment": {"env": {"LD_PRELOAD\0": "y"}}}),
        "invalid_env_name",
        "environment.env[\"LD_PRELOAD\\u0000\"]",
    );
    accepted(json!({"environment": {"env": {"_A1": "x", "FABRIC_LOG": "1"}}}));
}

#[test]
fn env_names_reserved_by_the_core() {
    for name in [
        "FABRIC_HOME",
        "FABRIC_RUNTIME_ID",
        "FABRIC_ARTIFACTS",
        "FABRIC_RELAY_ENABLED",
        "FABRIC_RELAY_CONFIG_PATH",
    ] {
        rejected(
            json!({"environment": {"env": {name: "x"}}}),
            "env_name_reserved",
            &format!("environment.env.{name}"),
        );
        rejected(
            json!({"environment": {"env_names": ["A", name]}}),
            "env_name_reserved",
            "environment.env_names[1]",
        );
    }
}

#[test]
fn urls_are_parsed() {
    let model = |url: &str| json!({"models": {"default": {"provider": "openai", "model": "m", "base_url": url}}});
    accepted(model("http://127.0.0.1:9/v1"));
    accepted(model("https://integrate.api.nvidia.com/v1"));
    for bad in [
        "not a url",
        "integrate.api.nvidia.com/v1",
        "https://x/v1\r\nX-Injected: 1",
        "https://x/\tv1",
        "mailto:someone",
    ] {
        rejected(model(bad), "invalid_url", "models.default.base_url");
    }
    let server = |transport: &str, url: &str| json!({"mcp": {"servers": {"web": {"transport": transport, "url": url}}}});
    accepted(server("sse", "https://mcp.example.com/sse"));
    accepted(server("streamable-http", "http://localhost:8080/mcp"));
    // A stdio server's url is the command to run.
    accepted(server("stdio", "gh-mcp"));
    // Placeholders are expanded by the adapter (upstream's examples use them).
    accepted(server("streamable-http", "${GITHUB_MCP_URL}"));
    accepted(model("https://${NIM_HOST}/v1"));
    rejected(
        server("streamable-http", "${GITHUB_MCP_URL}\r\n"),
        "invalid_url",
        "mcp.servers.web.url",
    );
    rejected(
        server("streamable-http", "mcp.example.com/mcp"),
        "invalid_url",
        "mcp.servers.web.url",
    );
    rejected(
        server("sse", "https://mcp.example.com/\nsse"),
        "invalid_url",
        "mcp.servers.web.url",
    );
}

#[test]
fn models() {
    accepted(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": 0.0, "temperature": 0.2, "max_tokens": 1}}}),
    );
    accepted(json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": 1.0}}}));
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": 1.5}}}),
        "top_p_out_of_range",
        "models.default.top_p",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": -0.1}}}),
        "top_p_out_of_range",
        "models.default.top_p",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "max_tokens": 0}}}),
        "max_tokens_zero",
        "models.default.max_tokens",
    );
    rejected(
        json!({"models": {"": {"provider": "nvidia", "model": "m"}}}),
        "blank_model_role",
        "models[\"\"]",
    );
    rejected(
        json!({"models": {"default": {"provider": "NVIDIA", "model": "m"}}}),
        "invalid_model_provider",
        "models.default.provider",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": " "}}}),
        "blank_model_field",
        "models.default.model",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "api_key_env": ""}}}),
        "blank_model_field",
        "models.default.api_key_env",
    );
}

#[test]
fn temperature_must_be_finite() {
    // JSON cannot carry NaN; configs built in code can.
    let mut config = FabricConfig::from_value(with(json!({
        "models": {"default": {"provider": "nvidia", "model": "m", "temperature": 0.7}}
    })))
    .unwrap();
    assert!(config.validate().is_ok());
    config.models.get_mut("default").unwrap().temperature = Some(f64::NAN);
    let error = config.validate().unwrap_err();
    assert_eq!(error.code(), "temperature_not_finite");
    assert_eq!(error.path(), Some("models.default.temperature"));
}

#[test]
fn runtime_limits() {
    accepted(json!({"runtime": {"max_turns": 1, "timeout_seconds": 0.5}}));
    accepted(json!({"runtime": {"max_turns": 4294967295u64}}));
    rejected(
        json!({"runtime": {"max_turns": 0}}),
        "max_turns_out_of_range",
        "runtime.max_turns",
    );
    rejected(
        json!({"runtime": {"max_turns": 4294967296u64}}),
        "max_turns_out_of_range",
        "runtime.max_turns",
    );
    rejected(
        json!({"runtime": {"timeout_seconds": 0}}),
        "invalid_timeout_seconds",
        "runtime.timeout_seconds",
    );
    rejected(
        json!({"runtime": {"timeout_seconds": -3.0}}),
        "invalid_timeout_seconds",
        "runtime.timeout_seconds",
    );
    let mut config = FabricConfig::from_value(base()).unwrap();
    config.runtime.timeout_seconds = Some(f64::INFINITY);
    assert_eq!(
        config.validate().unwrap_err().code(),
        "invalid_timeout_seconds"
    );
}

#[test]
fn instructions() {
    accepted(json!({"instructions": {"system": {"content": "Review.", "mode": "append"}}}));
    rejected(
        json!({"instructions": {"system": {"content": " \n"}}}),
        "blank_instruction_content",
        "instructions.system.content",
    );
    rejected(
        json!({"instructions": {"system": {"content": "c", "mode": "prepend"}}}),
        "unknown_instruction_mode",
        "instructions.system.mode",
    );
}

#[test]
fn tools() {
    accepted(json!({"tools": {"enabled": ["Read", "Edit"], "blocked": ["WebFetch"]}}));
    accepted(json!({"tools": {"enabled": [], "blocked": ["Read"]}}));
    rejected(
        json!({"tools": {"enabled": ["Read", "Bash"], "blocked": ["WebFetch", "Bash"]}}),
        "tool_enabled_and_blocked",
        "tools.blocked[1]",
    );
    rejected(
        json!({"tools": {"blocked": [" "]}}),
        "blank_tool_name",
        "tools.blocked[0]",
    );
    rejected(
        json!({"tools": {"definitions": {"": {"kind": "function", "ref": "r"}}}}),
        "blank_tool_definition_name",
        "tools.definitions[\"\"]",
    );
    rejected(
        json!({"tools": {"definitions": {"search": {"kind": "function", "ref": " "}}}}),
        "blank_tool_definition_field",
        "tools.definitions.search.ref",
    );
}

fn server(extra: Value) -> Value {
    let mut value = json!({"transport": "streamable-http", "url": "https://mcp.example.com/mcp"});
    merge(&mut value, extra);
    json!({"mcp": {"servers": {"github": value}}})
}

#[test]
fn mcp_tool_filters() {
    accepted(server(
        json!({"allowed_tools": ["issues.read"], "blocked_tools": ["issues.delete"]}),
    ));
    accepted(server(
        json!({"allowed_tools": [], "blocked_tools": ["issues.delete"]}),
    ));
    rejected(
        server(json!({"allowed_tools": ["issues.read"], "blocked_tools": ["issues.read"]})),
        "mcp_tool_allowed_and_blocked",
        "mcp.servers.github.blocked_tools[0]",
    );
    rejected(
        server(json!({"allowed_tools": [""]})),
        "blank_tool_name",
        "mcp.servers.github.allowed_tools[0]",
    );
}

#[test]
fn mcp_transport_rules() {
    accepted(
        json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "github-mcp", "args": ["stdio"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}}),
    );
    accepted(server(
        json!({"custom_headers": {"X-Tenant": "example-team"}, "authentication": {"type": "oauth2", "scopes": ["repo:read"]}}),
    ));
    rejected(
        json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "x", "authentication": {"type": "oauth2"}}}}}),
        "mcp_stdio_authentication",
        "mcp.servers.gh.authentication",
    );
    rejected(
        json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "x", "custom_headers": {"X-A": "b"}}}}}),
        "mcp_stdio_custom_headers",
        "mcp.servers.gh.custom_headers",
    );
    rejected(
        server(json!({"env": {"TOKEN": "x"}})),
        "mcp_env_requires_stdio",
        "mcp.servers.github.env",
    );
    rejected(
        json!({"mcp": {"servers": {" ": {"transport": "sse", "url": "https://x"}}}}),
        "blank_mcp_server_name",
        "mcp.servers[\" \"]",
    );
    rejected(
        json!({"mcp": {"servers": {"gh": {"transport": "sse", "url": ""}}}}),
        "blank_mcp_url",
        "mcp.servers.gh.url",
    );
    rejected(
        json!({"mcp": {"servers": {"gh": {"transport": "websocket", "url": "x"}}}}),
        "unknown_variant",
        "mcp.servers.gh.transport",
    );
}

#[test]
fn mcp_headers() {
    accepted(server(
        json!({"custom_headers": {"Authorization": "Bearer ${MCP_ACCESS_TOKEN}", "X-Tab": "a\tb", "X-Obs": "caf\u{e9}"}}),
    ));
    rejected(
        server(json!({"custom_headers": {"X-Tenant": "a\r\nInjected: 1"}})),
        "invalid_header_value",
        "mcp.servers.github.custom_headers.X-Tenant",
    );
    rejected(
        server(json!({"custom_headers": {"X-Tenant": "a\nb"}})),
        "invalid_header_value",
        "mcp.servers.github.custom_headers.X-Tenant",
    );
    rejected(
        server(json!({"custom_headers": {"X-Nul": "a\u{0}b"}})),
        "invalid_header_value",
        "mcp.servers.github.custom_headers.X-Nul",
    );
    rejected(
        server(json!({"custom_headers": {"Bad Name": "v"}})),
        "invalid_header_name",
        "mcp.servers.github.custom_headers[\"Bad Name\"]",
    );
    rejected(
        server(json!({"custom_headers": {"X:Colon": "v"}})),
        "invalid_header_name",
        "mcp.servers.github.custom_headers.X:Colon",
    );
    rejected(
        server(json!({"custom_headers": {"": "v"}})),
        "invalid_header_name",
        "mcp.servers.github.custom_headers[\"\"]",
    );
}

#[test]
fn mcp_authentication() {
    accepted(server(
        json!({"authentication": {"type": "service_account", "client_id": "c", "client_secret_env": "S", "token_url": "https://t"}}),
    ));
    accepted(server(
        json!({"authentication": {"type": "oauth2", "client_id": "c", "client_secret_env": "S", "token_endpoint_auth_method": "client_secret_post"}}),
    ));
    rejected(
        server(json!({"authentication": {"type": "oauth2", "client_secret_env": "S"}})),
        "invalid_mcp_authentication",
        "mcp.servers.github.authentication.client_secret_env",
    );
    rejected(
        server(json!({"authentication": {"type": "oauth2", "enable_dynamic_registration": false}})),
        "invalid_mcp_authentication",
        // Upstream 0.5.0 names the missing field.
        "mcp.servers.github.authentication.client_id",
    );
    rejected(
        server(
            json!({"authentication": {"type": "service_account", "client_id": "c", "client_secret_env": "S", "token_url": "https://t", "token_endpoint_auth_method": "none"}}),
        ),
        "invalid_mcp_authentication",
        "mcp.servers.github.authentication.token_endpoint_auth_method",
    );
    // Closed: oauth2 does not take service_account fields, and the type set is closed.
    rejected(
        server(json!({"authentication": {"type": "oauth2", "token_url": "https://t"}})),
        "unknown_field",
        "mcp.servers.github.authentication",
    );
    rejected(
        server(json!({"authentication": {"type": "api_key"}})),
        "unknown_variant",
        "mcp.servers.github.authentication.type",
    );
}

#[test]
fn system_stats() {
    accepted(json!({"system_stats": null}));
    accepted(json!({"system_stats": {}}));
    accepted(
        json!({"system_stats": {"collect": ["process", "cgroup.cpu"], "sampling": {"interval_ms": 1000, "max_samples": 10000}}}),
    );
    rejected(
        json!({"system_stats": {"collect": []}}),
        "system_stats_collect_empty",
        "system_stats.collect",
    );
    rejected(
        json!({"system_stats": {"collect": ["process", "cgroup.cpu", "process"]}}),
        "system_stats_group_duplicate",
        "system_stats.collect[2]",
    );
    rejected(
        json!({"system_stats": {"collect": ["process", "gpu"]}}),
        "system_stats_group_unknown",
        "system_stats.collect[1]",
    );
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 0}}}),
        "system_stats_interval_zero",
        "system_stats.sampling.interval_ms",
    );
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 10, "max_samples": 0}}}),
        "system_stats_max_samples_zero",
        "system_stats.sampling.max_samples",
    );
    // issue 21 item 7: a floor on the cadence and a hard retention cap.
    accepted(json!({"system_stats": {"sampling": {"interval_ms": 10, "max_samples": 100_000}}}));
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 1}}}),
        "system_stats_interval_too_small",
        "system_stats.sampling.interval_ms",
    );
    rejected(
        json!({"system_stats": {"sampling": {"max_samples": 100_001}}}),
        "system_stats_max_samples_too_large",
        "system_stats.sampling.max_samples",
    );
    rejected(
        json!({"system_stats": {"sampling": {"max_samples": u64::MAX}}}),
        "system_stats_max_samples_too_large",
        "system_stats.sampling.max_samples",
    );
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 10, "cadence": 3}}}),
        "unknown_field",
        "system_stats.sampling.cadence",
    );
}

#[test]
fn relay_rules() {
    accepted(
        json!({"relay": {"observability": {"version": 4, "opentelemetry": {"enabled": true, "file_sinks": [{"type": "openinference"}]}}}}),
    );
    rejected(
        json!({"relay": {"observability": {"version": 3}}}),
        "unsupported_relay_observability_version",
        "relay.observability.version",
    );
    accepted(
        json!({"relay": {"components": [{"kind": "observability", "config": {"version": 4}}]}}),
    );
    rejected(
        json!({"relay": {"components": [{"kind": "observability", "config": {"version": 3}}]}}),
        "unsupported_relay_observability_version",
        "relay.components[0].config.version",
    );
    rejected(
        json!({"relay": {"observability": {"opentelemetry": {"enabled": true}}}}),
        "relay_opentelemetry_without_destination",
        "relay.observability.opentelemetry",
    );
    rejected(
        json!({"relay": {"observability": {"atof": {"sinks": [{"type": "stream", "url": "http://x", "headers": {"X-K": "a\rb"}}]}}}}),
        "invalid_header_value",
        "relay.observability.atof.sinks[0].headers.X-K",
    );
}

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

const SENTINEL: &str = "S3CR3T-SENTINEL-VALUE";

fn all_error_text(result: Result<FabricConfig, ConfigError>) -> Vec<String> {
    match result {
        Ok(config) => config
            .validate_all()
            .into_iter()
            .flat_map(|finding| {
                let error = ConfigError::Invalid(finding);
                let info = ErrorInfo::from(error.clone());
                vec![
                    error.to_string(),
                    format!("{error:?}"),
                    format!("{info:?}"),
                    serde_json::to_string(&info).unwrap(),
                ]
            })
            .collect(),
        Err(error) => {
            let info = ErrorInfo::from(error.clone());
            vec![
                error.to_string(),
                format!("{error:?}"),
                format!("{info:?}"),
                serde_json::to_string(&info).unwrap(),
            ]
        }
    }
}

#[test]
fn secret_values_never_appear_in_errors() {
    let cases = [
        // Rule violations next to secret values.
        json!({"environment": {"env": {"TOKEN": SENTINEL}, "env_names": ["TOKEN", "9x"]}}),
        server(json!({"env": {"TOKEN": SENTINEL}})),
        server(json!({"custom_headers": {"Authorization": format!("Bearer {SENTINEL}\r\n")}})),
        server(json!({"custom_headers": {"Bad Name": SENTINEL}})),
        json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "x", "custom_headers": {"A": SENTINEL}, "env": {"K": SENTINEL}}}}}),
        // Decode errors where the secret sits in the offending value.
        json!({"environment": {"env": SENTINEL}}),
        json!({"environment": {"env": {"TOKEN": [SENTINEL]}}}),
        server(json!({"custom_headers": SENTINEL})),
        server(json!({"custom_headers": {"X": {"v": SENTINEL}}})),
        server(json!({"transport": SENTINEL})),
        json!({"instructions": {"system": {"content": "c", "mode": SENTINEL}}}),
        json!({"system_stats": {"collect": [SENTINEL]}}),
        json!({"runtime": {"max_turns": SENTINEL}}),
    ];
    for case in cases {
        let value = with(case);
        let texts = all_error_text(FabricConfig::from_value(value.clone()));
        assert!(!texts.is_empty(), "expected an error for {value}");
        let texts_from_str = all_error_text(FabricConfig::from_json_str(&value.to_string()));
        for text in texts.iter().chain(&texts_from_str) {
            assert!(!text.contains(SENTINEL), "secret leaked: {text}");
        }
    }
}

#[test]
fn debug_output_redacts_env_and_header_values() {
    use fabric_config::agent::{AgentMcpServerConfig, EnvironmentHandle, RuntimeTelemetryContext};
    let config = FabricConfig::from_value(with(json!({
        "environment": {"env": {"TOKEN": SENTINEL}},
        "mcp": {"servers": {
            "a": {"transport": "stdio", "url": "x", "env": {"TOKEN": SENTINEL}},
            "b": {"transport": "sse", "url": "https://x", "custom_headers": {"Authorization": SENTINEL}}
        }},
        "relay": {"observability": {
            "atof": {"sinks": [{"type": "stream", "url": "http://x", "headers": {"A": SENTINEL}}]},
            "opentelemetry": {"endpoints": [{"type": "full", "endpoint": "http://x", "headers": {"A": SENTINEL}}]}
        }}
    })))
    .unwrap();
    let debug = format!("{config:?}");
    assert!(!debug.contains(SENTINEL), "{debug}");
    assert!(
        debug.contains("TOKEN") && debug.contains("Authorization"),
        "names stay visible"
    );

    let server: AgentMcpServerConfig = serde_json::from_value(json!({
        "transport": "sse", "url": "https://x",
        "env": {"K": SENTINEL}, "custom_headers": {"H": SENTINEL}
    }))
    .unwrap();
    let handle: EnvironmentHandle = serde_json::from_value(json!({
        "environment_id": "env-1", "provider": "local", "control_location": "in_env_control",
        "ownership": "caller_owned", "env": {"K": SENTINEL}
    }))
    .unwrap();
    let telemetry: RuntimeTelemetryContext =
        serde_json::from_value(json!({"relay_enabled": true, "env": {"K": SENTINEL}})).unwrap();
    for text in [
        format!("{server:?}"),
        format!("{handle:?}"),
        format!("{telemetry:?}"),
    ] {
        assert!(!text.contains(SENTINEL), "{text}");
    }
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
