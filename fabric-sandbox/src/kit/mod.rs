//! What every environment provider binary of this crate shares (`fabric-env-subprocess`,
//! `fabric-env-container`; docs/sandbox.md, "Environment providers"): the
//! `fabric.environment-provider.v1alpha1` request loop on stdio, the environment directory
//! (mode 0700, `workspace/`, `artifacts/`, the runtime server's socket), the runtime-server
//! client calls, artifact collection, `exec` with a deadline, and the operations every
//! provider answers alike from its environment's directory ([`Environment`],
//! [`answer_shared`]).
//!
//! The provider binaries of `fabric-cli` depend on it as a library.

mod artifacts;
mod directory;
mod exec;
mod serve;
mod server;
mod shared;

pub use artifacts::collect;
pub use directory::{
    create_environment_dir, describe, environment_id, reference_directory, settings_root,
};
pub use exec::{exec, split_argv};
pub use serve::serve;
pub use server::{runtime_control, server_check, wait_for_server};
pub use shared::{Environment, answer_shared, find};

/// A provider error: its code and a message (never a secret).
pub type Failure = (&'static str, String);

/// The runtime server's socket file name in the environment directory.
pub const SOCKET: &str = "fabric.sock";
