"""Private ctypes layer: loads the Fabric core C library and declares every symbol.

Nothing here is public API. The ctypes types of each function are generated from
``include/fabric.h`` into ``_prototypes``; this module adds the behaviour. Every fallible native function returns an ``int32_t`` status and
writes one JSON string to ``char **out``; that string is read with ``ctypes.string_at`` and
released with ``fabric_string_free`` (never ``free``). ``errcheck`` turns a non-zero status
into the matching :mod:`fabric_core.errors` class. ``CDLL`` releases the GIL during calls, so
blocking calls run concurrently from worker threads.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from ctypes import c_int32, c_uint64, c_void_p
from typing import Any

from fabric_core import _generated, errors
from fabric_core._codes import Code
from fabric_core._generated import (  # the C ABI statuses, re-exported for the other modules
    ABI_VERSION,
    STATUS_CAPABILITY,
    STATUS_CONFIG,
    STATUS_END,
    STATUS_INTERNAL,
    STATUS_INVALID_ARGUMENT,
    STATUS_OK,
    STATUS_RESOURCE_UNAVAILABLE,
    STATUS_RESOURCE_UNSUPPORTED,
    STATUS_RUNTIME,
    STATUS_STATE,
    STATUS_TIMEOUT,
)
from fabric_core._prototypes import PROTOTYPES
from fabric_core.errors import FabricConfigError, FabricError, FabricNativeUnavailableError

#: Environment variable naming a prebuilt ``libfabric_ffi`` to load instead of the bundled one.
LIB_ENV = "FABRIC_CORE_LIB"


def _exception(class_key: str | None) -> type[FabricError]:
    if class_key is None:
        return FabricError
    cls: type[FabricError] = getattr(errors, _generated.CLASS_EXCEPTIONS[class_key])
    return cls


def error_from_status(status: int, text: str | None) -> FabricError:
    """Build the SDK exception for a failed native call from its ErrorInfo JSON.

    The class follows the generated status table; a code may override it (handle errors
    are state errors).
    """

    info: dict[str, Any] = {}
    if text:
        try:
            decoded = json.loads(text)
            if isinstance(decoded, dict):
                info = decoded
        except ValueError:
            info = {}
    code = info.get("code")
    registered = _generated.ERROR_CODES.get(code) if isinstance(code, str) else None
    override = registered[2] if registered is not None else None
    cls = _exception(override or _generated.STATUS_CLASSES.get(status))
    if code == Code.SERVICE_IN_USE:
        cls = errors.ServiceInUseError
    message = info.get("message") or f"native call failed with status {status}"
    return cls(
        str(message),
        stage=info.get("stage"),
        code=code if isinstance(code, str) else None,
        retryable=bool(info.get("retryable", False)),
        details=info.get("metadata") if isinstance(info.get("metadata"), dict) else None,
    )


#: Calls whose failure status raises (``errcheck``) and that return their ``*out`` text. A
#: library without one still loads; calling it raises FabricNativeUnavailableError.
_CHECKED = (
    "fabric_validate",
    "fabric_plan",
    "fabric_doctor",
    "fabric_inspect",
    "fabric_gym_observations",
    "fabric_gym_join_model_calls",
    "fabric_gym_join_assistant_messages",
    "fabric_adapter_check",
    "fabric_run",
    "fabric_runtime_start",
    "fabric_runtime_invoke",
    "fabric_runtime_stop",
    "fabric_runtime_status",
    "fabric_runtime_resource_snapshot",
    "fabric_check",
    "fabric_environment_prepare",
    "fabric_environment_attach",
    "fabric_environment_start_runtime",
    "fabric_environment_release",
    "fabric_environment_exec",
    "fabric_environment_write_file",
    "fabric_environment_read_file",
    "fabric_environment_list",
    "fabric_service_prepare",
    "fabric_service_attach",
    "fabric_service_start_runtime",
    "fabric_service_release",
    "fabric_service_info",
    "fabric_runtime_invoke_openai_stream",
    "fabric_runtime_invoke_stream",
    "fabric_stream_result",
    "fabric_prewarm_start",
    "fabric_prewarm_status",
    "fabric_prewarm_close",
    # Non-blocking operations (`fabric_..._begin`, `fabric_operation_*`).
    "fabric_runtime_invoke_begin",
    "fabric_run_begin",
    "fabric_runtime_start_begin",
    "fabric_runtime_stop_begin",
    "fabric_operation_ready_fd",
    "fabric_completion_queue_new",
    "fabric_completion_queue_fd",
    "fabric_batch_start",
)

#: Calls that return a status and no ``*out`` (frees, close, cancel): callers read the status.
_STATUS_ONLY = (
    "fabric_runtime_free",
    "fabric_environment_free",
    "fabric_service_free",
    "fabric_stream_close",
    "fabric_stream_free",
    "fabric_operation_cancel",
    "fabric_operation_free",
    "fabric_completion_queue_free",
    "fabric_prewarm_free",
    "fabric_batch_close",
    "fabric_batch_cancel",
    "fabric_batch_free",
)


class Library:
    """The loaded native library with every symbol declared.

    Argument and result types come from ``_prototypes`` (generated from ``include/fabric.h``);
    this class adds the behaviour: which calls raise, which may be missing from an older
    library, and how library strings are read and freed.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        lib = ctypes.CDLL(path)
        self._lib = lib
        for name in ("fabric_version", "fabric_abi_version", "fabric_string_free"):
            self._typed(name)

        abi = lib.fabric_abi_version()
        if abi != ABI_VERSION:
            raise FabricNativeUnavailableError(
                f"native library {path} has C ABI version {abi}, "
                f"this package requires {ABI_VERSION}",
                stage="config",
                code=Code.ABI_VERSION_MISMATCH,
            )
        self.version: str = lib.fabric_version().decode("utf-8")

        for name in _CHECKED:
            self._declare(name)
        for name in _STATUS_ONLY:
            self._declare_status(name)
        # Pulls whose END and TIMEOUT are answers, not errors: called through the methods
        # below, which raise (or, for the stream descriptor, answer None) when the library
        # lacks them.
        self._stream_next = self._typed("fabric_stream_next")
        self._stream_next_batch = self._typed("fabric_stream_next_batch")
        self._stream_ready_fd = self._typed("fabric_stream_ready_fd")
        self._operation_take = self._typed("fabric_operation_take")
        self._queue_next = self._typed("fabric_completion_queue_next")
        self._batch_push = self._typed("fabric_batch_push")
        self._batch_next = self._typed("fabric_batch_next")
        self._batch_next_lines = self._typed("fabric_batch_next_lines")
        self._batch_ready_fd = self._typed("fabric_batch_ready_fd")
        self._batch_summary = self._typed("fabric_batch_summary")
        #: Whether the library has the non-blocking calls.
        self.has_operations = self._operation_take is not None and self._queue_next is not None

    def completion_queue_next(self, queue: int) -> int | None:
        """The next finished operation of a completion queue, or ``None`` (never waits)."""

        if self._queue_next is None:
            raise FabricNativeUnavailableError(
                f"native library {self.path} does not export fabric_completion_queue_next",
                stage="config",
                code=Code.NATIVE_SYMBOL_MISSING,
            )
        operation = c_uint64(0)
        slot = c_void_p()
        status = self._queue_next(queue, ctypes.byref(operation), ctypes.byref(slot))
        text = self.take_string(slot)
        if status == STATUS_OK:
            return operation.value
        if status == STATUS_TIMEOUT:
            return None
        raise error_from_status(status, text)

    def operation_ready_fd(self, handle: int) -> int:
        """The operation's readiness descriptor (owned by the operation: never closed here)."""

        fd = c_int32(-1)
        self.fabric_operation_ready_fd(handle, ctypes.byref(fd), out_slot())
        return fd.value

    def operation_take(self, handle: int) -> tuple[int, str | None]:
        """Take an operation's outcome without waiting: ``(STATUS_OK, json)``,
        ``(STATUS_TIMEOUT, None)`` while it runs, ``(STATUS_END, None)`` once taken or
        cancelled; the outcome's error status raises its SDK exception."""

        if self._operation_take is None:
            raise FabricNativeUnavailableError(
                f"native library {self.path} does not export fabric_operation_take",
                stage="config",
                code=Code.NATIVE_SYMBOL_MISSING,
            )
        slot = c_void_p()
        status = self._operation_take(handle, ctypes.byref(slot))
        text = self.take_string(slot)
        if status in (STATUS_OK, STATUS_END, STATUS_TIMEOUT):
            return status, text
        raise error_from_status(status, text)

    def stream_next(self, handle: int, timeout_ms: int) -> tuple[int, str | None]:
        """Pull one stream item: ``(STATUS_OK, json)``, ``(STATUS_END, None)`` or
        ``(STATUS_TIMEOUT, None)``; an error status raises its SDK exception."""

        if self._stream_next is None:
            raise FabricNativeUnavailableError(
                f"native library {self.path} does not export fabric_stream_next",
                stage="config",
                code=Code.NATIVE_SYMBOL_MISSING,
            )
        slot = c_void_p()
        status = self._stream_next(handle, timeout_ms, ctypes.byref(slot))
        text = self.take_string(slot)
        if status in (STATUS_OK, STATUS_END, STATUS_TIMEOUT):
            return status, text
        raise error_from_status(status, text)

    def stream_next_batch(self, handle: int, timeout_ms: int) -> tuple[int, str | None]:
        """Pull every ready stream item: ``(STATUS_OK, json_array)``, ``(STATUS_END, None)``
        or ``(STATUS_TIMEOUT, None)``; an error status raises its SDK exception. A zero
        timeout never blocks (TIMEOUT until a waiting pull finished the stream)."""

        if self._stream_next_batch is None:
            raise FabricNativeUnavailableError(
                f"native library {self.path} does not export fabric_stream_next_batch",
                stage="config",
                code=Code.NATIVE_SYMBOL_MISSING,
            )
        slot = c_void_p()
        status = self._stream_next_batch(handle, timeout_ms, 0, ctypes.byref(slot))
        text = self.take_string(slot)
        if status in (STATUS_OK, STATUS_END, STATUS_TIMEOUT):
            return status, text
        raise error_from_status(status, text)

    def batch_push(self, handle: int, item: bytes, timeout_ms: int) -> int:
        """Queue one item line: ``STATUS_OK``, ``STATUS_TIMEOUT`` (queue full) or
        ``STATUS_END`` (input closed); an error status raises its SDK exception."""

        return self._pull("fabric_batch_push", self._batch_push, handle, item, timeout_ms)[0]

    def batch_next(self, handle: int, timeout_ms: int) -> tuple[int, str | None]:
        """The next finished line: ``(STATUS_OK, json)``, ``(STATUS_END, None)`` or
        ``(STATUS_TIMEOUT, None)``."""

        return self._pull("fabric_batch_next", self._batch_next, handle, timeout_ms)

    def batch_next_lines(self, handle: int, timeout_ms: int) -> tuple[int, str | None]:
        """Every finished line ready now: ``(STATUS_OK, json_array)``, ``(STATUS_END, None)``
        or ``(STATUS_TIMEOUT, None)``; a zero timeout never blocks."""

        return self._pull(
            "fabric_batch_next_lines", self._batch_next_lines, handle, timeout_ms, 0
        )

    def batch_ready_fd(self, handle: int) -> int | None:
        """The batch's readiness descriptor (owned by the batch; never closed here), or
        ``None`` when the library has none."""

        return self._descriptor(self._batch_ready_fd, handle)

    def batch_summary(self, handle: int, timeout_ms: int) -> tuple[int, str | None]:
        """The summary of an ended batch: ``(STATUS_OK, json)`` or ``(STATUS_TIMEOUT, None)``."""

        return self._pull("fabric_batch_summary", self._batch_summary, handle, timeout_ms)

    def _pull(self, name: str, function: Any, *args: Any) -> tuple[int, str | None]:
        """Call ``function(*args, out)`` whose END and TIMEOUT are answers, not errors."""

        if function is None:
            raise FabricNativeUnavailableError(
                f"native library {self.path} does not export {name}",
                stage="config",
                code=Code.NATIVE_SYMBOL_MISSING,
            )
        slot = c_void_p()
        status = function(*args, ctypes.byref(slot))
        text = self.take_string(slot)
        if status in (STATUS_OK, STATUS_END, STATUS_TIMEOUT):
            return status, text
        raise error_from_status(status, text)

    def stream_ready_fd(self, handle: int) -> int | None:
        """The stream's readiness descriptor (owned by the stream; never closed here), or
        ``None`` when the library or the platform has none."""

        return self._descriptor(self._stream_ready_fd, handle)

    def _descriptor(self, function: Any, handle: int) -> int | None:
        """``function(handle, &fd, &out)``'s descriptor, or ``None`` when the library lacks
        ``function`` or it answered an error."""

        if function is None:
            return None
        fd = c_int32(-1)
        slot = c_void_p()
        status = function(handle, ctypes.byref(fd), ctypes.byref(slot))
        self.take_string(slot)
        return fd.value if status == STATUS_OK and fd.value >= 0 else None

    def _typed(self, name: str) -> Any:
        """The library's ``name`` with the header's types, or ``None`` when the library lacks
        it. A name the header does not declare is a KeyError: a bug of this module."""

        restype, argtypes = PROTOTYPES[name]
        function = getattr(self._lib, name, None)
        if function is not None:
            function.restype = restype
            function.argtypes = argtypes
        return function

    def _declare(self, name: str) -> None:
        function = self._typed(name)
        if function is None:
            setattr(self, name, _missing(name, self.path))
            return
        function.errcheck = self._errcheck
        setattr(self, name, function)

    def _declare_status(self, name: str) -> None:
        function = self._typed(name)
        setattr(self, name, _missing(name, self.path) if function is None else function)

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
            stage="config",
            code=Code.NATIVE_SYMBOL_MISSING,
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
        raise FabricConfigError("argument must not contain NUL characters", code=Code.INVALID_ARGUMENT)
    return text.encode("utf-8")


#: The one file name of the bundled library (``setup.py`` writes it under this name).
LIBRARY_NAME = "libfabric_ffi.dylib" if sys.platform == "darwin" else "libfabric_ffi.so"


def _candidates(package_dir: str | None = None) -> list[str]:
    """The library to load: ``$FABRIC_CORE_LIB``, else the package's ``LIBRARY_NAME``.

    Exactly one name is looked at, so a stale library left in the package directory by
    another build (e.g. an old ``_native*.so``) is never the one loaded.
    """

    override = os.environ.get(LIB_ENV)
    if override:
        return [override]
    here = package_dir or os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, LIBRARY_NAME)
    return [bundled] if os.path.isfile(bundled) else []


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
                stage="config",
                code=Code.NATIVE_LIBRARY_MISSING,
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
                stage="config",
                code=(
                    Code.NATIVE_LIBRARY_UNLOADABLE
                    if os.path.exists(candidates[0])
                    else Code.NATIVE_LIBRARY_MISSING
                ),
            )
            raise _load_error from error
        return _library
