//! What a provider binary supplies: how its environments are created, attached, described,
//! reached by `exec` and torn down. Everything else (the environment table, lookups by id,
//! the shared operations, the stdio loop) is the kit's ([`run`](super::run)).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use fabric_config::config::JsonObject;
use fabric_config::handles::EnvironmentReference;

use super::Failure;

/// One provider: the two ways an environment comes into its table.
///
/// Both return the environment's id and the environment; the kit records which of them
/// made it, so whether `release` deletes it never depends on the provider remembering.
pub trait Provider {
    /// One environment this provider prepared or attached.
    type Env: Environment;

    /// The provider's name: `reference.provider` of its environments.
    const PROVIDER: &'static str;

    /// The binary's name, for diagnostics on stderr.
    const BINARY: &'static str;

    /// Creates a Fabric-owned environment from the config's `environment.settings`; on
    /// failure nothing is left behind. (`prepare`'s `workspace` member is not passed: the
    /// workspace is always the environment directory's `workspace/`.)
    fn prepare(&self, settings: &JsonObject) -> Result<(String, Self::Env), Failure>;

    /// Verifies an existing, caller-owned environment named by `reference`.
    fn attach(
        &self,
        reference: &EnvironmentReference,
        settings: &JsonObject,
    ) -> Result<(String, Self::Env), Failure>;
}

/// One environment of a provider's table: what the kit's operations need of it.
pub trait Environment {
    /// The environment directory on this machine: it holds the runtime server's socket
    /// ([`SOCKET`](super::SOCKET)) and `artifacts/`, and an owned one is deleted by
    /// `release`.
    fn dir(&self) -> &Path;

    /// What its `prepare` / `attach` / `inspect` output holds besides what the kit adds.
    fn describe(&self, id: &str) -> Description;

    /// The command that runs `program` with `args` in the environment's workspace for
    /// `exec`; the kit closes its stdin, reads its output and enforces the deadline.
    fn command(&self, program: &str, args: &[String]) -> Command;

    /// The command of a caller's `exec`: `program` with `args` in `cwd` (relative to the
    /// workspace, already checked to hold no `..`) with `env` added. The default is
    /// [`Environment::command`] moved to `cwd` beneath [`Environment::dir`]'s `workspace/`.
    fn exec_command(
        &self,
        program: &str,
        args: &[String],
        cwd: &str,
        env: &BTreeMap<String, String>,
        timeout: std::time::Duration,
    ) -> Command {
        let _ = timeout;
        let mut command = self.command(program, args);
        command
            .current_dir(self.dir().join("workspace").join(cwd))
            .envs(env);
        command
    }

    /// Whether [`Environment::exec_command`]'s command enforces the deadline itself (it
    /// ends with [`TIMED_OUT_EXIT`](super::TIMED_OUT_EXIT) when it passed) because the
    /// command's process group is out of this process's reach (default `false`).
    fn deadline_inside(&self) -> bool {
        false
    }

    /// What this environment's life looked like, read just before `release` stops an owned
    /// one (its `observation` output); `None` (the default) reports nothing.
    fn observe(&self) -> Option<fabric_config::gym::SandboxObservation> {
        None
    }

    /// Completes `observation` (what [`Environment::observe`] returned) with what only
    /// `stop` learned, e.g. the exit and usage of a reaped process tree; called by
    /// `release` right after `stop` (default: nothing).
    fn observe_stopped(&mut self, observation: &mut fabric_config::gym::SandboxObservation) {
        let _ = observation;
    }

    /// Stops what runs in an owned environment before `release` deletes its directory
    /// (never called for an attached one: that is the caller's).
    fn stop(&mut self) -> Result<(), Failure>;
}

/// A provider's part of an environment's description. The kit adds what every provider's
/// has and what only the kit knows: `resource.directory` (the [`Environment::dir`], which
/// `attach` reads back with [`reference_directory`](super::reference_directory)),
/// `connection.socket` and `connection.owned`; members of those names set here are
/// replaced.
#[derive(Debug)]
pub struct Description {
    /// `reference.resource`: what `attach` needs besides the directory.
    pub resource: JsonObject,
    /// The workspace path as the environment's processes see it.
    pub workspace: String,
    /// The artifact root as the environment's processes see it.
    pub artifacts: String,
    /// `connection`: how to reach the environment besides its socket.
    pub connection: JsonObject,
}
