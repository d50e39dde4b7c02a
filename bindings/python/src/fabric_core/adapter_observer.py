"""Harness stop events for Python adapter hosts (standard library only).

A harness adapter reports that its harness hit its iteration limit through the observer
hook ``on_iteration_limit_reached(*, invocation_id)``: it records ``stop_reason =
"max_iterations"`` once on that invocation and on no other (not its parent, not later
invocations). Harnesses with a native stop event call it directly; a compatibility shim calls
it where the harness detects its limit. When the invocation's result is returned, ``finish``
puts the recorded reason into the result's core-owned ``nemo_fabric.stop_reason``
extension, which the Fabric core moves to ``RunResult.metadata.stop_reason`` and the NeMo
Gym export to ``AgentInvocation.stop_reason`` (``docs/gym.md``). The extension needs no
schema in the adapter descriptor.

Use::

    from fabric_core.adapter_observer import StopObserver

    observer = StopObserver()

    class Runtime:
        async def invoke(self, request, context):
            harness.on_limit = lambda: observer.on_iteration_limit_reached(invocation_id=context.invocation_id)
            result = await harness.run(request)
            return observer.finish(context.invocation_id, result)

Importing this module loads nothing else of the package and needs no native library.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, TypeVar

#: The core-owned result extension that carries an invocation's stop reason.
STOP_REASON_EXTENSION = "nemo_fabric.stop_reason"
#: The stop reason of an invocation that hit its iteration limit.
MAX_ITERATIONS = "max_iterations"

R = TypeVar("R")


class StopObserver:
    """Stop reasons recorded per invocation id until that invocation's result takes them.
    Thread-safe: a harness may call the hook from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reasons: dict[str, str] = {}

    def on_iteration_limit_reached(self, *, invocation_id: str) -> None:
        """The harness hit its iteration limit in ``invocation_id``. Recorded once: calling
        it again for the same invocation changes nothing."""

        if not isinstance(invocation_id, str) or not invocation_id:
            raise ValueError("invocation_id must be a non-empty string")
        with self._lock:
            self._reasons.setdefault(invocation_id, MAX_ITERATIONS)

    def stop_reason(self, invocation_id: str) -> str | None:
        """The reason recorded for ``invocation_id`` (not yet taken by ``finish``)."""

        with self._lock:
            return self._reasons.get(invocation_id)

    def finish(self, invocation_id: str, result: R) -> R:
        """Put the reason recorded for ``invocation_id`` (if any) into ``result`` and forget
        it. ``result`` is an AgentRunResult mapping (a new dict is returned) or an object
        with an ``extensions`` dict, such as upstream's ``AgentRunResult`` (updated in place
        and returned)."""

        with self._lock:
            reason = self._reasons.pop(invocation_id, None)
        if reason is None:
            return result
        if isinstance(result, Mapping):
            extensions = dict(result.get("extensions") or {})
            extensions[STOP_REASON_EXTENSION] = reason
            updated: Any = {**result, "extensions": extensions}
            return updated
        extensions = getattr(result, "extensions", None)
        if not isinstance(extensions, dict):
            raise TypeError(f"expected an AgentRunResult mapping or model, got {type(result).__name__}")
        extensions[STOP_REASON_EXTENSION] = reason
        return result


__all__ = ["MAX_ITERATIONS", "STOP_REASON_EXTENSION", "StopObserver"]
