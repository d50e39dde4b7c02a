//! Structured context of host failures: protocol violations and redacted diagnostics.

use fabric_config::codes;
use std::fmt;

use serde_json::{Map, Value};

/// Why a host's output broke the lifecycle protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// A stdout line exceeded the configured limit.
    LineTooLong,
    /// A stdout line was not valid UTF-8.
    InvalidUtf8,
    /// A stdout line was not a JSON object.
    InvalidJson,
    /// The response named another operation than the request.
    WrongOperation,
    /// The response had no valid `outcome`.
    InvalidOutcome,
    /// The host wrote a line while no request was pending.
    UnexpectedOutput,
}

impl ProtocolViolation {
    /// Stable snake_case spelling (in `metadata.violation`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolViolation::LineTooLong => "line_too_long",
            ProtocolViolation::InvalidUtf8 => codes::INVALID_UTF8,
            ProtocolViolation::InvalidJson => codes::INVALID_JSON,
            ProtocolViolation::WrongOperation => "wrong_operation",
            ProtocolViolation::InvalidOutcome => "invalid_outcome",
            ProtocolViolation::UnexpectedOutput => "unexpected_output",
        }
    }
}

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Safe diagnostics attached to host failures: never part of the message, always redacted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Host pid, when a host existed.
    pub pid: Option<u32>,
    /// How the host exited (`exit code 3`, `signal 9`), when it did.
    pub exit: Option<String>,
    /// The last bytes of the host's stderr with environment values replaced by `***`.
    pub stderr_tail: String,
    /// What the host wrote to stderr during the failed operation (redacted, bounded);
    /// appended to a lifecycle failure's message as `; diagnostics: ...`, as upstream does.
    pub operation_stderr: String,
    /// Processes of the host alive when it exited after a failed start (the core killed
    /// them): a JSON array in `metadata.left_behind`, as a stop's `runtime_stop` event lists
    /// them (boxed: it keeps `HostError` small).
    pub left_behind: Option<Box<Value>>,
}

impl Diagnostics {
    pub(super) fn write_into(&self, metadata: &mut Map<String, Value>) {
        if let Some(pid) = self.pid {
            metadata.insert("host_pid".into(), pid.into());
        }
        if let Some(exit) = &self.exit {
            metadata.insert("host_exit".into(), exit.clone().into());
        }
        if !self.stderr_tail.is_empty() {
            metadata.insert("stderr_tail".into(), self.stderr_tail.clone().into());
        }
        if let Some(left) = &self.left_behind {
            metadata.insert("left_behind".into(), (**left).clone());
        }
    }
}
