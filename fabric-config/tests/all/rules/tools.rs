//! Tools and MCP servers: filters, transports, headers and authentication.

use serde_json::json;

use super::cases::{accepted, rejected, server};

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
