//! Why `fabric view` could not start.

use std::net::SocketAddr;

use fabric_config::codes;

/// A start failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The listen address is not a loopback address.
    #[error("--listen {listen} is not a loopback address (fabric view serves loopback only)")]
    ListenRefused {
        /// The refused address.
        listen: SocketAddr,
    },
    /// A path to view cannot be read.
    #[error("cannot read the path {path}: {reason}")]
    Path {
        /// The path given.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// Binding, the token or the reactor failed.
    #[error("fabric view could not start: {reason}")]
    Start {
        /// What failed.
        reason: String,
    },
}

impl ViewError {
    /// The registered code.
    pub fn code(&self) -> &'static str {
        match self {
            ViewError::ListenRefused { .. } => codes::VIEW_LISTEN_REFUSED,
            ViewError::Path { .. } | ViewError::Start { .. } => codes::VIEW_START_FAILED,
        }
    }

    /// The flag or argument the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            ViewError::ListenRefused { .. } | ViewError::Start { .. } => "--listen",
            ViewError::Path { .. } => "PATH",
        }
    }
}
