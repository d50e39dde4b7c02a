"""``OpenAIInvokeStream``: native OpenAI chunks of one invocation, pulled from the core.

The core owns the authenticated loopback listener the adapter writes to; this module only
pulls items with ``fabric_stream_next_batch``. Every ready item is taken at once on the
event loop's thread (a zero timeout never blocks). When none is ready the loop waits on the
stream's readiness descriptor (``fabric_stream_ready_fd``, watched with ``add_reader``), so
items arrive without a thread hop; only finishing the stream (waiting for the turn's answer)
runs in a worker thread (the GIL is released), which ``aclose()`` or a cancelled consumer
wakes by closing the stream. Closing never cancels the invocation.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import TYPE_CHECKING, Any

from fabric_core import _ffi
from fabric_core._util import to_thread
from fabric_core.errors import FabricRuntimeError
from fabric_core.types import RunResult

if TYPE_CHECKING:
    from fabric_core.runtime import Runtime


def _backstop(library: _ffi.Library, handle: int) -> None:
    """Finalizer: free (never blocks; a running invocation is closed in the background)."""

    try:
        library.fabric_stream_free(handle)
    except Exception:  # noqa: BLE001 - best effort at GC/exit time
        pass


class OpenAIInvokeStream:
    """Async iterator of ``chat.completion.chunk`` mappings for one invocation.

    ``await stream.result()`` returns the separate, authoritative ``RunResult`` (unread
    chunks are dropped first). ``await stream.aclose()`` (or leaving ``async with``) drops
    unread chunks and waits for the invocation without cancelling it. Cancelling the task
    that iterates closes the stream the same way. The runtime accepts another turn once the
    stream is read to its end, its result was awaited, or it was closed.
    """

    def __init__(self, runtime: Runtime, library: _ffi.Library, handle: int, info: Any) -> None:
        self._runtime = runtime
        self._library = library
        self._handle = handle
        self._info = info
        self._finished = False
        self._result: RunResult | None = None
        self._error: BaseException | None = None
        self._closer: asyncio.Future[Any] | None = None
        self._batch: list[Any] = []
        self._position = 0
        self._ready_fd = library.stream_ready_fd(handle)
        self._finalizer = weakref.finalize(self, _backstop, library, handle)

    @property
    def invocation_id(self) -> str:
        """The invocation this stream belongs to (its ``RunResult`` carries the same)."""

        return str(self._info.get("invocation_id"))

    @property
    def request_id(self) -> str:
        """The request id of the invocation."""

        return str(self._info.get("request_id"))

    @property
    def finished(self) -> bool:
        """Whether the stream was read to its end, its result was taken, or it was closed."""

        return self._finished

    def __aiter__(self) -> OpenAIInvokeStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while True:
            if self._position < len(self._batch):
                item = self._batch[self._position]
                self._position += 1
                return item
            if self._finished or not self._finalizer.alive:
                await self._await_closer()
                raise StopAsyncIteration
            library, handle = self._library, self._handle
            try:
                # Every ready chunk is taken right here, on the loop's thread.
                status, text = library.stream_next_batch(handle, 0)
                # Wait for the readiness descriptor; a wake-up that finds nothing twice in a
                # row (a stale byte, then the core asking for a waiting pull) falls through.
                wakes = 0
                while status == _ffi.STATUS_TIMEOUT and self._ready_fd is not None and wakes < 2:
                    try:
                        woken = await self._readable()
                    except asyncio.CancelledError:
                        self._close_in_background()
                        raise
                    if self._finished or not woken:
                        break
                    wakes += 1
                    self._drain()
                    status, text = library.stream_next_batch(handle, 0)
                if self._finished:
                    continue
                if status == _ffi.STATUS_TIMEOUT:
                    # Nothing ready after a wake-up: only a waiting pull finishes the stream.
                    worker = to_thread(lambda: library.stream_next_batch(handle, -1))
                    try:
                        status, text = await asyncio.shield(worker)
                    except asyncio.CancelledError:
                        # The consumer went away: close (wakes the worker), never cancel the turn.
                        self._close_in_background()
                        raise
            except FabricRuntimeError as error:
                self._fail(error)
                raise
            if self._finished:
                continue
            if status == _ffi.STATUS_OK and text is not None:
                self._batch = json.loads(text)
                self._position = 0
            elif status == _ffi.STATUS_END:
                self._finished = True

    def _drain(self) -> None:
        """Empties the readiness descriptor (it is non-blocking)."""

        if self._ready_fd is not None:
            try:
                os.read(self._ready_fd, 4096)
            except (BlockingIOError, InterruptedError):
                pass

    async def _readable(self) -> bool:
        """Waits until the readiness descriptor is readable (watched only while waiting, so
        the descriptor is never watched after the stream is freed); ``False`` when the loop
        cannot watch descriptors."""

        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        fd = self._ready_fd
        try:
            loop.add_reader(fd, wake)
        except NotImplementedError:
            # An event loop without add_reader (Windows' proactor): wait in a worker.
            self._ready_fd = None
            return False
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        return True

    def _fail(self, error: BaseException) -> None:
        self._finished = True
        self._error = error
        self._runtime._stream_failed()

    def _drop_unread(self) -> None:
        self._finished = True
        self._batch = []
        self._position = 0

    def _close_in_background(self) -> None:
        self._drop_unread()
        if self._closer is None and self._finalizer.alive:
            library, handle = self._library, self._handle
            self._closer = to_thread(lambda: library.fabric_stream_close(handle))
            self._closer.add_done_callback(_consume)
            self._runtime._adopt_orphan(self._closer)

    async def _await_closer(self) -> None:
        closer = self._closer
        if closer is not None:
            await asyncio.shield(closer)

    #: Whether ``result()`` keeps unread items readable (ATOF records) or drops them first.
    _keeps_unread = False

    @property
    def _turn_done(self) -> bool:
        """The runtime may take another turn: the stream ended or its result was taken."""

        return self._finished or self._result is not None

    async def result(self) -> RunResult:
        """Drop unread chunks, wait for the invocation and return its ``RunResult``.

        Raises ``FabricRuntimeError`` with ``code == "openai_stream_protocol_error"`` when the
        adapter broke the stream transport (the runtime is then ``FAILED``), or the
        invocation's own error.
        """

        if self._result is not None:
            return self._result
        await self._await_closer()
        if not self._keeps_unread:
            self._drop_unread()
        library, handle = self._library, self._handle
        try:
            text = await to_thread(lambda: library.fabric_stream_result(handle, _ffi.out_slot()))
        except FabricRuntimeError as error:
            self._fail(error)
            raise
        result = RunResult._from_json(json.loads(text))
        self._result = result
        self._runtime._absorb(result)
        return result

    async def aclose(self) -> None:
        """Drop unread chunks and wait for the invocation without cancelling it. Idempotent."""

        self._drop_unread()
        if self._closer is None and self._finalizer.alive:
            library, handle = self._library, self._handle
            self._closer = to_thread(lambda: library.fabric_stream_close(handle))
            self._closer.add_done_callback(_consume)
        await self._await_closer()

    async def __aenter__(self) -> OpenAIInvokeStream:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, traceback: Any) -> None:
        await self.aclose()

    def _free(self) -> None:
        self._finalizer()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(invocation_id={self.invocation_id!r}, finished={self._finished})"


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()




class InvokeStream(OpenAIInvokeStream):
    """Async iterator of raw NeMo Relay ATOF records (dictionaries) for one invocation
    (``Runtime.invoke_stream``), pulled from the core the same way as the OpenAI chunks.

    The records are those the adapter's Relay published for the invocation's request id
    and the runtime's collector routed to it; the stream ends once the adapter host
    answered and they were delivered. ``await stream.result()`` returns the separate,
    authoritative ``RunResult`` and frees the runtime for another turn, but does not
    finalize the stream: unread records stay readable until the runtime is stopped.
    ``await stream.aclose()`` drops unread records and waits for the invocation without
    cancelling it.
    """

    _keeps_unread = True


__all__ = ["InvokeStream", "OpenAIInvokeStream"]
