//! Upstream adapter lifecycle codes, passed through unchanged.

use super::{ErrorCode, Origin as O, code};
use crate::error::Stage as S;

/// Adapters (upstream lifecycle codes passed through unchanged).
pub(super) const ADAPTER: &[ErrorCode] = &[
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
];
