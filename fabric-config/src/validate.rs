//! Decoding with JSON paths, and the config rules (`validate`, `validate_all`).
//!
//! Decode errors carry the path of the offending field (via `serde_path_to_error`) and a
//! message built from the *expected* shape only: string and number literals from the input
//! are never copied into messages. Rules produce [`ConfigFinding`]s with stable codes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::config::{
    FabricConfig, MAX_SAMPLING_MAX_SAMPLES, MIN_SAMPLING_INTERVAL_MS, McpAuthentication,
    McpTransport, OAuthTokenEndpointAuthMethod, SCHEMA_VERSION, SystemStatsSetting,
    TelemetryProvider,
};
use crate::error::{ConfigError, ConfigFinding, ConfigRule, DecodeErrorKind};

/// Appends an object key to a JSON path: `a.b`, or `a["odd key"]` for keys that are empty or
/// contain `.`, brackets, quotes, whitespace or control characters (JSON-escaped).
pub fn join_key(path: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| !(c.is_whitespace() || c.is_control() || matches!(c, '.' | '[' | ']' | '"')));
    if simple {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    } else {
        let quoted = serde_json::to_string(key).unwrap_or_else(|_| "\"?\"".to_owned());
        format!("{path}[{quoted}]")
    }
}

/// Appends a list index to a JSON path: `a[3]`.
pub fn join_index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

fn render_path(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Map { key } => out = join_key(&out, key),
            serde_path_to_error::Segment::Seq { index } => out = join_index(&out, *index),
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

/// Replaces string literals (`"…"`) and backticked values in a serde message.
fn redact_literals(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut escaped = false;
                for inner in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if inner == '\\' {
                        escaped = true;
                    } else if inner == '"' {
                        break;
                    }
                }
                out.push_str("\"<redacted>\"");
            }
            '`' => {
                for inner in chars.by_ref() {
                    if inner == '`' {
                        break;
                    }
                }
                out.push_str("`<redacted>`");
            }
            _ => out.push(c),
        }
    }
    out
}

fn strip_position(message: &str, line: usize) -> &str {
    if line == 0 {
        return message;
    }
    match message.rfind(" at line ") {
        Some(index) => &message[..index],
        None => message,
    }
}

/// A JSON syntax error with its reason and position.
fn syntax_error(error: &serde_json::Error) -> ConfigError {
    let full = error.to_string();
    ConfigError::InvalidJson {
        line: error.line(),
        column: error.column(),
        reason: strip_position(&full, error.line()).to_owned(),
    }
}

/// serde's `expected` texts in the user's words: no Rust type names (`u64`, `struct X`).
fn plain_expected(expected: &str) -> String {
    let plain = match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "an object",
        "unit" => "null",
        "option" => "a value or null",
        "char" | "a character" => "a single character",
        "a borrowed string" => "a string",
        "variant identifier" | "field identifier" => "a known name",
        other if other.starts_with("struct ") || other.starts_with("internally tagged enum ") => {
            "an object"
        }
        other if other.starts_with("enum ") => "one of the known values",
        other if other.starts_with("a tuple of size ") => "an array",
        other => other,
    };
    plain.to_owned()
}

fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(&message[start..end])
}

fn expected_part(message: &str) -> Option<&str> {
    message
        .rfind(", expected ")
        .map(|index| &message[index + ", expected ".len()..])
}

fn is_instruction_mode_path(path: &str) -> bool {
    path == "instructions.system.mode"
}

fn is_stats_group_path(path: &str) -> bool {
    path.strip_prefix("system_stats.collect[")
        .is_some_and(|rest| rest.ends_with(']'))
}

fn finding(rule: ConfigRule, path: impl Into<String>) -> ConfigFinding {
    ConfigFinding {
        rule,
        path: path.into(),
        detail: None,
    }
}

fn finding_with(rule: ConfigRule, path: impl Into<String>, detail: String) -> ConfigFinding {
    ConfigFinding {
        rule,
        path: path.into(),
        detail: Some(detail),
    }
}

/// Converts a path-tracked serde_json error into a [`ConfigError`].
pub(crate) fn decode_error(error: serde_path_to_error::Error<serde_json::Error>) -> ConfigError {
    let path = render_path(error.path());
    let inner = error.into_inner();
    match inner.classify() {
        serde_json::error::Category::Data => {}
        _ => return syntax_error(&inner),
    }
    let full = inner.to_string();
    let message = strip_position(&full, inner.line());
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let field = backticked(rest).unwrap_or("?");
        let expected = expected_part(rest)
            .map(|e| format!("; expected {e}"))
            .unwrap_or_default();
        return ConfigError::Decode {
            kind: DecodeErrorKind::UnknownField,
            path,
            message: format!("unknown field `{field}` (not an extension point){expected}"),
        };
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        let field = backticked(rest).unwrap_or("?");
        return ConfigError::Decode {
            kind: DecodeErrorKind::MissingField,
            path: join_key(&path, field),
            message: "required field is missing".to_owned(),
        };
    }
    if message.starts_with("unknown variant ") {
        if is_instruction_mode_path(&path) {
            return finding(ConfigRule::InstructionModeUnknown, path).into();
        }
        if is_stats_group_path(&path) {
            return finding(ConfigRule::SystemStatsGroupUnknown, path).into();
        }
        let expected = expected_part(message).unwrap_or("a known value");
        return ConfigError::Decode {
            kind: DecodeErrorKind::UnknownVariant,
            path,
            message: format!("unknown value; expected {expected}"),
        };
    }
    let (kind, what) = if message.starts_with("invalid type: ") {
        (DecodeErrorKind::InvalidType, "wrong type")
    } else {
        (DecodeErrorKind::InvalidValue, "invalid value")
    };
    let message = match expected_part(message) {
        Some(expected) => format!(
            "{what}; expected {}",
            redact_literals(&plain_expected(expected))
        ),
        None => redact_literals(message),
    };
    ConfigError::Decode {
        kind,
        path,
        message,
    }
}

/// Decodes one JSON document of type `T` (nothing but white space after it); errors carry
/// the JSON path of the offending field.
pub(crate) fn decode_json_str<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, ConfigError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut deserializer).map_err(decode_error)?;
    deserializer.end().map_err(|error| syntax_error(&error))?;
    Ok(value)
}

impl FabricConfig {
    /// Decodes a config from JSON text (structure only; call [`FabricConfig::validate`]).
    ///
    /// Errors carry the JSON path of the offending field.
    pub fn from_json_str(text: &str) -> Result<FabricConfig, ConfigError> {
        decode_json_str(text)
    }

    /// Decodes a config from a JSON value (structure only; call [`FabricConfig::validate`]).
    pub fn from_value(value: Value) -> Result<FabricConfig, ConfigError> {
        serde_path_to_error::deserialize(value).map_err(decode_error)
    }

    /// Decodes and validates JSON text: the first decode error or rule violation.
    pub fn parse(text: &str) -> Result<FabricConfig, ConfigError> {
        let config = FabricConfig::from_json_str(text)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every rule; returns the first violation.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self.validate_all().into_iter().next() {
            Some(finding) => Err(ConfigError::Invalid(finding)),
            None => Ok(()),
        }
    }

    /// Checks every rule and returns all violations, in document order.
    pub fn validate_all(&self) -> Vec<ConfigFinding> {
        let mut out = Vec::new();
        self.check_identity(&mut out);
        self.check_environment(&mut out);
        self.check_models(&mut out);
        self.check_runtime_and_instructions(&mut out);
        self.check_tools(&mut out);
        self.check_mcp(&mut out);
        self.check_system_stats(&mut out);
        self.check_relay(&mut out);
        self.check_telemetry(&mut out);
        out
    }

    fn check_identity(&self, out: &mut Vec<ConfigFinding>) {
        if self.schema_version != SCHEMA_VERSION {
            out.push(finding(ConfigRule::SchemaVersionUnknown, "schema_version"));
        }
        if is_blank(&self.metadata.name) {
            out.push(finding(ConfigRule::MetadataNameBlank, "metadata.name"));
        }
        if self.harness.is_none() && self.workflow.is_none() {
            out.push(finding(ConfigRule::SelectorMissing, "harness.adapter_id"));
        }
        if let Some(harness) = &self.harness {
            if is_blank(&harness.adapter_id) {
                out.push(finding(ConfigRule::AdapterIdBlank, "harness.adapter_id"));
            }
        }
        if let Some(workflow) = &self.workflow {
            if is_blank(&workflow.target_id) {
                out.push(finding(ConfigRule::TargetIdBlank, "workflow.target_id"));
            }
        }
        if let Some(discovery) = &self.discovery {
            for (index, path) in discovery.local_paths.iter().enumerate() {
                if is_blank(path) {
                    out.push(finding(
                        ConfigRule::DiscoveryPathBlank,
                        join_index("discovery.local_paths", index),
                    ));
                }
            }
        }
        if let Some(skills) = &self.skills {
            for (index, path) in skills.paths.iter().enumerate() {
                if is_blank(path) {
                    out.push(finding(
                        ConfigRule::SkillPathBlank,
                        join_index("skills.paths", index),
                    ));
                }
            }
        }
    }

    fn check_environment(&self, out: &mut Vec<ConfigFinding>) {
        let Some(environment) = &self.environment else {
            return;
        };
        for name in environment.env.keys() {
            let path = join_key("environment.env", name);
            if is_blank(name) {
                out.push(finding(ConfigRule::EnvNameBlank, path));
            } else if !is_env_name(name) {
                out.push(finding(ConfigRule::EnvNameInvalid, path));
            } else if is_reserved_env_name(name) {
                out.push(finding(ConfigRule::EnvNameReserved, path));
            }
        }
        for (index, name) in environment.env_names.iter().enumerate() {
            let path = join_index("environment.env_names", index);
            if !is_env_name(name) {
                out.push(finding(ConfigRule::EnvNameInvalid, path));
            } else if is_reserved_env_name(name) {
                out.push(finding(ConfigRule::EnvNameReserved, path));
            } else if environment.env.contains_key(name) {
                out.push(finding_with(
                    ConfigRule::EnvNamesConflict,
                    path,
                    format!("variable {name}"),
                ));
            }
        }
    }

    fn check_models(&self, out: &mut Vec<ConfigFinding>) {
        for (role, model) in &self.models {
            let base = join_key("models", role);
            if is_blank(role) {
                out.push(finding(ConfigRule::ModelRoleBlank, base.clone()));
            }
            let provider = &model.provider;
            if is_blank(provider)
                || provider.trim() != provider
                || provider.to_lowercase() != *provider
            {
                out.push(finding(
                    ConfigRule::ModelProviderInvalid,
                    join_key(&base, "provider"),
                ));
            }
            if is_blank(&model.model) {
                out.push(finding(
                    ConfigRule::ModelFieldBlank,
                    join_key(&base, "model"),
                ));
            }
            for (field, value) in [
                ("api_key_env", &model.api_key_env),
                ("base_url", &model.base_url),
            ] {
                if value.as_deref().is_some_and(is_blank) {
                    out.push(finding(ConfigRule::ModelFieldBlank, join_key(&base, field)));
                }
            }
            if let Some(url) = model.base_url.as_deref().filter(|url| !is_blank(url)) {
                if !is_url(url) {
                    out.push(finding(ConfigRule::UrlInvalid, join_key(&base, "base_url")));
                }
            }
            if let Some(top_p) = model.top_p {
                if !(0.0..=1.0).contains(&top_p) {
                    out.push(finding(
                        ConfigRule::TopPOutOfRange,
                        join_key(&base, "top_p"),
                    ));
                }
            }
            if let Some(temperature) = model.temperature {
                if !temperature.is_finite() {
                    out.push(finding(
                        ConfigRule::TemperatureNotFinite,
                        join_key(&base, "temperature"),
                    ));
                }
            }
            if model.max_tokens == Some(0) {
                out.push(finding(
                    ConfigRule::MaxTokensZero,
                    join_key(&base, "max_tokens"),
                ));
            }
        }
    }

    fn check_runtime_and_instructions(&self, out: &mut Vec<ConfigFinding>) {
        if let Some(max_turns) = self.runtime.max_turns {
            if max_turns == 0 || max_turns > u64::from(u32::MAX) {
                out.push(finding(ConfigRule::MaxTurnsOutOfRange, "runtime.max_turns"));
            }
        }
        if let Some(timeout) = self.runtime.timeout_seconds {
            if !(timeout.is_finite() && timeout > 0.0) {
                out.push(finding(
                    ConfigRule::TimeoutSecondsInvalid,
                    "runtime.timeout_seconds",
                ));
            }
        }
        if let Some(system) = self.instructions.as_ref().and_then(|i| i.system.as_ref()) {
            if is_blank(&system.content) {
                out.push(finding(
                    ConfigRule::InstructionContentBlank,
                    "instructions.system.content",
                ));
            }
        }
    }

    fn check_tools(&self, out: &mut Vec<ConfigFinding>) {
        let Some(tools) = &self.tools else {
            return;
        };
        for (name, definition) in &tools.definitions {
            let base = join_key("tools.definitions", name);
            if is_blank(name) {
                out.push(finding(ConfigRule::ToolDefinitionNameBlank, base.clone()));
            }
            if is_blank(&definition.kind) {
                out.push(finding(
                    ConfigRule::ToolDefinitionFieldBlank,
                    join_key(&base, "kind"),
                ));
            }
            if is_blank(&definition.reference) {
                out.push(finding(
                    ConfigRule::ToolDefinitionFieldBlank,
                    join_key(&base, "ref"),
                ));
            }
        }
        if let Some(enabled) = &tools.enabled {
            blank_names(out, "tools.enabled", enabled);
        }
        blank_names(out, "tools.blocked", &tools.blocked);
        if let Some(enabled) = &tools.enabled {
            overlap(
                out,
                ConfigRule::ToolEnabledAndBlocked,
                "tools.blocked",
                enabled,
                &tools.blocked,
            );
        }
    }

    fn check_mcp(&self, out: &mut Vec<ConfigFinding>) {
        let Some(mcp) = &self.mcp else {
            return;
        };
        for (name, server) in &mcp.servers {
            let base = join_key("mcp.servers", name);
            if is_blank(name) {
                out.push(finding(ConfigRule::McpServerNameBlank, base.clone()));
            }
            let stdio = server.transport == McpTransport::Stdio;
            if is_blank(&server.url) {
                out.push(finding(ConfigRule::McpUrlBlank, join_key(&base, "url")));
            } else if !stdio && !is_url(&server.url) {
                // A stdio server's `url` is the command to run, not a URL.
                out.push(finding(ConfigRule::UrlInvalid, join_key(&base, "url")));
            }
            if stdio && server.authentication.is_some() {
                out.push(finding(
                    ConfigRule::McpStdioAuthentication,
                    join_key(&base, "authentication"),
                ));
            }
            if stdio && !server.custom_headers.is_empty() {
                out.push(finding(
                    ConfigRule::McpStdioCustomHeaders,
                    join_key(&base, "custom_headers"),
                ));
            }
            if !stdio && !server.env.is_empty() {
                out.push(finding(
                    ConfigRule::McpEnvRequiresStdio,
                    join_key(&base, "env"),
                ));
            }
            check_headers(
                out,
                &join_key(&base, "custom_headers"),
                &server.custom_headers,
            );
            if let Some(authentication) = &server.authentication {
                check_authentication(out, &join_key(&base, "authentication"), authentication);
            }
            if let Some(allowed) = &server.allowed_tools {
                blank_names(out, &join_key(&base, "allowed_tools"), allowed);
            }
            let blocked_path = join_key(&base, "blocked_tools");
            blank_names(out, &blocked_path, &server.blocked_tools);
            if let Some(allowed) = &server.allowed_tools {
                overlap(
                    out,
                    ConfigRule::McpToolAllowedAndBlocked,
                    &blocked_path,
                    allowed,
                    &server.blocked_tools,
                );
            }
        }
    }

    fn check_system_stats(&self, out: &mut Vec<ConfigFinding>) {
        let SystemStatsSetting::Configured(stats) = &self.system_stats else {
            return;
        };
        if let Some(collect) = &stats.collect {
            if collect.is_empty() {
                out.push(finding(
                    ConfigRule::SystemStatsCollectEmpty,
                    "system_stats.collect",
                ));
            }
            let mut seen = BTreeSet::new();
            for (index, group) in collect.iter().enumerate() {
                if !seen.insert(*group) {
                    out.push(finding_with(
                        ConfigRule::SystemStatsGroupDuplicate,
                        join_index("system_stats.collect", index),
                        format!("group {}", group.as_str()),
                    ));
                }
            }
        }
        if let Some(sampling) = &stats.sampling {
            let interval = match sampling.interval_ms {
                0 => Some(ConfigRule::SamplingIntervalZero),
                ms if ms < MIN_SAMPLING_INTERVAL_MS => Some(ConfigRule::SamplingIntervalTooSmall),
                _ => None,
            };
            if let Some(rule) = interval {
                out.push(finding(rule, "system_stats.sampling.interval_ms"));
            }
            let samples = match sampling.max_samples {
                0 => Some(ConfigRule::SamplingMaxSamplesZero),
                n if n > MAX_SAMPLING_MAX_SAMPLES => Some(ConfigRule::SamplingMaxSamplesTooLarge),
                _ => None,
            };
            if let Some(rule) = samples {
                out.push(finding(rule, "system_stats.sampling.max_samples"));
            }
        }
    }

    fn check_telemetry(&self, out: &mut Vec<ConfigFinding>) {
        let Some(telemetry) = &self.telemetry else {
            return;
        };
        for name in telemetry.providers.keys() {
            if TelemetryProvider::parse(name).is_none() {
                out.push(finding(
                    ConfigRule::TelemetryProviderUnknown,
                    join_key("telemetry.providers", name),
                ));
            }
        }
    }

    fn check_relay(&self, out: &mut Vec<ConfigFinding>) {
        let Some(relay) = &self.relay else {
            return;
        };
        for (index, component) in relay.components.iter().enumerate() {
            let version = component.config.get("version");
            if component.kind == "observability" && version.is_some_and(|v| v != &Value::from(4)) {
                let config = join_key(&join_index("relay.components", index), "config");
                out.push(finding(
                    ConfigRule::RelayObservabilityVersion,
                    join_key(&config, "version"),
                ));
            }
        }
        let Some(observability) = &relay.observability else {
            return;
        };
        let base = "relay.observability";
        if observability.version.is_some_and(|version| version != 4) {
            out.push(finding(
                ConfigRule::RelayObservabilityVersion,
                join_key(base, "version"),
            ));
        }
        if let Some(atof) = &observability.atof {
            for (index, sink) in atof.sinks.iter().enumerate() {
                if let crate::config::RelayAtofSinkConfig::Stream(stream) = sink {
                    let sinks = join_key(&join_key(base, "atof"), "sinks");
                    let path = join_key(&join_index(&sinks, index), "headers");
                    check_headers(out, &path, &stream.headers);
                }
            }
        }
        if let Some(otel) = &observability.opentelemetry {
            let otel_base = join_key(base, "opentelemetry");
            if otel.enabled == Some(true) && otel.endpoints.is_empty() && otel.file_sinks.is_empty()
            {
                out.push(finding(
                    ConfigRule::RelayOpenTelemetryNoDestination,
                    otel_base.clone(),
                ));
            }
            for (index, endpoint) in otel.endpoints.iter().enumerate() {
                let path = join_key(
                    &join_index(&join_key(&otel_base, "endpoints"), index),
                    "headers",
                );
                check_headers(out, &path, &endpoint.headers);
            }
        }
    }
}

fn is_blank(value: &str) -> bool {
    value.trim().is_empty()
}

/// Variables the core sets (or, for the Relay pair, clears) for every adapter host; config can
/// neither set nor forward them.
pub const RESERVED_ENV_NAMES: &[&str] = &[
    "FABRIC_HOME",
    "FABRIC_RUNTIME_ID",
    "FABRIC_ARTIFACTS",
    "FABRIC_RELAY_ENABLED",
    "FABRIC_RELAY_CONFIG_PATH",
];

/// True when `name` is one of [`RESERVED_ENV_NAMES`].
pub fn is_reserved_env_name(name: &str) -> bool {
    RESERVED_ENV_NAMES.contains(&name)
}

/// True when `value` contains no whitespace or control characters (the URL parser would
/// silently strip tabs and newlines) and parses as an absolute URL (`url` crate, WHATWG
/// rules). A value with a `${NAME}` placeholder (expanded by the adapter, as in upstream's
/// examples) is only checked for whitespace and control characters.
pub fn is_url(value: &str) -> bool {
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    value.contains("${") || url::Url::parse(value).is_ok_and(|url| !url.cannot_be_a_base())
}

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_alphabetic() || first == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when `name` is an RFC 7230 `token` (non-empty `tchar`s).
pub fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// True when `value` is valid RFC 7230 field content: visible ASCII, space, tab and obs-text
/// (any non-ASCII character); no CR, LF, NUL or other control characters.
pub fn is_header_value(value: &str) -> bool {
    value
        .chars()
        .all(|c| c == ' ' || c == '\t' || (c.is_ascii_graphic()) || !c.is_ascii())
}

fn check_headers(out: &mut Vec<ConfigFinding>, base: &str, headers: &BTreeMap<String, String>) {
    for (name, value) in headers {
        let path = join_key(base, name);
        if !is_header_name(name) {
            out.push(finding(ConfigRule::HeaderNameInvalid, path.clone()));
        }
        if !is_header_value(value) {
            out.push(finding(ConfigRule::HeaderValueInvalid, path));
        }
    }
}

fn blank_names(out: &mut Vec<ConfigFinding>, base: &str, names: &[String]) {
    for (index, name) in names.iter().enumerate() {
        if is_blank(name) {
            out.push(finding(ConfigRule::ToolNameBlank, join_index(base, index)));
        }
    }
}

fn overlap(
    out: &mut Vec<ConfigFinding>,
    rule: ConfigRule,
    blocked_path: &str,
    allowed: &[String],
    blocked: &[String],
) {
    for (index, name) in blocked.iter().enumerate() {
        if !is_blank(name) && allowed.contains(name) {
            out.push(finding_with(
                rule,
                join_index(blocked_path, index),
                format!("tool {name}"),
            ));
        }
    }
}

fn check_authentication(
    out: &mut Vec<ConfigFinding>,
    base: &str,
    authentication: &McpAuthentication,
) {
    let mut bad = |field: &str| {
        out.push(finding(
            ConfigRule::McpAuthenticationInvalid,
            join_key(base, field),
        ));
    };
    match authentication {
        McpAuthentication::Oauth2(oauth) => {
            for (field, value) in [
                ("client_id", &oauth.client_id),
                ("client_secret_env", &oauth.client_secret_env),
                ("redirect_uri", &oauth.redirect_uri),
                ("client_name", &oauth.client_name),
            ] {
                if value.as_deref().is_some_and(is_blank) {
                    bad(field);
                }
            }
            if oauth.scopes.iter().any(|scope| is_blank(scope)) {
                bad("scopes");
            }
            if oauth.client_secret_env.is_some() && oauth.client_id.is_none() {
                bad("client_secret_env");
            }
            if oauth.client_id.is_none() && !oauth.enable_dynamic_registration {
                bad("client_id");
            }
            match oauth.token_endpoint_auth_method {
                Some(
                    OAuthTokenEndpointAuthMethod::ClientSecretBasic
                    | OAuthTokenEndpointAuthMethod::ClientSecretPost,
                ) if oauth.client_id.is_some() && oauth.client_secret_env.is_none() => {
                    bad("token_endpoint_auth_method");
                }
                Some(OAuthTokenEndpointAuthMethod::None) if oauth.client_secret_env.is_some() => {
                    bad("token_endpoint_auth_method");
                }
                _ => {}
            }
            if oauth.authorization_timeout_seconds == 0 {
                bad("authorization_timeout_seconds");
            }
        }
        McpAuthentication::ServiceAccount(account) => {
            for (field, value) in [
                ("client_id", &account.client_id),
                ("client_secret_env", &account.client_secret_env),
                ("token_url", &account.token_url),
            ] {
                if is_blank(value) {
                    bad(field);
                }
            }
            if account.scopes.iter().any(|scope| is_blank(scope)) {
                bad("scopes");
            }
            if account.token_endpoint_auth_method == Some(OAuthTokenEndpointAuthMethod::None) {
                bad("token_endpoint_auth_method");
            }
        }
    }
}

/// Bounds of `provenance.reports`: contexts.
pub const PROVENANCE_MAX_CONTEXTS: usize = 16;
/// Bounds of `provenance.reports`: total entries.
pub const PROVENANCE_MAX_ENTRIES: usize = 128;
/// Bounds of `provenance.reports`: compact UTF-8 JSON bytes.
pub const PROVENANCE_MAX_BYTES: usize = 64 * 1024;

/// Why supplied provenance reports are incomplete evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProvenanceIncompleteReason {
    /// `reports` is not a JSON object.
    Malformed,
    /// More than 16 contexts.
    TooManyContexts,
    /// More than 128 entries.
    TooManyEntries,
    /// More than 64 KiB of compact JSON.
    TooLarge,
}

impl ProvenanceIncompleteReason {
    /// Every reason.
    pub const ALL: &'static [ProvenanceIncompleteReason] = &[
        ProvenanceIncompleteReason::Malformed,
        ProvenanceIncompleteReason::TooManyContexts,
        ProvenanceIncompleteReason::TooManyEntries,
        ProvenanceIncompleteReason::TooLarge,
    ];

    /// Stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            ProvenanceIncompleteReason::Malformed => "provenance_reports_malformed",
            ProvenanceIncompleteReason::TooManyContexts => "provenance_reports_too_many_contexts",
            ProvenanceIncompleteReason::TooManyEntries => "provenance_reports_too_many_entries",
            ProvenanceIncompleteReason::TooLarge => "provenance_reports_too_large",
        }
    }
}

/// Measured size of supplied provenance reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ProvenanceReportsSize {
    /// Distinct `context_ref` values found anywhere in the report.
    pub contexts: usize,
    /// Total number of items of every `entries` array anywhere in the report.
    pub entries: usize,
    /// Length of the compact JSON encoding.
    pub bytes: usize,
}

/// Whether supplied provenance reports are usable evidence (never a config error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProvenanceReportsStatus {
    /// No reports supplied (or collection disabled).
    Absent,
    /// Within every bound.
    Complete(ProvenanceReportsSize),
    /// Over a bound or malformed: recorded as incomplete evidence, outcome unchanged.
    Incomplete {
        /// The first bound exceeded.
        reason: ProvenanceIncompleteReason,
        /// What was measured.
        size: ProvenanceReportsSize,
    },
}

fn count_evidence(value: &Value, contexts: &mut BTreeSet<String>, entries: &mut usize) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                if key == "context_ref" {
                    if let Value::String(reference) = item {
                        contexts.insert(reference.clone());
                    }
                }
                if key == "entries" {
                    if let Value::Array(items) = item {
                        *entries += items.len();
                    }
                }
                count_evidence(item, contexts, entries);
            }
        }
        Value::Array(items) => {
            for item in items {
                count_evidence(item, contexts, entries);
            }
        }
        _ => {}
    }
}

impl FabricConfig {
    /// Checks `provenance.reports` against its bounds (16 contexts, 128 entries, 64 KiB of
    /// compact JSON). Over-budget or malformed reports are incomplete evidence, not errors.
    pub fn provenance_reports_status(&self) -> ProvenanceReportsStatus {
        let Some(provenance) = &self.provenance else {
            return ProvenanceReportsStatus::Absent;
        };
        let Some(reports) = provenance.reports.as_ref().filter(|_| provenance.enabled) else {
            return ProvenanceReportsStatus::Absent;
        };
        let bytes = serde_json::to_string(reports).map_or(usize::MAX, |text| text.len());
        let mut contexts = BTreeSet::new();
        let mut entries = 0;
        count_evidence(reports, &mut contexts, &mut entries);
        let size = ProvenanceReportsSize {
            contexts: contexts.len(),
            entries,
            bytes,
        };
        let reason = if !reports.is_object() {
            Some(ProvenanceIncompleteReason::Malformed)
        } else if size.bytes > PROVENANCE_MAX_BYTES {
            Some(ProvenanceIncompleteReason::TooLarge)
        } else if size.contexts > PROVENANCE_MAX_CONTEXTS {
            Some(ProvenanceIncompleteReason::TooManyContexts)
        } else if size.entries > PROVENANCE_MAX_ENTRIES {
            Some(ProvenanceIncompleteReason::TooManyEntries)
        } else {
            None
        };
        match reason {
            Some(reason) => ProvenanceReportsStatus::Incomplete { reason, size },
            None => ProvenanceReportsStatus::Complete(size),
        }
    }
}
