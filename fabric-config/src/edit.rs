//! Config helpers mirroring the SDK, and `base_dir` resolution of relative paths.

use std::path::Path;

use crate::config::{
    FabricConfig, McpConfig, McpServerConfig, RelayConfig, RelayObservabilityConfig, SkillConfig,
    TelemetryConfig, TelemetryProvider, TelemetryProviderConfig, ToolDefinitionConfig, ToolsConfig,
};
use crate::path::resolve_path;

impl FabricConfig {
    /// Adds a skill path if absent.
    pub fn add_skill_path(&mut self, path: impl Into<String>) -> &mut Self {
        let path = path.into();
        let skills = self.skills.get_or_insert_with(SkillConfig::default);
        if !skills.paths.contains(&path) {
            skills.paths.push(path);
        }
        self
    }

    /// Removes a skill path if present; drops `skills` when nothing is left.
    pub fn remove_skill_path(&mut self, path: &str) -> &mut Self {
        if let Some(skills) = &mut self.skills {
            skills.paths.retain(|existing| existing != path);
            if skills.paths.is_empty() && skills.extensions.is_empty() {
                self.skills = None;
            }
        }
        self
    }

    /// Adds or replaces a named MCP server.
    pub fn add_mcp_server(
        &mut self,
        name: impl Into<String>,
        server: McpServerConfig,
    ) -> &mut Self {
        self.mcp
            .get_or_insert_with(McpConfig::default)
            .servers
            .insert(name.into(), server);
        self
    }

    /// Removes a named MCP server; drops `mcp` when no server is left.
    pub fn remove_mcp_server(&mut self, name: &str) -> &mut Self {
        if let Some(mcp) = &mut self.mcp {
            mcp.servers.remove(name);
            if mcp.servers.is_empty() && mcp.extensions.is_empty() {
                self.mcp = None;
            }
        }
        self
    }

    /// Enables NeMo Relay telemetry (`telemetry.providers.relay`) and sets the given Relay
    /// fields; fields passed as `None` keep their current value.
    pub fn enable_relay(
        &mut self,
        project: Option<String>,
        output_dir: Option<String>,
        observability: Option<RelayObservabilityConfig>,
    ) -> &mut Self {
        let relay = self.relay.get_or_insert_with(RelayConfig::default);
        if project.is_some() {
            relay.project = project;
        }
        if output_dir.is_some() {
            relay.output_dir = output_dir;
        }
        if observability.is_some() {
            relay.observability = observability;
        }
        self.telemetry
            .get_or_insert_with(TelemetryConfig::default)
            .providers
            .insert(
                TelemetryProvider::Relay.as_str().to_owned(),
                TelemetryProviderConfig::default(),
            );
        self
    }

    /// Adds adapter-native tool names to `tools.blocked` (keeping order, no duplicates).
    pub fn block_tools<I, S>(&mut self, tools: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let config = self.tools.get_or_insert_with(ToolsConfig::default);
        for tool in tools {
            let tool = tool.into();
            if !config.blocked.contains(&tool) {
                config.blocked.push(tool);
            }
        }
        self
    }

    /// Adds or replaces a named tool definition.
    pub fn add_tool_definition(
        &mut self,
        name: impl Into<String>,
        definition: ToolDefinitionConfig,
    ) -> &mut Self {
        self.tools
            .get_or_insert_with(ToolsConfig::default)
            .definitions
            .insert(name.into(), definition);
        self
    }

    /// Removes a named tool definition; drops `tools` when nothing is left.
    pub fn remove_tool_definition(&mut self, name: &str) -> &mut Self {
        if let Some(tools) = &mut self.tools {
            tools.definitions.remove(name);
            if tools.definitions.is_empty()
                && tools.enabled.is_none()
                && tools.blocked.is_empty()
                && tools.extensions.is_empty()
            {
                self.tools = None;
            }
        }
        self
    }

    /// A copy with every relative path anchored at `base_dir`: `skills.paths`,
    /// `environment.workspace`, `environment.artifacts`, `runtime.artifacts`,
    /// `discovery.local_paths` and `relay.output_dir`, each by
    /// [`resolve_path`] (absolute paths kept, `.` removed, `..`
    /// kept, blank values unchanged).
    pub fn resolve_paths(&self, base_dir: &Path) -> FabricConfig {
        let mut config = self.clone();
        let resolve = |value: &mut String| {
            *value = resolve_path(base_dir, value).to_string_lossy().into_owned();
        };
        if let Some(skills) = &mut config.skills {
            skills.paths.iter_mut().for_each(resolve);
        }
        if let Some(discovery) = &mut config.discovery {
            discovery.local_paths.iter_mut().for_each(resolve);
        }
        if let Some(environment) = &mut config.environment {
            environment.workspace.iter_mut().for_each(resolve);
            environment.artifacts.iter_mut().for_each(resolve);
        }
        config.runtime.artifacts.iter_mut().for_each(resolve);
        if let Some(relay) = &mut config.relay {
            relay.output_dir.iter_mut().for_each(resolve);
        }
        config
    }
}
