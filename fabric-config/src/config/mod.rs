//! `FabricConfig` (`fabric.agent/v1alpha1`): the consumer-facing agent configuration.
//!
//! Field names, enum spellings and nesting follow upstream's `sdk/agent.schema.json` and the
//! Python SDK. Objects that correspond to descriptor `extension_schemas` keys keep unknown
//! keys in a flattened `extensions` map (serialized back flat); Relay-owned subtrees keep
//! unknown keys the same way; everything else is closed (`deny_unknown_fields`).
//!
//! Serialization is canonical: `None` and empty maps/lists are omitted, Fabric-owned defaults
//! (`environment.provider`, `ownership`, `control_location`, instruction `mode`, MCP
//! `exposure`) are written, `schema_version` and `runtime` are always written, and an explicit
//! `system_stats: null` is kept. See `docs/config.md`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod environment;
mod instructions;
mod mcp;
mod models;
mod relay;
mod system_stats;
mod telemetry;
mod tools;

pub use environment::{ControlLocation, EnvironmentConfig, EnvironmentOwnership};
pub use instructions::{InstructionConfig, InstructionMode, InstructionsConfig, SkillConfig};
pub use mcp::{
    McpAuthentication, McpConfig, McpExposure, McpOAuth2Config, McpServerConfig,
    McpServiceAccountConfig, McpTransport, OAuthTokenEndpointAuthMethod,
};
pub use models::ModelConfig;
pub use relay::{
    RelayAtifConfig, RelayAtofConfig, RelayAtofFileSinkConfig, RelayAtofSinkConfig,
    RelayAtofStreamSinkConfig, RelayAtofStreamTransport, RelayComponentConfig, RelayConfig,
    RelayConfigPolicy, RelayFieldNamePolicy, RelayFileMode, RelayObservabilityConfig,
    RelayOpenTelemetryConfig, RelayOpenTelemetryEndpointConfig, RelayOpenTelemetryFileSinkConfig,
    RelayOpenTelemetryType, RelayPluginsConfig, RelayUnsupportedBehavior,
};
pub use system_stats::{
    MAX_SAMPLING_MAX_SAMPLES, MIN_SAMPLING_INTERVAL_MS, SystemStatsConfig, SystemStatsGroup,
    SystemStatsSamplingConfig, SystemStatsSetting,
};
pub use telemetry::{TelemetryConfig, TelemetryProvider, TelemetryProviderConfig};
pub use tools::{ToolDefinitionConfig, ToolsConfig};

/// The only accepted `schema_version`.
pub const SCHEMA_VERSION: &str = "fabric.agent/v1alpha1";

/// Unknown keys preserved at an extension point (serialized back flat into their object).
pub type Extensions = BTreeMap<String, Value>;

/// `Debug` of a name → secret map: names are shown, values are replaced by `<redacted>`.
/// Used by the `Debug` impls of every type holding environment or header values.
pub struct RedactedValues<'a>(pub &'a BTreeMap<String, String>);

impl std::fmt::Debug for RedactedValues<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|key| (key, "<redacted>")))
            .finish()
    }
}

/// Free-form JSON object (adapter-, provider- or caller-owned settings).
pub type JsonObject = BTreeMap<String, Value>;

pub(crate) fn default_schema_version() -> String {
    SCHEMA_VERSION.to_owned()
}

fn default_true() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn default_300() -> u64 {
    300
}

fn is_300(value: &u64) -> bool {
    *value == 300
}

fn default_provider() -> String {
    "local".to_owned()
}

/// Versioned NeMo Fabric agent configuration (`fabric.agent/v1alpha1`).
///
/// At least one of `harness.adapter_id` or `workflow.target_id` selects the adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FabricConfig {
    /// Config schema version; only `fabric.agent/v1alpha1` is accepted.
    #[serde(default = "default_schema_version")]
    pub schema_version: String,
    /// Human-readable identity and caller annotations.
    pub metadata: MetadataConfig,
    /// Direct adapter selection and harness-specific settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<HarnessConfig>,
    /// Registered workflow target and its construction settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowConfig>,
    /// Explicit descriptor discovery paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<DiscoveryConfig>,
    /// Invocation runtime contract (always serialized).
    #[serde(default)]
    pub runtime: RuntimeConfig,
    /// Environment where the harness and its tools execute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<EnvironmentConfig>,
    /// Named model roles (for example `default`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelConfig>,
    /// Portable agent instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<InstructionsConfig>,
    /// MCP servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpConfig>,
    /// Skill paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<SkillConfig>,
    /// Telemetry providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetryConfig>,
    /// NeMo Relay integration (Relay owns the shape of its subtrees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay: Option<RelayConfig>,
    /// Adapter-native tool policy and tool definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsConfig>,
    /// Invocation system stats: absent = all groups at endpoints, `null` = disabled.
    #[serde(default, skip_serializing_if = "SystemStatsSetting::is_default")]
    pub system_stats: SystemStatsSetting,
    /// Software evidence collection (absent = enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ProvenanceConfig>,
}

/// Human-readable agent identity. Unknown keys are kept as caller annotations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetadataConfig {
    /// Agent/config name (non-blank).
    pub name: String,
    /// Optional description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Caller-owned annotations, preserved but not interpreted.
    #[serde(flatten)]
    pub annotations: Extensions,
}

impl MetadataConfig {
    /// Metadata with only a name.
    pub fn named(name: impl Into<String>) -> Self {
        MetadataConfig {
            name: name.into(),
            description: None,
            annotations: Extensions::new(),
        }
    }
}

/// Adapter install or availability strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionStrategy {
    /// Harness is already available in the prepared environment.
    Preinstalled,
    /// The environment image contains the harness.
    ImageProvided,
    /// The adapter may install a Python package with pip or uv.
    PipUv,
    /// The adapter may install a Node package.
    Npm,
    /// The adapter may install from source.
    Source,
    /// The adapter connects to an already-running service.
    Service,
    /// Installed through a harness-native plugin manager.
    NativePlugin,
}

/// Harness adapter selection (extension point `harness`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HarnessConfig {
    /// Adapter id, for example `nvidia.fabric.hermes`.
    pub adapter_id: String,
    /// Selected install or availability strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ResolutionStrategy>,
    /// Adapter-owned settings, validated against the descriptor's `settings_schema`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Undeclared keys (checked against descriptor `extension_schemas.harness` by planning).
    #[serde(flatten)]
    pub extensions: Extensions,
}

impl HarnessConfig {
    /// A harness selection with no settings.
    pub fn new(adapter_id: impl Into<String>) -> Self {
        HarnessConfig {
            adapter_id: adapter_id.into(),
            resolution: None,
            settings: JsonObject::new(),
            extensions: Extensions::new(),
        }
    }
}

/// Registered workflow target selection (extension point `workflow`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkflowConfig {
    /// Registered adapter target descriptor id.
    pub target_id: String,
    /// Immutable construction settings validated by the target descriptor.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Undeclared keys (extension point `workflow`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Explicit descriptor discovery paths (unknown keys tolerated, with a warning).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiscoveryConfig {
    /// Descriptor files or directories, relative to the base directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_paths: Vec<String>,
    /// Keys this section does not define, which upstream 0.5.0 tolerates: kept and passed
    /// through as upstream does; `fabric validate` and `doctor` warn about each
    /// ([`FabricConfig::tolerated_unknown_keys`]).
    #[serde(flatten)]
    pub unknown: Extensions,
}

/// Invocation runtime contract (extension point `runtime`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeConfig {
    /// Input schema label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<String>,
    /// Output schema label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<String>,
    /// Artifact root directory, relative to the base directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// Maximum duration of one invocation in seconds (> 0, finite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
    /// Maximum harness turns within one invocation (1..=2^32-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 4294967295u64))]
    #[serde(deserialize_with = "crate::number::option_u64_integral")]
    pub max_turns: Option<u64>,
    /// Undeclared keys (extension point `runtime`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Software evidence collection control (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceConfig {
    /// Whether collectors run (default true).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Caller- or environment-owner-supplied evidence snapshot (opaque JSON, bounded:
    /// 16 contexts, 128 entries, 64 KiB compact JSON; over budget = incomplete evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reports: Option<Value>,
}

impl Default for ProvenanceConfig {
    fn default() -> Self {
        ProvenanceConfig {
            enabled: true,
            reports: None,
        }
    }
}

impl FabricConfig {
    /// A minimal config selecting `adapter_id`, named `name`.
    pub fn new(name: impl Into<String>, adapter_id: impl Into<String>) -> Self {
        FabricConfig {
            schema_version: default_schema_version(),
            metadata: MetadataConfig::named(name),
            harness: Some(HarnessConfig::new(adapter_id)),
            workflow: None,
            discovery: None,
            runtime: RuntimeConfig::default(),
            environment: None,
            models: BTreeMap::new(),
            instructions: None,
            mcp: None,
            skills: None,
            telemetry: None,
            relay: None,
            tools: None,
            system_stats: SystemStatsSetting::Default,
            provenance: None,
        }
    }

    /// Whether software evidence collection is enabled (absent `provenance` = enabled).
    pub fn provenance_enabled(&self) -> bool {
        self.provenance.as_ref().is_none_or(|p| p.enabled)
    }
}
