"""Private: native non-blocking operations awaited from the event loop.

A ``fabric_..._begin`` call returns an operation handle at once. Each event loop owns one
completion queue (``fabric_completion_queue_new``) whose descriptor it watches with a single
``add_reader`` for its whole life; a finished operation queues its handle there, and the
reader callback takes every queued outcome (``fabric_operation_take``, which never waits)
and frees the handles. No worker thread is involved, nothing spins, and no descriptor or
``epoll_ctl`` is spent per call: an invocation completes on the core's reactor. Event loops
without ``add_reader`` (Windows' proactor) fall back to the blocking call in a worker.
"""

from __future__ import annotations

import asyncio
import ctypes
import weakref
from collections.abc import Callable
from typing import Any

from fabric_core import _ffi
from fabric_core._util import call_blocking

#: ``begin(queue, operation_out)`` makes one ``fabric_..._begin`` call (raising on its error).
Begin = Callable[[int, Any], Any]


class _LoopQueue:
    """One event loop's completion queue and the futures waiting on it."""

    def __init__(self, library: _ffi.Library, loop: asyncio.AbstractEventLoop) -> None:
        slot = ctypes.c_uint64(0)
        library.fabric_completion_queue_new(ctypes.byref(slot), _ffi.out_slot())
        self.library = library
        self.handle = slot.value
        self.waiting: dict[int, asyncio.Future[str]] = {}
        fd = ctypes.c_int32(-1)
        try:
            library.fabric_completion_queue_fd(self.handle, ctypes.byref(fd), _ffi.out_slot())
            loop.add_reader(fd.value, self._ready)
        except BaseException:
            library.fabric_completion_queue_free(self.handle)
            raise
        # The loop's selector closes with the loop; the queue is freed when the loop goes.
        weakref.finalize(loop, library.fabric_completion_queue_free, self.handle)

    def _ready(self) -> None:
        library = self.library
        while True:
            operation = library.completion_queue_next(self.handle)
            if operation is None:
                return
            future = self.waiting.pop(operation, None)
            if future is None:
                continue  # not ours any more
            try:
                status, text = library.operation_take(operation)
            except BaseException as error:  # noqa: BLE001 - delivered to the awaiting task
                library.fabric_operation_free(operation)
                if not future.done():
                    future.set_exception(error)
                continue
            library.fabric_operation_free(operation)
            if future.done():
                continue
            if status == _ffi.STATUS_OK and text is not None:
                future.set_result(text)
            else:
                future.set_exception(_ffi.error_from_status(_ffi.STATUS_INTERNAL, None))


_queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue | None] = (
    weakref.WeakKeyDictionary()
)


def _queue(library: _ffi.Library, loop: asyncio.AbstractEventLoop) -> _LoopQueue | None:
    """The loop's queue, made on first use; ``None`` when the loop cannot watch descriptors."""

    try:
        return _queues[loop]
    except KeyError:
        pass
    queue: _LoopQueue | None
    try:
        queue = _LoopQueue(library, loop)
    except NotImplementedError:
        queue = None
    _queues[loop] = queue
    return queue


def start(library: _ffi.Library, begin: Begin) -> asyncio.Future[str] | None:
    """Begin one operation; the returned future completes with the outcome's JSON text (or
    its SDK exception) once the core finished it. ``None`` when the running loop cannot
    watch descriptors or the library has no non-blocking calls (nothing was begun then).

    Cancelling the awaiting task does not cancel the future: the operation completes and
    is taken and freed by the loop either way (await it shielded)."""

    if not library.has_operations:
        return None
    loop = asyncio.get_running_loop()
    queue = _queue(library, loop)
    if queue is None:
        return None
    slot = ctypes.c_uint64(0)
    begin(queue.handle, ctypes.byref(slot))
    future: asyncio.Future[str] = loop.create_future()
    queue.waiting[slot.value] = future
    return future


async def call(library: _ffi.Library, begin: Begin, blocking: Callable[[], str]) -> str:
    """Run one native operation without a worker thread (``blocking`` in a worker when the
    loop cannot watch descriptors). If the awaiting task is cancelled, the operation still
    finishes (native work cannot be interrupted); the cancellation is re-raised once it
    has, as ``call_blocking`` does."""

    future = start(library, begin)
    if future is None:
        return await call_blocking(blocking)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():
            try:
                await asyncio.shield(future)
            except asyncio.CancelledError:
                continue
            except BaseException:  # noqa: BLE001 - the cancellation wins
                break
        if not future.cancelled():
            future.exception()
        raise
