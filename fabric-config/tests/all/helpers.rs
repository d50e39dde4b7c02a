//! Config helpers mirroring the SDK, and base_dir resolution.

use std::path::Path;

use fabric_config::FabricConfig;
use fabric_config::config::{
    McpServerConfig, McpTransport, RelayAtofConfig, RelayObservabilityConfig, ToolDefinitionConfig,
};
use fabric_config::path::resolve_path;
use serde_json::json;

fn config() -> FabricConfig {
    FabricConfig::new("review-agent", "nvidia.fabric.hermes")
}

#[test]
fn skill_paths_are_added_once_and_removed() {
    let mut config = config();
    config
        .add_skill_path("./skills/code-review")
        .add_skill_path("./skills/code-review")
        .add_skill_path("./skills/tests");
    assert_eq!(
        config.skills.as_ref().unwrap().paths,
        ["./skills/code-review", "./skills/tests"]
    );
    config.remove_skill_path("./skills/code-review");
    assert_eq!(config.skills.as_ref().unwrap().paths, ["./skills/tests"]);
    config
        .remove_skill_path("./skills/tests")
        .remove_skill_path("absent");
    assert!(config.skills.is_none());
    assert!(config.validate().is_ok());
}

#[test]
fn mcp_servers_are_added_replaced_and_removed() {
    let mut config = config();
    let mut github = McpServerConfig::new(McpTransport::Stdio, "github-mcp");
    github.args = vec!["stdio".to_owned()];
    github
        .env
        .insert("GITHUB_TOKEN".to_owned(), "${GITHUB_TOKEN}".to_owned());
    config.add_mcp_server("github", github);
    config.add_mcp_server(
        "docs",
        McpServerConfig::new(McpTransport::StreamableHttp, "https://mcp.example.com/mcp"),
    );
    assert_eq!(config.mcp.as_ref().unwrap().servers.len(), 2);
    config.validate().unwrap();
    let canonical = config.to_canonical_value();
    assert_eq!(
        canonical["mcp"]["servers"]["github"],
        json!({"transport": "stdio", "url": "github-mcp", "args": ["stdio"],
               "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, "exposure": "harness_native"})
    );
    // Replace keeps one entry.
    config.add_mcp_server(
        "docs",
        McpServerConfig::new(McpTransport::Sse, "https://mcp.example.com/sse"),
    );
    assert_eq!(
        config.mcp.as_ref().unwrap().servers["docs"].transport,
        McpTransport::Sse
    );
    config.remove_mcp_server("github").remove_mcp_server("docs");
    assert!(config.mcp.is_none());
}

#[test]
fn enable_relay_sets_the_provider_and_keeps_unset_fields() {
    let mut config = config();
    config.enable_relay(
        Some("fabric-review".to_owned()),
        Some("./artifacts/relay".to_owned()),
        None,
    );
    let observability = RelayObservabilityConfig {
        atof: Some(RelayAtofConfig {
            enabled: Some(true),
            ..RelayAtofConfig::default()
        }),
        ..RelayObservabilityConfig::default()
    };
    config.enable_relay(None, None, Some(observability));
    let canonical = config.to_canonical_value();
    assert_eq!(canonical["telemetry"], json!({"providers": {"relay": {}}}));
    assert_eq!(
        canonical["relay"],
        json!({"project": "fabric-review", "output_dir": "./artifacts/relay",
               "observability": {"atof": {"enabled": true}}})
    );
    config.validate().unwrap();
}

#[test]
fn block_tools_deduplicates_and_keeps_order() {
    let mut config = config();
    config
        .block_tools(["WebFetch", "Bash"])
        .block_tools(vec!["Bash".to_owned(), "Edit".to_owned()]);
    assert_eq!(
        config.tools.as_ref().unwrap().blocked,
        ["WebFetch", "Bash", "Edit"]
    );
    config.tools.as_mut().unwrap().enabled = Some(vec!["Edit".to_owned()]);
    assert_eq!(
        config.validate().unwrap_err().code(),
        "tool_enabled_and_blocked"
    );
}

#[test]
fn tool_definitions_are_added_and_removed() {
    let mut config = config();
    let definition = ToolDefinitionConfig {
        kind: "function".to_owned(),
        reference: "pi_tools:search".to_owned(),
        settings: [("max_results".to_owned(), json!(5))].into_iter().collect(),
        extensions: Default::default(),
    };
    config.add_tool_definition("search", definition);
    assert_eq!(
        config.to_canonical_value()["tools"],
        json!({"definitions": {"search": {"kind": "function", "ref": "pi_tools:search",
                                          "settings": {"max_results": 5}}}})
    );
    config.remove_tool_definition("search");
    assert!(config.tools.is_none());
}

#[test]
fn resolve_paths_anchors_relative_paths_at_base_dir() {
    let value = json!({
        "metadata": {"name": "paths"},
        "harness": {"adapter_id": "nvidia.fabric.hermes"},
        "discovery": {"local_paths": ["./adapters", "/opt/adapters"]},
        "skills": {"paths": ["./skills/code-review", "skills/../common"]},
        "runtime": {"artifacts": "artifacts"},
        "environment": {"workspace": ".", "artifacts": "./out/env"},
        "relay": {"output_dir": "./artifacts/relay"},
        "mcp": {"servers": {"gh": {"transport": "stdio", "url": "./bin/github-mcp"}}}
    });
    let config = FabricConfig::from_value(value).unwrap();
    let resolved = config.resolve_paths(Path::new("/srv/job"));
    let canonical = resolved.to_canonical_value();
    assert_eq!(
        canonical["discovery"]["local_paths"],
        json!(["/srv/job/adapters", "/opt/adapters"])
    );
    assert_eq!(
        canonical["skills"]["paths"],
        json!(["/srv/job/skills/code-review", "/srv/job/skills/../common"])
    );
    assert_eq!(canonical["runtime"]["artifacts"], "/srv/job/artifacts");
    assert_eq!(canonical["environment"]["workspace"], "/srv/job");
    assert_eq!(canonical["environment"]["artifacts"], "/srv/job/out/env");
    assert_eq!(canonical["relay"]["output_dir"], "/srv/job/artifacts/relay");
    // Commands are not paths under base_dir.
    assert_eq!(canonical["mcp"]["servers"]["gh"]["url"], "./bin/github-mcp");
    // The original is unchanged.
    assert_eq!(config.runtime.artifacts.as_deref(), Some("artifacts"));
    assert_eq!(resolve_path(Path::new("/b"), "/abs/x"), Path::new("/abs/x"));
    assert_eq!(resolve_path(Path::new("b"), "./x/./y"), Path::new("b/x/y"));
}
