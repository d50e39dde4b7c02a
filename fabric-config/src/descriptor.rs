//! Adapter and target descriptors (`fabric.adapter/v1alpha2`).
//!
//! An adapter descriptor (`*.fabric-adapter.json`) is the adapter-owned, language-neutral
//! statement of what an adapter is (`adapter_id`, `adapter_kind`, `runner`), which normalized
//! config fields it translates (`config.accepts`), which schemas govern its adapter-owned fields
//! (`settings_schema`, `model_schema`, `tool_definition_schema`, `extension_schemas`), its
//! runtime requirements and its telemetry outputs. A target descriptor
//! (`*.fabric-target.json`) registers one workflow target that a shared adapter executes.
//!
//! The types here are the *normalized* shape: deserializing fills the contract's defaults and
//! serializing omits empty lists/maps and null schemas, exactly as the upstream 0.5.0 core
//! does, so `serde_json::to_value(&descriptor)` is the value that gets fingerprinted. Unknown
//! top-level keys (and unknown keys inside `runner`, `config`, `requirements`, `telemetry`) are
//! preserved verbatim in the `extra` maps; unknown `capabilities` keys are dropped.
//!
//! Structural validation with JSON paths (contract version, closed enums, embedded schemas,
//! instruction modes) lives in `fabric-plan`, which loads descriptor files.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The only accepted descriptor contract version.
pub const ADAPTER_CONTRACT_VERSION: &str = "fabric.adapter/v1alpha2";

/// File name suffix of adapter descriptors.
pub const ADAPTER_DESCRIPTOR_SUFFIX: &str = ".fabric-adapter.json";

/// File name suffix of target descriptors.
pub const TARGET_DESCRIPTOR_SUFFIX: &str = ".fabric-target.json";

/// Adapter implementation kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdapterKind {
    /// A persistent adapter process launched from `runner.command` (+ `script`, `args`).
    Process,
    /// A service or HTTP-backed harness.
    Http,
    /// A persistent Python adapter host launched as `python -m <runner.module>`.
    Python,
    /// A harness-native plugin package.
    NativePlugin,
}

impl AdapterKind {
    /// Every kind, in contract order.
    pub const ALL: [AdapterKind; 4] = [
        AdapterKind::Process,
        AdapterKind::Http,
        AdapterKind::Python,
        AdapterKind::NativePlugin,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterKind::Process => "process",
            AdapterKind::Http => "http",
            AdapterKind::Python => "python",
            AdapterKind::NativePlugin => "native_plugin",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == value)
    }
}

/// A normalized config field an adapter can translate (the closed `config.accepts` set).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum AdapterConfigField {
    /// Normalized model selection and credentials.
    #[serde(rename = "models")]
    Models,
    /// Custom model endpoint.
    #[serde(rename = "models.base_url")]
    ModelsBaseUrl,
    /// Model temperature.
    #[serde(rename = "models.temperature")]
    ModelsTemperature,
    /// Model nucleus sampling probability.
    #[serde(rename = "models.top_p")]
    ModelsTopP,
    /// Maximum model response tokens.
    #[serde(rename = "models.max_tokens")]
    ModelsMaxTokens,
    /// Portable system instructions.
    #[serde(rename = "instructions.system")]
    InstructionsSystem,
    /// Per-invocation harness turn limit.
    #[serde(rename = "runtime.max_turns")]
    RuntimeMaxTurns,
    /// Adapter-native tool names to expose.
    #[serde(rename = "tools.enabled")]
    ToolsEnabled,
    /// Named normalized tool and tool-group definitions.
    #[serde(rename = "tools.definitions")]
    ToolsDefinitions,
    /// Adapter-native tool names to block.
    #[serde(rename = "tools.blocked")]
    ToolsBlocked,
    /// Harness-native MCP servers.
    #[serde(rename = "mcp")]
    Mcp,
    /// OAuth 2.0 authentication for MCP servers.
    #[serde(rename = "mcp.auth.oauth2")]
    McpAuthOauth2,
    /// Service-account authentication for MCP servers.
    #[serde(rename = "mcp.auth.service_account")]
    McpAuthServiceAccount,
    /// Per-server MCP tool allowlists and blocklists.
    #[serde(rename = "mcp.tool_filters")]
    McpToolFilters,
    /// Harness-native skills.
    #[serde(rename = "skills")]
    Skills,
}

impl AdapterConfigField {
    /// Every field, in contract order.
    pub const ALL: [AdapterConfigField; 15] = [
        AdapterConfigField::Models,
        AdapterConfigField::ModelsBaseUrl,
        AdapterConfigField::ModelsTemperature,
        AdapterConfigField::ModelsTopP,
        AdapterConfigField::ModelsMaxTokens,
        AdapterConfigField::InstructionsSystem,
        AdapterConfigField::RuntimeMaxTurns,
        AdapterConfigField::ToolsEnabled,
        AdapterConfigField::ToolsDefinitions,
        AdapterConfigField::ToolsBlocked,
        AdapterConfigField::Mcp,
        AdapterConfigField::McpAuthOauth2,
        AdapterConfigField::McpAuthServiceAccount,
        AdapterConfigField::McpToolFilters,
        AdapterConfigField::Skills,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterConfigField::Models => "models",
            AdapterConfigField::ModelsBaseUrl => "models.base_url",
            AdapterConfigField::ModelsTemperature => "models.temperature",
            AdapterConfigField::ModelsTopP => "models.top_p",
            AdapterConfigField::ModelsMaxTokens => "models.max_tokens",
            AdapterConfigField::InstructionsSystem => "instructions.system",
            AdapterConfigField::RuntimeMaxTurns => "runtime.max_turns",
            AdapterConfigField::ToolsEnabled => "tools.enabled",
            AdapterConfigField::ToolsDefinitions => "tools.definitions",
            AdapterConfigField::ToolsBlocked => "tools.blocked",
            AdapterConfigField::Mcp => "mcp",
            AdapterConfigField::McpAuthOauth2 => "mcp.auth.oauth2",
            AdapterConfigField::McpAuthServiceAccount => "mcp.auth.service_account",
            AdapterConfigField::McpToolFilters => "mcp.tool_filters",
            AdapterConfigField::Skills => "skills",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|field| field.as_str() == value)
    }
}

/// A system-instruction mode an adapter supports (`config.system_instruction_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SystemInstructionMode {
    /// The configured content replaces the harness default.
    Replace,
    /// The configured content is added after the harness default.
    Append,
}

impl SystemInstructionMode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SystemInstructionMode::Replace => "replace",
            SystemInstructionMode::Append => "append",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "replace" => Some(SystemInstructionMode::Replace),
            "append" => Some(SystemInstructionMode::Append),
            _ => None,
        }
    }
}

/// An adapter-owned `extensions` attachment point (`extension_schemas` keys).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ExtensionPoint {
    /// `AgentConfig.extensions`.
    AgentConfig,
    /// `AgentConfig.harness.extensions`.
    Harness,
    /// `AgentModelConfig.extensions`.
    Model,
    /// `AgentConfig.instructions.extensions`.
    Instructions,
    /// `AgentInstructionConfig.extensions`.
    Instruction,
    /// `AgentConfig.runtime.extensions`.
    Runtime,
    /// `AgentConfig.skills.extensions`.
    Skills,
    /// `AgentConfig.mcp.extensions`.
    Mcp,
    /// `AgentMcpServerConfig.extensions`.
    McpServer,
    /// `AgentConfig.tools.extensions`.
    Tools,
    /// `AgentToolDefinition.extensions`.
    ToolDefinition,
    /// `AgentConfig.workflow.extensions`.
    Workflow,
    /// `AgentWorkflowEntrypointConfig.extensions`.
    WorkflowEntrypoint,
    /// `AgentRunRequest.extensions`.
    RunRequest,
    /// `AgentRunResult.extensions`.
    RunResult,
    /// `AgentRunError.extensions`.
    RunError,
    /// `AgentArtifact.extensions`.
    Artifact,
    /// `AgentUsage.extensions`.
    Usage,
}

impl ExtensionPoint {
    /// Every extension point, in contract order.
    pub const ALL: [ExtensionPoint; 18] = [
        ExtensionPoint::AgentConfig,
        ExtensionPoint::Harness,
        ExtensionPoint::Model,
        ExtensionPoint::Instructions,
        ExtensionPoint::Instruction,
        ExtensionPoint::Runtime,
        ExtensionPoint::Skills,
        ExtensionPoint::Mcp,
        ExtensionPoint::McpServer,
        ExtensionPoint::Tools,
        ExtensionPoint::ToolDefinition,
        ExtensionPoint::Workflow,
        ExtensionPoint::WorkflowEntrypoint,
        ExtensionPoint::RunRequest,
        ExtensionPoint::RunResult,
        ExtensionPoint::RunError,
        ExtensionPoint::Artifact,
        ExtensionPoint::Usage,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtensionPoint::AgentConfig => "agent_config",
            ExtensionPoint::Harness => "harness",
            ExtensionPoint::Model => "model",
            ExtensionPoint::Instructions => "instructions",
            ExtensionPoint::Instruction => "instruction",
            ExtensionPoint::Runtime => "runtime",
            ExtensionPoint::Skills => "skills",
            ExtensionPoint::Mcp => "mcp",
            ExtensionPoint::McpServer => "mcp_server",
            ExtensionPoint::Tools => "tools",
            ExtensionPoint::ToolDefinition => "tool_definition",
            ExtensionPoint::Workflow => "workflow",
            ExtensionPoint::WorkflowEntrypoint => "workflow_entrypoint",
            ExtensionPoint::RunRequest => "run_request",
            ExtensionPoint::RunResult => "run_result",
            ExtensionPoint::RunError => "run_error",
            ExtensionPoint::Artifact => "artifact",
            ExtensionPoint::Usage => "usage",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|point| point.as_str() == value)
    }
}

/// Registered target categories (`target_types`, target `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdapterTargetType {
    /// A separately registered custom-agent or workflow target.
    Workflow,
}

impl AdapterTargetType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterTargetType::Workflow => "workflow",
        }
    }
}

/// Lifecycle behavior implemented by an adapter (and by a planned runtime path).
///
/// All four flags default to `false`; unknown keys are dropped on decoding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeCapabilities {
    /// Whether the runtime supports service lifecycle operations.
    #[serde(default)]
    pub service: bool,
    /// Whether the adapter implements native OpenAI Chat Completions streaming.
    #[serde(default)]
    pub streaming: bool,
    /// Whether a running runtime can accept config updates.
    #[serde(default)]
    pub updates: bool,
    /// Whether an in-flight invocation can be cancelled.
    #[serde(default)]
    pub cancellation: bool,
    /// Additional adapter-specific capability metadata (omitted when empty).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// Normalized config support declared by an adapter (`config`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterConfigSupport {
    /// Normalized fields the adapter translates (closed set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepts: Vec<AdapterConfigField>,
    /// Exact system-instruction modes; absent means `replace` when `instructions.system` is
    /// accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction_modes: Option<Vec<SystemInstructionMode>>,
    /// Harness-native files generated by the adapter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generates: Vec<String>,
    /// Optional adapter-owned JSON Schema over the complete FabricConfig.
    ///
    /// `Some(Value::Null)` records an explicit `null` (kept, as upstream keeps it).
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub schema: Option<Value>,
    /// Unknown keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AdapterConfigSupport {
    /// Whether `field` is in `accepts`.
    pub fn accepts(&self, field: AdapterConfigField) -> bool {
        self.accepts.contains(&field)
    }

    /// The supported instruction modes (`[replace]` when the list is absent).
    pub fn instruction_modes(&self) -> &[SystemInstructionMode] {
        match &self.system_instruction_modes {
            Some(modes) => modes,
            None => &[SystemInstructionMode::Replace],
        }
    }
}

/// Deserializes a field that is present (even as `null`) into `Some`.
fn present_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Runtime requirements declared by an adapter (names only, never secret values).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterRequirements {
    /// Executables that must be on PATH.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binaries: Vec<String>,
    /// Environment variables that must be set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Files that must exist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Harness plugin hooks that must be installed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_hooks: Vec<String>,
    /// Services that must be reachable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<String>,
    /// Unknown keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Telemetry capabilities for one provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterTelemetryProviderSupport {
    /// Outputs the adapter produces or forwards (`atif`, `otel`, `openinference`, `atof`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// Integration modes (`hooks`, `gateway`, `remote_service`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integration_modes: Vec<String>,
    /// Unknown keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Telemetry support declared by an adapter (`telemetry`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterTelemetrySupport {
    /// Provider (`relay` or `native`) → support.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, AdapterTelemetryProviderSupport>,
    /// Unknown keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AdapterTelemetrySupport {
    /// Whether the descriptor declares `provider` (`relay` or `native`).
    pub fn declares(&self, provider: &str) -> bool {
        self.providers.contains_key(provider)
    }
}

/// A language-neutral adapter descriptor, normalized (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterDescriptor {
    /// Always [`ADAPTER_CONTRACT_VERSION`].
    pub contract_version: String,
    /// Globally stable adapter id (for example `nvidia.fabric.claude`).
    pub adapter_id: String,
    /// Implementation kind; selects the host.
    pub adapter_kind: AdapterKind,
    /// Runner binding (`{module}` for python, `{command, script?, args?}` for process).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub runner: Map<String, Value>,
    /// Optional lifecycle capabilities.
    #[serde(default)]
    pub capabilities: RuntimeCapabilities,
    /// Normalized config support.
    #[serde(default)]
    pub config: AdapterConfigSupport,
    /// Runtime requirements.
    #[serde(default)]
    pub requirements: AdapterRequirements,
    /// Telemetry support.
    #[serde(default)]
    pub telemetry: AdapterTelemetrySupport,
    /// Closed JSON Schema for `harness.settings`; absent accepts only an empty map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_schema: Option<Map<String, Value>>,
    /// JSON Schema applied to every `models.<role>` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_schema: Option<Map<String, Value>>,
    /// JSON Schema applied to every `tools.definitions.<name>` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_definition_schema: Option<Map<String, Value>>,
    /// JSON Schemas for adapter-owned `extensions` per attachment point.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extension_schemas: BTreeMap<ExtensionPoint, Map<String, Value>>,
    /// Registered target categories this adapter executes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_types: Vec<AdapterTargetType>,
    /// Unknown top-level keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AdapterDescriptor {
    /// Whether `field` is in `config.accepts`.
    pub fn accepts(&self, field: AdapterConfigField) -> bool {
        self.config.accepts(field)
    }

    /// The extension schema declared for `point`, if any.
    pub fn extension_schema(&self, point: ExtensionPoint) -> Option<&Map<String, Value>> {
        self.extension_schemas.get(&point)
    }
}

/// The entry point a workflow target projects southbound (`spec.entrypoint`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetEntrypoint {
    /// Adapter-scoped resolution semantics (for example `interactive_agent_factory`).
    pub kind: String,
    /// Factory identity (for example `package.module:create_agent`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Unknown keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Workflow-specific target fields (`spec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkflowTargetSpec {
    /// Entry point projected into `AgentConfig.workflow.entrypoint`.
    pub entrypoint: TargetEntrypoint,
    /// JSON Schema for `FabricConfig.workflow.settings`; absent accepts only an empty map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_schema: Option<Map<String, Value>>,
    /// Unknown keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A registered target (`*.fabric-target.json`), selected by `workflow.target_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetDescriptor {
    /// Always [`ADAPTER_CONTRACT_VERSION`].
    pub contract_version: String,
    /// Unique registered target id.
    pub id: String,
    /// The adapter that executes this target.
    pub adapter_id: String,
    /// Target category.
    #[serde(rename = "type")]
    pub target_type: AdapterTargetType,
    /// Type-specific fields.
    pub spec: WorkflowTargetSpec,
    /// Unknown top-level keys, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
