//! Environment section: where the agent runs and which environment it gets.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::FabricConfig;
use super::{Extensions, JsonObject, default_provider};

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
