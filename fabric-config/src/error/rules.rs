//! [`ConfigRule`]: the config rules, declared once in a table.
//!
//! Each rule's variant, doc, stable code and description sit together in one entry of
//! `config_rules!`, which writes the enum, [`ConfigRule::ALL`], [`ConfigRule::code`] and
//! [`ConfigRule::description`] from it: a rule added to the enum cannot be missing from `ALL`
//! (and so from the code registry, `docs/errors.md` and `tests/fixtures/error-codes.json`),
//! and its code and description cannot drift apart. Codes are never renamed or reused.

/// Declares [`ConfigRule`] from `/// doc` + `Variant => "code", "description";` entries, in
/// documentation order (the order of `ALL`).
macro_rules! config_rules {
    ($(
        $(#[$doc:meta])+
        $variant:ident => $code:literal, $description:literal;
    )+) => {
        /// One config rule. Each rule has a stable snake_case `code` (never renamed or reused).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ConfigRule {
            $($(#[$doc])+ $variant,)+
        }

        impl ConfigRule {
            /// Every rule, in documentation order.
            pub const ALL: &'static [ConfigRule] = &[$(ConfigRule::$variant),+];

            /// Stable snake_case code.
            pub fn code(self) -> &'static str {
                match self {
                    $(ConfigRule::$variant => $code,)+
                }
            }

            /// What is wrong, without any value (the path names the field).
            pub fn description(self) -> &'static str {
                match self {
                    $(ConfigRule::$variant => $description,)+
                }
            }
        }
    };
}

config_rules! {
    /// `schema_version` is not `fabric.agent/v1alpha1`.
    SchemaVersionUnknown => "unknown_schema_version",
        "unsupported schema_version; the only accepted version is fabric.agent/v1alpha1";
    /// `metadata.name` is blank.
    MetadataNameBlank => "blank_metadata_name", "metadata.name must be a non-blank string";
    /// Neither `harness.adapter_id` nor `workflow.target_id` is set.
    SelectorMissing => "missing_adapter_selector",
        "at least one of harness.adapter_id or workflow.target_id is required";
    /// `harness.adapter_id` is blank.
    AdapterIdBlank => "blank_adapter_id", "harness.adapter_id must be a non-blank string";
    /// `workflow.target_id` is blank.
    TargetIdBlank => "blank_target_id", "workflow.target_id must be a non-blank string";
    /// A `discovery.local_paths` entry is blank.
    DiscoveryPathBlank => "blank_discovery_path", "discovery local paths must not be blank";
    /// A `skills.paths` entry is blank.
    SkillPathBlank => "blank_skill_path", "skill paths must not be blank";
    /// A path (`environment.workspace`, `environment.artifacts`, `runtime.artifacts`,
    /// `skills.paths`, `discovery.local_paths`, `relay.output_dir`) or an `environment.env`
    /// value contains a NUL byte, which no path or environment variable can hold.
    NulByte => "nul_byte",
        "paths and environment variable values must not contain a NUL byte";
    /// An `environment.env` variable name is blank.
    EnvNameBlank => "blank_env_name", "environment variable names must not be blank";
    /// A name appears in both `environment.env` and `environment.env_names`.
    EnvNamesConflict => "env_names_conflict",
        "a variable cannot be listed in environment.env_names and also set in environment.env";
    /// An `environment.env` key or `environment.env_names` entry is not
    /// `[A-Za-z_][A-Za-z0-9_]*`.
    EnvNameInvalid => "invalid_env_name",
        "environment variable names must match [A-Za-z_][A-Za-z0-9_]*";
    /// `environment.env` or `environment.env_names` names a variable the core sets itself
    /// ([`RESERVED_ENV_NAMES`](crate::validate::RESERVED_ENV_NAMES)).
    EnvNameReserved => "env_name_reserved",
        "FABRIC_HOME, FABRIC_RUNTIME_ID, FABRIC_ARTIFACTS, FABRIC_RELAY_ENABLED and FABRIC_RELAY_CONFIG_PATH are set by the core and cannot be set or forwarded by config";
    /// A model role name is blank.
    ModelRoleBlank => "blank_model_role", "model role names must not be blank";
    /// A model provider is blank, untrimmed or not lowercase.
    ModelProviderInvalid => "invalid_model_provider",
        "model provider must be a non-blank, trimmed, lowercase identifier";
    /// A model's `model`, `api_key_env` or `base_url` is blank.
    ModelFieldBlank => "blank_model_field", "model fields must be non-blank strings";
    /// A model `base_url` or a network MCP server `url` is not an absolute URL, or contains
    /// whitespace or control characters.
    UrlInvalid => "invalid_url", "must be an absolute URL without whitespace or control characters";
    /// `top_p` is outside `[0, 1]`.
    TopPOutOfRange => "top_p_out_of_range", "top_p must be between 0 and 1";
    /// `temperature` is not finite.
    TemperatureNotFinite => "temperature_not_finite", "temperature must be a finite number";
    /// `max_tokens` is 0.
    MaxTokensZero => "max_tokens_zero", "max_tokens must be at least 1";
    /// `runtime.max_turns` is 0 or above 2^32-1.
    MaxTurnsOutOfRange => "max_turns_out_of_range", "max_turns must be between 1 and 4294967295";
    /// `runtime.timeout_seconds` is not a finite number above 0.
    TimeoutSecondsInvalid => "invalid_timeout_seconds",
        "timeout_seconds must be a finite number greater than 0";
    /// Instruction content is blank.
    InstructionContentBlank => "blank_instruction_content", "instruction content must be non-blank";
    /// Instruction mode is not `replace` or `append`.
    InstructionModeUnknown => "unknown_instruction_mode",
        "instruction mode must be `replace` or `append`";
    /// A tool name is blank (`tools.enabled`, `tools.blocked`, MCP tool lists).
    ToolNameBlank => "blank_tool_name", "tool names must not be blank";
    /// A tool is in both `tools.enabled` and `tools.blocked`.
    ToolEnabledAndBlocked => "tool_enabled_and_blocked",
        "a tool cannot be both enabled (tools.enabled) and blocked (tools.blocked)";
    /// A tool definition name is blank.
    ToolDefinitionNameBlank => "blank_tool_definition_name",
        "tool definition names must not be blank";
    /// A tool definition `kind` or `ref` is blank.
    ToolDefinitionFieldBlank => "blank_tool_definition_field",
        "tool definition kind and ref must be non-blank strings";
    /// An MCP server name is blank.
    McpServerNameBlank => "blank_mcp_server_name", "MCP server names must not be blank";
    /// An MCP server `url` is blank.
    McpUrlBlank => "blank_mcp_url", "MCP server url must be a non-blank string";
    /// An MCP tool is in both `allowed_tools` and `blocked_tools`.
    McpToolAllowedAndBlocked => "mcp_tool_allowed_and_blocked",
        "an MCP tool cannot be both allowed (allowed_tools) and blocked (blocked_tools)";
    /// `authentication` on a `stdio` server.
    McpStdioAuthentication => "mcp_stdio_authentication",
        "authentication is only valid for sse and streamable-http MCP servers";
    /// `custom_headers` on a `stdio` server.
    McpStdioCustomHeaders => "mcp_stdio_custom_headers",
        "custom_headers is only valid for sse and streamable-http MCP servers";
    /// `env` on a non-`stdio` server.
    McpEnvRequiresStdio => "mcp_env_requires_stdio", "env is only valid for stdio MCP servers";
    /// Inconsistent MCP authentication fields.
    McpAuthenticationInvalid => "invalid_mcp_authentication",
        "inconsistent MCP authentication settings";
    /// An HTTP header name is not an RFC 7230 token.
    HeaderNameInvalid => "invalid_header_name", "HTTP header names must be RFC 7230 tokens";
    /// An HTTP header value contains CR, LF, NUL or another control character.
    HeaderValueInvalid => "invalid_header_value",
        "HTTP header values must not contain CR, LF, NUL or other control characters";
    /// `system_stats.collect` is empty.
    SystemStatsCollectEmpty => "system_stats_collect_empty",
        "system_stats.collect must not be empty; use system_stats: null to disable stats";
    /// A `system_stats.collect` group is listed twice.
    SystemStatsGroupDuplicate => "system_stats_group_duplicate",
        "system_stats.collect lists a group twice";
    /// A `system_stats.collect` group is unknown.
    SystemStatsGroupUnknown => "system_stats_group_unknown",
        "unknown system_stats group; expected process, cgroup.cpu, cgroup.memory or cgroup.pressure";
    /// `system_stats.sampling.interval_ms` is 0.
    SamplingIntervalZero => "system_stats_interval_zero", "sampling interval_ms must be at least 1";
    /// `system_stats.sampling.max_samples` is 0.
    SamplingMaxSamplesZero => "system_stats_max_samples_zero",
        "sampling max_samples must be at least 1";
    /// `system_stats.sampling.interval_ms` is between 1 and
    /// [`MIN_SAMPLING_INTERVAL_MS`](crate::config::MIN_SAMPLING_INTERVAL_MS) - 1.
    SamplingIntervalTooSmall => "system_stats_interval_too_small",
        "sampling interval_ms must be at least 10";
    /// `system_stats.sampling.max_samples` is above
    /// [`MAX_SAMPLING_MAX_SAMPLES`](crate::config::MAX_SAMPLING_MAX_SAMPLES).
    SamplingMaxSamplesTooLarge => "system_stats_max_samples_too_large",
        "sampling max_samples must be at most 100000 (the retention cap)";
    /// `relay.observability.version` (or an observability component's `config.version`) is not 4.
    RelayObservabilityVersion => "unsupported_relay_observability_version",
        "NeMo Fabric requires Relay observability config version 4";
    /// Enabled Relay OpenTelemetry without an endpoint or file sink.
    RelayOpenTelemetryNoDestination => "relay_opentelemetry_without_destination",
        "enabled Relay OpenTelemetry requires at least one endpoint or file sink";
    /// A `telemetry.providers` key other than `relay` or `native`.
    TelemetryProviderUnknown => "unknown_telemetry_provider",
        "unknown telemetry provider; expected relay or native";
    /// External collector: no `nemo-fabric-stream` sink in an enabled `relay.observability.atof`.
    RelayStreamSinkMissing => "relay_stream_sink_missing",
        "external collector streaming requires one nemo-fabric-stream sink in enabled \
         relay.observability.atof";
    /// External collector: more than one sink is named `nemo-fabric-stream`.
    RelayStreamSinkDuplicate => "relay_stream_sink_duplicate",
        "Relay streaming requires exactly one nemo-fabric-stream sink";
    /// External collector: the `nemo-fabric-stream` sink is not a `stream` sink.
    RelayStreamSinkNotStream => "relay_stream_sink_not_stream",
        "Relay sink nemo-fabric-stream must be a stream sink";
    /// External collector: the `nemo-fabric-stream` sink's transport is not `ndjson`.
    RelayStreamSinkTransport => "relay_stream_sink_transport",
        "Relay sink nemo-fabric-stream must use the ndjson transport with a collector";
    /// External collector: the sink URL is not http(s) with a host and without credentials,
    /// query or fragment.
    RelayStreamSinkUrl => "relay_stream_sink_url",
        "Relay sink nemo-fabric-stream must use an http(s) URL without credentials, \
         query, or fragment";
    /// External collector: a `header_env` variable of the sink is not set.
    RelayStreamHeaderEnvUnset => "relay_stream_header_env_unset",
        "Relay sink nemo-fabric-stream header_env names an unset environment variable";
    /// `RunRequest.request_id` is present but blank.
    RequestIdBlank => "blank_request_id", "request_id must be non-blank when present";
    /// `options.launch_collector` is set without `options.streaming: true`.
    LaunchCollectorWithoutStreaming => "launch_collector_requires_streaming",
        "launch_collector requires streaming=True";
    /// `options.streaming: true` for a config without the Relay telemetry provider.
    StreamingWithoutRelay => "streaming_requires_relay",
        "streaming requires Relay telemetry to be enabled";
}
