//! Codes of the sandbox runtime server and command bridge, and of the container
//! environment provider.

use super::{ErrorCode, Origin as O, code};
use crate::error::Stage as S;

/// The sandbox runtime server and command bridge (fabric-agent-ctl; docs/sandbox.md).
pub(super) const SANDBOX: &[ErrorCode] = &[
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
];

/// The container environment provider (fabric-env-container; provider codes the core
/// reports as the error's own code, also in `metadata.provider_code`; docs/sandbox.md).
pub(super) const CONTAINER_PROVIDER: &[ErrorCode] = &[
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
];

/// The subprocess and container environment providers' own codes (provider_kit; also the
/// error's own code, like the container's above).
pub(super) const PROVIDER_KIT: &[ErrorCode] = &[
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
];
