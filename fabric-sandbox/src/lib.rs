//! The sandbox boundary of the core (docs/sandbox.md): the runtime server's socket and its
//! command-bridge client (`fabric-agent-ctl`), the client of environment-provider processes
//! (`fabric.environment-provider.v1alpha1` on stdio), and the provider kit that provider
//! binaries are built on.
//!
//! Nothing here runs adapters: the runtime server is generic over a
//! [`bridge::Handler`] (the core behind the socket, implemented by `fabric-host`), so this
//! crate sits below the host and the host's runtimes in environments use its clients.

#![forbid(unsafe_code)]

pub mod bridge;
mod error;
pub mod kit;
pub mod provider;

pub use error::SandboxError;
