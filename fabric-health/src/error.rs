//! Errors of the listener side (the client reports problems as `CheckReport`s, not errors).

use fabric_config::codes;
use std::path::PathBuf;

use fabric_config::{ErrorInfo, Stage};

/// A health listener could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Binding the listener (unix socket and loopback TCP) failed.
    #[error("cannot bind the health listener")]
    Bind {
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The OS random source failed.
    #[error("cannot draw a random health secret")]
    Random {
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Writing the endpoint file failed.
    #[error("cannot write health endpoint file {}", path.display())]
    EndpointFile {
        /// The file (or its temporary sibling) that failed.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Spawning the listener thread failed.
    #[error("cannot spawn the health listener thread")]
    Thread {
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Bind { .. } => codes::HEALTH_LISTENER_BIND_FAILED,
            Error::Random { .. } => codes::HEALTH_SECRET_UNAVAILABLE,
            Error::EndpointFile { .. } => codes::HEALTH_ENDPOINT_WRITE_FAILED,
            Error::Thread { .. } => codes::HEALTH_LISTENER_THREAD_FAILED,
        }
    }
}

impl From<Error> for ErrorInfo {
    fn from(error: Error) -> ErrorInfo {
        let info = ErrorInfo::new(Stage::Start, error.code(), error.to_string());
        match &error {
            Error::EndpointFile { path, .. } => {
                info.with_metadata("path", path.display().to_string())
            }
            _ => info,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_error_info() {
        let e = Error::EndpointFile {
            path: "/x/health.endpoint.json".into(),
            source: std::io::Error::other("denied"),
        };
        assert_eq!(e.code(), "health_endpoint_write_failed");
        let info = ErrorInfo::from(e);
        assert_eq!(info.code, "health_endpoint_write_failed");
        assert_eq!(info.path(), Some("/x/health.endpoint.json"));
        assert_eq!(
            Error::Bind {
                source: std::io::Error::other("x")
            }
            .code(),
            "health_listener_bind_failed"
        );
    }
}
