//! The structured error shape shared by every surface (`ErrorInfo`) and its stages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The lifecycle stage an error belongs to. Spellings follow upstream `ErrorInfo.stage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Config decoding or validation.
    Config,
    /// Planning against a descriptor.
    Plan,
    /// Environment preparation.
    Prepare,
    /// Runtime start.
    Start,
    /// One invocation.
    Invoke,
    /// Runtime stop.
    Stop,
    /// Environment release.
    Release,
    /// Artifact collection.
    Artifact,
}

impl Stage {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Config => "config",
            Stage::Plan => "plan",
            Stage::Prepare => "prepare",
            Stage::Start => "start",
            Stage::Invoke => "invoke",
            Stage::Stop => "stop",
            Stage::Release => "release",
            Stage::Artifact => "artifact",
        }
    }
}

/// A structured error: what every surface (CLI, C ABI, bindings) reports.
///
/// `code` and `stage` are always set; `message` never contains secret values
/// (environment values, header values, credentials).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorInfo {
    /// Lifecycle stage that failed.
    pub stage: Stage,
    /// Stable snake_case error code.
    pub code: String,
    /// Human-readable, secret-free description.
    pub message: String,
    /// Whether retrying at the consumer boundary is safe.
    #[serde(default)]
    pub retryable: bool,
    /// Structured context (for example `path`, `adapter_id`); always present, `{}` when
    /// none, as upstream.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

impl ErrorInfo {
    /// A non-retryable error without metadata.
    pub fn new(stage: Stage, code: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorInfo {
            stage,
            code: code.into(),
            message: message.into(),
            retryable: false,
            metadata: Map::new(),
        }
    }

    /// Adds one metadata entry (builder style).
    pub fn with_metadata(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }

    /// The JSON path of the offending field, when the error names one.
    pub fn path(&self) -> Option<&str> {
        self.metadata.get("path").and_then(Value::as_str)
    }
}

impl std::fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} [{}]: {}",
            self.stage.as_str(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ErrorInfo {}

/// One config rule. Each rule has a stable snake_case `code` (never renamed or reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigRule {
    /// `schema_version` is not `fabric.agent/v1alpha1`.
    SchemaVersionUnknown,
    /// `metadata.name` is blank.
    MetadataNameBlank,
    /// Neither `harness.adapter_id` nor `workflow.target_id` is set.
    SelectorMissing,
    /// `harness.adapter_id` is blank.
    AdapterIdBlank,
    /// `workflow.target_id` is blank.
    TargetIdBlank,
    /// A `discovery.local_paths` entry is blank.
    DiscoveryPathBlank,
    /// A `skills.paths` entry is blank.
    SkillPathBlank,
    /// An `environment.env` variable name is blank.
    EnvNameBlank,
    /// A name appears in both `environment.env` and `environment.env_names`.
    EnvNamesConflict,
    /// An `environment.env` key or `environment.env_names` entry is not
    /// `[A-Za-z_][A-Za-z0-9_]*`.
    EnvNameInvalid,
    /// `environment.env` or `environment.env_names` names a variable the core sets itself
    /// ([`RESERVED_ENV_NAMES`](crate::validate::RESERVED_ENV_NAMES)).
    EnvNameReserved,
    /// A model role name is blank.
    ModelRoleBlank,
    /// A model provider is blank, untrimmed or not lowercase.
    ModelProviderInvalid,
    /// A model's `model`, `api_key_env` or `base_url` is blank.
    ModelFieldBlank,
    /// A model `base_url` or a network MCP server `url` is not an absolute URL, or contains
    /// whitespace or control characters.
    UrlInvalid,
    /// `top_p` is outside `[0, 1]`.
    TopPOutOfRange,
    /// `temperature` is not finite.
    TemperatureNotFinite,
    /// `max_tokens` is 0.
    MaxTokensZero,
    /// `runtime.max_turns` is 0 or above 2^32-1.
    MaxTurnsOutOfRange,
    /// `runtime.timeout_seconds` is not a finite number above 0.
    TimeoutSecondsInvalid,
    /// Instruction content is blank.
    InstructionContentBlank,
    /// Instruction mode is not `replace` or `append`.
    InstructionModeUnknown,
    /// A tool name is blank (`tools.enabled`, `tools.blocked`, MCP tool lists).
    ToolNameBlank,
    /// A tool is in both `tools.enabled` and `tools.blocked`.
    ToolEnabledAndBlocked,
    /// A tool definition name is blank.
    ToolDefinitionNameBlank,
    /// A tool definition `kind` or `ref` is blank.
    ToolDefinitionFieldBlank,
    /// An MCP server name is blank.
    McpServerNameBlank,
    /// An MCP server `url` is blank.
    McpUrlBlank,
    /// An MCP tool is in both `allowed_tools` and `blocked_tools`.
    McpToolAllowedAndBlocked,
    /// `authentication` on a `stdio` server.
    McpStdioAuthentication,
    /// `custom_headers` on a `stdio` server.
    McpStdioCustomHeaders,
    /// `env` on a non-`stdio` server.
    McpEnvRequiresStdio,
    /// Inconsistent MCP authentication fields.
    McpAuthenticationInvalid,
    /// An HTTP header name is not an RFC 7230 token.
    HeaderNameInvalid,
    /// An HTTP header value contains CR, LF, NUL or another control character.
    HeaderValueInvalid,
    /// `system_stats.collect` is empty.
    SystemStatsCollectEmpty,
    /// A `system_stats.collect` group is listed twice.
    SystemStatsGroupDuplicate,
    /// A `system_stats.collect` group is unknown.
    SystemStatsGroupUnknown,
    /// `system_stats.sampling.interval_ms` is 0.
    SamplingIntervalZero,
    /// `system_stats.sampling.max_samples` is 0.
    SamplingMaxSamplesZero,
    /// `system_stats.sampling.interval_ms` is between 1 and
    /// [`MIN_SAMPLING_INTERVAL_MS`](crate::config::MIN_SAMPLING_INTERVAL_MS) - 1.
    SamplingIntervalTooSmall,
    /// `system_stats.sampling.max_samples` is above
    /// [`MAX_SAMPLING_MAX_SAMPLES`](crate::config::MAX_SAMPLING_MAX_SAMPLES).
    SamplingMaxSamplesTooLarge,
    /// `relay.observability.version` (or an observability component's `config.version`) is not 4.
    RelayObservabilityVersion,
    /// Enabled Relay OpenTelemetry without an endpoint or file sink.
    RelayOpenTelemetryNoDestination,
    /// A `telemetry.providers` key other than `relay` or `native`.
    TelemetryProviderUnknown,
    /// External collector: no `nemo-fabric-stream` sink in an enabled `relay.observability.atof`.
    RelayStreamSinkMissing,
    /// External collector: more than one sink is named `nemo-fabric-stream`.
    RelayStreamSinkDuplicate,
    /// External collector: the `nemo-fabric-stream` sink is not a `stream` sink.
    RelayStreamSinkNotStream,
    /// External collector: the `nemo-fabric-stream` sink's transport is not `ndjson`.
    RelayStreamSinkTransport,
    /// External collector: the sink URL is not http(s) with a host and without credentials,
    /// query or fragment.
    RelayStreamSinkUrl,
    /// External collector: a `header_env` variable of the sink is not set.
    RelayStreamHeaderEnvUnset,
    /// `RunRequest.request_id` is present but blank.
    RequestIdBlank,
    /// `options.launch_collector` is set without `options.streaming: true`.
    LaunchCollectorWithoutStreaming,
    /// `options.streaming: true` for a config without the Relay telemetry provider.
    StreamingWithoutRelay,
}

impl ConfigRule {
    /// Every rule, in documentation order.
    pub const ALL: &'static [ConfigRule] = &[
        ConfigRule::SchemaVersionUnknown,
        ConfigRule::MetadataNameBlank,
        ConfigRule::SelectorMissing,
        ConfigRule::AdapterIdBlank,
        ConfigRule::TargetIdBlank,
        ConfigRule::DiscoveryPathBlank,
        ConfigRule::SkillPathBlank,
        ConfigRule::EnvNameBlank,
        ConfigRule::EnvNamesConflict,
        ConfigRule::EnvNameInvalid,
        ConfigRule::EnvNameReserved,
        ConfigRule::ModelRoleBlank,
        ConfigRule::ModelProviderInvalid,
        ConfigRule::ModelFieldBlank,
        ConfigRule::UrlInvalid,
        ConfigRule::TopPOutOfRange,
        ConfigRule::TemperatureNotFinite,
        ConfigRule::MaxTokensZero,
        ConfigRule::MaxTurnsOutOfRange,
        ConfigRule::TimeoutSecondsInvalid,
        ConfigRule::InstructionContentBlank,
        ConfigRule::InstructionModeUnknown,
        ConfigRule::ToolNameBlank,
        ConfigRule::ToolEnabledAndBlocked,
        ConfigRule::ToolDefinitionNameBlank,
        ConfigRule::ToolDefinitionFieldBlank,
        ConfigRule::McpServerNameBlank,
        ConfigRule::McpUrlBlank,
        ConfigRule::McpToolAllowedAndBlocked,
        ConfigRule::McpStdioAuthentication,
        ConfigRule::McpStdioCustomHeaders,
        ConfigRule::McpEnvRequiresStdio,
        ConfigRule::McpAuthenticationInvalid,
        ConfigRule::HeaderNameInvalid,
        ConfigRule::HeaderValueInvalid,
        ConfigRule::SystemStatsCollectEmpty,
        ConfigRule::SystemStatsGroupDuplicate,
        ConfigRule::SystemStatsGroupUnknown,
        ConfigRule::SamplingIntervalZero,
        ConfigRule::SamplingMaxSamplesZero,
        ConfigRule::SamplingIntervalTooSmall,
        ConfigRule::SamplingMaxSamplesTooLarge,
        ConfigRule::RelayObservabilityVersion,
        ConfigRule::RelayOpenTelemetryNoDestination,
        ConfigRule::TelemetryProviderUnknown,
        ConfigRule::RelayStreamSinkMissing,
        ConfigRule::RelayStreamSinkDuplicate,
        ConfigRule::RelayStreamSinkNotStream,
        ConfigRule::RelayStreamSinkTransport,
        ConfigRule::RelayStreamSinkUrl,
        ConfigRule::RelayStreamHeaderEnvUnset,
        ConfigRule::RequestIdBlank,
        ConfigRule::LaunchCollectorWithoutStreaming,
        ConfigRule::StreamingWithoutRelay,
    ];

    /// Stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            ConfigRule::SchemaVersionUnknown => "unknown_schema_version",
            ConfigRule::MetadataNameBlank => "blank_metadata_name",
            ConfigRule::SelectorMissing => "missing_adapter_selector",
            ConfigRule::AdapterIdBlank => "blank_adapter_id",
            ConfigRule::TargetIdBlank => "blank_target_id",
            ConfigRule::DiscoveryPathBlank => "blank_discovery_path",
            ConfigRule::SkillPathBlank => "blank_skill_path",
            ConfigRule::EnvNameBlank => "blank_env_name",
            ConfigRule::EnvNamesConflict => "env_names_conflict",
            ConfigRule::EnvNameInvalid => "invalid_env_name",
            ConfigRule::EnvNameReserved => "env_name_reserved",
            ConfigRule::ModelRoleBlank => "blank_model_role",
            ConfigRule::ModelProviderInvalid => "invalid_model_provider",
            ConfigRule::ModelFieldBlank => "blank_model_field",
            ConfigRule::UrlInvalid => "invalid_url",
            ConfigRule::TopPOutOfRange => "top_p_out_of_range",
            ConfigRule::TemperatureNotFinite => "temperature_not_finite",
            ConfigRule::MaxTokensZero => "max_tokens_zero",
            ConfigRule::MaxTurnsOutOfRange => "max_turns_out_of_range",
            ConfigRule::TimeoutSecondsInvalid => "invalid_timeout_seconds",
            ConfigRule::InstructionContentBlank => "blank_instruction_content",
            ConfigRule::InstructionModeUnknown => "unknown_instruction_mode",
            ConfigRule::ToolNameBlank => "blank_tool_name",
            ConfigRule::ToolEnabledAndBlocked => "tool_enabled_and_blocked",
            ConfigRule::ToolDefinitionNameBlank => "blank_tool_definition_name",
            ConfigRule::ToolDefinitionFieldBlank => "blank_tool_definition_field",
            ConfigRule::McpServerNameBlank => "blank_mcp_server_name",
            ConfigRule::McpUrlBlank => "blank_mcp_url",
            ConfigRule::McpToolAllowedAndBlocked => "mcp_tool_allowed_and_blocked",
            ConfigRule::McpStdioAuthentication => "mcp_stdio_authentication",
            ConfigRule::McpStdioCustomHeaders => "mcp_stdio_custom_headers",
            ConfigRule::McpEnvRequiresStdio => "mcp_env_requires_stdio",
            ConfigRule::McpAuthenticationInvalid => "invalid_mcp_authentication",
            ConfigRule::HeaderNameInvalid => "invalid_header_name",
            ConfigRule::HeaderValueInvalid => "invalid_header_value",
            ConfigRule::SystemStatsCollectEmpty => "system_stats_collect_empty",
            ConfigRule::SystemStatsGroupDuplicate => "system_stats_group_duplicate",
            ConfigRule::SystemStatsGroupUnknown => "system_stats_group_unknown",
            ConfigRule::SamplingIntervalZero => "system_stats_interval_zero",
            ConfigRule::SamplingMaxSamplesZero => "system_stats_max_samples_zero",
            ConfigRule::SamplingIntervalTooSmall => "system_stats_interval_too_small",
            ConfigRule::SamplingMaxSamplesTooLarge => "system_stats_max_samples_too_large",
            ConfigRule::RelayObservabilityVersion => "unsupported_relay_observability_version",
            ConfigRule::RelayOpenTelemetryNoDestination => {
                "relay_opentelemetry_without_destination"
            }
            ConfigRule::TelemetryProviderUnknown => "unknown_telemetry_provider",
            ConfigRule::RelayStreamSinkMissing => "relay_stream_sink_missing",
            ConfigRule::RelayStreamSinkDuplicate => "relay_stream_sink_duplicate",
            ConfigRule::RelayStreamSinkNotStream => "relay_stream_sink_not_stream",
            ConfigRule::RelayStreamSinkTransport => "relay_stream_sink_transport",
            ConfigRule::RelayStreamSinkUrl => "relay_stream_sink_url",
            ConfigRule::RelayStreamHeaderEnvUnset => "relay_stream_header_env_unset",
            ConfigRule::RequestIdBlank => "blank_request_id",
            ConfigRule::LaunchCollectorWithoutStreaming => "launch_collector_requires_streaming",
            ConfigRule::StreamingWithoutRelay => "streaming_requires_relay",
        }
    }

    /// What is wrong, without any value (the path names the field).
    pub fn description(self) -> &'static str {
        match self {
            ConfigRule::SchemaVersionUnknown => {
                "unsupported schema_version; the only accepted version is fabric.agent/v1alpha1"
            }
            ConfigRule::MetadataNameBlank => "metadata.name must be a non-blank string",
            ConfigRule::SelectorMissing => {
                "at least one of harness.adapter_id or workflow.target_id is required"
            }
            ConfigRule::AdapterIdBlank => "harness.adapter_id must be a non-blank string",
            ConfigRule::TargetIdBlank => "workflow.target_id must be a non-blank string",
            ConfigRule::DiscoveryPathBlank => "discovery local paths must not be blank",
            ConfigRule::SkillPathBlank => "skill paths must not be blank",
            ConfigRule::EnvNameBlank => "environment variable names must not be blank",
            ConfigRule::EnvNamesConflict => {
                "a variable cannot be listed in environment.env_names and also set in environment.env"
            }
            ConfigRule::EnvNameInvalid => {
                "environment variable names must match [A-Za-z_][A-Za-z0-9_]*"
            }
            ConfigRule::EnvNameReserved => {
                "FABRIC_HOME, FABRIC_RUNTIME_ID, FABRIC_ARTIFACTS, FABRIC_RELAY_ENABLED and FABRIC_RELAY_CONFIG_PATH are set by the core and cannot be set or forwarded by config"
            }
            ConfigRule::ModelRoleBlank => "model role names must not be blank",
            ConfigRule::ModelProviderInvalid => {
                "model provider must be a non-blank, trimmed, lowercase identifier"
            }
            ConfigRule::ModelFieldBlank => "model fields must be non-blank strings",
            ConfigRule::UrlInvalid => {
                "must be an absolute URL without whitespace or control characters"
            }
            ConfigRule::TopPOutOfRange => "top_p must be between 0 and 1",
            ConfigRule::TemperatureNotFinite => "temperature must be a finite number",
            ConfigRule::MaxTokensZero => "max_tokens must be at least 1",
            ConfigRule::MaxTurnsOutOfRange => "max_turns must be between 1 and 4294967295",
            ConfigRule::TimeoutSecondsInvalid => {
                "timeout_seconds must be a finite number greater than 0"
            }
            ConfigRule::InstructionContentBlank => "instruction content must be non-blank",
            ConfigRule::InstructionModeUnknown => "instruction mode must be `replace` or `append`",
            ConfigRule::ToolNameBlank => "tool names must not be blank",
            ConfigRule::ToolEnabledAndBlocked => {
                "a tool cannot be both enabled (tools.enabled) and blocked (tools.blocked)"
            }
            ConfigRule::ToolDefinitionNameBlank => "tool definition names must not be blank",
            ConfigRule::ToolDefinitionFieldBlank => {
                "tool definition kind and ref must be non-blank strings"
            }
            ConfigRule::McpServerNameBlank => "MCP server names must not be blank",
            ConfigRule::McpUrlBlank => "MCP server url must be a non-blank string",
            ConfigRule::McpToolAllowedAndBlocked => {
                "an MCP tool cannot be both allowed (allowed_tools) and blocked (blocked_tools)"
            }
            ConfigRule::McpStdioAuthentication => {
                "authentication is only valid for sse and streamable-http MCP servers"
            }
            ConfigRule::McpStdioCustomHeaders => {
                "custom_headers is only valid for sse and streamable-http MCP servers"
            }
            ConfigRule::McpEnvRequiresStdio => "env is only valid for stdio MCP servers",
            ConfigRule::McpAuthenticationInvalid => "inconsistent MCP authentication settings",
            ConfigRule::HeaderNameInvalid => "HTTP header names must be RFC 7230 tokens",
            ConfigRule::HeaderValueInvalid => {
                "HTTP header values must not contain CR, LF, NUL or other control characters"
            }
            ConfigRule::SystemStatsCollectEmpty => {
                "system_stats.collect must not be empty; use system_stats: null to disable stats"
            }
            ConfigRule::SystemStatsGroupDuplicate => "system_stats.collect lists a group twice",
            ConfigRule::SystemStatsGroupUnknown => {
                "unknown system_stats group; expected process, cgroup.cpu, cgroup.memory or cgroup.pressure"
            }
            ConfigRule::SamplingIntervalZero => "sampling interval_ms must be at least 1",
            ConfigRule::SamplingMaxSamplesZero => "sampling max_samples must be at least 1",
            ConfigRule::SamplingIntervalTooSmall => "sampling interval_ms must be at least 10",
            ConfigRule::SamplingMaxSamplesTooLarge => {
                "sampling max_samples must be at most 100000 (the retention cap)"
            }
            ConfigRule::RelayObservabilityVersion => {
                "NeMo Fabric requires Relay observability config version 4"
            }
            ConfigRule::RelayOpenTelemetryNoDestination => {
                "enabled Relay OpenTelemetry requires at least one endpoint or file sink"
            }
            ConfigRule::TelemetryProviderUnknown => {
                "unknown telemetry provider; expected relay or native"
            }
            ConfigRule::RelayStreamSinkMissing => {
                "external collector streaming requires one nemo-fabric-stream sink in enabled \
                 relay.observability.atof"
            }
            ConfigRule::RelayStreamSinkDuplicate => {
                "Relay streaming requires exactly one nemo-fabric-stream sink"
            }
            ConfigRule::RelayStreamSinkNotStream => {
                "Relay sink nemo-fabric-stream must be a stream sink"
            }
            ConfigRule::RelayStreamSinkTransport => {
                "Relay sink nemo-fabric-stream must use the ndjson transport with a collector"
            }
            ConfigRule::RelayStreamSinkUrl => {
                "Relay sink nemo-fabric-stream must use an http(s) URL without credentials, \
                 query, or fragment"
            }
            ConfigRule::RelayStreamHeaderEnvUnset => {
                "Relay sink nemo-fabric-stream header_env names an unset environment variable"
            }
            ConfigRule::RequestIdBlank => "request_id must be non-blank when present",
            ConfigRule::LaunchCollectorWithoutStreaming => {
                "launch_collector requires streaming=True"
            }
            ConfigRule::StreamingWithoutRelay => "streaming requires Relay telemetry to be enabled",
        }
    }
}

/// One validation finding: a rule and the JSON path of the offending field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigFinding {
    /// The violated rule.
    pub rule: ConfigRule,
    /// JSON path, for example `models.default.top_p` or `environment.env_names[0]`.
    pub path: String,
    /// Optional secret-free detail (a field or tool name, never a value).
    pub detail: Option<String>,
}

impl ConfigFinding {
    /// Stable code of the rule.
    pub fn code(&self) -> &'static str {
        self.rule.code()
    }
}

impl std::fmt::Display for ConfigFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.path, self.rule.description())?;
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

/// Category of a structural decode failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A key that is not part of the vocabulary, outside an extension point.
    UnknownField,
    /// A required key is absent.
    MissingField,
    /// A value has the wrong JSON type.
    InvalidType,
    /// A value has the right type but an invalid value.
    InvalidValue,
    /// A string is not one of an enum's spellings.
    UnknownVariant,
}

impl DecodeErrorKind {
    /// Every kind.
    pub const ALL: &'static [DecodeErrorKind] = &[
        DecodeErrorKind::UnknownField,
        DecodeErrorKind::MissingField,
        DecodeErrorKind::InvalidType,
        DecodeErrorKind::InvalidValue,
        DecodeErrorKind::UnknownVariant,
    ];

    /// Stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            DecodeErrorKind::UnknownField => "unknown_field",
            DecodeErrorKind::MissingField => "missing_field",
            DecodeErrorKind::InvalidType => "invalid_type",
            DecodeErrorKind::InvalidValue => "invalid_value",
            DecodeErrorKind::UnknownVariant => "unknown_variant",
        }
    }
}

/// A config that could not be decoded or violates a rule.
///
/// Messages and `Debug` output never contain values of environment variables, header values
/// or other string values from the input; they name the path instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The input is not JSON (or not a single JSON value).
    #[error("config is not valid JSON: {reason} (line {line}, column {column})")]
    InvalidJson {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there (`trailing comma`, `EOF while parsing an object`); syntax
        /// reasons never quote the input.
        reason: String,
    },
    /// The JSON does not have the shape of the vocabulary.
    #[error("`{path}`: {message}")]
    Decode {
        /// Failure category.
        kind: DecodeErrorKind,
        /// JSON path of the offending field (empty for the root).
        path: String,
        /// Secret-free description.
        message: String,
    },
    /// A validation rule is violated.
    #[error("{0}")]
    Invalid(ConfigFinding),
}

impl ConfigError {
    /// Every code `code()` can return (decode codes, then rule codes).
    pub fn all_codes() -> Vec<&'static str> {
        let mut codes = vec!["invalid_json"];
        codes.extend(DecodeErrorKind::ALL.iter().map(|kind| kind.code()));
        codes.extend(ConfigRule::ALL.iter().map(|rule| rule.code()));
        codes
    }

    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::InvalidJson { .. } => "invalid_json",
            ConfigError::Decode { kind, .. } => kind.code(),
            ConfigError::Invalid(finding) => finding.code(),
        }
    }

    /// JSON path of the offending field (`None` for JSON syntax errors).
    pub fn path(&self) -> Option<&str> {
        match self {
            ConfigError::InvalidJson { .. } => None,
            ConfigError::Decode { path, .. } => Some(path),
            ConfigError::Invalid(finding) => Some(&finding.path),
        }
    }

    /// The violated rule, when this is a validation error.
    pub fn rule(&self) -> Option<ConfigRule> {
        match self {
            ConfigError::Invalid(finding) => Some(finding.rule),
            _ => None,
        }
    }
}

impl From<ConfigFinding> for ConfigError {
    fn from(finding: ConfigFinding) -> Self {
        ConfigError::Invalid(finding)
    }
}

impl From<ConfigError> for ErrorInfo {
    fn from(error: ConfigError) -> Self {
        let mut info = ErrorInfo::new(Stage::Config, error.code(), error.to_string());
        match &error {
            ConfigError::InvalidJson { line, column, .. } => {
                info = info
                    .with_metadata("line", *line as u64)
                    .with_metadata("column", *column as u64);
            }
            ConfigError::Decode { path, .. } => info = info.with_metadata("path", path.as_str()),
            ConfigError::Invalid(finding) => {
                info = info.with_metadata("path", finding.path.as_str());
            }
        }
        info
    }
}
