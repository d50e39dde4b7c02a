//! Runtime telemetry: the Relay config file an adapter's Relay integration loads, the
//! telemetry context sent with every lifecycle call, the telemetry references of results
//! and the Relay artifacts an adapter reports.
//!
//! Wire behaviour follows upstream 0.5.0:
//!
//! - With Relay enabled and an artifact root configured, `start` writes
//!   `<root>/.fabric/<runtime_id>/<start invocation id>/relay-config.json`
//!   (`{schema_version: "fabric.relay/v1alpha1", relay: {enabled, project, output_dir,
//!   config}, fabric: {agent_name, harness, adapter_id, runtime_id, adapter_outputs}}`, pretty
//!   JSON with sorted keys) before the host is launched. The host then gets
//!   `FABRIC_RELAY_ENABLED=true` and `FABRIC_RELAY_CONFIG_PATH`, the same pair is the
//!   context's `telemetry.env`, its `config_path` names the file, and the file is the
//!   artifact `relay_config` (kind `telemetry_config`) of the context and of every result.
//!   Without an artifact root nothing is written and no variable is set (as upstream).
//!   Unlike upstream (0755/0644) the directory is 0700 and the file 0600. The file holds
//!   what the plan's `telemetry_plan` holds: `header_env` names, never their values.
//! - `telemetry.metadata` is `{adapter_outputs, telemetry_providers, relay_project?,
//!   relay_output_dir?}`; a result's reference adds `relay_config` (the plan's Relay config)
//!   and `relay_config_path`.
//! - The adapter's `output.relay_artifacts` (`[{kind, path}]`, as upstream's
//!   `collect_relay_artifacts` returns) become manifest entries `relay_<kind>` (`_2`, `_3`,
//!   ... for repeats): only kinds `atif` and `atof`, paths that exist (a relative path is
//!   taken against the artifact root; without one, as upstream, against the calling
//!   process's working directory), a path not already in the manifest; anything else is
//!   skipped. The core reads no Relay output directory itself.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use fabric_config::Stage;
use fabric_config::agent::RuntimeTelemetryContext;
use fabric_config::config::JsonObject;
use fabric_config::plan::TelemetryPlan;
use fabric_config::result::{ArtifactRef, TelemetryRef};
use serde_json::{Value, json};

use crate::error::HostError;
use crate::home::{private_dir, private_file};

/// `schema_version` of `relay-config.json`.
pub(crate) const RELAY_CONFIG_SCHEMA: &str = "fabric.relay/v1alpha1";
/// File name of the Relay config.
pub(crate) const RELAY_CONFIG_FILE: &str = "relay-config.json";
/// Set to `true` in the host's environment when the Relay config was written.
pub(crate) const ENV_RELAY_ENABLED: &str = "FABRIC_RELAY_ENABLED";
/// The Relay config's absolute path, in the host's environment.
pub(crate) const ENV_RELAY_CONFIG_PATH: &str = "FABRIC_RELAY_CONFIG_PATH";

/// Who the Relay config describes.
pub(crate) struct RelayIdentity<'a> {
    pub agent_name: &'a str,
    pub harness: &'a str,
    pub adapter_id: Option<&'a str>,
    pub runtime_id: &'a str,
}

/// Where the Relay config goes: the runtime's FABRIC_HOME under the artifact root.
pub(crate) struct RelayLocation<'a> {
    /// `<root>/.fabric/<runtime_id>`.
    pub home: &'a Path,
    /// The artifact root (`None`: nothing is written).
    pub artifact_root: Option<&'a Path>,
    /// The start operation's invocation id (`runtime-start-…`).
    pub start_id: &'a str,
}

/// The written Relay config.
#[derive(Debug, Clone)]
struct RelayConfigFile {
    absolute: String,
    /// Relative to the artifact root.
    reference: String,
}

/// One runtime's telemetry (empty when the plan has no telemetry).
#[derive(Debug, Clone, Default)]
pub(crate) struct RuntimeTelemetry {
    context: Option<RuntimeTelemetryContext>,
    relay_config: Option<RelayConfigFile>,
    reference_metadata: JsonObject,
}

impl RuntimeTelemetry {
    /// The telemetry of a runtime of `plan`; writes the Relay config when Relay is enabled
    /// and an artifact root is configured.
    ///
    /// Errors: `filesystem_error` (stage `start`) when the file cannot be written.
    pub(crate) fn prepare(
        plan: Option<&TelemetryPlan>,
        identity: &RelayIdentity<'_>,
        location: &RelayLocation<'_>,
    ) -> Result<RuntimeTelemetry, HostError> {
        let Some(plan) = plan else {
            return Ok(RuntimeTelemetry::default());
        };
        let mut metadata = JsonObject::new();
        metadata.insert("adapter_outputs".into(), json!(plan.adapter_outputs));
        let providers: Vec<&str> = plan.providers.iter().map(|p| p.as_str()).collect();
        metadata.insert("telemetry_providers".into(), json!(providers));
        if let Some(project) = &plan.relay_project {
            metadata.insert("relay_project".into(), json!(project));
        }
        if let Some(dir) = &plan.relay_output_dir {
            metadata.insert("relay_output_dir".into(), json!(dir));
        }
        let mut reference_metadata = metadata.clone();
        if let Some(config) = &plan.relay_config {
            reference_metadata.insert("relay_config".into(), config.clone());
        }
        let relay_config = match location.artifact_root {
            Some(root) if plan.relay_enabled => {
                Some(write_relay_config(plan, identity, location, root)?)
            }
            _ => None,
        };
        let mut env = BTreeMap::new();
        if let Some(file) = &relay_config {
            env.insert(ENV_RELAY_CONFIG_PATH.to_owned(), file.absolute.clone());
            env.insert(ENV_RELAY_ENABLED.to_owned(), "true".to_owned());
            reference_metadata.insert("relay_config_path".into(), json!(file.absolute));
        }
        Ok(RuntimeTelemetry {
            context: Some(RuntimeTelemetryContext {
                relay_enabled: plan.relay_enabled,
                config_path: relay_config.as_ref().map(|f| f.absolute.clone()),
                env,
                metadata,
            }),
            relay_config,
            reference_metadata,
        })
    }

    /// The context's `telemetry` (`None` without a telemetry plan).
    pub(crate) fn context(&self) -> Option<&RuntimeTelemetryContext> {
        self.context.as_ref()
    }

    /// Variables the host process gets (the context's `telemetry.env`).
    pub(crate) fn host_env(&self) -> impl Iterator<Item = (&str, &str)> {
        self.context
            .iter()
            .flat_map(|c| c.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// The `relay_config` artifact for an adapter-facing context (absolute path, as
    /// upstream sends it).
    pub(crate) fn context_artifacts(&self) -> Vec<ArtifactRef> {
        self.relay_config
            .iter()
            .map(|f| relay_config_ref(f.absolute.clone()))
            .collect()
    }

    /// The `relay_config` artifact for a result manifest (relative to the artifact root).
    pub(crate) fn manifest_artifacts(&self) -> Vec<ArtifactRef> {
        self.relay_config
            .iter()
            .map(|f| relay_config_ref(f.reference.clone()))
            .collect()
    }

    /// A result's telemetry references: one per runtime with a telemetry plan.
    pub(crate) fn references(&self) -> Vec<TelemetryRef> {
        self.context
            .iter()
            .map(|c| TelemetryRef::from_relay(c.relay_enabled, &self.reference_metadata))
            .collect()
    }
}

fn relay_config_ref(path: String) -> ArtifactRef {
    ArtifactRef {
        name: "relay_config".into(),
        kind: "telemetry_config".into(),
        path,
        media_type: Some("application/json".into()),
        metadata: JsonObject::new(),
    }
}

fn write_relay_config(
    plan: &TelemetryPlan,
    identity: &RelayIdentity<'_>,
    location: &RelayLocation<'_>,
    root: &Path,
) -> Result<RelayConfigFile, HostError> {
    let document = json!({
        "schema_version": RELAY_CONFIG_SCHEMA,
        "relay": {
            "enabled": true,
            "project": plan.relay_project,
            "output_dir": plan.relay_output_dir,
            "config": plan.relay_config.clone().unwrap_or_else(|| json!({})),
        },
        "fabric": {
            "agent_name": identity.agent_name,
            "harness": identity.harness,
            "adapter_id": identity.adapter_id,
            "runtime_id": identity.runtime_id,
            "adapter_outputs": plan.adapter_outputs,
        },
    });
    let dir = location.home.join(location.start_id);
    private_dir(root, &dir, Stage::Start)?;
    let path = dir.join(RELAY_CONFIG_FILE);
    let bytes = serde_json::to_vec_pretty(&document).unwrap_or_default();
    private_file(root, &path, &bytes, Stage::Start)?;
    let reference = match path.strip_prefix(root) {
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    };
    Ok(RelayConfigFile {
        absolute: path.to_string_lossy().into_owned(),
        reference,
    })
}

/// Media type of a Relay artifact kind the core accepts.
fn relay_media_type(kind: &str) -> Option<&'static str> {
    match kind {
        "atif" => Some("application/json"),
        "atof" => Some("application/x-ndjson"),
        _ => None,
    }
}

/// Manifest entries for the adapter's `output.relay_artifacts` (rules in the module docs).
/// `existing` is the manifest so far, its relative paths resolved against `home_root` (the
/// artifact root, else the temporary home's root); a path under the artifact root is listed
/// relative to it (as every other entry), others absolute.
pub(crate) fn relay_artifacts(
    output: &Value,
    artifact_root: Option<&Path>,
    home_root: &Path,
    existing: &[ArtifactRef],
) -> Vec<ArtifactRef> {
    let Some(entries) = output.get("relay_artifacts").and_then(Value::as_array) else {
        return Vec::new();
    };
    let absolute = |path: &str| -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            home_root.join(path)
        }
    };
    let mut seen: HashSet<PathBuf> = existing.iter().map(|a| absolute(&a.path)).collect();
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    let mut out = Vec::new();
    for entry in entries {
        let (Some(kind), Some(path)) = (
            entry.get("kind").and_then(Value::as_str),
            entry.get("path").and_then(Value::as_str),
        ) else {
            continue;
        };
        let Some(media_type) = relay_media_type(kind) else {
            continue;
        };
        let candidate: PathBuf = match artifact_root {
            Some(root) if !Path::new(path).is_absolute() => root.join(path),
            _ => PathBuf::from(path),
        }
        .components()
        .collect();
        if candidate.as_os_str().is_empty() || std::fs::metadata(&candidate).is_err() {
            continue;
        }
        if !seen.insert(candidate.clone()) {
            continue;
        }
        let kind: &'static str = if kind == "atif" { "atif" } else { "atof" };
        let count = counts.entry(kind).or_insert(0);
        *count += 1;
        let name = match *count {
            1 => format!("relay_{kind}"),
            n => format!("relay_{kind}_{n}"),
        };
        out.push(ArtifactRef {
            name,
            kind: kind.to_owned(),
            path: artifact_root.map_or_else(
                || candidate.to_string_lossy().into_owned(),
                |root| listed_path(&candidate, root),
            ),
            media_type: Some(media_type.to_owned()),
            metadata: JsonObject::new(),
        });
    }
    out
}

/// `path` relative to `root` when it lies lexically below it (plain components only), else
/// as given.
fn listed_path(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative)
            if !relative.as_os_str().is_empty()
                && relative
                    .components()
                    .all(|c| matches!(c, Component::Normal(_))) =>
        {
            relative.to_string_lossy().into_owned()
        }
        _ => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use fabric_config::config::TelemetryProvider;

    use super::*;

    fn plan(relay_config: Option<Value>) -> TelemetryPlan {
        TelemetryPlan {
            providers: vec![TelemetryProvider::Relay],
            relay_enabled: true,
            relay_project: Some("proj".into()),
            relay_output_dir: None,
            relay_config,
            native_config: None,
            adapter_outputs: vec!["atif".into(), "atof".into()],
        }
    }

    const IDENTITY: RelayIdentity<'static> = RelayIdentity {
        agent_name: "agent",
        harness: "fabric.x",
        adapter_id: Some("fabric.x"),
        runtime_id: "runtime-1",
    };

    #[test]
    fn relay_config_file_context_and_references() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let home = root.join(".fabric/runtime-1");
        fs::create_dir_all(&home).expect("home");
        let config = json!({"version": 1, "components": []});
        let telemetry = RuntimeTelemetry::prepare(
            Some(&plan(Some(config.clone()))),
            &IDENTITY,
            &RelayLocation {
                home: &home,
                artifact_root: Some(root),
                start_id: "runtime-start-2",
            },
        )
        .expect("prepare");
        let path = home.join("runtime-start-2/relay-config.json");
        assert_eq!(
            fs::metadata(&path).expect("file").permissions().mode() & 0o777,
            0o600
        );
        let written: Value = serde_json::from_slice(&fs::read(&path).expect("read")).expect("json");
        assert_eq!(
            written,
            json!({
                "schema_version": "fabric.relay/v1alpha1",
                "relay": {"enabled": true, "project": "proj", "output_dir": null, "config": config},
                "fabric": {"agent_name": "agent", "harness": "fabric.x", "adapter_id": "fabric.x",
                           "runtime_id": "runtime-1", "adapter_outputs": ["atif", "atof"]}
            })
        );
        let absolute = path.to_string_lossy().into_owned();
        let context = telemetry.context().expect("context");
        assert_eq!(context.config_path.as_deref(), Some(absolute.as_str()));
        assert_eq!(
            telemetry.host_env().collect::<Vec<_>>(),
            vec![
                ("FABRIC_RELAY_CONFIG_PATH", absolute.as_str()),
                ("FABRIC_RELAY_ENABLED", "true")
            ]
        );
        assert!(!context.metadata.contains_key("relay_config"));
        assert_eq!(
            telemetry.manifest_artifacts()[0].path,
            ".fabric/runtime-1/runtime-start-2/relay-config.json"
        );
        assert_eq!(telemetry.context_artifacts()[0].path, absolute);
        let reference = &telemetry.references()[0];
        assert_eq!(reference.metadata["relay_config"], config);
        assert_eq!(reference.metadata["relay_config_path"], json!(absolute));
        assert_eq!(reference.metadata["relay_enabled"], json!(true));
    }

    #[test]
    fn without_an_artifact_root_nothing_is_written_and_no_variable_set() {
        let dir = tempfile::tempdir().expect("tempdir");
        let telemetry = RuntimeTelemetry::prepare(
            Some(&plan(None)),
            &IDENTITY,
            &RelayLocation {
                home: dir.path(),
                artifact_root: None,
                start_id: "runtime-start-2",
            },
        )
        .expect("prepare");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 0);
        assert_eq!(telemetry.host_env().count(), 0);
        assert!(telemetry.context_artifacts().is_empty());
        let context = telemetry.context().expect("context");
        assert!(context.relay_enabled && context.config_path.is_none());
        assert_eq!(context.metadata["relay_project"], json!("proj"));
        assert!(
            !telemetry.references()[0]
                .metadata
                .contains_key("relay_config_path")
        );
    }

    #[test]
    fn relay_artifacts_follow_the_upstream_rules() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::create_dir_all(root.join("relay")).expect("dir");
        for name in ["a.json", "b.json", "c.jsonl", "kept.json", "fresh.json"] {
            fs::write(root.join("relay").join(name), "{}").expect("write");
        }
        let outside = tempfile::NamedTempFile::new().expect("outside");
        let p = |name: &str| root.join("relay").join(name).to_string_lossy().into_owned();
        let output = json!({"relay_artifacts": [
            {"kind": "atif", "path": p("a.json")},
            {"kind": "atif", "path": p("a.json")},
            {"kind": "atif", "path": p("b.json")},
            {"kind": "atof", "path": p("c.jsonl"), "extra": 1},
            {"kind": "atof", "path": outside.path().to_string_lossy()},
            {"kind": "otlp", "path": p("c.jsonl")},
            {"kind": "atif", "path": p("missing.json")},
            {"kind": "atif", "path": "relay/b.json"},
            {"kind": "atif", "path": "relay/./fresh.json"},
            {"kind": "atif", "path": "elsewhere/b.json"},
            {"kind": "atif", "path": p("kept.json")},
            {"kind": "atif"},
            5
        ]});
        let existing = vec![ArtifactRef {
            name: "mine".into(),
            kind: "file".into(),
            path: "relay/kept.json".into(),
            media_type: None,
            metadata: JsonObject::new(),
        }];
        let refs = relay_artifacts(&output, Some(root), root, &existing);
        let listed: Vec<(&str, &str, &str)> = refs
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.path.as_str(),
                    r.media_type.as_deref().unwrap_or(""),
                )
            })
            .collect();
        let outside_path = outside.path().to_string_lossy().into_owned();
        assert_eq!(
            listed,
            vec![
                ("relay_atif", "relay/a.json", "application/json"),
                ("relay_atif_2", "relay/b.json", "application/json"),
                ("relay_atof", "relay/c.jsonl", "application/x-ndjson"),
                (
                    "relay_atof_2",
                    outside_path.as_str(),
                    "application/x-ndjson"
                ),
                ("relay_atif_3", "relay/fresh.json", "application/json"),
            ]
        );
        assert!(relay_artifacts(&json!({"relay_artifacts": {}}), None, root, &[]).is_empty());
        assert!(relay_artifacts(&json!("text"), None, root, &[]).is_empty());
        let unrooted = relay_artifacts(&output, None, root, &[]);
        assert_eq!(unrooted[0].path, p("a.json"));
    }
}
