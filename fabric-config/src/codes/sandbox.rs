//! Codes of the sandbox runtime server and command bridge, and of the container
//! environment provider.

use super::{ErrorClass, Origin as O, code, declare};
use crate::error::Stage as S;

declare! {
    /// The sandbox runtime server and command bridge (fabric-agent-ctl; docs/sandbox.md).
    pub(super) SANDBOX = [
        CLEANUP_UNCONFIRMED = "cleanup_unconfirmed" => code(
            None,
            O::Sandbox,
            "cleanup of an earlier runtime in the sandbox is not confirmed (a `fabric.unclean` marker, an uncertain start, or busy runtimes at shutdown): replace the sandbox",
        ),
        INTERFACE_UNSUPPORTED = "interface_unsupported" => code(
            None,
            O::Sandbox,
            "a bridge request names an interface version other than 2",
        ),
        WRONG_AGENT = "wrong_agent" => code(
            None,
            O::Sandbox,
            "a bridge request's agent does not match the runtime or the config's metadata.name",
        )
        .with_class(ErrorClass::Config),
        VALIDATION_FAILED = "validation_failed" => code(
            None,
            O::Sandbox,
            "the runtime server rejected the config or run request",
        )
        .with_class(ErrorClass::Config),
        VALIDATION_UNAVAILABLE = "validation_unavailable" => code(
            None,
            O::Sandbox,
            "the runtime server could not verify the adapter's capabilities",
        ),
        START_FAILED = "start_failed" => code(
            None,
            O::Sandbox,
            "the runtime server could not establish a runtime; effects unknown",
        ),
        STOP_FAILED = "stop_failed" => code(
            None,
            O::Sandbox,
            "the runtime server could not complete a stop; effects unknown",
        ),
        INVOKE_FAILED = "invoke_failed" => code(
            None,
            O::Sandbox,
            "an invocation through the runtime server produced no result; effects unknown",
        ),
        HOST_STOPPING = "host_stopping" => code(
            None,
            O::Sandbox,
            "the runtime server is shutting down and takes no new work",
        ),
        RUNTIME_UNAVAILABLE = "runtime_unavailable" => code(
            None,
            O::Sandbox,
            "no running runtime of the runtime server has this id",
        ),
        HOST_UNAVAILABLE = "host_unavailable" => code(
            None,
            O::Sandbox,
            "the runtime server socket cannot be reached; nothing was sent",
        ),
        INVALID_RESPONSE = "invalid_response" => code(
            None,
            O::Sandbox,
            "the runtime server's response is missing, malformed, oversized or late; effects unknown for start/invoke/stop",
        ),
        RESPONSE_TOO_LARGE = "response_too_large" => code(
            None,
            O::Sandbox,
            "a bridge response exceeds 4 MiB; effects unknown",
        ),
        INVALID_INPUT = "invalid_input" => code(
            None,
            O::Sandbox,
            "a bridge input file or stdin is not one UTF-8 JSON value within 512 KiB (duplicate keys, NaN, deadline)",
        ),
        RUNTIME_EXISTS = "runtime_exists" => code(
            None,
            O::Sandbox,
            "an upstream 0.5.0 runtime server refuses a second start in its sandbox (the bridge client accepts this answer; this server starts several runtimes)",
        ),
        HOST_LOCK_HELD = "host_lock_held" => code(
            None,
            O::Sandbox,
            "another runtime server holds the socket's `fabric.lock`",
        ),
        HOST_BUSY = "host_busy" => code(
            None,
            O::Sandbox,
            "the runtime server is serving its maximum of 32 connections (MAX_CONNECTIONS); nothing was dispatched, try again",
        ),
    ];
}

declare! {
    /// The container environment provider (fabric-env-container; provider codes the core
    /// reports as the error's own code, also in `metadata.provider_code`; docs/sandbox.md).
    pub(super) CONTAINER_PROVIDER = [
        SANDBOX_IMAGE_UNPINNED = "sandbox_image_unpinned" => code(
            Some(S::Prepare),
            O::Sandbox,
            "the container provider's `settings.image` is missing or not an image id `sha256:<64 hex>` (a tag is refused)",
        )
        .with_class(ErrorClass::Config),
        SANDBOX_IMAGE_MISMATCH = "sandbox_image_mismatch" => code(
            Some(S::Prepare),
            O::Sandbox,
            "the local image (or `settings.image_name`, or an attached container's image) is not the pinned `settings.image`",
        ),
        SANDBOX_IDENTITY_CHANGED = "sandbox_identity_changed" => code(
            Some(S::Prepare),
            O::Sandbox,
            "the container named by an environment reference was replaced (another container id under the same name)",
        ),
        CONTAINER_ENGINE_FAILED = "container_engine_failed" => code(
            Some(S::Prepare),
            O::Sandbox,
            "the container engine (podman) is missing or one of its commands failed; the message quotes its stderr",
        ),
    ];
}

declare! {
    /// The subprocess and container environment providers' own codes (provider_kit; also the
    /// error's own code, like the container's above).
    pub(super) PROVIDER_KIT = [
        INVALID_SETTINGS = "invalid_settings" => code(
            Some(S::Prepare),
            O::Sandbox,
            "a provider's `environment.settings` member has the wrong type (the message names `settings.<member>`)",
        )
        .with_class(ErrorClass::Config),
        SOCKET_PATH_TOO_LONG = "socket_path_too_long" => code(
            Some(S::Prepare),
            O::Sandbox,
            "the environment's runtime-server socket under `settings.root` would exceed the 107-byte unix socket path limit",
        )
        .with_class(ErrorClass::Config),
        PREPARE_FAILED = "prepare_failed" => code(
            Some(S::Prepare),
            O::Sandbox,
            "a provider could not create the environment directory or its runtime server did not answer (nothing is left behind)",
        ),
    ];
}
