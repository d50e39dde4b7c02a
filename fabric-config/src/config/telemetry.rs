//! Telemetry section: providers and their settings.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Extensions;
#[cfg(doc)]
use super::FabricConfig;

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
