"""``Service``: a prepared or attached long-lived adapter service shared by runtimes."""

from __future__ import annotations

import asyncio
import json
import weakref
from enum import Enum
from typing import Any

from fabric_core import _ffi
from fabric_core._codes import Code
from fabric_core._util import call_blocking
from fabric_core.errors import FabricError, FabricStateError
from fabric_core.types import ServiceHandle, ServiceInfo


class ServiceStatus(str, Enum):
    """Lifecycle state of a prepared or attached service."""

    ACTIVE = "active"
    RELEASING = "releasing"
    RELEASED = "released"
    FAILED = "failed"


def _backstop(library: _ffi.Library, handle: int) -> None:
    """Finalizer: free a service that was never closed (an active one's host is stopped)."""

    try:
        library.fabric_service_free(handle)
    except Exception:  # noqa: BLE001 - best effort at GC/exit time
        pass


class Service:
    """One service from ``Fabric.prepare_service()`` (Fabric-owned) or
    ``Fabric.attach_service()`` (caller-owned).

    Start runtimes on it with ``Fabric.start_runtime(config, service=service)``; each gets
    its own adapter host connected to the service. ``release()`` stops a prepared service
    (or detaches from an attached one) and raises ``ServiceInUseError`` while a connected
    runtime is still running; the service then stays active. Use it as an async context
    manager so it is released deterministically. The handle is valid only in this process.
    """

    def __init__(self, *, library: _ffi.Library, handle: int, info: Any) -> None:
        self._library = library
        self._handle = handle
        self._info = ServiceInfo.from_mapping(info)
        self._status = ServiceStatus.ACTIVE
        self._lock = asyncio.Lock()
        self._finalizer = weakref.finalize(self, _backstop, library, handle)

    @property
    def status(self) -> ServiceStatus:
        """``ACTIVE``, ``RELEASING``, ``RELEASED`` or ``FAILED``."""

        return self._status

    @property
    def service_id(self) -> str:
        """The process-local service lifecycle id (``service-…``)."""

        return str(self._info["service_id"])

    @property
    def handle(self) -> ServiceHandle:
        """The service handle (``service_id``, ``service_binding``, ``ownership``, ...)."""

        return self._info["service"]

    @property
    def info(self) -> ServiceInfo:
        """The core's description (host pid, FABRIC_HOME, status at the last call)."""

        return self._info

    @property
    def native_handle(self) -> int:
        """The C ABI handle id (0 once freed)."""

        return self._handle if self._finalizer.alive else 0

    def _native_for_start(self) -> int:
        handle = self.native_handle
        if handle == 0:
            raise FabricStateError(
                "service must be active", stage="start", code=Code.SERVICE_NOT_ACTIVE
            )
        return handle

    async def release(self) -> None:
        """Stop a Fabric-owned service or detach from a caller-owned one.

        Raises ``ServiceInUseError`` while connected runtimes still run (the service stays
        active). Repeated calls after a successful release are no-ops.
        """

        if self._status in (ServiceStatus.RELEASED, ServiceStatus.FAILED):
            return
        if self._status is ServiceStatus.RELEASING:
            raise FabricStateError(
                "service release is already in progress", stage="stop", code=Code.SERVICE_RELEASING
            )
        self._status = ServiceStatus.RELEASING
        library, handle = self._library, self._handle
        try:
            async with self._lock:
                text = await call_blocking(
                    lambda: library.fabric_service_release(handle, _ffi.out_slot())
                )
        except FabricError:
            self._status = ServiceStatus.ACTIVE
            raise
        except BaseException:
            self._status = ServiceStatus.FAILED
            raise
        self._info = ServiceInfo.from_mapping(json.loads(text))
        self._status = ServiceStatus(str(self._info["status"]))

    async def close(self) -> None:
        """``release()`` then free the native handle (idempotent)."""

        await self.release()
        if self._finalizer.detach() is not None:
            self._library.fabric_service_free(self._handle)

    async def __aenter__(self) -> Service:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, traceback: Any) -> None:
        try:
            await self.close()
        except Exception as cleanup_error:
            if exc is None:
                raise
            exc.add_note(f"service cleanup failed: {cleanup_error}")

    def __repr__(self) -> str:
        return f"Service(service_id={self.service_id!r}, status={self._status.value!r})"


__all__ = ["Service", "ServiceStatus"]
