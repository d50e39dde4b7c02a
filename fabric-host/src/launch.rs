//! Host launch rules: which program runs an adapter, with which environment.
//!
//! - `python` kind: `<interpreter> -m <runner.module>`; the interpreter is
//!   `RuntimeOptions::python_interpreter`, else `$ADAPTER_PYTHON`, else the calling
//!   interpreter (`RuntimeOptions::caller_python`, from `CallOptions.python_interpreter`),
//!   else `$VIRTUAL_ENV/bin/python`, else `python3` on `PATH`.
//! - `process` kind: `<runner.command> [runner.script resolved against the descriptor's
//!   directory] [runner.args...]`.
//!
//! The working directory is the environment's workspace. The environment is this
//! process's, plus `environment.env`, the resolved `environment.env_names`, `FABRIC_HOME`,
//! `FABRIC_RUNTIME_ID`, `FABRIC_ARTIFACTS` (when an artifact root is configured),
//! `FABRIC_RELAY_ENABLED`/`FABRIC_RELAY_CONFIG_PATH` (when the runtime wrote a Relay config;
//! inherited values are removed otherwise), `PYTHONUNBUFFERED=1` and
//! `PYTHONDONTWRITEBYTECODE=1`.

use fabric_config::codes;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use fabric_config::Stage;
use fabric_config::descriptor::AdapterKind;
use fabric_config::plan::RunPlan;
use serde_json::Value;

use crate::environment::Environment;
use crate::error::HostError;
use crate::host::HostSpec;

/// The resolved command of one adapter host.
#[derive(Debug, Clone)]
pub(crate) struct LaunchCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl LaunchCommand {
    /// Display form for `metadata.host_command`.
    pub(crate) fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(self.args.iter())
            .map(|s| s.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn runner_invalid(adapter_id: &str, reason: &str) -> HostError {
    HostError::Capability {
        stage: Stage::Start,
        code: codes::ADAPTER_RUNNER_INVALID,
        message: format!("adapter `{adapter_id}` runner: {reason}"),
    }
}

/// The Python interpreter for `python` adapters when none is configured: `$ADAPTER_PYTHON`,
/// else `caller` (the calling interpreter), else `$VIRTUAL_ENV/bin/python`, else `python3`
/// on `PATH` (one rule with `doctor`'s import check: [`fabric_plan::python_interpreter`]).
pub(crate) fn python_interpreter(caller: Option<&Path>) -> OsString {
    fabric_plan::python_interpreter(caller)
}

/// Resolves the host command of the plan's adapter.
/// `python` is the configured interpreter, `caller_python` the calling one (see
/// [`python_interpreter`]).
pub(crate) fn command_for(
    plan: &RunPlan,
    python: Option<&Path>,
    caller_python: Option<&Path>,
) -> Result<LaunchCommand, HostError> {
    let Some(resolved) = plan.adapter_descriptor.as_ref() else {
        return Err(HostError::Capability {
            stage: Stage::Start,
            code: codes::ADAPTER_KIND_UNSUPPORTED,
            message: "the plan has no adapter descriptor, so there is no host to start".into(),
        });
    };
    let descriptor = &resolved.descriptor;
    let id = descriptor.adapter_id.as_str();
    let descriptor_dir = resolved
        .provenance
        .first()
        .map(|p| PathBuf::from(&p.root))
        .unwrap_or_else(|| PathBuf::from(&plan.base_dir));
    let runner = &descriptor.runner;
    match descriptor.adapter_kind {
        AdapterKind::Python => {
            let module = match runner.get("module") {
                Some(Value::String(module)) if !module.trim().is_empty() => module,
                _ => {
                    return Err(runner_invalid(
                        id,
                        "`runner.module` is required for python adapters",
                    ));
                }
            };
            Ok(LaunchCommand {
                program: python.map_or_else(
                    || python_interpreter(caller_python),
                    |p| p.as_os_str().to_owned(),
                ),
                args: vec!["-m".into(), module.into()],
            })
        }
        AdapterKind::Process => {
            let command = match runner.get("command") {
                Some(Value::String(command)) if !command.trim().is_empty() => command,
                _ => {
                    return Err(runner_invalid(
                        id,
                        "`runner.command` is required for process adapters",
                    ));
                }
            };
            let mut args: Vec<OsString> = Vec::new();
            match runner.get("script") {
                None | Some(Value::Null) => {}
                Some(Value::String(script)) if !script.is_empty() => {
                    args.push(resolve_script(&descriptor_dir, script).into_os_string());
                }
                Some(_) => {
                    return Err(runner_invalid(
                        id,
                        "`runner.script` must be a non-empty string",
                    ));
                }
            }
            match runner.get("args") {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for item in items {
                        let Value::String(arg) = item else {
                            return Err(runner_invalid(
                                id,
                                "`runner.args` must be a list of strings",
                            ));
                        };
                        args.push(arg.into());
                    }
                }
                Some(_) => {
                    return Err(runner_invalid(
                        id,
                        "`runner.args` must be a list of strings",
                    ));
                }
            }
            Ok(LaunchCommand {
                program: command.into(),
                args,
            })
        }
        other => Err(HostError::Capability {
            stage: Stage::Start,
            code: codes::ADAPTER_KIND_UNSUPPORTED,
            message: format!(
                "adapter `{id}` has kind `{}`, which this core cannot host (process and python only)",
                other.as_str()
            ),
        }),
    }
}

fn resolve_script(dir: &Path, script: &str) -> PathBuf {
    let path = Path::new(script);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        dir.join(path)
    }
}

/// Everything needed to compose one host's environment.
#[derive(Debug)]
pub(crate) struct HostEnv<'a> {
    pub environment: &'a Environment,
    pub fabric_home: &'a Path,
    pub runtime_id: &'a str,
    /// The runtime's telemetry variables (`FABRIC_RELAY_*`).
    pub telemetry: &'a [(&'a str, &'a str)],
}

/// Builds the full [`HostSpec`].
pub(crate) fn host_spec(
    command: &LaunchCommand,
    env: &HostEnv<'_>,
    max_line_bytes: usize,
) -> HostSpec {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let mut set = |key: &str, value: OsString| {
        vars.retain(|(k, _)| k != key);
        vars.push((key.into(), value));
    };
    for (key, value) in env.environment.host_env() {
        set(key, value.into());
    }
    set("FABRIC_HOME", env.fabric_home.as_os_str().to_owned());
    set("FABRIC_RUNTIME_ID", env.runtime_id.into());
    match env.environment.artifact_root() {
        Some(root) => set("FABRIC_ARTIFACTS", root.as_os_str().to_owned()),
        None => vars.retain(|(k, _)| k != "FABRIC_ARTIFACTS"),
    }
    // A caller's own Relay variables never reach a host whose runtime did not set them.
    vars.retain(|(k, _)| k != "FABRIC_RELAY_ENABLED" && k != "FABRIC_RELAY_CONFIG_PATH");
    for (key, value) in env.telemetry {
        vars.push(((*key).into(), (*value).into()));
    }
    let mut set = |key: &str, value: &str| {
        vars.retain(|(k, _)| k != key);
        vars.push((key.into(), value.into()));
    };
    set("PYTHONUNBUFFERED", "1");
    set("PYTHONDONTWRITEBYTECODE", "1");
    let mut spec = HostSpec::new(command.program.clone());
    spec.args = command.args.clone();
    spec.env = vars;
    spec.cwd = env.environment.workspace().to_path_buf();
    spec.secrets = env.environment.secret_values();
    spec.max_line_bytes = max_line_bytes;
    spec
}
