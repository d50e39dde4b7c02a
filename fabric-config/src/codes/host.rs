//! Codes of hosting and runtimes (`fabric-host`).

use super::{ErrorClass, Origin as O, code, declare, hints, state};
use crate::error::Stage as S;

declare! {
    /// fabric-host.
    pub(super) HOST = [
        HOST_LAUNCH_FAILED = "host_launch_failed" => code(
            None,
            O::Host,
            "the adapter host process could not be started",
        )
        .with_hint(hints::HOST_DIED),
        PROTOCOL_ERROR = "protocol_error" => code(
            None,
            O::Host,
            "the adapter host broke the lifecycle protocol",
        ),
        HOST_CRASHED = "host_crashed" => code(
            None,
            O::Host,
            "the adapter host exited while a request was pending",
        )
        .with_hint(hints::HOST_DIED),
        TIMEOUT = "timeout" => code(
            None,
            O::Host,
            "the adapter host did not answer or stop in time",
        )
        .with_hint(
            "raise runtime.timeout_seconds in the config if the work needs longer",
        ),
        HOST_IO = "host_io" => code(
            None,
            O::Host,
            "reading from or writing to the adapter host failed",
        ),
        HOST_TERMINATION_FAILED = "host_termination_failed" => code(
            Some(S::Stop),
            O::Host,
            "the adapter host's process group could not be ended",
        ),
        ENGINE_UNAVAILABLE = "engine_unavailable" => code(
            None,
            O::Host,
            "the core's reactor thread is not running",
        ),
        RUNTIME_BUSY = "runtime_busy" => state(code(
            Some(S::Invoke),
            O::Host,
            "an invocation is already running on this runtime",
        ))
        .with_hint("invocations of one runtime run one at a time"),
        RUNTIME_STOPPED = "runtime_stopped" => state(code(
            None,
            O::Host,
            "the runtime was stopped",
        )),
        RUNTIME_FAILED = "runtime_failed" => state(code(
            None,
            O::Host,
            "a host failure made the runtime terminal",
        )),
        ADAPTER_KIND_UNSUPPORTED = "adapter_kind_unsupported" => code(
            Some(S::Start),
            O::Host,
            "this core cannot host adapters of that kind",
        ),
        ADAPTER_RUNNER_INVALID = "adapter_runner_invalid" => code(
            Some(S::Start),
            O::Host,
            "the descriptor's runner cannot be launched",
        ),
        ENVIRONMENT_PROVIDER_UNSUPPORTED = "environment_provider_unsupported" => code(
            Some(S::Prepare),
            O::Host,
            "the environment provider is not supported",
        ),
        REQUEST_OVERRIDES_UNSUPPORTED = "request_overrides_unsupported" => code(
            Some(S::Invoke),
            O::Host,
            "retired (never emitted): request overrides now reach the adapter as request.extensions",
        ),
        REQUEST_EXTENSIONS_UNSUPPORTED = "request_extensions_unsupported" => code(
            Some(S::Invoke),
            O::Host,
            "the request carries overrides but the adapter declares no run_request extension schema",
        ),
        REQUEST_EXTENSION_INVALID = "request_extension_invalid" => code(
            Some(S::Invoke),
            O::Host,
            "the request's overrides violate the adapter's run_request extension schema",
        ),
        INVALID_REQUEST = "invalid_request" => code(
            None,
            O::Host,
            "a RunRequest is missing, malformed or invalid",
        )
        .with_hint(
            "a request is a JSON object with `input` (text or JSON) and optional `request_id`, `context`, `overrides`",
        )
        .with_class(ErrorClass::Config),
        REQUEST_TOO_LARGE = "request_too_large" => code(
            None,
            O::Host,
            "an encoded request exceeds the protocol line limit; it was not sent and the runtime is untouched",
        )
        .with_class(ErrorClass::Config),
        ENV_NAME_UNSET = "env_name_unset" => code(
            None,
            O::Host,
            "a forwarded environment variable is not set",
        ),
        ENV_NAME_CHANGED = "env_name_changed" => code(
            Some(S::Invoke),
            O::Host,
            "a forwarded environment variable changed after start",
        ),
        INVALID_AGENT_RUN_RESULT = "invalid_agent_run_result" => code(
            Some(S::Invoke),
            O::Host,
            "the adapter returned a result that breaks the contract",
        ),
        FILESYSTEM_ERROR = "filesystem_error" => code(
            None,
            O::Host,
            "a file-system operation of the core failed",
        ),
        ENVIRONMENT_RELEASED = "environment_released" => state(code(
            None,
            O::Host,
            "the environment was released",
        )),
        INVALID_ENVIRONMENT_REFERENCE = "invalid_environment_reference" => code(
            Some(S::Config),
            O::Host,
            "an EnvironmentReference is malformed or names another provider (`metadata.path` names the field)",
        ),
        ENVIRONMENT_NOT_FOUND = "environment_not_found" => code(
            Some(S::Prepare),
            O::Host,
            "the resource an EnvironmentReference names does not exist (`metadata.path` names the field)",
        ),
        ENVIRONMENT_PROVIDER_NOT_FOUND = "environment_provider_not_found" => code(
            Some(S::Prepare),
            O::Host,
            "no descriptor serves the config's environment.provider (docs/sandbox.md, \"Providers\")",
        ),
        INVALID_PROVIDER_DESCRIPTOR = "invalid_provider_descriptor" => code(
            Some(S::Prepare),
            O::Host,
            "an environment-provider descriptor is malformed or names another provider or protocol",
        ),
        ENVIRONMENT_ATTACH_UNSUPPORTED = "environment_attach_unsupported" => code(
            Some(S::Prepare),
            O::Host,
            "the environment provider cannot attach to existing environments",
        ),
        ENVIRONMENT_RUNTIME_UNSUPPORTED = "environment_runtime_unsupported" => code(
            Some(S::Start),
            O::Host,
            "this host cannot start in a provider environment (shared services run only in local environments; runtimes start through the environment's runtime server)",
        ),
        MODEL_CALL_CAPTURE_UNSUPPORTED = "model_call_capture_unsupported" => code(
            Some(S::Start),
            O::Host,
            "model-call capture (capture_model_calls) is not available for a runtime in a provider environment: the gateway listens on this machine's loopback",
        ),
        ENVIRONMENT_STREAM_UNSUPPORTED = "environment_stream_unsupported" => code(
            Some(S::Invoke),
            O::Host,
            "a runtime in a provider environment cannot stream (OpenAI or ATOF): its results come back whole through the environment's runtime server; use invoke",
        ),
        PROVIDER_CRASHED = "provider_crashed" => code(
            None,
            O::Host,
            "the environment provider process exited or closed a pipe; it is terminal",
        ),
        PROVIDER_TIMEOUT = "provider_timeout" => code(
            None,
            O::Host,
            "the environment provider did not answer in time; the outcome is unknown, nothing is resent, the provider is terminal",
        ),
        PROVIDER_PROTOCOL_ERROR = "provider_protocol_error" => code(
            None,
            O::Host,
            "the environment provider's answer broke the protocol; it is terminal",
        ),
        PROVIDER_FAILED = "provider_failed" => code(
            None,
            O::Host,
            "an earlier failure made the environment provider terminal",
        ),
        PROVIDER_ERROR = "provider_error" => code(
            None,
            O::Host,
            "the environment provider answered `failed` (its code in `metadata.provider_code`)",
        ),
        PROVIDER_REQUEST_TOO_LARGE = "provider_request_too_large" => code(
            None,
            O::Host,
            "a provider request exceeds 256 KiB encoded; it was not sent",
        ),
        PROVIDER_OUTPUT_TOO_LARGE = "provider_output_too_large" => code(
            None,
            O::Host,
            "a provider answer exceeds a limit (exec output 3 MiB; artifacts 16 files, 256 KiB each, 512 KiB total); nothing of it is kept",
        ),
        SERVICE_UNSUPPORTED = "service_unsupported" => code(
            Some(S::Prepare),
            O::Host,
            "the adapter's descriptor does not claim `capabilities.service`",
        ),
        PREWARM_UNSUPPORTED = "prewarm_unsupported" => code(
            Some(S::Start),
            O::Host,
            "prewarm keeps local adapter hosts only: the config's environment provider is not `local`, or the options ask for Relay streaming",
        ),
        SERVICE_BINDING_MISMATCH = "service_binding_mismatch" => code(
            Some(S::Start),
            O::Host,
            "the runtime's plan differs from the service's (`metadata.fields` names what)",
        ),
        SERVICE_NOT_ACTIVE = "service_not_active" => code(
            Some(S::Start),
            O::Host,
            "service must be active: it was released or its release failed",
        ),
        SERVICE_IN_USE = "service_in_use" => code(
            Some(S::Stop),
            O::Host,
            "release refused: runtimes connected to the service are still running",
        ),
        SERVICE_RELEASING = "service_releasing" => state(code(
            Some(S::Stop),
            O::Host,
            "a release of this service is already in progress",
        )),
        INVALID_SERVICE_INFO = "invalid_service_info" => code(
            Some(S::Start),
            O::Host,
            "the service host's start answer is not `{adapter_id, service_type, connection, metadata}`",
        ),
        INVALID_SERVICE_REFERENCE = "invalid_service_reference" => code(
            Some(S::Config),
            O::Host,
            "a ServiceReference is malformed or names another adapter",
        ),
        ARTIFACT_REJECTED = "artifact_rejected" => code(
            Some(S::Artifact),
            O::Host,
            "an artifact the adapter listed is outside the artifact root or unreadable",
        ),
        PATH_REFUSED = "path_refused" => code(
            Some(S::Artifact),
            O::Host,
            "a file under a root the adapter or environment controls was refused and nothing was read or written through it: a symbolic link on the way or at the end, not a regular file (FIFO, socket, device), or above its size cap; `metadata.reason` says which, the other files are still collected",
        ),
        LIFECYCLE_ERROR = "lifecycle_error" => code(
            None,
            O::Host,
            "the adapter reported a failure without a code",
        ),
        OPENAI_STREAMING_UNAVAILABLE = "openai_streaming_unavailable" => code(
            Some(S::Invoke),
            O::Host,
            "the selected adapter does not claim native OpenAI streaming; the runtime is untouched",
        ),
        OPENAI_STREAM_PROTOCOL_ERROR = "openai_stream_protocol_error" => code(
            Some(S::Invoke),
            O::Host,
            "the adapter broke the OpenAI stream transport (framing, authentication, sequence, identity, chunk shape, missing end record); the runtime is failed",
        ),
        STREAMING_UNAVAILABLE = "streaming_unavailable" => code(
            Some(S::Invoke),
            O::Host,
            "invoke_stream on a runtime not started with streaming (and Relay telemetry); the runtime is untouched",
        ),
        SIGNAL_HANDLER_FAILED = "signal_handler_failed" => code(
            Some(S::Prepare),
            O::Cli,
            "`fabric service prepare`: SIGINT/SIGTERM handling could not be installed",
        ),
        COLLECTOR_LISTEN_INVALID = "collector_listen_invalid" => code(
            Some(S::Config),
            O::Cli,
            "`fabric collector serve`: a non-loopback --listen without --allow-non-loopback, or a --body-idle-timeout over a week",
        ),
        COLLECTOR_TOKEN_INVALID = "collector_token_invalid" => code(
            Some(S::Config),
            O::Cli,
            "`fabric collector serve`: the --token-env variable holds fewer than 32 ASCII characters",
        ),
        STUB_MODEL_SCRIPT_INVALID = "stub_model_script_invalid" => code(
            Some(S::Config),
            O::Cli,
            "`fabric stub-model serve`: the --script file cannot be read or is not a valid reply script (the message names the field), or --listen is not a loopback address; also an invalid `model_stub` script of a ConformanceRequest (`check_adapter`)",
        ),
        STUB_MODEL_START_FAILED = "stub_model_start_failed" => code(
            None,
            O::Host,
            "the stub model server could not listen, open its request log, or reach the reactor",
        ),
        COLLECTOR_START_FAILED = "collector_start_failed" => code(
            None,
            O::Host,
            "the Relay ATOF collector could not listen (address in use, not loopback) or the reactor is gone",
        ),
        COLLECTOR_REQUEST_FAILED = "collector_request_failed" => code(
            None,
            O::Host,
            "the ATOF collector refused or failed a request (registration, stream, deregistration)",
        ),
        COLLECTOR_MEMORY_FULL = "collector_memory_full" => code(
            None,
            O::Host,
            "the ATOF collector's memory budget (queued records, records being received, routing state) stayed full for the backpressure timeout: the publisher's request is answered 503 and closed",
        )
        .with_hint(
            "start consumers for the registered requests, or raise --memory-budget-bytes (options.collector_memory_budget_bytes)",
        ),
        COLLECTOR_REGISTRATIONS_FULL = "collector_registrations_full" => code(
            None,
            O::Host,
            "the ATOF collector already holds its maximum of live registrations: the registration is answered 503",
        )
        .with_hint(
            "deregister finished requests, or raise `fabric collector serve --max-registrations`",
        ),
    ];
}
