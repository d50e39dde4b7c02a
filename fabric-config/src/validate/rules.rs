//! The config rules, in document order, and their shared checks (headers, names,
//! authentication).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::config::{
    FabricConfig, MAX_SAMPLING_MAX_SAMPLES, MIN_SAMPLING_INTERVAL_MS, McpAuthentication,
    McpTransport, OAuthTokenEndpointAuthMethod, SCHEMA_VERSION, SystemStatsSetting,
    TelemetryProvider,
};
use crate::error::{ConfigFinding, ConfigRule};

use super::decode::{join_index, join_key};
use super::names::{is_env_name, is_header_name, is_header_value, is_reserved_env_name, is_url};
use super::{finding, finding_with};

impl FabricConfig {
    pub(super) fn check_identity(&self, out: &mut Vec<ConfigFinding>) {
        if self.schema_version != SCHEMA_VERSION {
            out.push(finding(ConfigRule::SchemaVersionUnknown, "schema_version"));
        }
        if is_blank(&self.metadata.name) {
            out.push(finding(ConfigRule::MetadataNameBlank, "metadata.name"));
        }
        self.check_selector(out);
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
                let at = join_index("discovery.local_paths", index);
                if is_blank(path) {
                    out.push(finding(ConfigRule::DiscoveryPathBlank, at));
                } else {
                    check_nul(out, at, path);
                }
            }
        }
        if let Some(skills) = &self.skills {
            for (index, path) in skills.paths.iter().enumerate() {
                let at = join_index("skills.paths", index);
                if is_blank(path) {
                    out.push(finding(ConfigRule::SkillPathBlank, at));
                } else {
                    check_nul(out, at, path);
                }
            }
        }
    }

    pub(super) fn check_environment(&self, out: &mut Vec<ConfigFinding>) {
        let Some(environment) = &self.environment else {
            return;
        };
        if let Some(workspace) = &environment.workspace {
            check_nul(out, "environment.workspace".into(), workspace);
        }
        if let Some(artifacts) = &environment.artifacts {
            check_nul(out, "environment.artifacts".into(), artifacts);
        }
        for (name, value) in &environment.env {
            let path = join_key("environment.env", name);
            if is_blank(name) {
                out.push(finding(ConfigRule::EnvNameBlank, path));
            } else if !is_env_name(name) {
                out.push(finding(ConfigRule::EnvNameInvalid, path));
            } else if is_reserved_env_name(name) {
                out.push(finding(ConfigRule::EnvNameReserved, path));
            } else {
                check_nul(out, path, value);
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

    pub(super) fn check_models(&self, out: &mut Vec<ConfigFinding>) {
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

    pub(super) fn check_runtime_and_instructions(&self, out: &mut Vec<ConfigFinding>) {
        if let Some(artifacts) = &self.runtime.artifacts {
            check_nul(out, "runtime.artifacts".into(), artifacts);
        }
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

    pub(super) fn check_tools(&self, out: &mut Vec<ConfigFinding>) {
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

    pub(super) fn check_mcp(&self, out: &mut Vec<ConfigFinding>) {
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

    pub(super) fn check_system_stats(&self, out: &mut Vec<ConfigFinding>) {
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

    pub(super) fn check_telemetry(&self, out: &mut Vec<ConfigFinding>) {
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

    pub(super) fn check_relay(&self, out: &mut Vec<ConfigFinding>) {
        let Some(relay) = &self.relay else {
            return;
        };
        if let Some(output_dir) = &relay.output_dir {
            check_nul(out, "relay.output_dir".into(), output_dir);
        }
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

/// A value the core hands to the operating system (a path, an environment variable's
/// value) cannot hold a NUL byte: C strings end at the first one.
fn check_nul(out: &mut Vec<ConfigFinding>, path: String, value: &str) {
    if value.contains('\0') {
        out.push(finding(ConfigRule::NulByte, path));
    }
}

pub(super) fn is_blank(value: &str) -> bool {
    value.trim().is_empty()
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
