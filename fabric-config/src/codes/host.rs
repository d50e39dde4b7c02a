//! Codes of hosting and runtimes (`fabric-host`).

use super::{ErrorCode, Origin as O, code, state};
use crate::error::Stage as S;

/// fabric-host.
pub(super) const HOST: &[ErrorCode] = &[
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
];
