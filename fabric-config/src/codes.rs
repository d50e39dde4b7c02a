//! The error-code registry: every `ErrorInfo.code` any surface (core crates, C ABI, CLI,
//! bindings) can emit, declared once, with its stage and retryable flag; the SDK error
//! classes; and the C ABI status → class table.
//!
//! The bindings' code and class tables are generated from this module (`cargo run -p xtask
//! -- codegen`); a test walks the sources for string-literal codes outside the registry.
//! Codes are never renamed or reused.
//!
//! ```
//! use fabric_config::codes::{self, Origin};
//!
//! let busy = codes::lookup("runtime_busy").unwrap();
//! assert_eq!(busy.origin, Origin::Host);
//! assert!(codes::lookup("no_such_code").is_none());
//! ```

use crate::error::{ConfigError, Stage};

/// The SDK error class a failure maps to (`FabricConfigError`, `FabricStateError`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    /// Invalid config, request, override or argument.
    Config,
    /// The selected adapter does not support the requested operation.
    Capability,
    /// Start, invoke or stop failed before a normalized result existed.
    Runtime,
    /// Invalid runtime state transition (overlapping invoke, invoke after stop).
    State,
    /// A resource observation could not be read now (`resource_observation_unavailable`).
    ResourceUnavailable,
    /// No resource reader exists for this runtime (`resource_observation_unsupported`).
    ResourceUnsupported,
    /// The native library is missing, unloadable or of another ABI version (bindings only).
    NativeUnavailable,
}

impl ErrorClass {
    /// Every class, in declaration order.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Config,
        ErrorClass::Capability,
        ErrorClass::Runtime,
        ErrorClass::State,
        ErrorClass::ResourceUnavailable,
        ErrorClass::ResourceUnsupported,
        ErrorClass::NativeUnavailable,
    ];

    /// Stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Config => "config",
            ErrorClass::Capability => "capability",
            ErrorClass::Runtime => "runtime",
            ErrorClass::State => "state",
            ErrorClass::ResourceUnavailable => "resource_unavailable",
            ErrorClass::ResourceUnsupported => "resource_unsupported",
            ErrorClass::NativeUnavailable => "native_unavailable",
        }
    }
}

/// The C ABI version (`fabric_abi_version()`, `FABRIC_ABI_VERSION`): incremented on every
/// incompatible change to `include/fabric.h`; the bindings' generated tables carry it.
/// 2: plan / doctor / run / start / prepare / validate take `options_json`.
pub const ABI_VERSION: u32 = 2;

/// One C ABI status and the class its errors map to (`None`: not an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusClass {
    /// The `int32_t` status (numbers never change).
    pub status: i32,
    /// Stable snake_case name (`FABRIC_STATUS_<NAME>` upper-cased in C).
    pub name: &'static str,
    /// The SDK class of a failure with this status, unless its code overrides it.
    pub class: Option<ErrorClass>,
}

/// The C ABI statuses (fabric-ffi's `FabricStatus` must match; a test checks).
pub const STATUSES: &[StatusClass] = &[
    status(0, "ok", None),
    status(1, "config", Some(ErrorClass::Config)),
    status(2, "capability", Some(ErrorClass::Capability)),
    status(3, "runtime", Some(ErrorClass::Runtime)),
    status(4, "state", Some(ErrorClass::State)),
    status(
        5,
        "resource_unavailable",
        Some(ErrorClass::ResourceUnavailable),
    ),
    status(
        6,
        "resource_unsupported",
        Some(ErrorClass::ResourceUnsupported),
    ),
    status(7, "invalid_argument", Some(ErrorClass::Config)),
    status(8, "internal", Some(ErrorClass::Runtime)),
    status(100, "end", None),
    status(101, "timeout", None),
];

const fn status(status: i32, name: &'static str, class: Option<ErrorClass>) -> StatusClass {
    StatusClass {
        status,
        name,
        class,
    }
}

/// Who emits a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// Config decoding and validation (`fabric-config`).
    Config,
    /// Descriptors and planning (`fabric-plan`).
    Plan,
    /// Hosting and runtimes (`fabric-host`).
    Host,
    /// Health listeners (`fabric-health`).
    Health,
    /// Resource observation (`fabric-stats`).
    Stats,
    /// The C ABI layer (`fabric-ffi`).
    Abi,
    /// The `fabric` command.
    Cli,
    /// A language binding, before or around a native call.
    Binding,
    /// An adapter (upstream lifecycle codes the core passes through unchanged).
    Adapter,
    /// The sandbox runtime server and command bridge (`fabric-agent-ctl`).
    Sandbox,
}

impl Origin {
    /// Stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Origin::Config => "config",
            Origin::Plan => "plan",
            Origin::Host => "host",
            Origin::Health => "health",
            Origin::Stats => "stats",
            Origin::Abi => "abi",
            Origin::Cli => "cli",
            Origin::Binding => "binding",
            Origin::Adapter => "adapter",
            Origin::Sandbox => "sandbox",
        }
    }
}

/// One registered error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    /// Stable snake_case code.
    pub code: &'static str,
    /// The stage it is always reported at, or `None` when it takes the stage of the
    /// failing call.
    pub stage: Option<Stage>,
    /// Whether retrying at the consumer boundary is safe.
    pub retryable: bool,
    /// A class that overrides the status's class (handle errors are state errors).
    pub class: Option<ErrorClass>,
    /// Who emits it.
    pub origin: Origin,
    /// What it means (one line).
    pub summary: &'static str,
    /// Whether this is an `ErrorInfo.code` or a reason/diagnostic code inside a result.
    pub kind: CodeKind,
}

/// What a registered code names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeKind {
    /// An `ErrorInfo.code`.
    Error,
    /// A `reason` or diagnostic `code` inside a result (stats observations, provenance).
    Reason,
}

pub(crate) const fn code(
    code: &'static str,
    stage: Option<Stage>,
    origin: Origin,
    summary: &'static str,
) -> ErrorCode {
    ErrorCode {
        code,
        stage,
        retryable: false,
        class: None,
        origin,
        summary,
        kind: CodeKind::Error,
    }
}

pub(crate) const fn reason(name: &'static str, origin: Origin, summary: &'static str) -> ErrorCode {
    ErrorCode {
        kind: CodeKind::Reason,
        ..code(name, None, origin, summary)
    }
}

const fn state(code: ErrorCode) -> ErrorCode {
    ErrorCode {
        class: Some(ErrorClass::State),
        ..code
    }
}

use Origin as O;
use Stage as S;

/// Every code except the config rules and decode errors (those come from
/// [`ConfigError::all_codes`] and are added by [`all`]).
pub const CODES: &[ErrorCode] = &[
    // the sandbox runtime server and command bridge (fabric-agent-ctl; docs/sandbox.md)
    code(
        "cleanup_unconfirmed",
        None,
        O::Sandbox,
        "cleanup of an earlier runtime in the sandbox is not confirmed (a `fabric.unclean` marker, an uncertain start, or busy runtimes at shutdown): replace the sandbox",
    ),
    code(
        "interface_unsupported",
        None,
        O::Sandbox,
        "a bridge request names an interface version other than 2",
    ),
    code(
        "wrong_agent",
        None,
        O::Sandbox,
        "a bridge request's agent does not match the runtime or the config's metadata.name",
    ),
    code(
        "validation_failed",
        None,
        O::Sandbox,
        "the runtime server rejected the config or run request",
    ),
    code(
        "validation_unavailable",
        None,
        O::Sandbox,
        "the runtime server could not verify the adapter's capabilities",
    ),
    code(
        "start_failed",
        None,
        O::Sandbox,
        "the runtime server could not establish a runtime; effects unknown",
    ),
    code(
        "stop_failed",
        None,
        O::Sandbox,
        "the runtime server could not complete a stop; effects unknown",
    ),
    code(
        "invoke_failed",
        None,
        O::Sandbox,
        "an invocation through the runtime server produced no result; effects unknown",
    ),
    code(
        "host_stopping",
        None,
        O::Sandbox,
        "the runtime server is shutting down and takes no new work",
    ),
    code(
        "runtime_unavailable",
        None,
        O::Sandbox,
        "no running runtime of the runtime server has this id",
    ),
    code(
        "host_unavailable",
        None,
        O::Sandbox,
        "the runtime server socket cannot be reached; nothing was sent",
    ),
    code(
        "invalid_response",
        None,
        O::Sandbox,
        "the runtime server's response is missing, malformed, oversized or late; effects unknown for start/invoke/stop",
    ),
    code(
        "response_too_large",
        None,
        O::Sandbox,
        "a bridge response exceeds 4 MiB; effects unknown",
    ),
    code(
        "invalid_input",
        None,
        O::Sandbox,
        "a bridge input file or stdin is not one UTF-8 JSON value within 512 KiB (duplicate keys, NaN, deadline)",
    ),
    code(
        "runtime_exists",
        None,
        O::Sandbox,
        "an upstream 0.5.0 runtime server refuses a second start in its sandbox (the bridge client accepts this answer; this server starts several runtimes)",
    ),
    code(
        "host_lock_held",
        None,
        O::Sandbox,
        "another runtime server holds the socket's `fabric.lock`",
    ),
    code(
        "host_busy",
        None,
        O::Sandbox,
        "the runtime server is serving its maximum of 32 connections (MAX_CONNECTIONS); nothing was dispatched, try again",
    ),
    // the container environment provider (fabric-env-container; provider codes the core
    // reports as the error's own code, also in `metadata.provider_code`; docs/sandbox.md)
    code(
        "sandbox_image_unpinned",
        Some(S::Prepare),
        O::Sandbox,
        "the container provider's `settings.image` is missing or not an image id `sha256:<64 hex>` (a tag is refused)",
    ),
    code(
        "sandbox_image_mismatch",
        Some(S::Prepare),
        O::Sandbox,
        "the local image (or `settings.image_name`, or an attached container's image) is not the pinned `settings.image`",
    ),
    code(
        "sandbox_identity_changed",
        Some(S::Prepare),
        O::Sandbox,
        "the container named by an environment reference was replaced (another container id under the same name)",
    ),
    code(
        "container_engine_failed",
        Some(S::Prepare),
        O::Sandbox,
        "the container engine (podman) is missing or one of its commands failed; the message quotes its stderr",
    ),
    // the subprocess and container environment providers' own codes (provider_kit; also the
    // error's own code, like the container's above)
    code(
        "invalid_settings",
        Some(S::Prepare),
        O::Sandbox,
        "a provider's `environment.settings` member has the wrong type (the message names `settings.<member>`)",
    ),
    code(
        "socket_path_too_long",
        Some(S::Prepare),
        O::Sandbox,
        "the environment's runtime-server socket under `settings.root` would exceed the 107-byte unix socket path limit",
    ),
    code(
        "prepare_failed",
        Some(S::Prepare),
        O::Sandbox,
        "a provider could not create the environment directory or its runtime server did not answer (nothing is left behind)",
    ),
    // fabric-plan
    code(
        "descriptor_read_failed",
        Some(S::Plan),
        O::Plan,
        "an adapter or target descriptor file cannot be read",
    ),
    code(
        "descriptor_invalid_json",
        Some(S::Plan),
        O::Plan,
        "a descriptor is not valid JSON",
    ),
    code(
        "descriptor_unsupported_contract",
        Some(S::Plan),
        O::Plan,
        "a descriptor names a contract version this core does not speak",
    ),
    code(
        "descriptor_invalid",
        Some(S::Plan),
        O::Plan,
        "a descriptor breaks the descriptor schema",
    ),
    code(
        "descriptor_invalid_schema",
        Some(S::Plan),
        O::Plan,
        "an embedded extension schema is not a usable JSON Schema",
    ),
    code(
        "descriptor_ambiguous",
        Some(S::Plan),
        O::Plan,
        "two descriptors claim the same adapter or target id",
    ),
    code(
        "adapter_not_found",
        Some(S::Plan),
        O::Plan,
        "no descriptor was discovered for the selected adapter id",
    ),
    code(
        "target_not_found",
        Some(S::Plan),
        O::Plan,
        "no descriptor was discovered for the selected workflow target",
    ),
    code(
        "config_invalid",
        Some(S::Plan),
        O::Plan,
        "the config breaks a planning rule",
    ),
    code(
        "config_incompatible",
        Some(S::Plan),
        O::Plan,
        "the config uses a field the adapter does not accept",
    ),
    code(
        "config_schema_violation",
        Some(S::Plan),
        O::Plan,
        "an extension value breaks the adapter's extension schema",
    ),
    code(
        "model_role_ambiguous",
        Some(S::Plan),
        O::Plan,
        "the adapter cannot tell which model role to use",
    ),
    code(
        "target_mismatch",
        Some(S::Plan),
        O::Plan,
        "the workflow target does not fit the adapter",
    ),
    code(
        "descriptor_mismatch",
        Some(S::Plan),
        O::Plan,
        "the descriptor's sha256 differs from the expected fingerprint",
    ),
    // fabric-host
    code(
        "host_launch_failed",
        None,
        O::Host,
        "the adapter host process could not be started",
    ),
    code(
        "protocol_error",
        None,
        O::Host,
        "the adapter host broke the lifecycle protocol",
    ),
    code(
        "host_crashed",
        None,
        O::Host,
        "the adapter host exited while a request was pending",
    ),
    code(
        "timeout",
        None,
        O::Host,
        "the adapter host did not answer or stop in time",
    ),
    code(
        "host_io",
        None,
        O::Host,
        "reading from or writing to the adapter host failed",
    ),
    code(
        "host_termination_failed",
        Some(S::Stop),
        O::Host,
        "the adapter host's process group could not be ended",
    ),
    code(
        "engine_unavailable",
        None,
        O::Host,
        "the core's reactor thread is not running",
    ),
    state(code(
        "runtime_busy",
        Some(S::Invoke),
        O::Host,
        "an invocation is already running on this runtime",
    )),
    state(code(
        "runtime_stopped",
        None,
        O::Host,
        "the runtime was stopped",
    )),
    state(code(
        "runtime_failed",
        None,
        O::Host,
        "a host failure made the runtime terminal",
    )),
    code(
        "adapter_kind_unsupported",
        Some(S::Start),
        O::Host,
        "this core cannot host adapters of that kind",
    ),
    code(
        "adapter_runner_invalid",
        Some(S::Start),
        O::Host,
        "the descriptor's runner cannot be launched",
    ),
    code(
        "environment_provider_unsupported",
        Some(S::Prepare),
        O::Host,
        "the environment provider is not supported",
    ),
    code(
        "request_overrides_unsupported",
        Some(S::Invoke),
        O::Host,
        "retired (never emitted): request overrides now reach the adapter as request.extensions",
    ),
    code(
        "request_extensions_unsupported",
        Some(S::Invoke),
        O::Host,
        "the request carries overrides but the adapter declares no run_request extension schema",
    ),
    code(
        "request_extension_invalid",
        Some(S::Invoke),
        O::Host,
        "the request's overrides violate the adapter's run_request extension schema",
    ),
    code(
        "invalid_request",
        None,
        O::Host,
        "a RunRequest is missing, malformed or invalid",
    ),
    code(
        "request_too_large",
        None,
        O::Host,
        "an encoded request exceeds the protocol line limit; it was not sent and the runtime is untouched",
    ),
    code(
        "env_name_unset",
        None,
        O::Host,
        "a forwarded environment variable is not set",
    ),
    code(
        "env_name_changed",
        Some(S::Invoke),
        O::Host,
        "a forwarded environment variable changed after start",
    ),
    code(
        "invalid_agent_run_result",
        Some(S::Invoke),
        O::Host,
        "the adapter returned a result that breaks the contract",
    ),
    code(
        "filesystem_error",
        None,
        O::Host,
        "a file-system operation of the core failed",
    ),
    state(code(
        "environment_released",
        None,
        O::Host,
        "the environment was released",
    )),
    code(
        "invalid_environment_reference",
        Some(S::Config),
        O::Host,
        "an EnvironmentReference is malformed or names another provider (`metadata.path` names the field)",
    ),
    code(
        "environment_not_found",
        Some(S::Prepare),
        O::Host,
        "the resource an EnvironmentReference names does not exist (`metadata.path` names the field)",
    ),
    code(
        "environment_provider_not_found",
        Some(S::Prepare),
        O::Host,
        "no descriptor serves the config's environment.provider (docs/sandbox.md, \"Providers\")",
    ),
    code(
        "invalid_provider_descriptor",
        Some(S::Prepare),
        O::Host,
        "an environment-provider descriptor is malformed or names another provider or protocol",
    ),
    code(
        "environment_attach_unsupported",
        Some(S::Prepare),
        O::Host,
        "the environment provider cannot attach to existing environments",
    ),
    code(
        "environment_runtime_unsupported",
        Some(S::Start),
        O::Host,
        "this host cannot start in a provider environment (shared services run only in local environments; runtimes start through the environment's runtime server)",
    ),
    code(
        "environment_stream_unsupported",
        Some(S::Invoke),
        O::Host,
        "a runtime in a provider environment cannot stream (OpenAI or ATOF): its results come back whole through the environment's runtime server; use invoke",
    ),
    code(
        "provider_crashed",
        None,
        O::Host,
        "the environment provider process exited or closed a pipe; it is terminal",
    ),
    code(
        "provider_timeout",
        None,
        O::Host,
        "the environment provider did not answer in time; the outcome is unknown, nothing is resent, the provider is terminal",
    ),
    code(
        "provider_protocol_error",
        None,
        O::Host,
        "the environment provider's answer broke the protocol; it is terminal",
    ),
    code(
        "provider_failed",
        None,
        O::Host,
        "an earlier failure made the environment provider terminal",
    ),
    code(
        "provider_error",
        None,
        O::Host,
        "the environment provider answered `failed` (its code in `metadata.provider_code`)",
    ),
    code(
        "provider_request_too_large",
        None,
        O::Host,
        "a provider request exceeds 256 KiB encoded; it was not sent",
    ),
    code(
        "provider_output_too_large",
        None,
        O::Host,
        "a provider answer exceeds a limit (exec output 3 MiB; artifacts 16 files, 256 KiB each, 512 KiB total); nothing of it is kept",
    ),
    code(
        "service_unsupported",
        Some(S::Prepare),
        O::Host,
        "the adapter's descriptor does not claim `capabilities.service`",
    ),
    code(
        "service_binding_mismatch",
        Some(S::Start),
        O::Host,
        "the runtime's plan differs from the service's (`metadata.fields` names what)",
    ),
    code(
        "service_not_active",
        Some(S::Start),
        O::Host,
        "service must be active: it was released or its release failed",
    ),
    code(
        "service_in_use",
        Some(S::Stop),
        O::Host,
        "release refused: runtimes connected to the service are still running",
    ),
    state(code(
        "service_releasing",
        Some(S::Stop),
        O::Host,
        "a release of this service is already in progress",
    )),
    code(
        "invalid_service_info",
        Some(S::Start),
        O::Host,
        "the service host's start answer is not `{adapter_id, service_type, connection, metadata}`",
    ),
    code(
        "invalid_service_reference",
        Some(S::Config),
        O::Host,
        "a ServiceReference is malformed or names another adapter",
    ),
    code(
        "artifact_rejected",
        Some(S::Artifact),
        O::Host,
        "an artifact the adapter listed is outside the artifact root or unreadable",
    ),
    code(
        "lifecycle_error",
        None,
        O::Host,
        "the adapter reported a failure without a code",
    ),
    code(
        "openai_streaming_unavailable",
        Some(S::Invoke),
        O::Host,
        "the selected adapter does not claim native OpenAI streaming; the runtime is untouched",
    ),
    code(
        "openai_stream_protocol_error",
        Some(S::Invoke),
        O::Host,
        "the adapter broke the OpenAI stream transport (framing, authentication, sequence, \
         identity, chunk shape, missing end record); the runtime is failed",
    ),
    code(
        "streaming_unavailable",
        Some(S::Invoke),
        O::Host,
        "invoke_stream on a runtime not started with streaming (and Relay telemetry); the \
         runtime is untouched",
    ),
    code(
        "signal_handler_failed",
        Some(S::Prepare),
        O::Cli,
        "`fabric service prepare`: SIGINT/SIGTERM handling could not be installed",
    ),
    code(
        "collector_listen_invalid",
        Some(S::Config),
        O::Cli,
        "`fabric collector serve`: a non-loopback --listen without --allow-non-loopback, or a \
         bad --backpressure-timeout",
    ),
    code(
        "collector_token_invalid",
        Some(S::Config),
        O::Cli,
        "`fabric collector serve`: the --token-env variable holds fewer than 32 ASCII \
         characters",
    ),
    code(
        "collector_start_failed",
        None,
        O::Host,
        "the Relay ATOF collector could not listen (address in use, not loopback) or the \
         reactor is gone",
    ),
    code(
        "collector_request_failed",
        None,
        O::Host,
        "the ATOF collector refused or failed a request (registration, stream, deregistration)",
    ),
    // fabric-stats
    code(
        "resource_observation_unavailable",
        None,
        O::Stats,
        "a resource observation could not be read now",
    ),
    code(
        "resource_observation_unsupported",
        None,
        O::Stats,
        "no resource reader exists for this runtime",
    ),
    // fabric-health
    code(
        "invalid_check_request",
        Some(S::Config),
        O::Health,
        "a CheckRequest is malformed or names an unknown level",
    ),
    code(
        "health_listener_bind_failed",
        Some(S::Start),
        O::Health,
        "the health listener could not bind its socket",
    ),
    code(
        "health_secret_unavailable",
        Some(S::Start),
        O::Health,
        "no random secret could be drawn for the health channel",
    ),
    code(
        "health_endpoint_write_failed",
        Some(S::Start),
        O::Health,
        "the health endpoint file could not be written",
    ),
    code(
        "health_listener_thread_failed",
        Some(S::Start),
        O::Health,
        "the health listener thread could not be started",
    ),
    // fabric-ffi
    code(
        "null_argument",
        None,
        O::Abi,
        "a required pointer argument is NULL",
    ),
    code(
        "invalid_utf8",
        None,
        O::Abi,
        "a string argument is not UTF-8",
    ),
    state(code("null_handle", None, O::Abi, "a handle argument is 0")),
    state(code(
        "unknown_handle",
        None,
        O::Abi,
        "a handle argument was never issued",
    )),
    state(code(
        "stale_handle",
        None,
        O::Abi,
        "a handle argument was already freed",
    )),
    state(code(
        "wrong_handle_kind",
        None,
        O::Abi,
        "a handle argument is of another kind",
    )),
    code(
        "internal_panic",
        None,
        O::Abi,
        "a bug: a panic was caught at the C ABI boundary",
    ),
    code(
        "internal_encode",
        None,
        O::Abi,
        "a bug: a result could not be encoded as JSON",
    ),
    code(
        "handle_space_exhausted",
        None,
        O::Abi,
        "no more handle ids can be issued",
    ),
    // fabric CLI
    code(
        "config_read_failed",
        Some(S::Config),
        O::Cli,
        "the config file cannot be read",
    ),
    code(
        "request_read_failed",
        Some(S::Config),
        O::Cli,
        "the --request file cannot be read",
    ),
    code(
        "inputs_read_failed",
        Some(S::Config),
        O::Cli,
        "the --inputs file cannot be read",
    ),
    code(
        "unknown_schema",
        Some(S::Config),
        O::Cli,
        "`fabric schema` was given an unknown schema name",
    ),
    code(
        "export_read_failed",
        Some(S::Config),
        O::Cli,
        "a `fabric export` input file cannot be read",
    ),
    code(
        "export_line_invalid",
        Some(S::Config),
        O::Cli,
        "a `fabric export` input line is not a RunResult or an ATOF record",
    ),
    // bindings
    code(
        "native_library_missing",
        Some(S::Config),
        O::Binding,
        "the native library was not found",
    ),
    code(
        "native_library_unloadable",
        Some(S::Config),
        O::Binding,
        "the native library exists but cannot be loaded",
    ),
    code(
        "native_symbol_missing",
        Some(S::Config),
        O::Binding,
        "the native library lacks a required symbol",
    ),
    code(
        "abi_version_mismatch",
        Some(S::Config),
        O::Binding,
        "the native library speaks another ABI version",
    ),
    code(
        "invalid_argument",
        None,
        O::Binding,
        "an argument cannot be passed to the native library (NUL byte, wrong type)",
    ),
    code(
        "invalid_config_type",
        Some(S::Config),
        O::Binding,
        "a config value has the wrong type for its field",
    ),
    code(
        "invalid_json_value",
        Some(S::Config),
        O::Binding,
        "a value cannot be encoded as JSON",
    ),
    code(
        "invalid_native_json",
        None,
        O::Binding,
        "the native library returned text that is not the documented JSON",
    ),
    code(
        "target_refused",
        Some(S::Config),
        O::Binding,
        "a health target the binding cannot check was given",
    ),
    // the Ray runtime pool of the Python binding (fabric_core.ray, docs/scale-out.md)
    code(
        "node_lost",
        Some(S::Invoke),
        O::Binding,
        "the Ray actor or node that ran the invocation or held the session's runtime died; the invocation's effects are unknown",
    ),
    state(code(
        "pool_closed",
        None,
        O::Binding,
        "the runtime pool was closed",
    )),
    // adapters (upstream lifecycle codes passed through unchanged)
    code(
        "lifecycle_adapter_start_failed",
        Some(S::Start),
        O::Adapter,
        "the adapter failed during lifecycle start",
    ),
    code(
        "lifecycle_adapter_invoke_failed",
        Some(S::Invoke),
        O::Adapter,
        "the adapter failed during lifecycle invoke",
    ),
    code(
        "lifecycle_adapter_stop_failed",
        Some(S::Stop),
        O::Adapter,
        "the adapter failed during lifecycle stop",
    ),
    code(
        "lifecycle_invalid_request",
        None,
        O::Adapter,
        "the adapter could not decode a lifecycle request",
    ),
    code(
        "lifecycle_runtime_not_started",
        None,
        O::Adapter,
        "the adapter was invoked before start",
    ),
    code(
        "lifecycle_openai_stream_unsupported",
        Some(S::Invoke),
        O::Adapter,
        "the adapter claims OpenAI streaming but does not implement it; the runtime is failed",
    ),
    code(
        "lifecycle_stream_transport_failed",
        Some(S::Invoke),
        O::Adapter,
        "the adapter could not connect to, write to or finish the OpenAI stream listener",
    ),
    code(
        "lifecycle_invalid_stream_sink",
        Some(S::Invoke),
        O::Adapter,
        "the adapter rejected the OpenAI stream sink of the request",
    ),
    code(
        "lifecycle_invalid_openai_stream_event",
        Some(S::Invoke),
        O::Adapter,
        "the adapter emitted a chunk that breaks the chunk rules",
    ),
    code(
        "lifecycle_openai_stream_event_too_large",
        Some(S::Invoke),
        O::Adapter,
        "the adapter emitted a chunk whose record exceeds 1 MiB",
    ),
    // reasons and diagnostics inside results
    reason(
        "path_outside_base_dir",
        O::Plan,
        "doctor: a skills, workspace or artifacts path resolves outside the base directory (a warning)",
    ),
    reason(
        "provenance_reports_malformed",
        O::Config,
        "supplied provenance reports are not the documented shape",
    ),
    reason(
        "provenance_reports_too_many_contexts",
        O::Config,
        "supplied provenance reports name more than 16 contexts",
    ),
    reason(
        "provenance_reports_too_many_entries",
        O::Config,
        "supplied provenance reports hold more than 128 entries",
    ),
    reason(
        "provenance_reports_too_large",
        O::Config,
        "supplied provenance reports exceed 64 KiB",
    ),
    reason(
        "guest_report_missing",
        O::Host,
        "software evidence: the adapter host sent no `execution` report at start (an upstream-built host, or an older intermediary dropped it): a `guest_sdk` coverage gap",
    ),
    reason(
        "guest_report_malformed",
        O::Host,
        "software evidence: the adapter host's `execution` report is not the documented shape; it is left out and coverage is incomplete",
    ),
    reason(
        "evidence_contexts_dropped",
        O::Host,
        "software evidence: more than 16 inventories after composition; the later ones are dropped whole",
    ),
    reason(
        "evidence_entries_dropped",
        O::Host,
        "software evidence: more than 128 entries (or an entry that is not well formed); entries are dropped whole, versions are never shortened",
    ),
    reason(
        "evidence_too_large",
        O::Host,
        "software evidence: more than 64 KiB of compact JSON; the largest entries are dropped whole until it fits",
    ),
    reason(
        "version_command_not_declared",
        O::Host,
        "software evidence: a process adapter's executable version is unavailable because the descriptor declares no way to ask for it",
    ),
    reason(
        "lookup_limit_reached",
        O::Adapter,
        "software evidence (adapter collector): the selected package lookup limit (32) was reached; later packages are unknown",
    ),
    reason(
        "metadata_file_limit_reached",
        O::Adapter,
        "software evidence (adapter collector): the candidate metadata file limit (4,096 per target) or a byte limit (64 KiB headers, 512 KiB RECORD, 64 KiB manifest, 8 directory levels) was reached",
    ),
    reason(
        "collection_deadline_exceeded",
        O::Adapter,
        "software evidence (adapter collector): the 250 ms collection deadline passed; packages not looked up are unknown",
    ),
    reason(
        "metadata_not_found",
        O::Adapter,
        "software evidence (adapter collector): no installed metadata names the package (or an editable checkout shadows it)",
    ),
    reason(
        "artifact_collect_failed",
        O::Host,
        "a core-collected artifact (invocation log, workspace patch) could not be written; \
         reported as an `artifact_collect_failed` event, the invocation keeps its outcome",
    ),
    reason(
        "host_exited",
        O::Stats,
        "the adapter host exited before it could be read",
    ),
    reason(
        "process_unreadable",
        O::Stats,
        "a process of the tree could not be read",
    ),
    reason(
        "process_hidden",
        O::Stats,
        "a process of the tree is hidden from this user",
    ),
    reason(
        "process_table_unreadable",
        O::Stats,
        "the process table could not be read",
    ),
    reason(
        "process_table_hidden",
        O::Stats,
        "the process table is hidden from this user",
    ),
    reason(
        "tree_changing",
        O::Stats,
        "the process tree kept changing during the read",
    ),
    reason(
        "platform_unsupported",
        O::Stats,
        "no resource reader exists for this operating system",
    ),
    reason("proc_unavailable", O::Stats, "/proc is not mounted"),
    reason(
        "children_lists_unavailable",
        O::Stats,
        "the kernel lacks /proc/<pid>/task/<tid>/children",
    ),
    reason(
        "late_samples_discarded",
        O::Stats,
        "samples that arrived after the invocation ended were dropped",
    ),
    reason(
        "sample_unavailable",
        O::Stats,
        "a periodic sample could not be read",
    ),
    reason(
        "sample_write_failed",
        O::Stats,
        "the samples artifact could not be written",
    ),
    reason(
        "summary_write_failed",
        O::Stats,
        "the sampling summary artifact could not be written",
    ),
];

/// The whole registry: config decode and rule codes (reported at the stage of the call that
/// read the config: `config`, or `plan` for planning calls), then [`CODES`].
pub fn all() -> Vec<ErrorCode> {
    let mut all: Vec<ErrorCode> = ConfigError::all_codes()
        .into_iter()
        .map(|name| code(name, None, Origin::Config, config_summary(name)))
        .collect();
    all.extend_from_slice(CODES);
    all.extend_from_slice(crate::gym::CODES);
    all
}

fn config_summary(name: &str) -> &'static str {
    crate::error::ConfigRule::ALL
        .iter()
        .find(|rule| rule.code() == name)
        .map(|rule| rule.description())
        .unwrap_or("the config is not the JSON its schema describes")
}

/// The registered code `name`, if any.
pub fn lookup(name: &str) -> Option<ErrorCode> {
    all().into_iter().find(|entry| entry.code == name)
}

/// Every lifecycle stage, in declaration order.
pub const STAGES: [Stage; 8] = [
    Stage::Config,
    Stage::Plan,
    Stage::Prepare,
    Stage::Start,
    Stage::Invoke,
    Stage::Stop,
    Stage::Release,
    Stage::Artifact,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let all = all();
        let mut seen = std::collections::BTreeSet::new();
        for entry in &all {
            assert!(seen.insert(entry.code), "duplicate code {}", entry.code);
            assert!(
                entry
                    .code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{} is not snake_case",
                entry.code
            );
            assert!(!entry.summary.is_empty(), "{} has no summary", entry.code);
        }
    }

    #[test]
    fn config_codes_are_registered() {
        for name in ConfigError::all_codes() {
            let entry = lookup(name).expect(name);
            assert_eq!(entry.origin, Origin::Config, "{name}");
        }
    }

    #[test]
    fn stages_cover_the_enum() {
        // Every spelling the Stage schema allows, in order, is listed (a new variant fails).
        let schema = serde_json::to_value(schemars::schema_for!(Stage)).unwrap();
        let allowed: Vec<&str> = schema["oneOf"]
            .as_array()
            .expect("oneOf")
            .iter()
            .map(|variant| variant["const"].as_str().expect("const"))
            .collect();
        let listed: Vec<&str> = STAGES.iter().map(|stage| stage.as_str()).collect();
        assert_eq!(listed, allowed);
    }

    #[test]
    fn gym_codes_are_registered() {
        for name in crate::gym::GymError::CODES {
            assert_eq!(lookup(name).expect(name).kind, CodeKind::Error, "{name}");
        }
        for name in crate::gym::GAP_CODES {
            assert_eq!(lookup(name).expect(name).kind, CodeKind::Reason, "{name}");
        }
    }

    #[test]
    fn statuses_are_ordered_and_unique() {
        let numbers: Vec<i32> = STATUSES.iter().map(|s| s.status).collect();
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(numbers, sorted);
    }
}
