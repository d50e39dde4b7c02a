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
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

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

/// Where NeMo Fabric control code runs relative to the environment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlLocation {
    /// Fabric runs outside and connects to the harness in the environment.
    ExternalControl,
    /// Fabric runs inside the prepared environment (default).
    #[default]
    InEnvControl,
}

/// Who tears the environment down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EnvironmentOwnership {
    /// The caller owns teardown (default).
    #[default]
    CallerOwned,
    /// NeMo Fabric owns teardown.
    FabricOwned,
}

/// Execution environment (`connection`, `metadata`, `settings` are provider-owned; unknown
/// keys tolerated, with a warning).
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentConfig {
    /// Environment provider (`local`, `docker`, `opensandbox`, `k8s`, ...). Default `local`.
    #[serde(default = "default_provider")]
    pub provider: String,
    /// Where Fabric control code runs. Default `in_env_control`.
    #[serde(default)]
    pub control_location: ControlLocation,
    /// Who owns teardown. Default `caller_owned`.
    #[serde(default)]
    pub ownership: EnvironmentOwnership,
    /// Workspace path visible to the harness (relative to the base directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Environment-specific artifact path (relative to the base directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// Literal environment variables (values are never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Names of variables forwarded from the Fabric process environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_names: Vec<String>,
    /// Connection data for an existing environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connection: JsonObject,
    /// Consumer-owned metadata passed through without Fabric semantics.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: JsonObject,
    /// Provider-specific settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Keys this section does not define, which upstream 0.5.0 tolerates: kept and passed
    /// through as upstream does; `fabric validate` and `doctor` warn about each
    /// ([`FabricConfig::tolerated_unknown_keys`]).
    #[serde(flatten)]
    pub unknown: Extensions,
}

impl Default for EnvironmentConfig {
    fn default() -> Self {
        EnvironmentConfig {
            provider: default_provider(),
            control_location: ControlLocation::default(),
            ownership: EnvironmentOwnership::default(),
            workspace: None,
            artifacts: None,
            env: BTreeMap::new(),
            env_names: Vec::new(),
            connection: JsonObject::new(),
            metadata: JsonObject::new(),
            settings: JsonObject::new(),
            unknown: Extensions::new(),
        }
    }
}

/// One model role (extension point `model`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelConfig {
    /// Model provider name (lowercase identifier).
    pub provider: String,
    /// Provider model identifier.
    pub model: String,
    /// Environment variable holding the API key (its name, never its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Provider endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Sampling temperature (finite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling probability in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub top_p: Option<f64>,
    /// Maximum response tokens (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "crate::number::option_u64_integral")]
    pub max_tokens: Option<u64>,
    /// Provider-specific settings validated by the descriptor's `model_schema`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Undeclared keys (extension point `model`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

impl ModelConfig {
    /// A model role with only provider and model set.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        ModelConfig {
            provider: provider.into(),
            model: model.into(),
            api_key_env: None,
            base_url: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            settings: JsonObject::new(),
            extensions: Extensions::new(),
        }
    }
}

/// How a system instruction is applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstructionMode {
    /// Replace the harness's native system instruction (default).
    #[default]
    Replace,
    /// Append to the harness's native system instruction.
    Append,
}

impl InstructionMode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            InstructionMode::Replace => "replace",
            InstructionMode::Append => "append",
        }
    }
}

/// Harness-neutral instructions (extension point `instructions`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionsConfig {
    /// The system instruction; omit to keep the harness's native one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<InstructionConfig>,
    /// Undeclared keys (extension point `instructions`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// One instruction value (extension point `instruction`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionConfig {
    /// Instruction text (non-blank).
    pub content: String,
    /// `replace` (default) or `append`.
    #[serde(default)]
    pub mode: InstructionMode,
    /// Undeclared keys (extension point `instruction`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Skill paths (extension point `skills`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillConfig {
    /// Skill paths, relative to the base directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Undeclared keys (extension point `skills`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// MCP capability configuration (extension point `mcp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpConfig {
    /// Named MCP servers (names non-blank).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Undeclared keys (extension point `mcp`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// MCP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum McpTransport {
    /// A child process speaking MCP over stdin/stdout; `url` is the executable.
    #[serde(rename = "stdio")]
    Stdio,
    /// Server-sent events over HTTP.
    #[serde(rename = "sse")]
    Sse,
    /// Streamable HTTP.
    #[serde(rename = "streamable-http")]
    StreamableHttp,
}

impl McpTransport {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Sse => "sse",
            McpTransport::StreamableHttp => "streamable-http",
        }
    }
}

/// How Fabric exposes an MCP server to the harness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpExposure {
    /// The harness connects to the server itself (default).
    #[default]
    HarnessNative,
    /// Fabric manages the connection (unsupported by planning today).
    FabricManaged,
}

/// One MCP server (extension point `mcp_server`).
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerConfig {
    /// Transport.
    pub transport: McpTransport,
    /// Server URL, or the executable for `stdio`.
    pub url: String,
    /// Command-line arguments of a `stdio` server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment of a `stdio` server process (values never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Authentication of an HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<McpAuthentication>,
    /// HTTP headers of an `sse`/`streamable-http` server (values never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub custom_headers: BTreeMap<String, String>,
    /// Exposure route. Default `harness_native`.
    #[serde(default)]
    pub exposure: McpExposure,
    /// Tools to expose: `None` = every discovered tool, `[]` = none (kept when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// Tools removed after the optional allowlist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_tools: Vec<String>,
    /// Undeclared keys (extension point `mcp_server`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

impl McpServerConfig {
    /// A server with only transport and url set.
    pub fn new(transport: McpTransport, url: impl Into<String>) -> Self {
        McpServerConfig {
            transport,
            url: url.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            authentication: None,
            custom_headers: BTreeMap::new(),
            exposure: McpExposure::default(),
            allowed_tools: None,
            blocked_tools: Vec::new(),
            extensions: Extensions::new(),
        }
    }
}

/// MCP server authentication, tagged by `type` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpAuthentication {
    /// OAuth 2.0 authorization-code flow.
    Oauth2(McpOAuth2Config),
    /// OAuth 2.0 client-credentials flow for headless workloads.
    ServiceAccount(McpServiceAccountConfig),
}

impl McpAuthentication {
    /// The wire spelling of `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            McpAuthentication::Oauth2(_) => "oauth2",
            McpAuthentication::ServiceAccount(_) => "service_account",
        }
    }
}

/// OAuth client authentication method at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OAuthTokenEndpointAuthMethod {
    /// Public client without a secret.
    None,
    /// Secret in the token request body.
    ClientSecretPost,
    /// Secret via HTTP Basic authentication.
    ClientSecretBasic,
}

/// OAuth 2.0 authorization-code configuration (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpOAuth2Config {
    /// Pre-registered client id; omit to allow dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Environment variable holding the client secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// Requested scopes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Pre-registered redirect URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// Whether dynamic client registration is allowed (default true; written only when false).
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub enable_dynamic_registration: bool,
    /// Client name advertised during dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// Token endpoint client authentication method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<OAuthTokenEndpointAuthMethod>,
    /// Maximum wait for interactive authorization (default 300; written only when different).
    #[serde(default = "default_300", skip_serializing_if = "is_300")]
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub authorization_timeout_seconds: u64,
}

impl Default for McpOAuth2Config {
    fn default() -> Self {
        McpOAuth2Config {
            client_id: None,
            client_secret_env: None,
            scopes: Vec::new(),
            redirect_uri: None,
            enable_dynamic_registration: true,
            client_name: None,
            token_endpoint_auth_method: None,
            authorization_timeout_seconds: 300,
        }
    }
}

/// OAuth 2.0 client-credentials configuration (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServiceAccountConfig {
    /// Client id.
    pub client_id: String,
    /// Environment variable holding the client secret.
    pub client_secret_env: String,
    /// Token endpoint.
    pub token_url: String,
    /// Requested scopes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Token endpoint client authentication method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<OAuthTokenEndpointAuthMethod>,
    /// Refresh this many seconds before expiry (default 300; written only when different).
    #[serde(default = "default_300", skip_serializing_if = "is_300")]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub token_cache_buffer_seconds: u64,
}

/// Telemetry provider name (closed set).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TelemetryProvider {
    /// NeMo Relay.
    Relay,
    /// The adapter's native telemetry.
    Native,
}

impl TelemetryProvider {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TelemetryProvider::Relay => "relay",
            TelemetryProvider::Native => "native",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(name: &str) -> Option<Self> {
        [TelemetryProvider::Relay, TelemetryProvider::Native]
            .into_iter()
            .find(|provider| provider.as_str() == name)
    }
}

/// Telemetry configuration (unknown keys tolerated, with a warning).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryConfig {
    /// Enabled providers, keyed by [`TelemetryProvider`] spelling (`relay`, `native`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, TelemetryProviderConfig>,
    /// Keys this section does not define, which upstream 0.5.0 tolerates: kept and passed
    /// through as upstream does; `fabric validate` and `doctor` warn about each
    /// ([`FabricConfig::tolerated_unknown_keys`]).
    #[serde(flatten)]
    pub unknown: Extensions,
}

/// One telemetry provider (`config` is provider-owned; unknown keys tolerated, with a
/// warning).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryProviderConfig {
    /// Provider-specific pass-through config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// Keys this section does not define, which upstream 0.5.0 tolerates: kept and passed
    /// through as upstream does; `fabric validate` and `doctor` warn about each
    /// ([`FabricConfig::tolerated_unknown_keys`]).
    #[serde(flatten)]
    pub unknown: Extensions,
}

/// NeMo Relay integration. Unknown keys at this level are tolerated, with a warning; the subtrees
/// `observability`, `components[]`, `policy` and `plugins` are Relay-owned and keep unknown
/// keys in their `extensions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayConfig {
    /// Project name for Relay backends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Relay output directory (relative to the base directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_dir: Option<String>,
    /// Relay observability component configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observability: Option<RelayObservabilityConfig>,
    /// Additional Relay plugin components.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<RelayComponentConfig>,
    /// Relay config validation policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<RelayConfigPolicy>,
    /// Relay plugins (`dynamic` manifests); Relay owns validation and loading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<RelayPluginsConfig>,
    /// Keys this section does not define, which upstream 0.5.0 tolerates: kept and passed
    /// through as upstream does; `fabric validate` and `doctor` warn about each
    /// ([`FabricConfig::tolerated_unknown_keys`]).
    #[serde(flatten)]
    pub unknown: Extensions,
}

/// Relay observability (Relay-owned; unknown keys kept). Defaults are applied by Relay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayObservabilityConfig {
    /// Observability config version; only 4 is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "crate::number::option_u64_integral")]
    pub version: Option<u64>,
    /// ATOF export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atof: Option<RelayAtofConfig>,
    /// ATIF export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atif: Option<RelayAtifConfig>,
    /// OpenTelemetry / OpenInference export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opentelemetry: Option<RelayOpenTelemetryConfig>,
    /// Validation policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<RelayConfigPolicy>,
    /// Retain complete sanitized request data on LLM start events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_full_payloads: Option<bool>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// ATOF export (Relay-owned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayAtofConfig {
    /// Whether ATOF export is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// File and stream sinks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sinks: Vec<RelayAtofSinkConfig>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// One ATOF sink, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RelayAtofSinkConfig {
    /// Write records to a local file.
    File(RelayAtofFileSinkConfig),
    /// Send records to a remote stream.
    Stream(RelayAtofStreamSinkConfig),
}

/// ATOF file sink.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayAtofFileSinkConfig {
    /// Output directory (relative to the base directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_directory: Option<String>,
    /// File name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// `append` (Relay default) or `overwrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RelayFileMode>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// File write mode of Relay file sinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayFileMode {
    /// Append to an existing file.
    Append,
    /// Replace the file each time Relay starts.
    Overwrite,
}

/// ATOF stream sink.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayAtofStreamSinkConfig {
    /// Stream URL.
    pub url: String,
    /// `http_post` (Relay default), `websocket` or `ndjson`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<RelayAtofStreamTransport>,
    /// Static headers (values never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Environment-variable-backed headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub header_env: BTreeMap<String, String>,
    /// Request timeout in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "crate::number::option_u64_integral")]
    pub timeout_millis: Option<u64>,
    /// `preserve` or `replace_dots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_name_policy: Option<RelayFieldNamePolicy>,
    /// Optional sink name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// ATOF stream transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayAtofStreamTransport {
    /// HTTP POST per record.
    HttpPost,
    /// WebSocket.
    Websocket,
    /// Newline-delimited JSON.
    Ndjson,
}

/// Field-name handling of ATOF stream sinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayFieldNamePolicy {
    /// Keep field names.
    Preserve,
    /// Replace dots in field names.
    ReplaceDots,
}

/// ATIF export (Relay-owned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayAtifConfig {
    /// Whether ATIF export is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Agent name written into ATIF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// Agent version written into ATIF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// Model label override (default: the selected model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Tool definitions written into ATIF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_definitions: Option<Vec<Value>>,
    /// Extra ATIF metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
    /// Output directory (relative to the base directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_directory: Option<String>,
    /// File name template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename_template: Option<String>,
    /// Remote storage targets (Relay-owned shapes, tagged by `type` s3|http).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Vec<JsonObject>>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// OpenTelemetry export (Relay-owned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayOpenTelemetryConfig {
    /// Whether export is enabled; enabled export needs an endpoint or a file sink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// OTLP destinations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<RelayOpenTelemetryEndpointConfig>,
    /// Local span files (Relay 0.10+).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_sinks: Vec<RelayOpenTelemetryFileSinkConfig>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Span projection of an OTel destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayOpenTelemetryType {
    /// Full span projection.
    Full,
    /// GenAI semantic conventions.
    GenAi,
    /// OpenInference.
    Openinference,
}

/// One OTLP destination (Relay-owned).
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayOpenTelemetryEndpointConfig {
    /// Span projection.
    #[serde(rename = "type")]
    pub kind: RelayOpenTelemetryType,
    /// OTLP endpoint.
    pub endpoint: String,
    /// Static headers (values never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Environment-variable-backed headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub header_env: BTreeMap<String, String>,
    /// Relay-owned keys Fabric does not model (transport, service_name, ...).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// One OTel file sink (Relay-owned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayOpenTelemetryFileSinkConfig {
    /// Span projection.
    #[serde(rename = "type")]
    pub kind: RelayOpenTelemetryType,
    /// Output directory (default `artifacts/relay`; relative to the base directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_directory: Option<String>,
    /// File name (default: timestamped by Relay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// `append` (default) or `overwrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RelayFileMode>,
    /// Relay-owned keys Fabric does not model (for example `format`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Relay validation policy behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayUnsupportedBehavior {
    /// Ignore silently.
    Ignore,
    /// Log a warning.
    Warn,
    /// Fail.
    Error,
}

/// Relay config validation policy (Relay-owned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayConfigPolicy {
    /// Policy for unknown components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_component: Option<RelayUnsupportedBehavior>,
    /// Policy for unknown fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_field: Option<RelayUnsupportedBehavior>,
    /// Policy for unsupported values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported_value: Option<RelayUnsupportedBehavior>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Generic Relay plugin component (Relay-owned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayComponentConfig {
    /// Registered Relay plugin kind.
    pub kind: String,
    /// Whether the component is activated (Relay default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Component-local config.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: JsonObject,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Relay plugins (Relay-owned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelayPluginsConfig {
    /// Dynamic plugin entries, for example `{"manifest": "/abs/plugin.toml", "enabled": true}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic: Vec<JsonObject>,
    /// Relay-owned keys Fabric does not model.
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Harness-neutral tool policy and definitions (extension point `tools`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolsConfig {
    /// Named tool and tool-group definitions resolved by the adapter.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub definitions: BTreeMap<String, ToolDefinitionConfig>,
    /// Tools to expose: `None` keeps the harness default, `[]` disables all (kept when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Tools to deny.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
    /// Undeclared keys (extension point `tools`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// One named tool or tool-group definition (extension point `tool_definition`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinitionConfig {
    /// Portable category, such as `function` or `function_group`.
    pub kind: String,
    /// Adapter-resolved component or factory reference (wire name `ref`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Settings validated by the descriptor's `tool_definition_schema`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Undeclared keys (extension point `tool_definition`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// A metric group of invocation system stats.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum SystemStatsGroup {
    /// Adapter-host process tree CPU time, RSS and process count.
    #[serde(rename = "process")]
    Process,
    /// Visible CPU limits, usage and throttling.
    #[serde(rename = "cgroup.cpu")]
    CgroupCpu,
    /// Visible memory limits, accounted memory, peak, swap, OOM kills.
    #[serde(rename = "cgroup.memory")]
    CgroupMemory,
    /// CPU, memory and I/O pressure counters.
    #[serde(rename = "cgroup.pressure")]
    CgroupPressure,
}

impl SystemStatsGroup {
    /// Every group, in canonical order.
    pub const ALL: [SystemStatsGroup; 4] = [
        SystemStatsGroup::Process,
        SystemStatsGroup::CgroupCpu,
        SystemStatsGroup::CgroupMemory,
        SystemStatsGroup::CgroupPressure,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SystemStatsGroup::Process => "process",
            SystemStatsGroup::CgroupCpu => "cgroup.cpu",
            SystemStatsGroup::CgroupMemory => "cgroup.memory",
            SystemStatsGroup::CgroupPressure => "cgroup.pressure",
        }
    }
}

/// Tri-state `system_stats`: absent, explicit `null`, or an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SystemStatsSetting {
    /// Key absent: every group at the invocation endpoints.
    #[default]
    Default,
    /// Explicit `null`: invocation stats disabled (kept when serialized).
    Disabled,
    /// Explicit object.
    Configured(SystemStatsConfig),
}

impl SystemStatsSetting {
    /// True when the key was absent.
    pub fn is_default(&self) -> bool {
        matches!(self, SystemStatsSetting::Default)
    }

    /// The effective configuration: `None` when disabled; all groups at endpoints by default.
    pub fn effective(&self) -> Option<SystemStatsConfig> {
        match self {
            SystemStatsSetting::Default => Some(SystemStatsConfig::default()),
            SystemStatsSetting::Disabled => None,
            SystemStatsSetting::Configured(config) => Some(config.clone()),
        }
    }
}

impl Serialize for SystemStatsSetting {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SystemStatsSetting::Default | SystemStatsSetting::Disabled => {
                serializer.serialize_none()
            }
            SystemStatsSetting::Configured(config) => config.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SystemStatsSetting {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match Option::<SystemStatsConfig>::deserialize(deserializer)? {
                None => SystemStatsSetting::Disabled,
                Some(config) => SystemStatsSetting::Configured(config),
            },
        )
    }
}

impl JsonSchema for SystemStatsSetting {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SystemStatsSetting".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = <Option<SystemStatsConfig>>::json_schema(generator);
        schema.insert(
            "description".to_owned(),
            Value::from(
                "Invocation system stats: absent = every group at the invocation endpoints; \
                 null = disabled; object = as given.",
            ),
        );
        schema
    }
}

/// Invocation system stats selection (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemStatsConfig {
    /// Groups to collect; `None` = every supported group. Non-empty, unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect: Option<Vec<SystemStatsGroup>>,
    /// Periodic sampling; `None` = endpoints only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SystemStatsSamplingConfig>,
}

impl SystemStatsConfig {
    /// The selected groups (every group when `collect` is `None`).
    pub fn groups(&self) -> Vec<SystemStatsGroup> {
        match &self.collect {
            None => SystemStatsGroup::ALL.to_vec(),
            Some(groups) => groups.clone(),
        }
    }
}

fn default_interval_ms() -> u64 {
    1000
}

/// Smallest accepted `system_stats.sampling.interval_ms` (a floor on sampling CPU cost).
pub const MIN_SAMPLING_INTERVAL_MS: u64 = 10;

/// Largest accepted `system_stats.sampling.max_samples`: the hard retention cap of one
/// invocation's sampled series (memory stays bounded whatever the config says).
pub const MAX_SAMPLING_MAX_SAMPLES: u64 = 100_000;

fn default_max_samples() -> u64 {
    10_000
}

/// Sampling cadence and retention bound (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemStatsSamplingConfig {
    /// Sampling interval in milliseconds (>= 10, default 1000).
    #[serde(default = "default_interval_ms")]
    #[schemars(range(min = 10))]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub interval_ms: u64,
    /// Maximum retained intermediate samples (1 to 100000, default 10000).
    #[serde(default = "default_max_samples")]
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub max_samples: u64,
}

impl Default for SystemStatsSamplingConfig {
    fn default() -> Self {
        SystemStatsSamplingConfig {
            interval_ms: default_interval_ms(),
            max_samples: default_max_samples(),
        }
    }
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

impl std::fmt::Debug for EnvironmentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvironmentConfig")
            .field("provider", &self.provider)
            .field("control_location", &self.control_location)
            .field("ownership", &self.ownership)
            .field("workspace", &self.workspace)
            .field("artifacts", &self.artifacts)
            .field("env", &crate::config::RedactedValues(&self.env))
            .field("env_names", &self.env_names)
            .field("connection", &self.connection)
            .field("metadata", &self.metadata)
            .field("settings", &self.settings)
            .field("unknown", &self.unknown.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerConfig")
            .field("transport", &self.transport)
            .field("url", &self.url)
            .field("args", &self.args)
            .field("env", &crate::config::RedactedValues(&self.env))
            .field("authentication", &self.authentication)
            .field(
                "custom_headers",
                &crate::config::RedactedValues(&self.custom_headers),
            )
            .field("exposure", &self.exposure)
            .field("allowed_tools", &self.allowed_tools)
            .field("blocked_tools", &self.blocked_tools)
            .field("extensions", &self.extensions)
            .finish()
    }
}

impl std::fmt::Debug for RelayAtofStreamSinkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayAtofStreamSinkConfig")
            .field("url", &self.url)
            .field("transport", &self.transport)
            .field("headers", &crate::config::RedactedValues(&self.headers))
            .field("header_env", &self.header_env)
            .field("timeout_millis", &self.timeout_millis)
            .field("field_name_policy", &self.field_name_policy)
            .field("name", &self.name)
            .field("extensions", &self.extensions)
            .finish()
    }
}

impl std::fmt::Debug for RelayOpenTelemetryEndpointConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayOpenTelemetryEndpointConfig")
            .field("kind", &self.kind)
            .field("endpoint", &self.endpoint)
            .field("headers", &crate::config::RedactedValues(&self.headers))
            .field("header_env", &self.header_env)
            .field("extensions", &self.extensions)
            .finish()
    }
}
