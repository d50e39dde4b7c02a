"""``EnvironmentHandle``: a prepared execution environment."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from fabric_core import _ffi
from fabric_core.types import EnvironmentInfo


def _backstop(library: _ffi.Library, handle: int) -> None:
    """Finalizer: release and free an environment that was never released explicitly."""

    try:
        library.fabric_environment_release(handle, _ffi.out_slot())
    except Exception:  # noqa: BLE001 - best effort at GC/exit time
        pass
    try:
        library.fabric_environment_free(handle)
    except Exception:  # noqa: BLE001
        pass


class EnvironmentHandle:
    """An environment prepared by ``Fabric.prepare_environment()``.

    Start runtimes in it with ``Fabric.start_runtime_in(config, environment)`` and release
    it with ``Fabric.release_environment(environment)`` after those runtimes stop. Local
    release preserves caller-owned files. Read-only: ``environment_id``, ``provider`` and
    the core's description (``info``).
    """

    def __init__(self, *, library: _ffi.Library, handle: int, info: Mapping[str, Any]) -> None:
        self._library = library
        self._handle = handle
        self._info = EnvironmentInfo.from_mapping(info)
        self._released = False
        self._finalizer = weakref.finalize(self, _backstop, library, handle)

    @property
    def environment_id(self) -> str | None:
        """The environment id reported by the core."""

        value = self._info.get("environment_id")
        return None if value is None else str(value)

    @property
    def provider(self) -> str | None:
        """The environment provider (for example ``local``)."""

        value = self._info.get("provider")
        return None if value is None else str(value)

    @property
    def info(self) -> EnvironmentInfo:
        """The core's description of the environment (read-only)."""

        return self._info

    @property
    def released(self) -> bool:
        """Whether ``release_environment`` completed."""

        return self._released

    @property
    def native_handle(self) -> int:
        """The C ABI handle id (0 once freed)."""

        return self._handle if self._finalizer.alive else 0

    def to_mapping(self) -> dict[str, Any]:
        """A detached copy of ``info``."""

        return self._info.to_mapping()

    def _free(self) -> None:
        if self._finalizer.detach() is not None:
            self._library.fabric_environment_free(self._handle)

    def __repr__(self) -> str:
        return f"EnvironmentHandle(environment_id={self.environment_id!r}, provider={self.provider!r})"


__all__ = ["EnvironmentHandle"]
