//! `HostError`: every failure of hosting, with `code` and `stage` as structured fields.

mod classify;
mod diagnostics;
mod info;

use fabric_config::{ErrorInfo, Stage};
use serde_json::{Map, Value};

pub use fabric_config::codes::ErrorClass;

pub use diagnostics::{Diagnostics, ProtocolViolation};
use info::crash_cause;

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
    /// A path under a root the adapter or environment controls was refused (a symbolic
    /// link, a special file, a size): nothing was read or written through it.
    #[error("refused `{path}`: {detail}")]
    PathRefused {
        /// Stage.
        stage: Stage,
        /// The path concerned.
        path: String,
        /// `symlink`, `not_regular`, `too_large`, `outside_root`, or `not_private` (a
        /// directory another user owns or can enter).
        reason: &'static str,
        /// What was found (no file content).
        detail: String,
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
