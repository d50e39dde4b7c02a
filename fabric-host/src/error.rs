//! `HostError`: every failure of hosting, with `code` and `stage` as structured fields.

use std::fmt;

use fabric_config::{ErrorInfo, Stage};
use serde_json::{Map, Value};

pub use fabric_config::codes::ErrorClass;

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
            ProtocolViolation::InvalidUtf8 => "invalid_utf8",
            ProtocolViolation::InvalidJson => "invalid_json",
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
}

impl Diagnostics {
    fn write_into(&self, metadata: &mut Map<String, Value>) {
        if let Some(pid) = self.pid {
            metadata.insert("host_pid".into(), pid.into());
        }
        if let Some(exit) = &self.exit {
            metadata.insert("host_exit".into(), exit.clone().into());
        }
        if !self.stderr_tail.is_empty() {
            metadata.insert("stderr_tail".into(), self.stderr_tail.clone().into());
        }
    }
}

/// Every failure of hosting.
///
/// Each variant carries its `stage`; [`HostError::code`] is the stable code. Messages name
/// programs, fields and variables, never environment values. Stderr content goes, redacted,
/// to `metadata.stderr_tail` of the [`ErrorInfo`]; a lifecycle failure's message ends with the
/// (redacted, bounded) stderr of its operation, as upstream's does, and a crashed host's with
/// the last line of its stderr.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The host process could not be launched.
    #[error("could not launch adapter host `{program}`: {reason}")]
    Launch {
        /// Stage (`start`).
        stage: Stage,
        /// Program that failed to launch.
        program: String,
        /// OS error text.
        reason: String,
    },
    /// The host's output broke the lifecycle protocol; the runtime is terminal.
    #[error("adapter host broke the lifecycle protocol during {} ({violation})", stage.as_str())]
    Protocol {
        /// Stage of the pending operation.
        stage: Stage,
        /// What was wrong.
        violation: ProtocolViolation,
        /// Safe diagnostics.
        diagnostics: Diagnostics,
    },
    /// The host exited or closed its stdout while an operation was pending; terminal. The
    /// message ends with the last line the host wrote to stderr (redacted, bounded), which
    /// usually names the cause, and a hint when that is a missing Python module.
    #[error("adapter host exited during {}{}", stage.as_str(), crash_cause(diagnostics))]
    HostCrashed {
        /// Stage of the pending operation.
        stage: Stage,
        /// Safe diagnostics.
        diagnostics: Diagnostics,
    },
    /// The host did not answer before the deadline; the runtime is terminal.
    #[error("adapter host did not answer {} within {timeout_ms} ms", stage.as_str())]
    Timeout {
        /// Stage of the pending operation.
        stage: Stage,
        /// The deadline that expired, in milliseconds.
        timeout_ms: u64,
        /// Safe diagnostics.
        diagnostics: Diagnostics,
    },
    /// Writing to or reading from the host's pipes failed; terminal.
    #[error("adapter host I/O failed during {}: {reason}", stage.as_str())]
    HostIo {
        /// Stage of the pending operation.
        stage: Stage,
        /// OS error text.
        reason: String,
        /// Safe diagnostics.
        diagnostics: Diagnostics,
    },
    /// The host answered with a failed outcome (the adapter's own code is kept).
    #[error("adapter reported {code} during {}: {message}", stage.as_str())]
    Lifecycle {
        /// Stage reported by the host (defaults to the operation's stage).
        stage: Stage,
        /// The adapter's error code, for example `lifecycle_invalid_config`.
        code: String,
        /// The adapter's message.
        message: String,
        /// Whether the adapter marked the failure retryable.
        retryable: bool,
        /// The adapter's metadata.
        metadata: Map<String, Value>,
        /// The host's pid and redacted stderr (the tail, and what it printed during this
        /// operation: for an unexpected exception, the traceback). Boxed: errors stay small.
        diagnostics: Box<Diagnostics>,
    },
    /// The host could not be terminated even by `SIGKILL` within the stop bound.
    #[error("adapter host did not terminate within {timeout_ms} ms")]
    TerminationFailed {
        /// Stage (`stop`).
        stage: Stage,
        /// Total time spent stopping.
        timeout_ms: u64,
        /// Safe diagnostics.
        diagnostics: Diagnostics,
    },
    /// The process-wide reactor could not be created or is gone.
    #[error("the host reactor is unavailable: {reason}")]
    EngineUnavailable {
        /// Stage of the attempted operation.
        stage: Stage,
        /// OS error text.
        reason: String,
    },
    /// Config decoding, validation or planning failed (code and stage from the planner).
    #[error("{info}")]
    Plan {
        /// The planner's structured error.
        info: Box<ErrorInfo>,
        /// `Config` or `Capability`.
        class: ErrorClass,
    },
    /// A shared-service rule was broken (`service_unsupported`, `service_binding_mismatch`,
    /// `service_not_active`, `service_in_use`, `service_releasing`, `invalid_service_info`,
    /// `invalid_service_reference`).
    #[error("{message}")]
    Service {
        /// Stage.
        stage: Stage,
        /// Stable code.
        code: &'static str,
        /// SDK class.
        class: ErrorClass,
        /// Safe message naming the service and what differs (never values).
        message: String,
        /// Names reported in `metadata.fields` (differing plan sections, connected
        /// runtime ids).
        fields: Vec<String>,
    },
    /// An environment rule was broken (`invalid_environment_reference`,
    /// `environment_not_found`).
    #[error("{message}")]
    Environment {
        /// Stage.
        stage: Stage,
        /// Stable code.
        code: &'static str,
        /// SDK class.
        class: ErrorClass,
        /// Safe message naming the field (never a value).
        message: String,
        /// The offending field (`metadata.path`), if one.
        path: Option<String>,
    },
    /// An environment provider process failed (`provider_crashed`, `provider_timeout`,
    /// `provider_protocol_error`, `provider_failed`, `provider_error`,
    /// `provider_request_too_large`, `provider_output_too_large`).
    #[error("{message}")]
    Provider {
        /// Stage.
        stage: Stage,
        /// Stable code.
        code: &'static str,
        /// Safe message.
        message: String,
        /// The provider's own code of a `failed` response (`metadata.provider_code`).
        provider_code: Option<String>,
        /// The provider's last stderr (`metadata.stderr_tail`).
        stderr_tail: Option<String>,
    },
    /// The runtime server inside a provider environment failed a call: its own registered
    /// code (`cleanup_unconfirmed`, `start_failed`, `invoke_failed`, `runtime_unavailable`,
    /// `validation_failed`, …) or `invalid_response` for a malformed answer. With `effects:
    /// unknown` the call's outcome is uncertain: it is never resent, and an invoke's runtime
    /// is terminal.
    #[error("{message}")]
    Bridge {
        /// Stage.
        stage: Stage,
        /// Stable code.
        code: &'static str,
        /// Safe message.
        message: String,
        /// What the failed call did (`metadata.effects`).
        effects: fabric_config::bridge::Effects,
    },
    /// The selected adapter or provider cannot do what was asked.
    #[error("{message}")]
    Capability {
        /// Stage.
        stage: Stage,
        /// Stable code (`adapter_kind_unsupported`, `adapter_runner_invalid`,
        /// `environment_provider_unsupported`).
        code: &'static str,
        /// Safe message naming the adapter/field.
        message: String,
    },
    /// The encoded request line would exceed the protocol line cap; it was not sent and the
    /// runtime is untouched.
    #[error(
        "the {} request is {request_bytes} bytes encoded, above the {limit_bytes}-byte protocol line limit; it was not sent",
        stage.as_str()
    )]
    RequestTooLarge {
        /// Stage of the refused operation.
        stage: Stage,
        /// Size of the encoded line, newline included.
        request_bytes: usize,
        /// The line cap (`RuntimeOptions::max_line_bytes`).
        limit_bytes: usize,
    },
    /// A request or option is invalid.
    #[error("invalid request at `{path}`: {reason}")]
    InvalidRequest {
        /// Stage.
        stage: Stage,
        /// JSON path of the offending field.
        path: String,
        /// What is wrong (never the value).
        reason: String,
    },
    /// The request carries `overrides` (adapter extensions) but the descriptor declares no
    /// `extension_schemas.run_request` (upstream: a runtime error at stage invoke).
    #[error(
        "adapter `{adapter_id}` cannot implement configuration at `request.extensions`: the adapter descriptor does not declare an extension schema for run_request"
    )]
    RequestExtensionsUndeclared {
        /// Stage (`invoke`).
        stage: Stage,
        /// The adapter.
        adapter_id: String,
    },
    /// The request's `overrides` violate the descriptor's `extension_schemas.run_request`.
    #[error("invalid adapter extension for adapter `{adapter_id}` at `{path}`: {reason}")]
    RequestExtensionInvalid {
        /// Stage (`invoke`).
        stage: Stage,
        /// The adapter.
        adapter_id: String,
        /// Dotted path (`request.extensions.<key>...`).
        path: String,
        /// What is wrong (never the value).
        reason: String,
    },
    /// A variable listed in `environment.env_names` is not set (or not UTF-8).
    #[error("environment variable `{name}` listed in environment.env_names is not set")]
    EnvNameUnset {
        /// Stage.
        stage: Stage,
        /// The variable name (never its value).
        name: String,
    },
    /// A forwarded variable changed since the runtime started.
    #[error(
        "environment variable `{name}` listed in environment.env_names changed since the runtime started; restart the runtime"
    )]
    EnvNameChanged {
        /// Stage.
        stage: Stage,
        /// The variable name (never its value).
        name: String,
    },
    /// The host's invoke output is not a valid AgentRunResult.
    #[error("adapter returned an invalid AgentRunResult: {reason}")]
    InvalidAgentRunResult {
        /// Stage (`invoke`).
        stage: Stage,
        /// What is wrong.
        reason: String,
    },
    /// FABRIC_HOME, invocation records or artifact directories could not be written.
    #[error("cannot write `{path}`: {reason}")]
    Filesystem {
        /// Stage.
        stage: Stage,
        /// The path concerned.
        path: String,
        /// OS error text.
        reason: String,
    },
    /// The environment was released.
    #[error("environment is released")]
    EnvironmentReleased {
        /// Stage of the attempted operation.
        stage: Stage,
    },
    /// Another invocation of this runtime is in progress.
    #[error("runtime already has an invocation in progress")]
    RuntimeBusy {
        /// Stage (`invoke`).
        stage: Stage,
    },
    /// The runtime was stopped (or is stopping).
    #[error("runtime is stopped")]
    RuntimeStopped {
        /// Stage of the attempted operation.
        stage: Stage,
    },
    /// The runtime became terminal after an earlier host failure.
    #[error("runtime is terminal after an earlier `{cause}` failure")]
    RuntimeFailed {
        /// Stage of the attempted operation.
        stage: Stage,
        /// Code of the failure that made the runtime terminal.
        cause: String,
    },
    /// A stream owns the runtime's invocation (`runtime_busy`, a state error).
    #[error(
        "a streaming invocation is active; read it to the end or close it before starting another turn"
    )]
    StreamActive {
        /// Stage of the attempted operation.
        stage: Stage,
    },
    /// The adapter broke the OpenAI stream transport (`openai_stream_protocol_error`); the
    /// runtime is failed.
    #[error("{message}")]
    StreamProtocol {
        /// Stage (`invoke`).
        stage: Stage,
        /// Safe message naming the broken rule (never a value).
        message: String,
        /// The HTTP status the listener answered, if it answered.
        http_status: Option<u16>,
    },
    /// The Relay ATOF collector could not start (`collector_start_failed`) or refused a
    /// request (`collector_request_failed`).
    #[error("{message}")]
    Collector {
        /// Stage of the attempted operation.
        stage: Stage,
        /// `collector_start_failed` or `collector_request_failed`.
        code: &'static str,
        /// Safe message (never a token).
        message: String,
    },
    /// Reading the adapter host's process tree failed (`resource_observation_unavailable`
    /// or `resource_observation_unsupported`, with the reader's `metadata.reason`).
    #[error("{source}")]
    Resource {
        /// Stage of the attempted operation.
        stage: Stage,
        /// The reader's error.
        source: fabric_stats::StatsError,
    },
    /// The runtime is stopping or stopped: there is no live process tree to observe
    /// (`resource_observation_unavailable`, `metadata.reason = "runtime_stopped"`).
    #[error("runtime `{runtime_id}` is stopped; its resources cannot be observed")]
    ResourceRuntimeStopped {
        /// Stage of the attempted operation.
        stage: Stage,
        /// The runtime.
        runtime_id: String,
    },
    /// The adapter kind has no local host process to observe
    /// (`resource_observation_unsupported`, `metadata.reason = "adapter_kind_unsupported"`).
    #[error("adapter kind `{adapter_kind}` has no local host process to observe")]
    ResourceKindUnsupported {
        /// Stage of the attempted operation.
        stage: Stage,
        /// The adapter kind.
        adapter_kind: &'static str,
    },
}

/// Codes this crate defines itself (adapter lifecycle codes are passed through unchanged).
pub const CODES: &[&str] = &[
    "host_launch_failed",
    "protocol_error",
    "host_crashed",
    "timeout",
    "host_io",
    "host_termination_failed",
    "engine_unavailable",
    "runtime_busy",
    "runtime_stopped",
    "runtime_failed",
    "adapter_kind_unsupported",
    "adapter_runner_invalid",
    "environment_provider_unsupported",
    // Retired (issue 15): overrides now reach the adapter as `request.extensions`. Never
    // emitted; kept so the code is never reused.
    "request_overrides_unsupported",
    "request_extensions_unsupported",
    "request_extension_invalid",
    "invalid_request",
    "request_too_large",
    "env_name_unset",
    "env_name_changed",
    "invalid_agent_run_result",
    "filesystem_error",
    "environment_released",
    "invalid_environment_reference",
    "environment_not_found",
    "environment_provider_not_found",
    "invalid_provider_descriptor",
    "environment_attach_unsupported",
    "environment_runtime_unsupported",
    "provider_crashed",
    "provider_timeout",
    "provider_protocol_error",
    "provider_failed",
    "provider_error",
    "provider_request_too_large",
    "provider_output_too_large",
    "resource_observation_unavailable",
    "resource_observation_unsupported",
    "openai_streaming_unavailable",
    "openai_stream_protocol_error",
    "collector_start_failed",
    "collector_request_failed",
    "streaming_unavailable",
    "service_unsupported",
    "service_binding_mismatch",
    "service_not_active",
    "service_in_use",
    "service_releasing",
    "invalid_service_info",
    "invalid_service_reference",
];

/// Matches a `HostError` (or a reference to one) on where its stage lives: `$on_stage` with
/// `$stage` bound to the variant's `stage` field, or `$on_info` with `$info` bound to a
/// `Plan` error's info. One list of variants for reading and rewriting the stage.
macro_rules! with_stage {
    ($error:expr, $stage:ident => $on_stage:expr, $info:ident => $on_info:expr) => {
        match $error {
            HostError::Launch { $stage, .. }
            | HostError::Protocol { $stage, .. }
            | HostError::HostCrashed { $stage, .. }
            | HostError::Timeout { $stage, .. }
            | HostError::HostIo { $stage, .. }
            | HostError::Lifecycle { $stage, .. }
            | HostError::TerminationFailed { $stage, .. }
            | HostError::EngineUnavailable { $stage, .. }
            | HostError::RuntimeBusy { $stage, .. }
            | HostError::RuntimeStopped { $stage, .. }
            | HostError::RuntimeFailed { $stage, .. }
            | HostError::Capability { $stage, .. }
            | HostError::Service { $stage, .. }
            | HostError::Environment { $stage, .. }
            | HostError::Provider { $stage, .. }
            | HostError::Bridge { $stage, .. }
            | HostError::InvalidRequest { $stage, .. }
            | HostError::RequestTooLarge { $stage, .. }
            | HostError::RequestExtensionsUndeclared { $stage, .. }
            | HostError::RequestExtensionInvalid { $stage, .. }
            | HostError::EnvNameUnset { $stage, .. }
            | HostError::EnvNameChanged { $stage, .. }
            | HostError::InvalidAgentRunResult { $stage, .. }
            | HostError::Filesystem { $stage, .. }
            | HostError::EnvironmentReleased { $stage, .. }
            | HostError::Resource { $stage, .. }
            | HostError::ResourceRuntimeStopped { $stage, .. }
            | HostError::ResourceKindUnsupported { $stage, .. }
            | HostError::StreamActive { $stage, .. }
            | HostError::StreamProtocol { $stage, .. }
            | HostError::Collector { $stage, .. } => $on_stage,
            HostError::Plan { $info, .. } => $on_info,
        }
    };
}

impl HostError {
    /// The stable snake_case code; for [`HostError::Lifecycle`] the adapter's own code.
    pub fn code(&self) -> &str {
        match self {
            HostError::Launch { .. } => "host_launch_failed",
            HostError::Protocol { .. } => "protocol_error",
            HostError::HostCrashed { .. } => "host_crashed",
            HostError::Timeout { .. } => "timeout",
            HostError::HostIo { .. } => "host_io",
            HostError::Lifecycle { code, .. } => code,
            HostError::TerminationFailed { .. } => "host_termination_failed",
            HostError::EngineUnavailable { .. } => "engine_unavailable",
            HostError::RuntimeBusy { .. } => "runtime_busy",
            HostError::RuntimeStopped { .. } => "runtime_stopped",
            HostError::RuntimeFailed { .. } => "runtime_failed",
            HostError::Plan { info, .. } => &info.code,
            HostError::Capability { code, .. } => code,
            HostError::InvalidRequest { .. } => "invalid_request",
            HostError::RequestTooLarge { .. } => "request_too_large",
            HostError::RequestExtensionsUndeclared { .. } => "request_extensions_unsupported",
            HostError::RequestExtensionInvalid { .. } => "request_extension_invalid",
            HostError::EnvNameUnset { .. } => "env_name_unset",
            HostError::EnvNameChanged { .. } => "env_name_changed",
            HostError::InvalidAgentRunResult { .. } => "invalid_agent_run_result",
            HostError::Filesystem { .. } => "filesystem_error",
            HostError::EnvironmentReleased { .. } => "environment_released",
            HostError::Resource { source, .. } => source.code(),
            HostError::ResourceRuntimeStopped { .. } => "resource_observation_unavailable",
            HostError::ResourceKindUnsupported { .. } => "resource_observation_unsupported",
            HostError::StreamActive { .. } => "runtime_busy",
            HostError::StreamProtocol { .. } => "openai_stream_protocol_error",
            HostError::Collector { code, .. } => code,
            HostError::Service { code, .. } => code,
            HostError::Environment { code, .. } => code,
            HostError::Provider { code, .. } | HostError::Bridge { code, .. } => code,
        }
    }

    /// The lifecycle stage the error belongs to.
    pub fn stage(&self) -> Stage {
        with_stage!(self, stage => *stage, info => info.stage)
    }

    /// The SDK error class.
    pub fn class(&self) -> ErrorClass {
        match self {
            HostError::RuntimeBusy { .. }
            | HostError::RuntimeStopped { .. }
            | HostError::RuntimeFailed { .. }
            | HostError::StreamActive { .. }
            | HostError::EnvironmentReleased { .. } => ErrorClass::State,
            HostError::Plan { class, .. }
            | HostError::Service { class, .. }
            | HostError::Environment { class, .. } => *class,
            HostError::Capability { .. } => ErrorClass::Capability,
            HostError::Bridge { code, .. }
                if matches!(
                    *code,
                    "validation_failed" | "invalid_request" | "wrong_agent"
                ) =>
            {
                ErrorClass::Config
            }
            // A provider's own codes for settings the caller must change.
            HostError::Provider { code, .. }
                if matches!(
                    *code,
                    "invalid_settings" | "socket_path_too_long" | "sandbox_image_unpinned"
                ) =>
            {
                ErrorClass::Config
            }
            HostError::InvalidRequest { .. } | HostError::RequestTooLarge { .. } => {
                ErrorClass::Config
            }
            HostError::Resource {
                source: fabric_stats::StatsError::Unsupported { .. },
                ..
            }
            | HostError::ResourceKindUnsupported { .. } => ErrorClass::ResourceUnsupported,
            HostError::Resource { .. } | HostError::ResourceRuntimeStopped { .. } => {
                ErrorClass::ResourceUnavailable
            }
            _ => ErrorClass::Runtime,
        }
    }

    /// Whether this is an invalid state transition (`FabricStateError`).
    pub fn is_state_error(&self) -> bool {
        self.class() == ErrorClass::State
    }

    /// Whether the error made the runtime terminal (no further invocations).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            HostError::Protocol { .. }
                | HostError::HostCrashed { .. }
                | HostError::Timeout { .. }
                | HostError::HostIo { .. }
                | HostError::TerminationFailed { .. }
                | HostError::Bridge {
                    effects: fabric_config::bridge::Effects::Unknown,
                    ..
                }
        ) || matches!(
            self,
            HostError::Provider { code, .. }
                if matches!(
                    *code,
                    "provider_crashed" | "provider_timeout" | "provider_protocol_error" | "provider_failed"
                )
        )
    }

    /// The attached diagnostics, if any.
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            HostError::Protocol { diagnostics, .. }
            | HostError::HostCrashed { diagnostics, .. }
            | HostError::Timeout { diagnostics, .. }
            | HostError::HostIo { diagnostics, .. }
            | HostError::TerminationFailed { diagnostics, .. } => Some(diagnostics),
            HostError::Lifecycle { diagnostics, .. } => Some(diagnostics),
            _ => None,
        }
    }

    /// The same error reported at another stage.
    pub(crate) fn at_stage(mut self, new_stage: Stage) -> Self {
        with_stage!(&mut self, stage => *stage = new_stage, info => info.stage = new_stage);
        self
    }
}

impl From<fabric_plan::PlanError> for HostError {
    fn from(error: fabric_plan::PlanError) -> HostError {
        let class = match error.code() {
            "config_incompatible" | "config_schema_violation" => ErrorClass::Capability,
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

/// Characters of an operation's stderr kept in a lifecycle failure's message (the end is
/// kept: a traceback's last line names the cause).
const MESSAGE_DIAGNOSTICS_CHARS: usize = 2048;

/// `message` followed by `; diagnostics: <stderr>` (trimmed, bounded) when there is any.
fn with_cause(message: String, stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        return message;
    }
    let kept = crate::stderr::keep_end(stderr, MESSAGE_DIAGNOSTICS_CHARS);
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
fn crash_cause(diagnostics: &Diagnostics) -> String {
    let Some(line) = diagnostics
        .stderr_tail
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
    else {
        return String::new();
    };
    let kept = crate::stderr::keep_end(line, CRASH_CAUSE_CHARS);
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
                    .insert("reason".into(), "runtime_stopped".into());
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
                    .insert("reason".into(), "adapter_kind_unsupported".into());
                info.metadata
                    .insert("adapter_kind".into(), adapter_kind.into());
            }
            _ => {}
        }
        info
    }
}
