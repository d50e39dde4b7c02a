//! Relay section: the NeMo Relay-owned observability subtree.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(doc)]
use super::FabricConfig;
use super::{Extensions, JsonObject};

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
