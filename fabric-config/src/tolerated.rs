//! Unknown keys that upstream 0.5.0 tolerates inside Fabric-owned sections (`environment`,
//! `discovery`, `telemetry`, `telemetry.providers.<name>`, `relay`): the config runs as
//! upstream runs it (the keys are kept and passed through), and `fabric validate` and
//! `doctor` report each as a warning with a "did you mean" when a known key is close.
//!
//! ```
//! use fabric_config::FabricConfig;
//!
//! let config = FabricConfig::from_json_str(r#"{
//!     "schema_version": "fabric.agent/v1alpha1",
//!     "metadata": {"name": "demo"},
//!     "harness": {"adapter_id": "fabric.scripted"},
//!     "environment": {"wokspace": "./ws"}
//! }"#).unwrap();
//! let keys = config.tolerated_unknown_keys();
//! assert_eq!(keys[0].path, "environment.wokspace");
//! assert_eq!(keys[0].suggestion.as_deref(), Some("workspace"));
//! ```

use schemars::JsonSchema;
use serde_json::Value;

use crate::config::{
    DiscoveryConfig, EnvironmentConfig, Extensions, FabricConfig, RelayConfig, TelemetryConfig,
    TelemetryProviderConfig,
};
use crate::validate::join_key;

/// One tolerated unknown key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// JSON path of the key (`environment.wokspace`).
    pub path: String,
    /// The closest key the section defines, when one is close enough.
    pub suggestion: Option<String>,
}

impl UnknownKey {
    /// Human-readable, value-free warning text.
    pub fn message(&self) -> String {
        let hint = match &self.suggestion {
            Some(known) => format!(" (did you mean `{known}`?)"),
            None => String::new(),
        };
        format!(
            "`{}` is not a known field; it is kept and passed through, as upstream 0.5.0 does{hint}",
            self.path
        )
    }
}

/// Field names a type defines, read from its generated schema (no second list to drift).
fn known_fields<T: JsonSchema>() -> Vec<String> {
    let schema = schemars::schema_for!(T);
    schema
        .as_value()
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// The known field closest to `key` (Jaro-Winkler similarity of at least 0.8).
fn closest(key: &str, known: &[String]) -> Option<String> {
    known
        .iter()
        .map(|candidate| (strsim::jaro_winkler(key, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate.clone())
}

fn collect<T: JsonSchema>(section: &str, unknown: &Extensions, out: &mut Vec<UnknownKey>) {
    if unknown.is_empty() {
        return;
    }
    let known = known_fields::<T>();
    for key in unknown.keys() {
        out.push(UnknownKey {
            path: join_key(section, key),
            suggestion: closest(key, &known),
        });
    }
}

impl FabricConfig {
    /// Unknown keys inside Fabric-owned sections that upstream 0.5.0 tolerates, in document
    /// order of sections and sorted within each; empty for a clean config.
    pub fn tolerated_unknown_keys(&self) -> Vec<UnknownKey> {
        let mut out = Vec::new();
        if let Some(discovery) = &self.discovery {
            collect::<DiscoveryConfig>("discovery", &discovery.unknown, &mut out);
        }
        if let Some(environment) = &self.environment {
            collect::<EnvironmentConfig>("environment", &environment.unknown, &mut out);
        }
        if let Some(telemetry) = &self.telemetry {
            collect::<TelemetryConfig>("telemetry", &telemetry.unknown, &mut out);
            for (name, provider) in &telemetry.providers {
                let section = join_key(&join_key("telemetry", "providers"), name);
                collect::<TelemetryProviderConfig>(&section, &provider.unknown, &mut out);
            }
        }
        if let Some(relay) = &self.relay {
            collect::<RelayConfig>("relay", &relay.unknown, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_come_from_the_schema_and_only_when_close() {
        let known = known_fields::<EnvironmentConfig>();
        assert!(known.contains(&"workspace".to_owned()));
        assert!(
            !known.contains(&"unknown".to_owned()),
            "flattened map is no field"
        );
        assert_eq!(closest("wokspace", &known).as_deref(), Some("workspace"));
        assert_eq!(closest("env_name", &known).as_deref(), Some("env_names"));
        assert_eq!(closest("zzz", &known), None);
    }
}
