"""``Prewarm``: adapter hosts launched ahead of time (``Fabric.prewarm``)."""

from __future__ import annotations

import json
import weakref
from typing import Any

from fabric_core import _ffi
from fabric_core.types import PrewarmInfo


def _backstop(library: _ffi.Library, handle: int) -> None:
    """Finalizer: free (and so close) a pool that was never closed explicitly."""

    try:
        library.fabric_prewarm_free(handle)
    except Exception:  # noqa: BLE001 - best effort at GC/exit time
        pass


class Prewarm:
    """A pool of adapter hosts launched ahead of time by ``Fabric.prewarm(config, hosts=N)``.

    Each host was launched exactly as ``start_runtime`` would launch it and waits for the
    adapter's ``start``. While the pool is open, ``Fabric.run`` and ``Fabric.start_runtime``
    with the same config and options (no ``streaming``) take a waiting host instead of
    launching one, and the core launches a replacement in the background; anything else
    starts cold. ``close()`` (or leaving a ``with`` block) terminates the hosts still
    waiting; runtimes that took one are not affected. ``close()`` is idempotent.
    """

    def __init__(self, *, library: _ffi.Library, handle: int, info: Any) -> None:
        self._library = library
        self._handle = handle
        self._info = PrewarmInfo.from_mapping(info)
        self._finalizer = weakref.finalize(self, _backstop, library, handle)

    @property
    def closed(self) -> bool:
        """Whether ``close()`` ran."""

        return not self._finalizer.alive

    @property
    def native_handle(self) -> int:
        """The C ABI handle id (0 once closed)."""

        return self._handle if self._finalizer.alive else 0

    def status(self) -> PrewarmInfo:
        """The pool now: ``hosts``, the pids of the hosts waiting (``ready_pids``), how many
        were taken (``claimed``). After ``close()``: the final status."""

        if self._finalizer.alive:
            text = self._library.fabric_prewarm_status(self._handle, _ffi.out_slot())
            self._info = PrewarmInfo._from_json(json.loads(text))
        return self._info

    def close(self) -> PrewarmInfo:
        """Terminate the hosts still waiting and release the pool; returns its final
        status (``closed`` true, no ``ready_pids``)."""

        if self._finalizer.alive:
            try:
                text = self._library.fabric_prewarm_close(self._handle, _ffi.out_slot())
                self._info = PrewarmInfo._from_json(json.loads(text))
            finally:
                if self._finalizer.detach() is not None:
                    self._library.fabric_prewarm_free(self._handle)
        return self._info

    def __enter__(self) -> Prewarm:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, traceback: Any) -> None:
        self.close()

    async def __aenter__(self) -> Prewarm:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, traceback: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Prewarm(hosts={self._info.get('hosts')!r}, closed={self.closed!r})"


__all__ = ["Prewarm"]
