"""Private ctypes layer: loads the Fabric core C library and declares every symbol.

Nothing here is public API. Every fallible native function returns an ``int32_t`` status and
writes one JSON string to ``char **out``; that string is read with ``ctypes.string_at`` and
released with ``fabric_string_free`` (never ``free``). ``errcheck`` turns a non-zero status
into the matching :mod:`fabric_core.errors` class. ``CDLL`` releases the GIL during calls, so
blocking calls run concurrently from worker threads.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import threading
from ctypes import POINTER, c_char_p, c_int32, c_uint32, c_uint64, c_void_p
from typing import Any

from fabric_core.errors import (
    FabricCapabilityError,
    FabricConfigError,
    FabricError,
    FabricNativeUnavailableError,
    FabricRuntimeError,
    FabricStateError,
    ResourceObservationUnavailableError,
    ResourceObservationUnsupportedError,
)

#: The C ABI version this package was written against (``FABRIC_ABI_VERSION``).
ABI_VERSION = 2

#: Environment variable naming a prebuilt ``libfabric_ffi`` to load instead of the bundled one.
LIB_ENV = "FABRIC_CORE_LIB"

STATUS_OK = 0
STATUS_CONFIG = 1
STATUS_CAPABILITY = 2
STATUS_RUNTIME = 3
STATUS_STATE = 4
STATUS_RESOURCE_UNAVAILABLE = 5
STATUS_RESOURCE_UNSUPPORTED = 6
STATUS_INVALID_ARGUMENT = 7
STATUS_INTERNAL = 8
STATUS_END = 100
STATUS_TIMEOUT = 101

_HANDLE_CODES = frozenset({"null_handle", "stale_handle", "unknown_handle", "wrong_handle_kind"})

_STATUS_ERRORS: dict[int, type[FabricError]] = {
    STATUS_CONFIG: FabricConfigError,
    STATUS_CAPABILITY: FabricCapabilityError,
    STATUS_RUNTIME: FabricRuntimeError,
    STATUS_STATE: FabricStateError,
    STATUS_RESOURCE_UNAVAILABLE: ResourceObservationUnavailableError,
    STATUS_RESOURCE_UNSUPPORTED: ResourceObservationUnsupportedError,
    STATUS_INTERNAL: FabricRuntimeError,
}


def error_from_status(status: int, text: str | None) -> FabricError:
    """Build the SDK exception for a failed native call from its ErrorInfo JSON."""

    info: dict[str, Any] = {}
    if text:
        try:
            decoded = json.loads(text)
            if isinstance(decoded, dict):
                info = decoded
        except ValueError:
            info = {}
    code = info.get("code")
    if status == STATUS_INVALID_ARGUMENT:
        cls: type[FabricError] = (
            FabricStateError if code in _HANDLE_CODES else FabricConfigError
        )
    else:
        cls = _STATUS_ERRORS.get(status, FabricError)
    message = info.get("message") or f"native call failed with status {status}"
    return cls(
        str(message),
        stage=info.get("stage"),
        code=code if isinstance(code, str) else None,
        retryable=bool(info.get("retryable", False)),
        details=info.get("metadata") if isinstance(info.get("metadata"), dict) else None,
    )


class Library:
    """The loaded native library with every symbol declared."""

    def __init__(self, path: str) -> None:
        self.path = path
        lib = ctypes.CDLL(path)
        self._lib = lib

        lib.fabric_version.argtypes = []
        lib.fabric_version.restype = c_char_p
        lib.fabric_abi_version.argtypes = []
        lib.fabric_abi_version.restype = c_uint32
        lib.fabric_string_free.argtypes = [c_void_p]
        lib.fabric_string_free.restype = None

        abi = lib.fabric_abi_version()
        if abi != ABI_VERSION:
            raise FabricNativeUnavailableError(
                f"native library {path} has C ABI version {abi}, "
                f"this package requires {ABI_VERSION}",
                stage="load",
                code="abi_mismatch",
            )
        self.version: str = lib.fabric_version().decode("utf-8")

        out = POINTER(c_void_p)
        u64 = c_uint64
        self._declare("fabric_validate", [c_char_p, c_char_p, out])
        self._declare("fabric_plan", [c_char_p, c_char_p, out])
        self._declare("fabric_doctor", [c_char_p, c_char_p, out])
        self._declare("fabric_inspect", [c_char_p, c_char_p, c_char_p, out])
        self._declare("fabric_run", [c_char_p, c_char_p, c_char_p, out])
        self._declare("fabric_runtime_start", [c_char_p, c_char_p, POINTER(u64), out])
        self._declare("fabric_runtime_invoke", [u64, c_char_p, out])
        self._declare("fabric_runtime_stop", [u64, out])
        self._declare("fabric_runtime_status", [u64, out])
        self._declare("fabric_runtime_resource_snapshot", [u64, out])
        self._declare("fabric_check", [u64, c_char_p, out])
        self._declare_free("fabric_runtime_free")
        self._declare("fabric_environment_prepare", [c_char_p, c_char_p, POINTER(u64), out])
        self._declare(
            "fabric_environment_start_runtime",
            [u64, c_char_p, c_char_p, POINTER(u64), out],
        )
        self._declare("fabric_environment_release", [u64, out])
        self._declare_free("fabric_environment_free")

    def _declare(self, name: str, argtypes: list[Any]) -> None:
        function = getattr(self._lib, name, None)
        if function is None:
            setattr(self, name, _missing(name, self.path))
            return
        function.argtypes = argtypes
        function.restype = c_int32
        function.errcheck = self._errcheck
        setattr(self, name, function)

    def _declare_free(self, name: str) -> None:
        function = getattr(self._lib, name, None)
        if function is None:
            setattr(self, name, _missing(name, self.path))
            return
        function.argtypes = [c_uint64]
        function.restype = c_int32
        setattr(self, name, function)

    def take_string(self, pointer: c_void_p) -> str | None:
        """Copy and release one library-owned string."""

        address = pointer.value
        if not address:
            return None
        try:
            return ctypes.string_at(address).decode("utf-8")
        finally:
            pointer.value = None
            self._lib.fabric_string_free(address)

    def _errcheck(self, status: int, _function: Any, args: tuple[Any, ...]) -> str:
        # The last argument is always `byref(c_void_p())` (the `char **out` slot).
        text = self.take_string(args[-1]._obj)
        if status == STATUS_OK:
            return text if text is not None else "null"
        raise error_from_status(status, text)


def _missing(name: str, path: str) -> Any:
    def call(*_args: Any) -> Any:
        raise FabricNativeUnavailableError(
            f"native library {path} does not export {name}",
            stage="load",
            code="native_symbol_missing",
        )

    return call


def out_slot() -> Any:
    """A fresh ``char **out`` argument."""

    return ctypes.byref(c_void_p())


def encode(value: str | os.PathLike[str] | None) -> bytes | None:
    """Encode an optional text argument as a NUL-terminated UTF-8 string."""

    if value is None:
        return None
    text = os.fspath(value)
    if "\x00" in text:
        raise FabricConfigError("argument must not contain NUL characters", code="invalid_argument")
    return text.encode("utf-8")


def _candidates() -> list[str]:
    override = os.environ.get(LIB_ENV)
    if override:
        return [override]
    here = os.path.dirname(os.path.abspath(__file__))
    found: list[str] = []
    for pattern in ("_native*.so", "_native*.dylib", "_native*.pyd", "libfabric_ffi.*"):
        found.extend(sorted(glob.glob(os.path.join(here, pattern))))
    return found


_lock = threading.Lock()
_library: Library | None = None
_load_error: FabricNativeUnavailableError | None = None


def library() -> Library:
    """Load (once) and return the native library, or raise FabricNativeUnavailableError."""

    global _library, _load_error
    if _library is not None:
        return _library
    with _lock:
        if _library is not None:
            return _library
        if _load_error is not None:
            raise _load_error
        candidates = _candidates()
        if not candidates:
            _load_error = FabricNativeUnavailableError(
                "the Fabric core native library is not installed; reinstall fabric-core "
                f"or set {LIB_ENV} to a built libfabric_ffi",
                stage="load",
                code="native_unavailable",
            )
            raise _load_error
        try:
            _library = Library(candidates[0])
        except FabricNativeUnavailableError as error:
            _load_error = error
            raise
        except OSError as error:
            _load_error = FabricNativeUnavailableError(
                f"failed to load the Fabric core native library from {candidates[0]}: {error}",
                stage="load",
                code="native_unavailable",
            )
            raise _load_error from error
        return _library
