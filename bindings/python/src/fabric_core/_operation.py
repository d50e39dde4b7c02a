"""Private: native non-blocking operations awaited from the event loop.

A ``fabric_..._begin`` call returns an operation handle at once; the loop watches the
operation's readiness descriptor (``fabric_operation_ready_fd``) with ``add_reader`` and,
when it is readable, takes the outcome (``fabric_operation_take``, which never waits) and
frees the handle. No worker thread is involved and nothing spins: an invocation completes
on the core's reactor. Event loops without ``add_reader`` (Windows' proactor) fall back to
the blocking call in a worker thread.
"""

from __future__ import annotations

import asyncio
import ctypes
import select
from collections.abc import Callable
from typing import Any

from fabric_core import _ffi
from fabric_core._util import call_blocking

#: ``begin(operation_out)`` makes one ``fabric_..._begin`` call (raising on its error).
Begin = Callable[[Any], Any]


def start(library: _ffi.Library, begin: Begin) -> asyncio.Future[str] | None:
    """Begin one operation; the returned future completes with the outcome's JSON text (or
    its SDK exception) once the core finished it. ``None`` when the running loop cannot
    watch descriptors or the library has no non-blocking calls (nothing was begun then).

    Cancelling the awaiting task does not cancel the future: the operation completes and
    is freed by the loop either way (await it shielded)."""

    loop = asyncio.get_running_loop()
    if not library.has_operations:
        return None
    slot = ctypes.c_uint64(0)
    begin(ctypes.byref(slot))
    handle = slot.value
    future: asyncio.Future[str] = loop.create_future()
    try:
        fd = library.operation_ready_fd(handle)
    except BaseException:
        library.fabric_operation_free(handle)
        raise

    def ready() -> None:
        try:
            status, text = library.operation_take(handle)
        except BaseException as error:  # noqa: BLE001 - delivered to the awaiting task
            finish()
            if not future.done():
                future.set_exception(error)
            return
        if status == _ffi.STATUS_TIMEOUT:
            return  # not finished: keep watching
        finish()
        if future.done():
            return
        if status == _ffi.STATUS_OK and text is not None:
            future.set_result(text)
        else:
            future.set_exception(
                _ffi.error_from_status(_ffi.STATUS_INTERNAL, None)
            )

    def finish() -> None:
        loop.remove_reader(fd)
        library.fabric_operation_free(handle)

    try:
        loop.add_reader(fd, ready)
    except NotImplementedError:
        # The operation is already running: wait for it in a worker instead.
        def wait() -> str:
            select.select([fd], [], [])
            status, text = library.operation_take(handle)
            library.fabric_operation_free(handle)
            if status == _ffi.STATUS_OK and text is not None:
                return text
            raise _ffi.error_from_status(_ffi.STATUS_INTERNAL, None)

        return asyncio.ensure_future(call_blocking(wait))
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
