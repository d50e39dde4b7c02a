//! The local environment provider: `prepare_environment`, env forwarding, release.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use fabric_config::Stage;
use fabric_config::agent::EnvironmentHandle;
use fabric_config::config::{ControlLocation, EnvironmentOwnership};
use fabric_config::handles::EnvironmentInfo;
use fabric_config::path::resolve_path;
use fabric_config::plan::RunPlan;
use serde_json::Value;

use crate::error::HostError;
use crate::ids;

/// A prepared (local) environment: the immutable handle passed to adapters plus what the
/// core needs to re-check forwarded variables. Several runtimes may share one environment.
#[derive(Debug)]
pub struct Environment {
    handle: EnvironmentHandle,
    env_names: Vec<String>,
    workspace: PathBuf,
    artifact_root: Option<PathBuf>,
    released: AtomicBool,
}

impl Environment {
    /// Prepares the local environment of `plan`: resolves `env_names` from this process
    /// (an unset name fails at `stage`, naming the variable) and the workspace and
    /// artifact paths (against the plan's `base_dir`).
    pub fn prepare(plan: &RunPlan, stage: Stage) -> Result<Environment, HostError> {
        let base_dir = PathBuf::from(&plan.base_dir);
        let env_plan = plan.environment_plan.as_ref();
        let provider = env_plan.map_or("local", |p| p.provider.as_str());
        if provider != "local" {
            return Err(HostError::Capability {
                stage: Stage::Prepare,
                code: "environment_provider_unsupported",
                message: format!(
                    "environment provider `{provider}` is not supported by this core (only `local`)"
                ),
            });
        }
        let literal = env_plan.map(|p| p.env.clone()).unwrap_or_default();
        let env_names = env_plan.map(|p| p.env_names.clone()).unwrap_or_default();
        let mut env = literal;
        for name in &env_names {
            env.insert(name.clone(), read_var(name, stage)?);
        }
        let workspace = env_plan
            .and_then(|p| p.workspace.as_deref())
            .map(|w| resolve_path(&base_dir, w))
            .unwrap_or_else(|| base_dir.clone());
        let artifact_root = plan
            .config
            .runtime
            .artifacts
            .as_deref()
            .or_else(|| env_plan.and_then(|p| p.artifacts.as_deref()))
            .map(|a| resolve_path(&base_dir, a));
        let to_map = |map: Option<&serde_json::Map<String, Value>>| -> BTreeMap<String, Value> {
            map.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        };
        let handle = EnvironmentHandle {
            environment_id: ids::new_id("environment"),
            provider: "local".into(),
            control_location: env_plan
                .map_or(ControlLocation::InEnvControl, |p| p.control_location),
            ownership: env_plan.map_or(EnvironmentOwnership::CallerOwned, |p| p.ownership),
            workspace: env_plan
                .and_then(|p| p.workspace.as_ref())
                .map(|_| workspace.to_string_lossy().into_owned()),
            artifacts: artifact_root
                .as_ref()
                .map(|a| a.to_string_lossy().into_owned()),
            env,
            connection: to_map(env_plan.map(|p| &p.connection)),
            metadata: to_map(env_plan.map(|p| &p.metadata)),
        };
        Ok(Environment {
            handle,
            env_names,
            workspace,
            artifact_root,
            released: AtomicBool::new(false),
        })
    }

    /// The handle sent to adapters in `runtime_context.environment` (contains values:
    /// redact before persisting).
    pub fn handle(&self) -> &EnvironmentHandle {
        &self.handle
    }

    /// The caller-facing view of this environment: variable names, never values.
    pub fn info(&self) -> EnvironmentInfo {
        EnvironmentInfo::from_handle(&self.handle, self.is_released())
    }

    /// The environment id.
    pub fn environment_id(&self) -> &str {
        &self.handle.environment_id
    }

    /// The host's working directory (the workspace, else the base directory).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The configured artifact root (`runtime.artifacts`, else `environment.artifacts`).
    pub fn artifact_root(&self) -> Option<&Path> {
        self.artifact_root.as_deref()
    }

    /// Every environment value (`environment.env` and resolved `env_names`): replaced by
    /// `***` in host stderr (log and error tails); saved records redact them too.
    pub fn secret_values(&self) -> Vec<String> {
        self.handle.env.values().cloned().collect()
    }

    /// Fails, naming the variable, when a forwarded value changed (or vanished) since the
    /// environment was prepared.
    pub fn check_forwarded(&self, stage: Stage) -> Result<(), HostError> {
        for name in &self.env_names {
            let now = read_var(name, stage).map_err(|_| HostError::EnvNameChanged {
                stage,
                name: name.clone(),
            })?;
            if self.handle.env.get(name) != Some(&now) {
                return Err(HostError::EnvNameChanged {
                    stage,
                    name: name.clone(),
                });
            }
        }
        Ok(())
    }

    /// The host environment additions: literal values and resolved forwarded values.
    pub(crate) fn host_env(&self) -> impl Iterator<Item = (&String, &String)> {
        self.handle.env.iter()
    }

    /// Marks the environment released. Local release never deletes caller-owned files;
    /// runtimes already started keep running until stopped.
    pub fn release(&self) -> Result<(), HostError> {
        self.released.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Whether [`Environment::release`] was called.
    pub fn is_released(&self) -> bool {
        self.released.load(Ordering::SeqCst)
    }
}

fn read_var(name: &str, stage: Stage) -> Result<String, HostError> {
    std::env::var_os(name)
        .and_then(|v| v.into_string().ok())
        .ok_or_else(|| HostError::EnvNameUnset {
            stage,
            name: name.to_owned(),
        })
}
