//! The service binding: which parts of a plan a runtime must share with the service it
//! connects to, and the `fabric-service-binding-<16 hex>` digest over them.
//!
//! Each section is digested on its own (sha256 of its canonical JSON) so a mismatch names
//! the sections that differ; values never leave this module.

use std::collections::BTreeMap;

use fabric_config::canonical::canonical_json;
use fabric_config::plan::RunPlan;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::environment::Environment;

/// Section name → hex digest.
pub(crate) type Sections = BTreeMap<&'static str, String>;

fn digest(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

/// The binding sections of `plan` started in `environment`: the agent name, the adapter,
/// the models, `runtime.timeout_seconds`, the environment (its configuration and the values
/// the host receives, `env_names` included) and the rest of the adapter's config.
pub(crate) fn sections(plan: &RunPlan, environment: &Environment) -> Sections {
    let config = &plan.config;
    let adapter = plan
        .adapter_descriptor
        .as_ref()
        .map(|d| d.descriptor.adapter_id.clone());
    let mut agent_config = serde_json::to_value(&plan.agent_config).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut agent_config {
        // Reported as its own section.
        map.remove("models");
    }
    let host_env: BTreeMap<&String, &String> = environment.host_env().collect();
    let mut sections = Sections::new();
    sections.insert("metadata.name", digest(&json!(plan.agent_name)));
    sections.insert("harness", digest(&json!(adapter)));
    sections.insert("models", digest(&json!(config.models)));
    sections.insert(
        "runtime.timeout_seconds",
        digest(&json!(config.runtime.timeout_seconds)),
    );
    sections.insert(
        "environment",
        digest(&json!({"config": config.environment, "values": host_env})),
    );
    sections.insert("agent_config", digest(&agent_config));
    sections
}

/// `fabric-service-binding-<16 hex>` over every section.
pub(crate) fn binding(sections: &Sections) -> String {
    let all = digest(&json!(sections));
    format!("fabric-service-binding-{}", &all[..16])
}

/// The sections whose digests differ (in name order).
pub(crate) fn differences(service: &Sections, runtime: &Sections) -> Vec<String> {
    service
        .iter()
        .filter(|(name, value)| runtime.get(*name) != Some(*value))
        .map(|(name, _)| (*name).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_changed_sections_only() {
        let mut a = Sections::new();
        a.insert("models", "1".into());
        a.insert("environment", "2".into());
        let mut b = a.clone();
        assert!(differences(&a, &b).is_empty());
        b.insert("environment", "3".into());
        assert_eq!(differences(&a, &b), vec!["environment".to_owned()]);
        assert_ne!(binding(&a), binding(&b));
        assert!(binding(&a).starts_with("fabric-service-binding-"));
        assert_eq!(binding(&a).len(), "fabric-service-binding-".len() + 16);
    }
}
