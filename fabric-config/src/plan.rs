//! The resolved execution plan (`RunPlan`) and the preflight shapes around it: capability and
//! telemetry plans, descriptor provenance, doctor reports and capability profiles.
//!
//! The JSON shape follows upstream's `sdk/run-plan.schema.json`: required `agent_name`,
//! `base_dir`, `config`, `agent_config`, `capabilities`; optional blocks are omitted when
//! absent.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agent::AgentConfig;
use crate::config::{
    ControlLocation, EnvironmentOwnership, FabricConfig, McpServerConfig, ResolutionStrategy,
    TelemetryProvider, ToolDefinitionConfig,
};
use crate::descriptor::{AdapterDescriptor, RuntimeCapabilities, TargetDescriptor};

/// The resolved execution plan: everything a host needs to start the runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunPlan {
    /// `metadata.name` of the config.
    pub agent_name: String,
    /// Absolute base directory that anchored every relative path.
    pub base_dir: String,
    /// The complete config, as given (validation never changes it).
    pub config: FabricConfig,
    /// The southbound projection sent to the adapter at start.
    pub agent_config: AgentConfig,
    /// The resolved adapter identity, as upstream's `RunPlan.adapter`: the normalized
    /// descriptor with a `metadata` object (`{}` unless the descriptor has one), so
    /// `plan["adapter"]["adapter_id"]` reads as upstream. Built by [`RunPlan::adapter_info`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<AdapterDescriptor>,
    /// The selected adapter descriptor and where it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_descriptor: Option<ResolvedAdapterDescriptor>,
    /// The selected workflow target descriptor, when `workflow.target_id` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_target_descriptor: Option<ResolvedTargetDescriptor>,
    /// Selected install or availability strategy (`harness.resolution`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ResolutionStrategy>,
    /// Capability routing.
    #[serde(default)]
    pub capability_plan: CapabilityPlan,
    /// Lifecycle behavior of the selected runtime path.
    pub capabilities: RuntimeCapabilities,
    /// Resolved environment, when `environment` is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_plan: Option<EnvironmentPlan>,
    /// Resolved telemetry, when providers are configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry_plan: Option<TelemetryPlan>,
    /// Fingerprint of the normalized adapter descriptor (with the target descriptor when one
    /// is selected); compare with `expected_descriptor_sha256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor_sha256: Option<String>,
}

impl RunPlan {
    /// Upstream's `adapter` block for a descriptor: the descriptor itself with `metadata`
    /// defaulted to `{}` (upstream's `AdapterInfo`).
    pub fn adapter_info(descriptor: &AdapterDescriptor) -> AdapterDescriptor {
        let mut info = descriptor.clone();
        info.extra
            .entry("metadata".to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        info
    }
}

/// Where a descriptor was discovered, in precedence order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DescriptorSource {
    /// `FabricConfig.discovery.local_paths` (highest precedence).
    ExplicitLocal,
    /// A directory or file listed in `FABRIC_ADAPTER_PATH`.
    EnvPath,
    /// `share/nemo-fabric/{adapters,targets}` under the calling Python interpreter's prefix
    /// (`CallOptions.python_prefix`, sent by the Python binding).
    InterpreterPrefix,
    /// `share/nemo-fabric/{adapters,targets}` under an installed Python prefix.
    InstalledPackage,
    /// Adapters bundled with this build (lowest precedence).
    Bundled,
}

impl DescriptorSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DescriptorSource::ExplicitLocal => "explicit_local",
            DescriptorSource::EnvPath => "env_path",
            DescriptorSource::InterpreterPrefix => "interpreter_prefix",
            DescriptorSource::InstalledPackage => "installed_package",
            DescriptorSource::Bundled => "bundled",
        }
    }
}

/// One physical source of a discovered descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DescriptorProvenance {
    /// Discovery provider that found this record.
    pub source: DescriptorSource,
    /// Absolute descriptor path.
    pub path: String,
    /// Directory used to resolve descriptor-local paths (the descriptor's directory).
    pub root: String,
}

/// The adapter descriptor selected for a plan, with every identical record found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedAdapterDescriptor {
    /// Every semantically identical record discovered (at least one).
    pub provenance: Vec<DescriptorProvenance>,
    /// The normalized descriptor.
    pub descriptor: AdapterDescriptor,
}

/// The target descriptor selected for a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedTargetDescriptor {
    /// Every semantically identical record discovered (at least one).
    pub provenance: Vec<DescriptorProvenance>,
    /// The normalized target descriptor.
    pub descriptor: TargetDescriptor,
}

/// Capability kind a route applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityKind {
    /// Tool policy and definitions.
    Tools,
    /// Skill paths.
    Skills,
    /// One MCP server.
    Mcp,
}

/// Component responsible for executing a configured capability (ownership, not routing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityTarget {
    /// The selected adapter executes it through its harness.
    HarnessNative,
    /// NeMo Fabric executes it outside the harness (not implemented today).
    FabricManaged,
    /// Neither side can execute it.
    Unsupported,
}

/// One capability execution assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityRoute {
    /// Capability kind.
    pub kind: CapabilityKind,
    /// Capability name (`tools`, `skills`, or the MCP server name).
    pub name: String,
    /// Who executes it.
    pub target: CapabilityTarget,
    /// Human-readable reason.
    pub reason: String,
}

/// Capabilities routed to one target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityTargetPlan {
    /// Whether tool configuration was routed here.
    #[serde(default)]
    pub tools_configured: bool,
    /// Resolved skill paths routed here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skill_paths: Vec<String>,
    /// MCP servers routed here (server name → server).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

/// Normalized tool policy of a plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolsPlan {
    /// Named tool and tool-group definitions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub definitions: BTreeMap<String, ToolDefinitionConfig>,
    /// Tools to expose; `None` keeps the harness default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Tools to block.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
}

/// Resolved capability configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityPlan {
    /// Normalized tool policy.
    #[serde(default)]
    pub tools: ToolsPlan,
    /// Whether tool configuration was provided.
    #[serde(default)]
    pub tools_configured: bool,
    /// Resolved skill paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skill_paths: Vec<String>,
    /// MCP server exposure plan.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// Capabilities mapped into the harness-native surface.
    #[serde(default)]
    pub native: CapabilityTargetPlan,
    /// Capabilities NeMo Fabric manages outside the harness.
    #[serde(default)]
    pub managed: CapabilityTargetPlan,
    /// Capabilities configured but not executable.
    #[serde(default)]
    pub unsupported: CapabilityTargetPlan,
    /// Routing decisions, in config order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<CapabilityRoute>,
}

/// Resolved telemetry plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryPlan {
    /// Providers selected for this run, sorted.
    pub providers: Vec<TelemetryProvider>,
    /// Whether Relay is enabled.
    pub relay_enabled: bool,
    /// Relay project, when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_project: Option<String>,
    /// Relay output directory (resolved against `base_dir`), when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_output_dir: Option<String>,
    /// Relay pass-through config (with the resolved ATIF model label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_config: Option<Value>,
    /// Native telemetry pass-through config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_config: Option<Value>,
    /// Telemetry outputs declared by the selected descriptor for the selected providers, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adapter_outputs: Vec<String>,
}

/// Resolved environment plan (paths resolved against `base_dir`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentPlan {
    /// Environment provider (`local` when not configured).
    pub provider: String,
    /// Where Fabric control code runs.
    pub control_location: ControlLocation,
    /// Who owns teardown.
    pub ownership: EnvironmentOwnership,
    /// Resolved workspace path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Resolved artifact path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// Literal environment values visible to the harness.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Names forwarded from the NeMo Fabric process environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_names: Vec<String>,
    /// Provider connection metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub connection: Map<String, Value>,
    /// Consumer-provided metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
    /// Provider-specific settings.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
}

/// Outcome of one doctor check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoctorStatus {
    /// The check passed.
    Pass,
    /// Worth attention; does not block a run.
    Warn,
    /// Blocks a run.
    Fail,
}

/// One preflight finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DoctorCheck {
    /// Check name (`adapter_descriptor`, `compatibility`, `requirement.binary`, …).
    pub name: String,
    /// Outcome.
    pub status: DoctorStatus,
    /// Stable snake_case code (`ok` for passing checks).
    pub code: String,
    /// Human-readable, value-free message.
    pub message: String,
    /// JSON path of the config field concerned, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Structured context (source, file, adapter_id, …).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// Every preflight finding for one config; nothing is started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DoctorReport {
    /// `metadata.name` of the config (empty when the config has none).
    pub agent_name: String,
    /// `fail` if any check failed, else `warn` if any warned, else `pass`.
    pub status: DoctorStatus,
    /// Ordered checks.
    pub checks: Vec<DoctorCheck>,
}

impl DoctorReport {
    /// Builds a report, deriving the aggregate status from the checks.
    pub fn new(agent_name: String, checks: Vec<DoctorCheck>) -> Self {
        let status = if checks.iter().any(|c| c.status == DoctorStatus::Fail) {
            DoctorStatus::Fail
        } else if checks.iter().any(|c| c.status == DoctorStatus::Warn) {
            DoctorStatus::Warn
        } else {
            DoctorStatus::Pass
        };
        DoctorReport {
            agent_name,
            status,
            checks,
        }
    }

    /// Whether no check failed (warnings allowed).
    pub fn passed(&self) -> bool {
        self.status != DoctorStatus::Fail
    }
}

/// Declared support of a standalone runtime, from descriptor metadata only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterCapabilityProfile {
    /// The configured adapter.
    pub adapter_id: String,
    /// Fingerprint of the normalized descriptor(s); `None` without a descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor_sha256: Option<String>,
    /// Whether the descriptor declares skills support.
    pub skills: bool,
    /// Whether the descriptor declares MCP support.
    pub mcp: bool,
    /// Whether ATIF output is confirmed for the selected telemetry configuration.
    pub atif: bool,
}
