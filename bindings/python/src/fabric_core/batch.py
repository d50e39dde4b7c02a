"""``Fabric.batch``: a data set of items through one config over the core's batch engine
(``fabric_batch_*``): concurrency, retries, per-item timeouts, resume and the summary are
the core's; this module only feeds items and yields finished lines.

    async for done in Fabric().batch(config, items, concurrency=8, attempts=3):
        print(done.id, done.attempts, done.result or done.error)

``items`` is any iterable or async iterable of ``RunRequest`` models, mappings (a
RunRequest object, or ``{"id": ..., "requests": [...]}``) or other JSON values (the input).
Items are pulled as the core frees a slot (back-pressure): a generator of a million items is
never read ahead. After the loop, ``.summary`` holds the BatchSummary; an invalid item (not
JSON-compatible, malformed, a duplicate id) raises ``FabricConfigError`` naming its line.

Everything runs on the event loop's thread without blocking: items are pushed and finished
lines pulled (every ready one at once, ``fabric_batch_next_lines``) with zero timeouts, and
when neither can proceed the loop waits on the batch's readiness descriptor
(``fabric_batch_ready_fd``, watched with ``add_reader``), so no item costs a thread hop.
Loops without ``add_reader`` (Windows' proactor) wait in a worker thread instead.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from ctypes import c_uint64
from typing import Any

from fabric_core import _ffi
from fabric_core._generated import BatchLine, BatchSummary
from fabric_core._sdk_model import foreign_model
from fabric_core._util import config_json, dumps, options_arg, to_thread
from fabric_core.models import FabricConfig, RunRequest

__all__ = ["Batch", "BatchLine", "BatchSummary"]


def _item_bytes(item: Any) -> bytes:
    if foreign_model(item):
        item = RunRequest.model_validate(item)
    if isinstance(item, RunRequest):
        return dumps(item.to_mapping())
    if isinstance(item, Mapping):
        return dumps(dict(item))
    return dumps(item)


async def _each(items: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


class Batch:
    """A running batch: iterate it (``async for``) for the finished lines in completion
    order; ``summary`` is set when the iteration ends; ``cancel()`` stops taking items and
    lets in-flight ones finish within ``grace_seconds`` (a second call stops them now)."""

    def __init__(
        self,
        config: FabricConfig,
        items: Iterable[Any] | AsyncIterable[Any],
        settings: dict[str, Any],
    ) -> None:
        self._config = config
        self._items = items
        self._settings = settings
        self._handle = 0
        self._library: _ffi.Library | None = None
        #: Set by the readiness descriptor's reader (``None``: no descriptor is watched).
        self._changed: asyncio.Event | None = None
        #: The BatchSummary, once the iteration ended.
        self.summary: BatchSummary | None = None

    def cancel(self) -> None:
        """First call: stop taking items (grace for in-flight ones); second: stop now."""

        if self._library is not None and self._handle:
            self._library.fabric_batch_cancel(self._handle)

    def __aiter__(self) -> AsyncIterator[BatchLine]:
        return self._run()

    async def _start(self) -> None:
        library = _ffi.library()
        self._library = library
        payload = config_json(self._config)
        settings = dumps(self._settings)
        handle = c_uint64(0)
        await to_thread(
            lambda: library.fabric_batch_start(payload, settings, ctypes.byref(handle), _ffi.out_slot())
        )
        self._handle = handle.value

    def _watch(self) -> int | None:
        """Watches the batch's readiness descriptor on this loop; its fd, or ``None``."""

        assert self._library is not None
        fd = self._library.batch_ready_fd(self._handle)
        if fd is None:
            return None
        changed = asyncio.Event()

        def woken() -> None:
            try:
                os.read(fd, 4096)
            except (BlockingIOError, InterruptedError):
                pass
            changed.set()

        try:
            asyncio.get_running_loop().add_reader(fd, woken)
        except NotImplementedError:
            return None
        self._changed = changed
        return fd

    async def _retry(self, call: Any, blocking: Any) -> tuple[int, str | None]:
        """``call()`` (never blocks) until it answers other than TIMEOUT, waiting for the
        readiness descriptor in between; without one, ``blocking()`` in a worker thread."""

        changed = self._changed
        while True:
            if changed is not None:
                changed.clear()
            answer = call()
            if answer[0] != _ffi.STATUS_TIMEOUT:
                return answer
            if changed is None:
                return await to_thread(blocking)
            await changed.wait()

    async def _feed(self) -> None:
        library, handle = self._library, self._handle
        assert library is not None
        try:
            async for item in _each(self._items):
                line = _item_bytes(item)
                status, _ = await self._retry(
                    lambda: (library.batch_push(handle, line, 0), None),
                    lambda: (library.batch_push(handle, line, -1), None),
                )
                if status == _ffi.STATUS_END:
                    return
        finally:
            library.fabric_batch_close(handle)

    async def _run(self) -> AsyncIterator[BatchLine]:
        await self._start()
        library, handle = self._library, self._handle
        assert library is not None
        fd = self._watch()
        feeder = asyncio.ensure_future(self._feed())
        finished = False

        def pull() -> tuple[int, str | None]:
            answer = library.batch_next_lines(handle, 0)
            if answer[0] == _ffi.STATUS_TIMEOUT and feeder.done() and feeder.exception():
                # The items failed: stop the batch now (its end wakes this loop).
                library.fabric_batch_cancel(handle)
                library.fabric_batch_cancel(handle)
            return answer

        if self._changed is not None:
            feeder.add_done_callback(lambda _: self._changed and self._changed.set())
        try:
            while True:
                status, text = await self._retry(
                    pull, lambda: library.batch_next_lines(handle, 200)
                )
                if status == _ffi.STATUS_END:
                    break
                if status == _ffi.STATUS_OK and text is not None:
                    for raw in json.loads(text):
                        yield BatchLine._from_json(raw)
            _, text = await to_thread(lambda: library.batch_summary(handle, -1))
            raw = json.loads(text or "{}")
            self.summary = BatchSummary._from_json(raw)
            finished = True
            await feeder
            if raw.get("input_error"):
                raise _ffi.error_from_status(_ffi.STATUS_CONFIG, json.dumps(raw["input_error"]))
        finally:
            if not finished:
                library.fabric_batch_cancel(handle)
                library.fabric_batch_cancel(handle)
                feeder.cancel()
            if fd is not None:
                asyncio.get_running_loop().remove_reader(fd)
            await to_thread(lambda: library.fabric_batch_free(handle))


def batch_settings(
    *,
    concurrency: int | None,
    isolation: str | None,
    attempts: int | None,
    retry_failed: bool | None,
    timeout_seconds: float | None,
    grace_seconds: float | None,
    prewarm: bool | None,
    output: str | None,
    base_dir: Any,
    capture: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``batch_json`` document (schema ``sdk/batch-settings``); the core checks it."""

    settings: dict[str, Any] = {
        "concurrency": concurrency,
        "isolation": isolation,
        "attempts": attempts,
        "retry_failed": retry_failed,
        "timeout_seconds": timeout_seconds,
        "grace_seconds": grace_seconds,
        "prewarm": prewarm,
        "output": None if output is None else str(output),
        "call": json.loads(options_arg(base_dir=base_dir, capture=capture) or b"null"),
    }
    return {key: value for key, value in settings.items() if value is not None}
