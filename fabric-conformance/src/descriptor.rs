//! The `descriptor` group: a valid contract, discovery as `plan` finds it, the fingerprint,
//! local-only schema references; and the adapter the other groups check.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fabric_config::FabricConfig;
use fabric_config::conformance::{ConformanceAdapter, ConformanceStatus};
use fabric_plan::{DiscoveryOptions, LoadedAdapter};
use serde_json::{Value, json};

use crate::recorder::{Outcome, Recorder};
use crate::{CheckOptions, ConformanceError, Context};

/// The adapter under check, as discovery found it.
pub(crate) struct Subject {
    pub loaded: Arc<LoadedAdapter>,
    /// The descriptor file discovery chose.
    pub path: PathBuf,
    /// The file the caller named, when any.
    pub named: Option<PathBuf>,
    /// Directories to search first (the named descriptor's).
    pub local_paths: Vec<String>,
}

impl Subject {
    pub fn resolve(options: &CheckOptions) -> Result<Subject, ConformanceError> {
        let named = options
            .descriptor
            .as_ref()
            .map(|path| std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()));
        let adapter_id = match (&options.adapter_id, &named) {
            (Some(id), _) => id.clone(),
            (None, Some(path)) => fabric_plan::load_adapter_descriptor(path)?.adapter_id,
            (None, None) => return Err(ConformanceError::NoAdapter),
        };
        let local_paths: Vec<String> = named
            .as_deref()
            .and_then(Path::parent)
            .map(|dir| vec![dir.display().to_string()])
            .unwrap_or_default();
        let base = std::env::current_dir().map_err(|_| ConformanceError::BaseDir)?;
        let catalog =
            fabric_plan::discovery::discover_all(&DiscoveryOptions::from_env(&local_paths, &base))?;
        let found = catalog
            .adapters
            .get(&adapter_id)
            .ok_or(ConformanceError::NotFound { adapter_id })?;
        Ok(Subject {
            loaded: Arc::clone(&found.loaded),
            path: PathBuf::from(&found.provenance[0].path),
            named,
            local_paths,
        })
    }

    /// A config that selects the adapter with every setting left to its defaults (required
    /// settings get the default their schema declares).
    pub fn default_config(&self) -> Result<FabricConfig, ConformanceError> {
        let descriptor = &self.loaded.descriptor;
        let mut settings = serde_json::Map::new();
        if let Some(schema) = &descriptor.settings_schema {
            let properties = schema.get("properties").and_then(Value::as_object);
            for name in required(schema) {
                if let Some(default) = properties
                    .and_then(|p| p.get(&name))
                    .and_then(|p| p.get("default"))
                {
                    settings.insert(name, default.clone());
                }
            }
        }
        let mut config = json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "conformance"},
            "harness": {"adapter_id": descriptor.adapter_id, "settings": settings},
        });
        if !self.local_paths.is_empty() {
            config["discovery"] = json!({"local_paths": self.local_paths});
        }
        FabricConfig::parse(&config.to_string()).map_err(|_| ConformanceError::BuiltConfig {
            path: "harness.settings".to_owned(),
        })
    }

    /// A caller's `config` with the named descriptor's directory first in
    /// `discovery.local_paths` (where the kit found the adapter) unless it is listed, so the
    /// config plans the descriptor that is checked.
    pub fn searching_named(&self, mut config: FabricConfig) -> FabricConfig {
        if self.local_paths.is_empty() {
            return config;
        }
        let discovery = config.discovery.get_or_insert_with(Default::default);
        for dir in self.local_paths.iter().rev() {
            if !discovery.local_paths.contains(dir) {
                discovery.local_paths.insert(0, dir.clone());
            }
        }
        config
    }

    /// The report's adapter section.
    pub fn summary(&self, recorder: &Recorder) -> ConformanceAdapter {
        let descriptor = &self.loaded.descriptor;
        let capabilities = &descriptor.capabilities;
        let mut claims = std::collections::BTreeMap::new();
        for (name, claimed) in [
            ("cancellation", capabilities.cancellation),
            ("service", capabilities.service),
            ("streaming", capabilities.streaming),
            ("updates", capabilities.updates),
            (
                "relay",
                descriptor.telemetry.providers.contains_key("relay"),
            ),
        ] {
            let failing = recorder
                .checks()
                .iter()
                .any(|c| c.group == name && c.status == ConformanceStatus::Failed);
            let state = match (claimed, failing) {
                (false, _) => "unsupported",
                (true, true) => "claimed_but_failing",
                (true, false) => "supported",
            };
            claims.insert(name.to_owned(), state.to_owned());
        }
        ConformanceAdapter {
            adapter_id: descriptor.adapter_id.clone(),
            adapter_kind: Some(descriptor.adapter_kind.as_str().to_owned()),
            contract_version: Some(descriptor.contract_version.clone()),
            descriptor_path: Some(self.path.display().to_string()),
            descriptor_sha256: Some(self.loaded.sha256.clone()),
            package: None,
            version: None,
            capabilities: claims,
        }
    }
}

/// The `required` names of an object schema.
pub(crate) fn required(schema: &serde_json::Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("descriptor") {
        return;
    }
    let subject = &context.subject;
    recorder.check("descriptor.contract", || {
        Outcome::Passed(format!(
            "`{}` is a valid `{}` descriptor",
            subject.path.display(),
            subject.loaded.descriptor.contract_version
        ))
    });
    recorder.check("descriptor.discovery", || match &subject.named {
        Some(named) if named != &subject.path => Outcome::Failed(
            "discovery chose another descriptor file for this adapter id than the one named"
                .to_owned(),
            json!({"named": named, "discovered": subject.path}),
        ),
        _ => Outcome::Passed(format!(
            "discovery finds `{}` at `{}`",
            subject.loaded.descriptor.adapter_id,
            subject.path.display()
        )),
    });
    recorder.check("descriptor.fingerprint", || {
        match context.plan(&context.config) {
            Ok(plan)
                if plan.descriptor_sha256.as_deref() == Some(subject.loaded.sha256.as_str()) =>
            {
                Outcome::Passed("the plan's fingerprint is the discovered descriptor's".to_owned())
            }
            Ok(plan) => Outcome::Failed(
                "the plan's fingerprint differs from the discovered descriptor's".to_owned(),
                json!({"plan": plan.descriptor_sha256, "discovered": subject.loaded.sha256}),
            ),
            Err(info) => Outcome::Skipped(format!(
                "the config does not plan (see configs.accepted): {}",
                info.code
            )),
        }
    });
    recorder.check("descriptor.schema_refs", || {
        let mut remote = Vec::new();
        refs(&subject.loaded.normalized, "", &mut remote);
        if remote.is_empty() {
            Outcome::Passed("every `$ref` of the declared schemas is local".to_owned())
        } else {
            Outcome::Failed(
                "a declared schema refers outside the descriptor".to_owned(),
                json!({"refs": remote}),
            )
        }
    });
}

/// Every `$ref` under `value` that is not a local `#…` reference, with its path.
fn refs(value: &Value, path: &str, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let here = format!("{path}/{key}");
                match (key.as_str(), item) {
                    ("$ref", Value::String(target)) if !target.starts_with('#') => {
                        out.push(json!({"path": here, "ref": target}));
                    }
                    _ => refs(item, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                refs(item, &format!("{path}/{index}"), out);
            }
        }
        _ => {}
    }
}
