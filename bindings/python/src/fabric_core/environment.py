"""``EnvironmentHandle``: a prepared execution environment."""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from fabric_core import _ffi
from fabric_core._codes import Code
from fabric_core._util import call_blocking, dumps
from fabric_core.errors import FabricStateError
from fabric_core.types import EnvironmentInfo, ExecResult, FileContent, FileListing


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

    async def exec(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
        timeout_seconds: float = 60.0,
        output_limit_bytes: int = 1024 * 1024,
    ) -> ExecResult:
        """Run ``argv`` in the environment (never through a shell unless ``argv`` names
        one): in ``cwd`` relative to the workspace, with ``env`` added and ``stdin`` as its
        input. Its whole process group is killed at the deadline (``timed_out``); each of
        stdout and stderr keeps ``output_limit_bytes`` (``stdout_truncated``,
        ``stderr_truncated``). Works until the environment is released."""

        request: dict[str, Any] = {
            "argv": list(argv),
            "timeout_seconds": timeout_seconds,
            "output_limit_bytes": output_limit_bytes,
        }
        if cwd is not None:
            request["cwd"] = cwd
        if env:
            request["env"] = dict(env)
        if stdin:
            request["stdin_hex"] = bytes(stdin).hex()
        return ExecResult._from_json(await self._operate("fabric_environment_exec", request))

    async def write_file(self, path: str, data: bytes, *, mode: int | None = None, root: str = "workspace") -> None:
        """Write ``data`` (at most 16 MiB) to ``path`` beneath the workspace (``root=
        "artifacts"``: the artifact root); parents are created, links are never followed
        (``path_refused``)."""

        request: dict[str, Any] = {"path": path, "content_hex": bytes(data).hex(), "root": root}
        if mode is not None:
            request["mode"] = mode
        await self._operate("fabric_environment_write_file", request)

    async def read_file(self, path: str, *, max_bytes: int = 4 * 1024 * 1024, root: str = "workspace") -> bytes:
        """The bytes of the regular file ``path`` beneath the workspace (or artifact root),
        at most ``max_bytes``; links are never followed (``path_refused``), a missing file
        is ``file_not_found``. ``read_file_content`` also says whether it was cut."""

        return bytes.fromhex(str((await self.read_file_content(path, max_bytes=max_bytes, root=root))["content_hex"]))

    async def read_file_content(
        self, path: str, *, max_bytes: int = 4 * 1024 * 1024, root: str = "workspace"
    ) -> FileContent:
        """``read_file``'s FileContent: ``content_hex``, ``size`` and ``truncated``."""

        request = {"path": path, "max_bytes": max_bytes, "root": root}
        return FileContent._from_json(await self._operate("fabric_environment_read_file", request))

    async def list(self, path: str = "", *, root: str = "workspace") -> FileListing:
        """The entries of the directory ``path`` beneath the workspace (or artifact root);
        links are listed as ``symlink``, never followed."""

        request = {"path": path, "root": root}
        return FileListing._from_json(await self._operate("fabric_environment_list", request))

    async def _operate(self, function: str, request: Mapping[str, Any]) -> Any:
        handle = self.native_handle
        if handle == 0 or self._released:
            raise FabricStateError(
                "environment was already released", stage="invoke", code=Code.ENVIRONMENT_RELEASED
            )
        call = getattr(self._library, function)
        payload = dumps(request)
        text = await call_blocking(lambda: call(handle, payload, _ffi.out_slot()))
        return json.loads(text)

    def to_mapping(self) -> dict[str, Any]:
        """A detached copy of ``info``."""

        return self._info.to_mapping()

    def _free(self) -> None:
        if self._finalizer.detach() is not None:
            self._library.fabric_environment_free(self._handle)

    def __repr__(self) -> str:
        return f"EnvironmentHandle(environment_id={self.environment_id!r}, provider={self.provider!r})"


__all__ = ["EnvironmentHandle"]
