//! The provider kit: what every environment provider binary of this workspace shares
//! (`fabric-env-subprocess`, `fabric-env-container`; docs/sandbox.md, "Environment
//! providers"), so that a binary holds only what differs.
//!
//! A binary implements [`Provider`] (how an environment is prepared and attached) and
//! [`Environment`] (its directory, its own part of its description, how an owned one is
//! stopped), and its `main` returns [`run`]. The kit does the rest: the
//! `fabric.environment-provider.v1alpha1` request loop on stdio, the table of environments
//! by id (`environment_not_found` for an unknown one), the descriptions' common members,
//! `inspect`, `runtime_control` (the runtime server's socket [`SOCKET`] in the environment
//! directory), `collect_artifacts` and the file operations (its `workspace/` and
//! `artifacts/`), `exec` (by default one bridge request to that runtime server, which runs
//! the command with its deadline where the environment's processes run:
//! [`server_exec`]), and `release` (an environment this process prepared is stopped and its
//! directory deleted; an attached one is only forgotten). It also holds the helpers both
//! providers build environments with: the environment directory (mode 0700, `workspace/`,
//! `artifacts/`), `settings.root`, `resource.directory`, the checks of an environment to
//! attach, waiting for a runtime server.
//!
//! ```no_run
//! use std::path::{Path, PathBuf};
//! use std::process::ExitCode;
//!
//! use fabric_config::config::JsonObject;
//! use fabric_config::environment_ops::ExecRequest;
//! use fabric_config::handles::EnvironmentReference;
//! use fabric_config::provider::ExecOutput;
//! use fabric_sandbox::kit::{self, Description, Failure};
//!
//! /// Environments that are bare directories (no runtime server runs in them, so `attach`
//! /// checks none and `exec` runs here).
//! struct Directories;
//! struct Dir(PathBuf);
//!
//! impl kit::Provider for Directories {
//!     type Env = Dir;
//!     const PROVIDER: &'static str = "directories";
//!     const BINARY: &'static str = "fabric-env-directories";
//!
//!     fn prepare(&self, settings: &JsonObject) -> Result<(String, Dir), Failure> {
//!         let (id, dir) = kit::create_environment_dir(&kit::settings_root(settings)?)?;
//!         Ok((id, Dir(dir)))
//!     }
//!
//!     fn attach(
//!         &self,
//!         reference: &EnvironmentReference,
//!         _settings: &JsonObject,
//!     ) -> Result<(String, Dir), Failure> {
//!         let dir = kit::reference_directory(reference)?;
//!         kit::require_workspace(&dir, Self::PROVIDER)?;
//!         Ok((kit::environment_id(&dir), Dir(dir)))
//!     }
//! }
//!
//! impl kit::Environment for Dir {
//!     fn dir(&self) -> &Path {
//!         &self.0
//!     }
//!
//!     fn describe(&self, _id: &str) -> Description {
//!         let path = |p: PathBuf| p.to_string_lossy().into_owned();
//!         Description {
//!             resource: JsonObject::new(),
//!             workspace: path(self.0.join("workspace")),
//!             artifacts: path(self.0.join("artifacts")),
//!             connection: JsonObject::new(),
//!         }
//!     }
//!
//!     fn exec(&self, request: &ExecRequest) -> Result<ExecOutput, Failure> {
//!         let no_variables: [(&str, &str); 0] = [];
//!         kit::exec_beneath(&self.0, Path::new("workspace"), request, no_variables)
//!     }
//!
//!     fn stop(&mut self) -> Result<(), Failure> {
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> ExitCode {
//!     kit::run(&Directories)
//! }
//! ```

mod artifacts;
mod directory;
mod dispatch;
mod exec;
pub mod files;
mod provider;
pub mod relay;
mod serve;
mod server;
#[cfg(test)]
mod tests;

use artifacts::collect;
pub use directory::{
    create_environment_dir, environment_id, reference_directory, require_workspace, settings_root,
};
pub use exec::exec_beneath;
pub use provider::{Description, Environment, Provider};
pub use serve::{run, serve};
use server::runtime_control;
pub use server::{require_server, server_exec, wait_for_server};

/// A provider error: its code and a message (never a secret).
pub type Failure = (&'static str, String);

/// The runtime server's socket file name in the environment directory.
pub const SOCKET: &str = "fabric.sock";
