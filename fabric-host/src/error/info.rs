//! Conversions into and out of `HostError`: plan and config errors in, `ErrorInfo` out
//! (messages with their bounded stderr cause, metadata with redacted diagnostics).

use fabric_config::ErrorInfo;
use fabric_config::codes;
use serde_json::Value;

use super::{Diagnostics, ErrorClass, HostError};

impl From<fabric_plan::PlanError> for HostError {
    fn from(error: fabric_plan::PlanError) -> HostError {
        let class = match error.code() {
            codes::CONFIG_INCOMPATIBLE | codes::CONFIG_SCHEMA_VIOLATION => ErrorClass::Capability,
            _ => ErrorClass::Config,
        };
        HostError::Plan {
            info: Box::new(ErrorInfo::from(error)),
            class,
        }
    }
}

impl From<fabric_config::error::ConfigError> for HostError {
    fn from(error: fabric_config::error::ConfigError) -> HostError {
        HostError::Plan {
            info: Box::new(ErrorInfo::from(error)),
            class: ErrorClass::Config,
        }
    }
}

impl From<fabric_relay::RelayError> for HostError {
    fn from(error: fabric_relay::RelayError) -> HostError {
        match error {
            fabric_relay::RelayError::Collector {
                stage,
                code,
                message,
            } => HostError::Collector {
                stage,
                code,
                message,
            },
            fabric_relay::RelayError::Config(error) => HostError::from(error),
        }
    }
}

impl From<fabric_sandbox::SandboxError> for HostError {
    fn from(error: fabric_sandbox::SandboxError) -> HostError {
        use fabric_sandbox::SandboxError;
        match error {
            SandboxError::Launch {
                stage,
                program,
                reason,
            } => HostError::Launch {
                stage,
                program,
                reason,
            },
            SandboxError::Provider {
                stage,
                code,
                message,
                provider_code,
                stderr_tail,
            } => HostError::Provider {
                stage,
                code,
                message,
                provider_code,
                stderr_tail,
            },
            SandboxError::Environment {
                stage,
                code,
                class,
                message,
                path,
            } => HostError::Environment {
                stage,
                code,
                class,
                message,
                path,
            },
        }
    }
}

/// Characters of an operation's stderr kept in a lifecycle failure's message (the end is
/// kept: a traceback's last line names the cause).
const MESSAGE_DIAGNOSTICS_CHARS: usize = 2048;

/// `message` followed by `; diagnostics: <stderr>` (trimmed, bounded) when there is any.
fn with_cause(message: String, stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        return message;
    }
    let kept = fabric_reactor::stderr::keep_end(stderr, MESSAGE_DIAGNOSTICS_CHARS);
    let marker = if kept.len() < stderr.len() { "..." } else { "" };
    if message.trim().is_empty() {
        format!("diagnostics: {marker}{kept}")
    } else {
        format!("{message}; diagnostics: {marker}{kept}")
    }
}

/// Characters of a crashed host's last stderr line kept in the message.
const CRASH_CAUSE_CHARS: usize = 300;

/// `: <last non-empty stderr line>` (bounded), plus a hint for a Python module that the
/// interpreter could not import; empty without stderr.
pub(super) fn crash_cause(diagnostics: &Diagnostics) -> String {
    let Some(line) = diagnostics
        .stderr_tail
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
    else {
        return String::new();
    };
    let kept = fabric_reactor::stderr::keep_end(line, CRASH_CAUSE_CHARS);
    let marker = if kept.len() < line.len() { "..." } else { "" };
    let hint = if line.contains("No module named") {
        " (activate the virtual environment the adapter is installed in, or set ADAPTER_PYTHON \
         to its python)"
    } else {
        ""
    };
    format!(": {marker}{kept}{hint}")
}

impl From<HostError> for ErrorInfo {
    fn from(error: HostError) -> ErrorInfo {
        match error {
            HostError::Plan { info, .. } => return *info,
            HostError::Resource { stage, source } => {
                let mut info = ErrorInfo::from(source);
                info.stage = stage;
                return info;
            }
            _ => {}
        }
        let mut info = ErrorInfo::new(error.stage(), error.code(), error.to_string());
        if let Some(diagnostics) = error.diagnostics() {
            diagnostics.write_into(&mut info.metadata);
        }
        match error {
            HostError::Protocol { violation, .. } => {
                info.metadata
                    .insert("violation".into(), violation.as_str().into());
            }
            HostError::Timeout { timeout_ms, .. }
            | HostError::TerminationFailed { timeout_ms, .. } => {
                info.metadata.insert("timeout_ms".into(), timeout_ms.into());
            }
            HostError::Launch { program, .. } => {
                info.metadata.insert("program".into(), program.into());
            }
            HostError::Lifecycle {
                message,
                retryable,
                metadata,
                diagnostics,
                ..
            } => {
                // The adapter's own message and metadata, then (as upstream does) what the
                // host printed during the operation, so the cause (a traceback's last line)
                // ends the message. Host diagnostics keys never replace the adapter's.
                info.message = with_cause(message, &diagnostics.operation_stderr);
                info.retryable = retryable;
                info.metadata.extend(metadata);
            }
            HostError::RuntimeFailed { cause, .. } => {
                info.metadata.insert("cause".into(), cause.into());
            }
            HostError::InvalidRequest { path, .. }
            | HostError::Environment {
                path: Some(path), ..
            } => {
                info.metadata.insert("path".into(), path.into());
            }
            HostError::Service { fields, .. } if !fields.is_empty() => {
                info.metadata.insert("fields".into(), fields.into());
            }
            HostError::RequestTooLarge {
                request_bytes,
                limit_bytes,
                ..
            } => {
                info.metadata
                    .insert("request_bytes".into(), request_bytes.into());
                info.metadata
                    .insert("limit_bytes".into(), limit_bytes.into());
            }
            HostError::RequestExtensionsUndeclared { adapter_id, .. } => {
                info.metadata
                    .insert("path".into(), "request.extensions".into());
                info.metadata.insert("adapter_id".into(), adapter_id.into());
            }
            HostError::RequestExtensionInvalid {
                adapter_id, path, ..
            } => {
                info.metadata.insert("path".into(), path.into());
                info.metadata.insert("adapter_id".into(), adapter_id.into());
            }
            HostError::EnvNameUnset { name, .. } | HostError::EnvNameChanged { name, .. } => {
                info.metadata
                    .insert("path".into(), "environment.env_names".into());
                info.metadata.insert("name".into(), name.into());
            }
            HostError::Filesystem { path, .. } => {
                info.metadata.insert("file".into(), path.into());
            }
            HostError::PathRefused { path, reason, .. } => {
                info.metadata.insert("file".into(), path.into());
                info.metadata.insert("reason".into(), (*reason).into());
            }
            HostError::Provider {
                provider_code,
                stderr_tail,
                ..
            } => {
                if let Some(code) = provider_code {
                    info.metadata.insert("provider_code".into(), code.into());
                }
                if let Some(tail) = stderr_tail {
                    info.metadata.insert("stderr_tail".into(), tail.into());
                }
            }
            HostError::Bridge { effects, .. } => {
                let effects = serde_json::to_value(effects).unwrap_or(Value::Null);
                info.metadata.insert("effects".into(), effects);
                info.metadata
                    .insert("source".into(), "runtime_server".into());
            }
            HostError::ResourceRuntimeStopped { runtime_id, .. } => {
                info.metadata
                    .insert("reason".into(), codes::RUNTIME_STOPPED.into());
                info.metadata.insert("runtime_id".into(), runtime_id.into());
            }
            HostError::StreamProtocol {
                http_status: Some(status),
                ..
            } => {
                info.metadata.insert("http_status".into(), status.into());
            }
            HostError::ResourceKindUnsupported { adapter_kind, .. } => {
                info.metadata
                    .insert("reason".into(), codes::ADAPTER_KIND_UNSUPPORTED.into());
                info.metadata
                    .insert("adapter_kind".into(), adapter_kind.into());
            }
            _ => {}
        }
        info
    }
}
