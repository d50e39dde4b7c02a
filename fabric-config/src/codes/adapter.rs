//! Upstream adapter lifecycle codes, passed through unchanged.

use super::{Origin as O, code, declare};
use crate::error::Stage as S;

declare! {
    /// Adapters (upstream lifecycle codes passed through unchanged).
    pub(super) ADAPTER = [
        LIFECYCLE_ADAPTER_START_FAILED = "lifecycle_adapter_start_failed" => code(
            Some(S::Start),
            O::Adapter,
            "the adapter failed during lifecycle start",
        ),
        LIFECYCLE_ADAPTER_INVOKE_FAILED = "lifecycle_adapter_invoke_failed" => code(
            Some(S::Invoke),
            O::Adapter,
            "the adapter failed during lifecycle invoke",
        ),
        LIFECYCLE_ADAPTER_STOP_FAILED = "lifecycle_adapter_stop_failed" => code(
            Some(S::Stop),
            O::Adapter,
            "the adapter failed during lifecycle stop",
        ),
        LIFECYCLE_INVALID_REQUEST = "lifecycle_invalid_request" => code(
            None,
            O::Adapter,
            "the adapter could not decode a lifecycle request",
        ),
        LIFECYCLE_RUNTIME_NOT_STARTED = "lifecycle_runtime_not_started" => code(
            None,
            O::Adapter,
            "the adapter was invoked before start",
        ),
        LIFECYCLE_OPENAI_STREAM_UNSUPPORTED = "lifecycle_openai_stream_unsupported" => code(
            Some(S::Invoke),
            O::Adapter,
            "the adapter claims OpenAI streaming but does not implement it; the runtime is failed",
        ),
        LIFECYCLE_STREAM_TRANSPORT_FAILED = "lifecycle_stream_transport_failed" => code(
            Some(S::Invoke),
            O::Adapter,
            "the adapter could not connect to, write to or finish the OpenAI stream listener",
        ),
        LIFECYCLE_INVALID_STREAM_SINK = "lifecycle_invalid_stream_sink" => code(
            Some(S::Invoke),
            O::Adapter,
            "the adapter rejected the OpenAI stream sink of the request",
        ),
        LIFECYCLE_INVALID_OPENAI_STREAM_EVENT = "lifecycle_invalid_openai_stream_event" => code(
            Some(S::Invoke),
            O::Adapter,
            "the adapter emitted a chunk that breaks the chunk rules",
        ),
        LIFECYCLE_OPENAI_STREAM_EVENT_TOO_LARGE = "lifecycle_openai_stream_event_too_large" => code(
            Some(S::Invoke),
            O::Adapter,
            "the adapter emitted a chunk whose record exceeds 1 MiB",
        ),
    ];
}
