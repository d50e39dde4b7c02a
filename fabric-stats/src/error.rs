//! The crate's error type: why a resource observation could not be made.

use fabric_config::codes;
use std::path::PathBuf;

use fabric_config::{ErrorInfo, Stage};

/// Why an observation of an existing target could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnavailableReason {
    /// The adapter host process exited (it is gone or a zombie).
    HostExited,
    /// A file of a live process in the tree could not be read.
    ProcessUnreadable {
        /// The file that failed.
        path: PathBuf,
    },
    /// A child listed by its parent is hidden by `/proc` (for example `hidepid`).
    ProcessHidden {
        /// The hidden child.
        pid: u32,
    },
    /// The process table (the directory listing of the proc root) could not be read.
    ProcessTableUnreadable {
        /// The proc root.
        path: PathBuf,
    },
    /// `/proc` hides other users' processes and the kernel has no children lists, so the
    /// parent scan cannot be complete.
    ProcessTableHidden,
    /// The tree kept changing during the read after the bounded number of attempts.
    TreeChanging {
        /// Attempts made.
        attempts: u32,
    },
}

impl UnavailableReason {
    /// Every reason code, in declaration order.
    pub const ALL_CODES: [&'static str; 6] = [
        codes::HOST_EXITED,
        codes::PROCESS_UNREADABLE,
        codes::PROCESS_HIDDEN,
        codes::PROCESS_TABLE_UNREADABLE,
        codes::PROCESS_TABLE_HIDDEN,
        codes::TREE_CHANGING,
    ];

    /// Stable snake_case reason (the `reason` of an `unavailable` observation).
    pub fn code(&self) -> &'static str {
        match self {
            UnavailableReason::HostExited => codes::HOST_EXITED,
            UnavailableReason::ProcessUnreadable { .. } => codes::PROCESS_UNREADABLE,
            UnavailableReason::ProcessHidden { .. } => codes::PROCESS_HIDDEN,
            UnavailableReason::ProcessTableUnreadable { .. } => codes::PROCESS_TABLE_UNREADABLE,
            UnavailableReason::ProcessTableHidden => codes::PROCESS_TABLE_HIDDEN,
            UnavailableReason::TreeChanging { .. } => codes::TREE_CHANGING,
        }
    }
}

impl std::fmt::Display for UnavailableReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnavailableReason::HostExited => f.write_str("the adapter host process exited"),
            UnavailableReason::ProcessUnreadable { path } => {
                write!(f, "cannot read {}", path.display())
            }
            UnavailableReason::ProcessHidden { pid } => {
                write!(f, "descendant {pid} is hidden by the proc mount")
            }
            UnavailableReason::ProcessTableUnreadable { path } => {
                write!(f, "cannot list the process table at {}", path.display())
            }
            UnavailableReason::ProcessTableHidden => {
                f.write_str("the proc mount hides processes and the kernel has no children lists")
            }
            UnavailableReason::TreeChanging { attempts } => {
                write!(
                    f,
                    "the process tree kept changing during {attempts} attempts"
                )
            }
        }
    }
}

/// Why no reader exists for the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnsupportedReason {
    /// The operating system has no process-tree reader (not Linux).
    Platform,
    /// The proc root is not a mounted proc file system.
    NoProcFilesystem,
    /// The kernel has no children lists and the reader was told not to scan parents.
    NoChildrenLists,
}

impl UnsupportedReason {
    /// Every reason code, in declaration order.
    pub const ALL_CODES: [&'static str; 3] = [
        codes::PLATFORM_UNSUPPORTED,
        codes::PROC_UNAVAILABLE,
        codes::CHILDREN_LISTS_UNAVAILABLE,
    ];

    /// Stable snake_case reason (the `reason` of an `unsupported` observation).
    pub fn code(&self) -> &'static str {
        match self {
            UnsupportedReason::Platform => codes::PLATFORM_UNSUPPORTED,
            UnsupportedReason::NoProcFilesystem => codes::PROC_UNAVAILABLE,
            UnsupportedReason::NoChildrenLists => codes::CHILDREN_LISTS_UNAVAILABLE,
        }
    }
}

impl std::fmt::Display for UnsupportedReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnsupportedReason::Platform => {
                f.write_str("this operating system has no process-tree reader")
            }
            UnsupportedReason::NoProcFilesystem => {
                f.write_str("no proc file system at the proc root")
            }
            UnsupportedReason::NoChildrenLists => {
                f.write_str("the kernel has no process children lists")
            }
        }
    }
}

/// A resource observation failed. Never replaced by zeros.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// The target exists in principle but could not be read now.
    #[error("resource observation unavailable for pid {pid}: {reason}")]
    Unavailable {
        /// The adapter host pid.
        pid: u32,
        /// Why.
        reason: UnavailableReason,
    },
    /// No reader exists for this platform or target.
    #[error("resource observation unsupported: {reason}")]
    Unsupported {
        /// Why.
        reason: UnsupportedReason,
    },
}

impl StatsError {
    /// Every error code, in declaration order.
    pub const ALL_CODES: [&'static str; 2] = [
        codes::RESOURCE_OBSERVATION_UNAVAILABLE,
        codes::RESOURCE_OBSERVATION_UNSUPPORTED,
    ];

    /// Stable snake_case error code.
    pub fn code(&self) -> &'static str {
        match self {
            StatsError::Unavailable { .. } => codes::RESOURCE_OBSERVATION_UNAVAILABLE,
            StatsError::Unsupported { .. } => codes::RESOURCE_OBSERVATION_UNSUPPORTED,
        }
    }

    /// The stable reason code (`host_exited`, `tree_changing`, `platform_unsupported`, ...).
    pub fn reason_code(&self) -> &'static str {
        match self {
            StatsError::Unavailable { reason, .. } => reason.code(),
            StatsError::Unsupported { reason } => reason.code(),
        }
    }
}

impl From<StatsError> for ErrorInfo {
    fn from(error: StatsError) -> Self {
        let retryable = matches!(
            error,
            StatsError::Unavailable {
                reason: UnavailableReason::TreeChanging { .. },
                ..
            }
        );
        let mut info = ErrorInfo::new(Stage::Invoke, error.code(), error.to_string())
            .with_metadata("reason", error.reason_code());
        info.retryable = retryable;
        match &error {
            StatsError::Unavailable { pid, reason } => {
                info = info.with_metadata("pid", *pid);
                match reason {
                    UnavailableReason::ProcessUnreadable { path }
                    | UnavailableReason::ProcessTableUnreadable { path } => {
                        info = info.with_metadata("path", path.display().to_string());
                    }
                    UnavailableReason::TreeChanging { attempts } => {
                        info = info.with_metadata("attempts", *attempts);
                    }
                    _ => {}
                }
            }
            StatsError::Unsupported { .. } => {}
        }
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_codes_cover_every_variant() {
        // Exhaustive (in-crate) matches: a new variant must get a code listed in ALL_CODES.
        let reason = |r: &UnavailableReason| match r {
            UnavailableReason::HostExited
            | UnavailableReason::ProcessUnreadable { .. }
            | UnavailableReason::ProcessHidden { .. }
            | UnavailableReason::ProcessTableUnreadable { .. }
            | UnavailableReason::ProcessTableHidden
            | UnavailableReason::TreeChanging { .. } => r.code(),
        };
        assert!(UnavailableReason::ALL_CODES.contains(&reason(&UnavailableReason::HostExited)));
        let unsupported = |r: UnsupportedReason| match r {
            UnsupportedReason::Platform
            | UnsupportedReason::NoProcFilesystem
            | UnsupportedReason::NoChildrenLists => r.code(),
        };
        assert!(UnsupportedReason::ALL_CODES.contains(&unsupported(UnsupportedReason::Platform)));
        let error = |e: &StatsError| match e {
            StatsError::Unavailable { .. } | StatsError::Unsupported { .. } => e.code(),
        };
        let sample = StatsError::Unsupported {
            reason: UnsupportedReason::Platform,
        };
        assert!(StatsError::ALL_CODES.contains(&error(&sample)));
    }

    #[test]
    fn codes_are_stable() {
        let unavailable = StatsError::Unavailable {
            pid: 7,
            reason: UnavailableReason::HostExited,
        };
        assert_eq!(unavailable.code(), "resource_observation_unavailable");
        assert_eq!(unavailable.reason_code(), "host_exited");
        let unsupported = StatsError::Unsupported {
            reason: UnsupportedReason::Platform,
        };
        assert_eq!(unsupported.code(), "resource_observation_unsupported");
        let info = ErrorInfo::from(StatsError::Unavailable {
            pid: 7,
            reason: UnavailableReason::TreeChanging { attempts: 8 },
        });
        assert_eq!(info.code, "resource_observation_unavailable");
        assert!(info.retryable);
        assert_eq!(info.metadata["reason"], "tree_changing");
        assert_eq!(info.metadata["attempts"], 8);
    }
}
