//! Decoding with JSON paths, the config rules (`validate`, `validate_all`), and the adapter
//! selector rule the planner shares (`selected_adapter`).
//!
//! Decode errors carry the path of the offending field (via `serde_path_to_error`) and a
//! message built from the *expected* shape only: string and number literals from the input
//! are never copied into messages. Rules produce [`ConfigFinding`]s with stable codes.

mod decode;
mod names;
mod provenance;
mod rules;
mod selector;
mod syntax;

use serde_json::Value;

use crate::config::FabricConfig;
use crate::error::{ConfigError, ConfigFinding, ConfigRule};

pub(crate) use decode::{decode_error, decode_json_str};
pub use decode::{join_index, join_key};
pub use names::{
    RESERVED_ENV_NAMES, is_env_name, is_header_name, is_header_value, is_reserved_env_name, is_url,
};
pub use provenance::{
    PROVENANCE_MAX_BYTES, PROVENANCE_MAX_CONTEXTS, PROVENANCE_MAX_ENTRIES,
    ProvenanceIncompleteReason, ProvenanceReportsSize, ProvenanceReportsStatus,
};
pub use selector::SelectorError;
pub use syntax::json_syntax_reason;

pub(super) fn finding(rule: ConfigRule, path: impl Into<String>) -> ConfigFinding {
    ConfigFinding {
        rule,
        path: path.into(),
        detail: None,
    }
}

pub(super) fn finding_with(
    rule: ConfigRule,
    path: impl Into<String>,
    detail: String,
) -> ConfigFinding {
    ConfigFinding {
        rule,
        path: path.into(),
        detail: Some(detail),
    }
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
}
