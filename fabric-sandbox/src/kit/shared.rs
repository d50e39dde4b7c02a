//! The operations every provider answers alike from its environment's directory.

use std::collections::HashMap;
use std::path::Path;

use fabric_config::provider::ProviderOperation;
use serde_json::{Value, json};

use super::{Failure, SOCKET, collect, runtime_control};

/// What the shared operations need of one environment a provider prepared or attached.
pub trait Environment {
    /// The environment directory on this machine: it holds the runtime server's socket
    /// ([`SOCKET`]) and `artifacts/`.
    fn dir(&self) -> &Path;
    /// Its `prepare` / `attach` / `inspect` output (see [`describe`]).
    fn describe(&self, id: &str) -> Value;
    /// Whether this process prepared it (`release` deletes it) rather than attached it.
    fn owned(&self) -> bool;
    /// Stops what runs in an owned environment before `release` deletes its directory.
    fn stop(&mut self) -> Result<(), Failure>;
}

/// The environment `id`, or `environment_not_found`.
pub fn find<'a, E>(environments: &'a HashMap<String, E>, id: &str) -> Result<&'a E, Failure> {
    environments
        .get(id)
        .ok_or_else(|| ("environment_not_found", format!("no environment `{id}`")))
}

/// Answers the operations every provider answers alike from the environment's directory:
/// `inspect`, `runtime_control` (the directory's socket), `collect_artifacts` (its
/// `artifacts/`) and `release` (an owned environment is stopped and its directory deleted;
/// an attached one only forgotten). Any other operation is the provider's own and fails
/// here with `operation_unsupported`.
pub fn answer_shared<E: Environment>(
    environments: &mut HashMap<String, E>,
    operation: ProviderOperation,
) -> Result<Value, Failure> {
    match operation {
        ProviderOperation::Release { environment_id } => {
            let Some(mut env) = environments.remove(&environment_id) else {
                return Err((
                    "environment_not_found",
                    format!("no environment `{environment_id}`"),
                ));
            };
            if env.owned() {
                env.stop()?;
                std::fs::remove_dir_all(env.dir()).map_err(|error| {
                    (
                        "release_failed",
                        format!("cannot delete `{}`: {error}", env.dir().display()),
                    )
                })?;
            }
            Ok(json!({"deleted": env.owned()}))
        }
        ProviderOperation::Inspect { environment_id } => {
            Ok(find(environments, &environment_id)?.describe(&environment_id))
        }
        ProviderOperation::RuntimeControl {
            environment_id,
            request,
        } => {
            let env = find(environments, &environment_id)?;
            runtime_control(&env.dir().join(SOCKET), &request)
        }
        ProviderOperation::CollectArtifacts {
            environment_id,
            paths,
        } => {
            let env = find(environments, &environment_id)?;
            collect(&env.dir().join("artifacts"), &paths)
        }
        other => Err((
            "operation_unsupported",
            format!("`{}` is not a shared operation", other.name()),
        )),
    }
}
