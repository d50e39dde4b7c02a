//! Normalized config fields, MCP authentication and tool filters follow each adapter's
//! `config.accepts`.

use fabric_config::descriptor::AdapterConfigField;
use serde_json::{Value, json};

use super::world::{World, incompatible_paths, rejected};

#[test]
fn every_normalized_field_follows_config_accepts_for_every_catalog_adapter() {
    let Some(world) = World::new() else {
        return;
    };
    let cases: Vec<(AdapterConfigField, Value, &str)> = vec![
        (
            AdapterConfigField::Models,
            json!({"models": {"default": {"provider": "openai", "model": "m"}}}),
            "models",
        ),
        (
            AdapterConfigField::ModelsBaseUrl,
            json!({"models": {"default": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9"}}}),
            "models.default.base_url",
        ),
        (
            AdapterConfigField::ModelsTemperature,
            json!({"models": {"default": {"provider": "openai", "model": "m", "temperature": 0.1}}}),
            "models.default.temperature",
        ),
        (
            AdapterConfigField::ModelsTopP,
            json!({"models": {"default": {"provider": "openai", "model": "m", "top_p": 0.5}}}),
            "models.default.top_p",
        ),
        (
            AdapterConfigField::ModelsMaxTokens,
            json!({"models": {"default": {"provider": "openai", "model": "m", "max_tokens": 10}}}),
            "models.default.max_tokens",
        ),
        (
            AdapterConfigField::InstructionsSystem,
            json!({"instructions": {"system": {"content": "x"}}}),
            "instructions.system",
        ),
        (
            AdapterConfigField::RuntimeMaxTurns,
            json!({"runtime": {"max_turns": 4}}),
            "runtime.max_turns",
        ),
        (
            AdapterConfigField::ToolsEnabled,
            json!({"tools": {"enabled": ["Read"]}}),
            "tools.enabled",
        ),
        (
            AdapterConfigField::ToolsBlocked,
            json!({"tools": {"blocked": ["Bash"]}}),
            "tools.blocked",
        ),
        (
            AdapterConfigField::ToolsDefinitions,
            json!({"tools": {"definitions": {"t": {"kind": "module", "ref": "x"}}}}),
            "tools.definitions",
        ),
        (
            AdapterConfigField::Skills,
            json!({"skills": {"paths": ["./skills"]}}),
            "skills",
        ),
        (
            AdapterConfigField::Mcp,
            json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh"}}}}),
            "mcp.servers.gh",
        ),
    ];
    let mut checked = 0;
    for adapter_id in world.adapter_ids() {
        for (field, partial, path) in &cases {
            let mut partial = partial.clone();
            partial["harness"] = json!({"adapter_id": adapter_id});
            let paths = incompatible_paths(&world, partial);
            let flagged = paths.iter().any(|p| p == path);
            // Legacy descriptors receive top_p/max_tokens through extension_schemas.model.
            let legacy = path.rsplit('.').next().is_some_and(|name| {
                matches!(name, "top_p" | "max_tokens")
                        && world.catalog["adapters"][&adapter_id]["descriptor"]["extension_schemas"]
                            ["model"]["properties"]
                            .get(name)
                            .is_some()
            });
            let supported = world.accepts(&adapter_id, *field) || legacy;
            assert_eq!(
                flagged,
                !supported,
                "{adapter_id} {}: {paths:?}",
                field.as_str()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 16 * 12);
}

#[test]
fn mcp_authentication_and_tool_filters_follow_config_accepts() {
    let Some(world) = World::new() else {
        return;
    };
    let server = |extra: Value| {
        let mut server =
            json!({"transport": "streamable-http", "url": "https://mcp.example.com/mcp"});
        for (key, value) in extra.as_object().expect("o") {
            server[key] = value.clone();
        }
        json!({"mcp": {"servers": {"web": server}}})
    };
    let cases = [
        (
            AdapterConfigField::McpAuthOauth2,
            server(json!({"authentication": {"type": "oauth2"}})),
            "mcp.servers.web.authentication",
        ),
        (
            AdapterConfigField::McpAuthServiceAccount,
            server(
                json!({"authentication": {"type": "service_account", "client_id": "c", "client_secret_env": "S", "token_url": "https://t", "token_endpoint_auth_method": "client_secret_basic"}}),
            ),
            "mcp.servers.web.authentication",
        ),
        (
            AdapterConfigField::McpToolFilters,
            server(json!({"allowed_tools": ["a"]})),
            "mcp.servers.web.allowed_tools",
        ),
        (
            AdapterConfigField::McpToolFilters,
            server(json!({"blocked_tools": ["a"]})),
            "mcp.servers.web.blocked_tools",
        ),
    ];
    let mut ids = world.adapter_ids();
    ids.push("test.fabric.everything".to_owned());
    for adapter_id in ids {
        if adapter_id != "test.fabric.everything"
            && !world.accepts(&adapter_id, AdapterConfigField::Mcp)
        {
            continue;
        }
        for (field, partial, path) in &cases {
            let mut partial = partial.clone();
            partial["harness"] = json!({"adapter_id": adapter_id});
            let flagged = incompatible_paths(&world, partial)
                .iter()
                .any(|p| p == path);
            let accepted =
                adapter_id == "test.fabric.everything" || world.accepts(&adapter_id, *field);
            assert_eq!(flagged, !accepted, "{adapter_id} {}", field.as_str());
        }
    }
    // Custom headers travel with MCP support and an HTTP transport.
    let headers = server(json!({"custom_headers": {"X-Tenant": "team"}}));
    let mut partial = headers.clone();
    partial["harness"] = json!({"adapter_id": "nvidia.fabric.claude"});
    let plan = world.plan(partial).expect("claude supports headers");
    assert_eq!(
        plan.agent_config.mcp.expect("mcp").servers["web"].custom_headers["X-Tenant"],
        "team"
    );
    let mut partial = headers;
    partial["harness"] = json!({"adapter_id": "nvidia.fabric.mini-swe-agent"});
    rejected(
        world.plan(partial),
        "config_incompatible",
        "mcp.servers.web",
    );
}
