//! The environment table of one provider process and every operation's answer: `prepare`
//! and `attach` through the [`Provider`], the rest from the environment by its id.

use fabric_config::codes;
use std::collections::HashMap;
use std::time::Duration;

use fabric_config::provider::ProviderOperation;
use serde_json::{Value, json};

use super::directory::describe;
use super::files;
use super::{Environment, Failure, Provider, SOCKET, collect, runtime_control};
use fabric_config::environment_ops::{DEFAULT_OUTPUT_LIMIT_BYTES, ExecRequest, FileRoot};
use std::path::Path;

/// One environment in the table and whether this process prepared it.
struct Entry<E> {
    env: E,
    owned: bool,
}

/// The environments one provider process prepared or attached, by id. A second `prepare`
/// or `attach` yielding the same id replaces the entry.
pub(super) struct Environments<'p, P: Provider> {
    provider: &'p P,
    table: HashMap<String, Entry<P::Env>>,
}

impl<'p, P: Provider> Environments<'p, P> {
    pub(super) fn new(provider: &'p P) -> Self {
        Environments {
            provider,
            table: HashMap::new(),
        }
    }

    /// Answers one operation: its output, or the provider error to send back.
    pub(super) fn answer(&mut self, operation: ProviderOperation) -> Result<Value, Failure> {
        match operation {
            ProviderOperation::Prepare { settings, .. } => {
                let (id, env) = self.provider.prepare(&settings)?;
                Ok(self.insert(id, env, true))
            }
            ProviderOperation::Attach {
                reference,
                settings,
            } => {
                let (id, env) = self.provider.attach(&reference, &settings)?;
                Ok(self.insert(id, env, false))
            }
            ProviderOperation::Inspect { environment_id } => {
                let entry = self.find(&environment_id)?;
                Ok(describe(
                    P::PROVIDER,
                    &environment_id,
                    &entry.env,
                    entry.owned,
                ))
            }
            ProviderOperation::RuntimeControl {
                environment_id,
                request,
            } => {
                let entry = self.find(&environment_id)?;
                runtime_control(&entry.env.dir().join(SOCKET), &request)
            }
            ProviderOperation::CollectArtifacts {
                environment_id,
                paths,
            } => {
                let entry = self.find(&environment_id)?;
                collect(entry.env.dir(), &paths)
            }
            ProviderOperation::Exec {
                environment_id,
                argv,
                timeout_ms,
                cwd,
                env,
                stdin_hex,
                output_limit_bytes,
            } => {
                let entry = self.find(&environment_id)?;
                let request = ExecRequest {
                    argv,
                    cwd,
                    env,
                    stdin_hex,
                    timeout_seconds: Duration::from_millis(timeout_ms).as_secs_f64(),
                    output_limit_bytes: output_limit_bytes.unwrap_or(DEFAULT_OUTPUT_LIMIT_BYTES),
                };
                request.check().map_err(files::invalid)?;
                let cwd = request.cwd.as_deref().unwrap_or(".");
                files::check_dir(entry.env.dir(), Path::new("workspace"), cwd)?;
                to_value(&entry.env.exec(&request)?)
            }
            ProviderOperation::WriteFile {
                environment_id,
                request,
                append,
            } => self.on_files(&environment_id, request.root, |base, prefix| {
                files::write_or_append(base, prefix, &request, append).map(|()| json!({}))
            }),
            ProviderOperation::ReadFile {
                environment_id,
                request,
            } => self.on_files(&environment_id, request.root, |base, prefix| {
                files::read_file(base, prefix, &request)
            }),
            ProviderOperation::ListFiles {
                environment_id,
                request,
            } => self.on_files(&environment_id, request.root, |base, prefix| {
                files::list_files(base, prefix, &request)
            }),
            ProviderOperation::Release { environment_id } => self.release(&environment_id),
        }
    }

    /// A file operation on the environment `id`: `operate` gets its directory and the
    /// prefix of `root` beneath it.
    fn on_files<T: serde::Serialize>(
        &self,
        id: &str,
        root: FileRoot,
        operate: impl FnOnce(&Path, &Path) -> Result<T, Failure>,
    ) -> Result<Value, Failure> {
        let entry = self.find(id)?;
        to_value(&operate(entry.env.dir(), Path::new(root.dir_name()))?)
    }

    /// Records a new environment; its description is the operation's output.
    fn insert(&mut self, id: String, env: P::Env, owned: bool) -> Value {
        let output = describe(P::PROVIDER, &id, &env, owned);
        self.table.insert(id, Entry { env, owned });
        output
    }

    /// The environment `id`, or `environment_not_found`.
    fn find(&self, id: &str) -> Result<&Entry<P::Env>, Failure> {
        self.table.get(id).ok_or_else(|| not_found(id))
    }

    /// Forgets the environment `id`; an owned one is first stopped and its directory
    /// deleted. It is forgotten even when that fails, so the table never holds an
    /// environment half torn down: the error tells the caller what was left.
    fn release(&mut self, id: &str) -> Result<Value, Failure> {
        let Entry { mut env, owned } = self.table.remove(id).ok_or_else(|| not_found(id))?;
        let mut observation = if owned { env.observe() } else { None };
        if owned {
            env.stop()?;
            if let Some(observation) = observation.as_mut() {
                env.observe_stopped(observation);
            }
            std::fs::remove_dir_all(env.dir()).map_err(|error| {
                (
                    "release_failed",
                    format!("cannot delete `{}`: {error}", env.dir().display()),
                )
            })?;
        }
        let mut output = json!({"deleted": owned});
        if let Some(observation) = observation {
            output["observation"] = to_value(&observation)?;
        }
        Ok(output)
    }
}

fn to_value(output: &impl serde::Serialize) -> Result<Value, Failure> {
    serde_json::to_value(output).map_err(|error| ("internal", error.to_string()))
}

fn not_found(id: &str) -> Failure {
    (
        codes::ENVIRONMENT_NOT_FOUND,
        format!("no environment `{id}`"),
    )
}
