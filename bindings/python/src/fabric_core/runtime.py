"""``Runtime``: one started, stateful harness execution."""

from __future__ import annotations

import asyncio
import ctypes
import json
import weakref
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any

from fabric_core import _ffi, _operation
from fabric_core._codes import Code
from fabric_core._util import dumps, request_payload, to_thread
from fabric_core.errors import (
    FabricError,
    FabricRuntimeError,
    FabricStateError,
    ResourceObservationUnavailableError,
)
from fabric_core.errors import FabricCapabilityError
from fabric_core.models import RunRequest
from fabric_core.streaming import InvokeStream, OpenAIInvokeStream
from fabric_core.types import (
    RunResult,
    RuntimeHandle,
    RuntimeResourceSnapshot,
    RuntimeStatusInfo,
)

if TYPE_CHECKING:
    from fabric_core.environment import EnvironmentHandle


class RuntimeStatus(str, Enum):
    """``ACTIVE`` accepts invocations; ``STOPPED`` has released its runtime; ``FAILED``
    records a lifecycle failure (no more invocations, ``stop()`` still allowed)."""

    ACTIVE = "active"
    STOPPED = "stopped"
    FAILED = "failed"


def _backstop(library: _ffi.Library, handle: int) -> None:
    """Finalizer: stop and free a runtime that was never stopped explicitly."""

    try:
        library.fabric_runtime_stop(handle, _ffi.out_slot())
    except Exception:  # noqa: BLE001 - best effort at GC/exit time
        pass
    try:
        library.fabric_runtime_free(handle)
    except Exception:  # noqa: BLE001
        pass


class Runtime:
    """One logical, stateful harness execution.

    Create runtimes with ``Fabric.start_runtime()`` (or ``start_runtime_in``). A runtime
    accepts one invocation at a time: overlapping ``invoke()`` calls raise
    ``FabricStateError``; start more runtimes for parallel work. Use it as an async
    context manager (``async with await fabric.start_runtime(config) as runtime``) so it
    stops deterministically; a finalizer stops and frees a runtime that was never stopped
    when it is garbage collected (a backstop, not a substitute for ``stop()``).
    """

    def __init__(
        self,
        *,
        library: _ffi.Library,
        handle: int,
        info: Mapping[str, Any],
        overrides: Mapping[str, Any] | None = None,
        environment: EnvironmentHandle | None = None,
    ) -> None:
        self._library = library
        self._handle = handle
        self._info = RuntimeHandle.from_mapping(info)
        self._overrides = dict(overrides or {})
        self._environment = environment  # children hold their parent
        self._status = RuntimeStatus.ACTIVE
        self._invoking = False
        self._closing = False
        self._orphan: asyncio.Future[Any] | None = None
        self._invocations: list[dict[str, Any]] = []
        self._messages: list[Any] = []
        self._stop_result: Any = None
        self._stream: OpenAIInvokeStream | None = None
        self._finalizer = weakref.finalize(self, _backstop, library, handle)

    @property
    def runtime_id(self) -> str:
        """The runtime lifecycle id (``runtime-…``)."""

        return str(self._info.get("runtime_id"))

    @property
    def handle(self) -> RuntimeHandle:
        """The runtime identity returned by the core."""

        return self._info

    @property
    def native_handle(self) -> int:
        """The C ABI handle id (0 once freed)."""

        return 0 if not self._finalizer.alive else self._handle

    @property
    def status(self) -> RuntimeStatus:
        """``ACTIVE``, ``STOPPED`` or ``FAILED``."""

        return self._status

    @property
    def invocations(self) -> list[dict[str, Any]]:
        """Request, runtime and invocation ids of completed turns."""

        return [dict(item) for item in self._invocations]

    @property
    def messages(self) -> list[Any]:
        """The latest ``output.messages`` reported by the harness, if any."""

        return json.loads(json.dumps(self._messages))

    @property
    def environment(self) -> EnvironmentHandle | None:
        """The environment this runtime was started in, if any."""

        return self._environment

    @property
    def stop_result(self) -> Any:
        """The core's stop result (events, artifacts) after a successful ``stop()``."""

        return self._stop_result

    @property
    def supports_openai_streaming(self) -> bool:
        """Whether the selected adapter implements native OpenAI streaming (the plan's
        ``capabilities.streaming`` and the descriptor's claim)."""

        return bool(self._info.get("supports_openai_streaming"))

    def invoke_openai_stream(
        self, *, input: Any = None, request: RunRequest | None = None
    ) -> OpenAIInvokeStream:
        """Start one turn and stream its native OpenAI ``chat.completion.chunk`` mappings.

        Synchronous: the invocation starts in the adapter host at once. Iterate the stream
        with ``async for``; ``await stream.result()`` returns the separate ``RunResult``.

        Raises ``FabricCapabilityError`` (``openai_streaming_unavailable``) when the adapter
        does not claim streaming, ``FabricStateError`` when another turn or stream is
        active, ``FabricConfigError`` for an invalid request.
        """

        if not self.supports_openai_streaming:
            raise FabricCapabilityError(
                "the selected adapter does not support native OpenAI streaming",
                stage="invoke",
                code=Code.OPENAI_STREAMING_UNAVAILABLE,
                details={"capability": "streaming"},
            )
        return self._open_stream(
            self._library.fabric_runtime_invoke_openai_stream, OpenAIInvokeStream, input, request
        )

    @property
    def supports_streaming(self) -> bool:
        """Whether ``invoke_stream()`` (raw NeMo Relay ATOF records) is available: the
        runtime was started with ``streaming=True`` and Relay telemetry."""

        return bool(self._info.get("supports_streaming"))

    def invoke_stream(self, *, input: Any = None, request: RunRequest | None = None) -> InvokeStream:
        """Start one turn and stream the raw NeMo Relay ATOF records it publishes.

        Synchronous: the invocation starts in the adapter host at once. Iterate the stream
        with ``async for`` (ATOF dictionaries, as the adapter's Relay published them);
        ``await stream.result()`` returns the separate, authoritative ``RunResult``.

        Raises ``FabricCapabilityError`` (``streaming_unavailable``) when the runtime was
        not started with ``streaming=True``, ``FabricStateError`` when another turn or
        stream is active, ``FabricConfigError`` for an invalid request,
        ``FabricRuntimeError`` (``collector_request_failed``) when the collector refused
        the request id.
        """

        if not self.supports_streaming:
            raise FabricCapabilityError(
                "streaming requires a runtime started with NeMo Relay telemetry and streaming=True",
                stage="invoke",
                code=Code.STREAMING_UNAVAILABLE,
                details={"capability": "streaming"},
            )
        return self._open_stream(self._library.fabric_runtime_invoke_stream, InvokeStream, input, request)

    def _open_stream(self, entry: Any, kind: Any, input: Any, request: RunRequest | None) -> Any:
        """Start a streaming turn through ``entry`` (one of the two stream-invoke ABI
        functions) and wrap the stream handle in ``kind``."""

        self._ensure_invocable()
        if self._orphan is not None and not self._orphan.done():
            raise FabricStateError(
                "the previous streaming invocation is still closing; await it first",
                stage="invoke",
                code=Code.RUNTIME_BUSY,
            )
        self._release_stream()
        payload = request_payload(input=input, request=request, overrides=self._overrides)
        handle = ctypes.c_uint64(0)
        text = entry(self._handle, dumps(payload), ctypes.byref(handle), _ffi.out_slot())
        stream = kind(self, self._library, handle.value, json.loads(text))
        self._stream = stream
        return stream

    def _active_stream(self) -> OpenAIInvokeStream | None:
        stream = self._stream
        return stream if stream is not None and not stream._turn_done else None

    def _release_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None and stream.finished and (stream._closer is None or stream._closer.done()):
            stream._free()
        elif stream is not None:
            self._stream = stream

    def _stream_failed(self) -> None:
        self._status = RuntimeStatus.FAILED

    def _adopt_orphan(self, future: asyncio.Future[Any]) -> None:
        self._orphan = future

    def _ensure_invocable(self) -> None:
        if self._active_stream() is not None:
            raise FabricStateError(
                "a streaming invocation is active; fully consume it or call "
                "`await stream.aclose()` before starting another turn",
                stage="invoke",
                code=Code.RUNTIME_BUSY,
            )
        if self._status is not RuntimeStatus.ACTIVE:
            raise FabricStateError(
                f"cannot invoke a {self._status.value} runtime",
                stage="invoke",
                code=Code.RUNTIME_STOPPED,
            )
        if self._closing:
            raise FabricStateError(
                "cannot invoke while runtime shutdown is in progress",
                stage="invoke",
                code=Code.RUNTIME_STOPPED,
            )
        if self._invoking:
            raise FabricStateError(
                "runtime is already running an invocation; start another runtime for parallel work",
                stage="invoke",
                code=Code.RUNTIME_BUSY,
            )

    async def _drain_orphan(self) -> None:
        """Wait for a native call whose awaiting task was cancelled to finish."""

        orphan = self._orphan
        if orphan is None:
            return
        try:
            await asyncio.shield(orphan)
        except asyncio.CancelledError:
            if not orphan.done():
                raise
        except BaseException:  # noqa: BLE001 - its outcome was abandoned with the task
            pass
        if self._orphan is orphan:
            self._orphan = None

    async def _native(self, function: Any) -> Any:
        """Run one blocking native call; on cancellation leave it to finish as an orphan."""

        worker = to_thread(function)
        worker.add_done_callback(_consume)
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            if not worker.done():
                self._orphan = worker
            raise

    async def _native_operation(self, begin: Any, blocking: Any) -> Any:
        """Run one non-blocking native operation from the event loop (no worker thread:
        the loop watches its readiness descriptor); on cancellation leave it to finish as
        an orphan. Loops that cannot watch descriptors run ``blocking`` in a worker."""

        worker = _operation.start(self._library, begin)
        if worker is None:
            return await self._native(blocking)
        worker.add_done_callback(_consume)
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            if not worker.done():
                self._orphan = worker
            raise

    async def invoke(self, *, input: Any = None, request: RunRequest | None = None) -> RunResult:
        """Run one turn. ``input`` and ``request`` are mutually exclusive.

        Raises ``FabricStateError`` if the runtime is not active or already invoking,
        ``FabricConfigError`` for an invalid request, ``FabricRuntimeError`` if the core
        could not produce a normalized result. A failed harness turn is a ``RunResult``
        with ``status == "failed"``, not an exception.

        The invocation runs without a worker thread: the core completes it on its reactor
        and the event loop watches its readiness descriptor (``loop.add_reader``).
        Cancelling the awaiting task does not corrupt the runtime: the invocation finishes
        and the next ``invoke()`` waits for it first.
        """

        self._ensure_invocable()
        payload = request_payload(input=input, request=request, overrides=self._overrides)
        request_bytes = dumps(payload)
        self._invoking = True
        try:
            await self._drain_orphan()
            library, handle = self._library, self._handle
            try:
                text = await self._native_operation(
                    lambda queue, operation: library.fabric_runtime_invoke_begin(
                        handle, request_bytes, queue, operation, _ffi.out_slot()
                    ),
                    lambda: library.fabric_runtime_invoke(handle, request_bytes, _ffi.out_slot()),
                )
            except FabricStateError:
                raise
            except FabricRuntimeError:
                self._status = RuntimeStatus.FAILED
                raise
            result = RunResult._from_json(json.loads(text))
            self._absorb(result)
            return result
        finally:
            self._invoking = False

    def _absorb(self, result: RunResult) -> None:
        self._invocations.append(
            {
                "request_id": result.request_id,
                "runtime_id": result.runtime_id,
                "invocation_id": result.invocation_id,
            }
        )
        output = result.output
        messages = output.get("messages") if isinstance(output, Mapping) else None
        if isinstance(messages, (list, tuple)):
            self._messages = json.loads(json.dumps(_plain(messages)))

    async def status_info(self) -> RuntimeStatusInfo:
        """The core's view of this runtime (``state`` as the core names it: ``idle``,
        ``busy``, ``failed``, ``stopping``, ``stopped``; ids, host process)."""

        if not self._finalizer.alive:
            state = "failed" if self._status is RuntimeStatus.FAILED else "stopped"
            return RuntimeStatusInfo.from_mapping({"runtime_id": self.runtime_id, "state": state})
        library, handle = self._library, self._handle
        text = await to_thread(lambda: library.fabric_runtime_status(handle, _ffi.out_slot()))
        return RuntimeStatusInfo._from_json(json.loads(text))

    async def resource_snapshot(self) -> RuntimeResourceSnapshot:
        """Read the runtime's process tree now: memory, process count, CPU time.

        Does not wait for an active invocation, so a monitor can call it while
        ``invoke()`` runs. Raises ``ResourceObservationUnavailableError`` when the runtime
        stopped or is stopping, its host exited, or the tree could not be read
        consistently, and ``ResourceObservationUnsupportedError`` for adapter kinds
        without a local host or on an operating system without a reader. Never returns
        zeros in place of a failed read.
        """

        if not self._finalizer.alive:
            raise ResourceObservationUnavailableError(
                "the runtime was stopped; its process tree is gone",
                stage="invoke",
                code=Code.RESOURCE_OBSERVATION_UNAVAILABLE,
            )
        library, handle = self._library, self._handle
        text = await to_thread(
            lambda: library.fabric_runtime_resource_snapshot(handle, _ffi.out_slot())
        )
        return RuntimeResourceSnapshot._from_json(json.loads(text))

    async def stop(self) -> None:
        """Stop the runtime exactly once (later calls are no-ops).

        Raises ``FabricStateError`` while an invocation is in flight. The core always ends
        and reaps the adapter host; if the host did not stop cleanly (it needed signals or
        hit the stop deadline) the runtime is ``STOPPED`` and ``FabricRuntimeError``
        (``stage == "stop"``, e.g. ``code == "timeout"``) reports it; ``stop_result`` has
        the details.
        """

        if self._status is RuntimeStatus.STOPPED:
            return
        if self._active_stream() is not None:
            raise FabricStateError(
                "cannot stop while a streaming invocation is active; consume the stream or "
                "await `stream.result()` or `stream.aclose()`",
                stage="stop",
                code=Code.RUNTIME_BUSY,
            )
        if self._invoking:
            raise FabricStateError(
                "cannot stop while a turn is in flight", stage="stop", code=Code.RUNTIME_BUSY
            )
        if self._closing:
            raise FabricStateError(
                "runtime shutdown is already in progress", stage="stop", code=Code.RUNTIME_STOPPED
            )
        self._closing = True
        try:
            await self._drain_orphan()
            if self._stream is not None:
                await self._stream.aclose()
                self._release_stream()
            library, handle = self._library, self._handle
            try:
                text = await self._native_operation(
                    lambda queue, operation: library.fabric_runtime_stop_begin(
                        handle, queue, operation, _ffi.out_slot()
                    ),
                    lambda: library.fabric_runtime_stop(handle, _ffi.out_slot()),
                )
            except FabricStateError:
                raise
            except FabricError:
                self._status = RuntimeStatus.FAILED
                raise
            self._stop_result = json.loads(text)
            self._status = RuntimeStatus.STOPPED
            self._free()
        finally:
            self._closing = False
        problem = self._stop_result.get("error") if isinstance(self._stop_result, dict) else None
        if isinstance(problem, dict):
            # The core always ends and reaps the host; a stop that needed signals or hit a
            # deadline is still reported, as NeMo Fabric's stop() does.
            raise FabricRuntimeError(
                str(problem.get("message") or "runtime shutdown failed"),
                stage=str(problem.get("stage") or "stop"),
                code=problem.get("code"),
                retryable=bool(problem.get("retryable", False)),
                details=problem.get("metadata") if isinstance(problem.get("metadata"), dict) else None,
            )

    def _free(self) -> None:
        if self._finalizer.detach() is not None:
            self._library.fabric_runtime_free(self._handle)

    async def aclose(self) -> None:
        """Alias of ``stop()``."""

        await self.stop()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, traceback: Any) -> None:
        try:
            await self.stop()
        except Exception as cleanup_error:
            if exc is None:
                raise
            exc.add_note(f"runtime cleanup failed: {cleanup_error}")

    def __repr__(self) -> str:
        return f"Runtime(runtime_id={self.runtime_id!r}, status={self._status.value!r})"


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


__all__ = ["Runtime", "RuntimeStatus"]
