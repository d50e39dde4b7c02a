//! The local environment provider: `prepare_environment`, `attach_environment`, env
//! forwarding, release.

mod ops;

use fabric_config::codes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use fabric_config::Stage;
use fabric_config::agent::EnvironmentHandle;
use fabric_config::codes::ErrorClass;
use fabric_config::config::{ControlLocation, EnvironmentOwnership};
use fabric_config::handles::{EnvironmentInfo, EnvironmentReference};
use fabric_config::path::resolve_path;
use fabric_config::plan::RunPlan;
use serde_json::Value;

use crate::error::HostError;
use crate::health_workers::HealthWorkers;
use crate::ids;
use fabric_config::provider::{
    ArtifactsOutput, ExecOutput, ProviderEnvironment, ProviderOperation,
};
use fabric_sandbox::provider::{self, LIFECYCLE_TIMEOUT, ProviderClient};
use std::time::Duration;

/// How much longer than an `exec`'s own deadline the core waits for the provider's answer.
const EXEC_GRACE: Duration = Duration::from_secs(2);

/// A prepared (local) environment: the immutable handle passed to adapters plus what the
/// core needs to re-check forwarded variables. Several runtimes may share one environment.
#[derive(Debug)]
pub struct Environment {
    handle: EnvironmentHandle,
    env_names: Vec<String>,
    workspace: PathBuf,
    artifact_root: Option<PathBuf>,
    attached: bool,
    released: AtomicBool,
    /// What the provider's `release` observed of the environment's life.
    observation: std::sync::Mutex<Option<fabric_config::gym::SandboxObservation>>,
    /// The provider process and its view, for a non-local environment.
    remote: Option<Remote>,
}

/// A provider environment: the provider process and what it reported.
#[derive(Debug)]
struct Remote {
    client: ProviderClient,
    environment: ProviderEnvironment,
    /// Independent provider processes for health checks (`crate::env_check`).
    workers: HealthWorkers,
}

impl Environment {
    /// Prepares the local environment of `plan`: resolves `env_names` from this process
    /// (an unset name fails at `stage`, naming the variable) and the workspace and
    /// artifact paths (against the plan's `base_dir`).
    pub fn prepare(plan: &RunPlan, stage: Stage) -> Result<Environment, HostError> {
        if provider_of(plan) != "local" {
            return Environment::remote(plan, stage, None);
        }
        Environment::local(plan, stage, None)
    }

    /// Attaches to the existing environment `reference` names. The resource stays the
    /// caller's (`ownership: caller_owned`, `attached: true`) and release only detaches.
    /// The reference's provider must be the config's `environment.provider`; the local
    /// provider verifies that `resource.workspace` is an existing directory (a relative
    /// path is anchored at the plan's `base_dir`) and takes no other member.
    pub fn attach(
        plan: &RunPlan,
        reference: &EnvironmentReference,
        stage: Stage,
    ) -> Result<Environment, HostError> {
        let provider = provider_of(plan);
        if reference.provider != provider {
            return Err(invalid_reference(
                "provider",
                format!(
                    "the reference's provider `{}` is not the config's environment.provider `{provider}`",
                    reference.provider
                ),
            ));
        }
        if provider != "local" {
            return Environment::remote(plan, stage, Some(reference));
        }
        if let Some(key) = reference.resource.keys().find(|k| *k != "workspace") {
            return Err(invalid_reference(
                &format!("resource.{key}"),
                format!(
                    "the local provider does not know `resource.{key}` (only `resource.workspace`)"
                ),
            ));
        }
        let workspace = match reference.resource.get("workspace") {
            Some(Value::String(path)) if !path.trim().is_empty() => {
                resolve_path(Path::new(&plan.base_dir), path)
            }
            _ => {
                return Err(invalid_reference(
                    "resource.workspace",
                    "the local provider needs `resource.workspace`: a non-empty directory path"
                        .to_owned(),
                ));
            }
        };
        if !workspace.is_dir() {
            return Err(HostError::Environment {
                stage: Stage::Prepare,
                code: codes::ENVIRONMENT_NOT_FOUND,
                class: ErrorClass::Config,
                message: format!(
                    "resource.workspace `{}` is not an existing directory",
                    workspace.display()
                ),
                path: Some("resource.workspace".to_owned()),
            });
        }
        Environment::local(plan, stage, Some(workspace))
    }

    /// A provider environment: the provider process prepares (`reference` = None) or
    /// attaches. Workspace and artifact paths are the provider's (paths in the environment,
    /// never resolved against `base_dir`).
    fn remote(
        plan: &RunPlan,
        stage: Stage,
        reference: Option<&EnvironmentReference>,
    ) -> Result<Environment, HostError> {
        let name = provider_of(plan);
        let found = provider::find(plan, name)?;
        if reference.is_some() && !found.descriptor.attach {
            return Err(HostError::Capability {
                stage: Stage::Prepare,
                code: codes::ENVIRONMENT_ATTACH_UNSUPPORTED,
                message: format!(
                    "environment provider `{name}` cannot attach (its descriptor says `attach: false`)"
                ),
            });
        }
        let env_plan = plan.environment_plan.as_ref();
        let mut env = env_plan.map(|p| p.env.clone()).unwrap_or_default();
        let env_names = env_plan.map(|p| p.env_names.clone()).unwrap_or_default();
        for name in &env_names {
            env.insert(name.clone(), read_var(name, stage)?);
        }
        let settings: BTreeMap<String, Value> = env_plan
            .map(|p| {
                p.settings
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let worker_settings = settings.clone();
        let operation = match reference {
            Some(reference) => ProviderOperation::Attach {
                reference: reference.clone(),
                settings,
            },
            None => ProviderOperation::Prepare {
                settings,
                workspace: plan
                    .config
                    .environment
                    .as_ref()
                    .and_then(|e| e.workspace.clone()),
            },
        };
        let client = found.spawn(Stage::Prepare)?;
        let output = client.request(operation, LIFECYCLE_TIMEOUT, Stage::Prepare)?;
        let environment: ProviderEnvironment = serde_json::from_value(output).map_err(|error| {
            client.error(
                Stage::Prepare,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the provider's environment is malformed: {error}"),
            )
        })?;
        let base_dir = PathBuf::from(&plan.base_dir);
        let artifact_root = plan
            .config
            .runtime
            .artifacts
            .as_deref()
            .map(|a| resolve_path(&base_dir, a));
        let attached = reference.is_some();
        let handle = EnvironmentHandle {
            environment_id: ids::new_id("environment"),
            provider: name.to_owned(),
            control_location: env_plan
                .map_or(ControlLocation::InEnvControl, |p| p.control_location),
            ownership: if attached {
                EnvironmentOwnership::CallerOwned
            } else {
                EnvironmentOwnership::FabricOwned
            },
            workspace: environment.workspace.clone(),
            artifacts: environment.artifacts.clone(),
            env,
            connection: environment.connection.clone(),
            metadata: env_plan
                .map(|p| {
                    p.metadata
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        };
        Ok(Environment {
            handle,
            env_names,
            workspace: base_dir,
            artifact_root,
            attached,
            released: AtomicBool::new(false),
            observation: std::sync::Mutex::new(None),
            remote: Some(Remote {
                client,
                workers: HealthWorkers::new(
                    plan.agent_name.clone(),
                    found,
                    environment.reference.clone(),
                    worker_settings,
                ),
                environment,
            }),
        })
    }

    /// The health workers of a provider environment (`None` for a local one).
    pub(crate) fn health_workers(&self) -> Option<&HealthWorkers> {
        self.remote.as_ref().map(|remote| &remote.workers)
    }

    /// Whether a provider process serves this environment (every provider but `local`).
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    fn remote_or_unsupported(&self, stage: Stage) -> Result<&Remote, HostError> {
        self.remote.as_ref().ok_or_else(|| HostError::Capability {
            stage,
            code: codes::ENVIRONMENT_PROVIDER_UNSUPPORTED,
            message: "a local environment has no provider process".to_owned(),
        })
    }

    fn live_remote(&self, stage: Stage) -> Result<&Remote, HostError> {
        if self.is_released() {
            return Err(HostError::EnvironmentReleased { stage });
        }
        self.remote_or_unsupported(stage)
    }

    /// The provider's `inspect` of this environment.
    pub fn inspect(&self) -> Result<ProviderEnvironment, HostError> {
        let stage = Stage::Prepare;
        let remote = self.live_remote(stage)?;
        let output = remote.client.request(
            ProviderOperation::Inspect {
                environment_id: remote.environment.environment_id.clone(),
            },
            LIFECYCLE_TIMEOUT,
            stage,
        )?;
        serde_json::from_value(output).map_err(|error| {
            HostError::from(remote.client.error(
                stage,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the provider's environment is malformed: {error}"),
            ))
        })
    }

    /// Runs `argv` in the environment (`exec`); an output above 3 MiB is
    /// `provider_output_too_large` (nothing of it is returned).
    pub fn exec(&self, argv: &[String], timeout: Duration) -> Result<ExecOutput, HostError> {
        let stage = Stage::Invoke;
        let remote = self.live_remote(stage)?;
        let output = remote.client.request(
            ProviderOperation::Exec {
                environment_id: remote.environment.environment_id.clone(),
                argv: argv.to_vec(),
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                cwd: None,
                env: BTreeMap::new(),
                stdin_hex: None,
                output_limit_bytes: None,
            },
            timeout + EXEC_GRACE,
            stage,
        )?;
        let output: ExecOutput = serde_json::from_value(output).map_err(|error| {
            remote.client.error(
                stage,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the exec output is malformed: {error}"),
            )
        })?;
        provider::check_exec(&output, stage)?;
        Ok(output)
    }

    /// Reads files of the environment's artifact root (`collect_artifacts`), enforcing 16
    /// files, 256 KiB each, 512 KiB in total (`provider_output_too_large`: none is kept).
    /// Paths the provider refused one by one (`path_refused`: a symbolic link, a special
    /// file, a size) are in [`CollectedArtifacts::refused`](crate::CollectedArtifacts).
    pub fn collect_artifacts(
        &self,
        paths: &[String],
    ) -> Result<crate::CollectedArtifacts, HostError> {
        let stage = Stage::Artifact;
        let remote = self.live_remote(stage)?;
        let output = remote.client.request(
            ProviderOperation::CollectArtifacts {
                environment_id: remote.environment.environment_id.clone(),
                paths: paths.to_vec(),
            },
            LIFECYCLE_TIMEOUT,
            stage,
        )?;
        let output: ArtifactsOutput = serde_json::from_value(output).map_err(|error| {
            remote.client.error(
                stage,
                codes::PROVIDER_PROTOCOL_ERROR,
                format!("the artifacts output is malformed: {error}"),
            )
        })?;
        Ok(provider::check_artifacts(&output, stage)?)
    }

    /// Sends one bridge request object to the environment's runtime server
    /// (`runtime_control`) and returns the server's response object.
    pub fn runtime_control(&self, request: Value, timeout: Duration) -> Result<Value, HostError> {
        let stage = Stage::Invoke;
        let remote = self.live_remote(stage)?;
        let mut output = remote.client.request(
            ProviderOperation::RuntimeControl {
                environment_id: remote.environment.environment_id.clone(),
                request,
            },
            timeout,
            stage,
        )?;
        Ok(output
            .get_mut("response")
            .map(Value::take)
            .unwrap_or(Value::Null))
    }

    /// The local environment of `plan`; `attached` is the verified workspace of an attached
    /// environment (it replaces `environment.workspace`).
    fn local(
        plan: &RunPlan,
        stage: Stage,
        attached: Option<PathBuf>,
    ) -> Result<Environment, HostError> {
        let base_dir = PathBuf::from(&plan.base_dir);
        let env_plan = plan.environment_plan.as_ref();
        let literal = env_plan.map(|p| p.env.clone()).unwrap_or_default();
        let env_names = env_plan.map(|p| p.env_names.clone()).unwrap_or_default();
        let mut env = literal;
        for name in &env_names {
            env.insert(name.clone(), read_var(name, stage)?);
        }
        let configured = env_plan
            .and_then(|p| p.workspace.as_deref())
            .map(|w| resolve_path(&base_dir, w));
        let is_attached = attached.is_some();
        let reported = attached.clone().or_else(|| configured.clone());
        let workspace = attached.or(configured).unwrap_or_else(|| base_dir.clone());
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
        let ownership = if is_attached {
            EnvironmentOwnership::CallerOwned
        } else {
            env_plan.map_or(EnvironmentOwnership::CallerOwned, |p| p.ownership)
        };
        let handle = EnvironmentHandle {
            environment_id: ids::new_id("environment"),
            provider: "local".into(),
            control_location: env_plan
                .map_or(ControlLocation::InEnvControl, |p| p.control_location),
            ownership,
            workspace: reported.map(|w| w.to_string_lossy().into_owned()),
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
            attached: is_attached,
            released: AtomicBool::new(false),
            observation: std::sync::Mutex::new(None),
            remote: None,
        })
    }

    /// The handle sent to adapters in `runtime_context.environment` (contains values:
    /// redact before persisting).
    pub fn handle(&self) -> &EnvironmentHandle {
        &self.handle
    }

    /// The caller-facing view of this environment: variable names, never values.
    pub fn info(&self) -> EnvironmentInfo {
        let mut info = EnvironmentInfo::from_handle(&self.handle, self.is_released());
        info.attached = self.attached;
        info.reference = Some(self.reference());
        info.sandbox_observation = self
            .observation
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        info
    }

    /// The reference `attach` accepts for this environment (local: the absolute
    /// workspace directory).
    pub fn reference(&self) -> EnvironmentReference {
        if let Some(remote) = &self.remote {
            return remote.environment.reference.clone();
        }
        let workspace =
            std::path::absolute(&self.workspace).unwrap_or_else(|_| self.workspace.clone());
        let mut resource = BTreeMap::new();
        resource.insert(
            "workspace".to_owned(),
            Value::String(workspace.to_string_lossy().into_owned()),
        );
        EnvironmentReference {
            provider: self.handle.provider.clone(),
            resource,
        }
    }

    /// Whether the environment was attached (release only detaches).
    pub fn is_attached(&self) -> bool {
        self.attached
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

    /// Releases the environment (once; later calls are no-ops). Local release never deletes
    /// caller-owned files (an attached environment is only detached); runtimes already
    /// started keep running until stopped. A provider environment is sent `release` (the
    /// provider deletes what Fabric prepared and only detaches what was attached), then its
    /// provider process is closed.
    pub fn release(&self) -> Result<(), HostError> {
        if self.released.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let Some(remote) = &self.remote else {
            return Ok(());
        };
        remote.workers.close();
        let outcome = remote.client.request(
            ProviderOperation::Release {
                environment_id: remote.environment.environment_id.clone(),
            },
            LIFECYCLE_TIMEOUT,
            Stage::Release,
        );
        remote.client.close();
        let mut output = outcome.map_err(HostError::from)?;
        if let Some(observation) = output
            .get_mut("observation")
            .map(Value::take)
            .and_then(|o| serde_json::from_value(o).ok())
        {
            *self
                .observation
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(observation);
        }
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

pub(crate) fn provider_of(plan: &RunPlan) -> &str {
    plan.environment_plan
        .as_ref()
        .map_or("local", |p| p.provider.as_str())
}

fn invalid_reference(path: &str, message: String) -> HostError {
    HostError::Environment {
        stage: Stage::Config,
        code: codes::INVALID_ENVIRONMENT_REFERENCE,
        class: ErrorClass::Config,
        message,
        path: Some(path.to_owned()),
    }
}
