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
    DiscoveryConfig, EnvironmentConfig, Extensions, FabricConfig, HarnessConfig, InstructionConfig,
    InstructionsConfig, McpConfig, McpServerConfig, ModelConfig, RelayConfig, RuntimeConfig,
    SkillConfig, TelemetryConfig, TelemetryProviderConfig, WorkflowConfig,
};
use crate::validate::join_key;

/// Similarity above which an extension key is taken for a misspelt field (stricter than for
/// unknown keys: extension keys are legitimate, only near-certain slips are reported).
const EXTENSION_NEAR_MISS: f64 = 0.9;

/// One tolerated unknown key, or an extension key that looks like a misspelt field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// JSON path of the key (`environment.wokspace`).
    pub path: String,
    /// The closest key the section defines, when one is close enough.
    pub suggestion: Option<String>,
    /// Whether the section is an extension point (the key goes to the adapter).
    pub extension: bool,
}

impl UnknownKey {
    /// Human-readable, value-free warning text.
    pub fn message(&self) -> String {
        let hint = match &self.suggestion {
            Some(known) => format!(" (did you mean `{known}`?)"),
            None => String::new(),
        };
        if self.extension {
            return format!(
                "`{}` is not a field Fabric defines; it is passed to the adapter as an extension{hint}",
                self.path
            );
        }
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
pub(crate) fn closest(key: &str, known: &[String]) -> Option<String> {
    closest_above(key, known, 0.8)
}

fn closest_above(key: &str, known: &[String], threshold: f64) -> Option<String> {
    known
        .iter()
        .map(|candidate| (strsim::jaro_winkler(key, candidate), candidate))
        .filter(|(score, _)| *score >= threshold)
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
            extension: false,
        });
    }
}

/// Extension keys of `section` within [`EXTENSION_NEAR_MISS`] of a field it defines.
fn near_misses<T: JsonSchema>(section: &str, extensions: &Extensions, out: &mut Vec<UnknownKey>) {
    if extensions.is_empty() {
        return;
    }
    let known = known_fields::<T>();
    for key in extensions.keys() {
        if let Some(field) = closest_above(key, &known, EXTENSION_NEAR_MISS) {
            out.push(UnknownKey {
                path: join_key(section, key),
                suggestion: Some(field),
                extension: true,
            });
        }
    }
}

impl FabricConfig {
    /// Unknown keys inside Fabric-owned sections that upstream 0.5.0 tolerates, in document
    /// order of sections and sorted within each, then [`FabricConfig::extension_near_misses`];
    /// empty for a clean config.
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
        out.extend(self.extension_near_misses());
        out
    }

    /// Keys at extension points (passed to the adapter, checked against its
    /// `extension_schemas` by planning) that are one slip away from a field the section
    /// defines, such as `runtime.max_turn`: each with the field as its suggestion.
    pub fn extension_near_misses(&self) -> Vec<UnknownKey> {
        let mut out = Vec::new();
        if let Some(harness) = &self.harness {
            near_misses::<HarnessConfig>("harness", &harness.extensions, &mut out);
        }
        if let Some(workflow) = &self.workflow {
            near_misses::<WorkflowConfig>("workflow", &workflow.extensions, &mut out);
        }
        near_misses::<RuntimeConfig>("runtime", &self.runtime.extensions, &mut out);
        for (role, model) in &self.models {
            let section = join_key("models", role);
            near_misses::<ModelConfig>(&section, &model.extensions, &mut out);
        }
        if let Some(instructions) = &self.instructions {
            near_misses::<InstructionsConfig>("instructions", &instructions.extensions, &mut out);
            if let Some(system) = &instructions.system {
                let section = "instructions.system";
                near_misses::<InstructionConfig>(section, &system.extensions, &mut out);
            }
        }
        if let Some(skills) = &self.skills {
            near_misses::<SkillConfig>("skills", &skills.extensions, &mut out);
        }
        if let Some(mcp) = &self.mcp {
            near_misses::<McpConfig>("mcp", &mcp.extensions, &mut out);
            for (name, server) in &mcp.servers {
                let section = join_key(&join_key("mcp", "servers"), name);
                near_misses::<McpServerConfig>(&section, &server.extensions, &mut out);
            }
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

    #[test]
    fn extension_keys_one_slip_from_a_field_are_reported_with_it() {
        let config = FabricConfig::from_json_str(
            r#"{
                "schema_version": "fabric.agent/v1alpha1",
                "metadata": {"name": "demo"},
                "harness": {"adapter_id": "fabric.scripted", "setings": {}},
                "runtime": {"max_turn": 3, "sandbox_profile": "strict"},
                "models": {"default": {"provider": "p", "model": "m", "temprature": 0.2}}
            }"#,
        )
        .expect("decodes: extension keys are allowed");
        let keys = config.tolerated_unknown_keys();
        let found: Vec<(&str, Option<&str>)> = keys
            .iter()
            .map(|key| (key.path.as_str(), key.suggestion.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("harness.setings", Some("settings")),
                ("runtime.max_turn", Some("max_turns")),
                ("models.default.temprature", Some("temperature")),
            ],
            "sandbox_profile is a plain extension key"
        );
        assert_eq!(
            keys[1].message(),
            "`runtime.max_turn` is not a field Fabric defines; it is passed to the adapter as an extension (did you mean `max_turns`?)"
        );
    }
}
