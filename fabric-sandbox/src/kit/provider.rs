//! What a provider binary supplies: how its environments are created, attached, described
//! and torn down. Everything else (the environment table, lookups by id,
//! the shared operations, the stdio loop) is the kit's ([`run`](super::run)).

use std::path::Path;

use fabric_config::config::JsonObject;
use fabric_config::environment_ops::ExecRequest;
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::ExecOutput;

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

    /// Runs a caller's `exec` (already checked: `argv`, the limits, and `cwd` beneath the
    /// workspace). The default sends it to the environment's runtime server
    /// ([`SOCKET`](super::SOCKET) in [`Environment::dir`]), which runs the command where
    /// the environment's processes run, in its own process group with the deadline
    /// ([`server_exec`](super::server_exec)).
    fn exec(&self, request: &ExecRequest) -> Result<ExecOutput, Failure> {
        super::server_exec(&self.dir().join(super::SOCKET), request)
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
