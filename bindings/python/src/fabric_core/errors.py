"""The SDK exception hierarchy.

Every public error inherits from :class:`FabricError` and carries the native ErrorInfo
fields: ``stage`` (lifecycle stage), ``code`` (stable snake_case code), ``retryable`` and
``details`` (the ErrorInfo ``metadata``). The class follows the C ABI status:

=====================================  ==============================================
``FabricConfigError``                  invalid config, request, override or argument
``FabricCapabilityError``              the adapter does not support the operation
``FabricRuntimeError``                 start/invoke/stop failed without a result
``FabricStateError``                   invalid lifecycle transition (overlap, stopped)
``FabricNativeUnavailableError``       native library missing or ABI mismatch
``ResourceObservationUnavailableError``  resource reading failed (subclass of runtime)
``ResourceObservationUnsupportedError``  no resource reader here (subclass of runtime)
``ServiceInUseError``                  release refused: connected runtimes still run
=====================================  ==============================================

The hierarchy matches NeMo Fabric's so ``except`` clauses port unchanged: the state,
capability and native-unavailable errors are subclasses of ``FabricRuntimeError``; the
capability error is also a ``FabricConfigError`` (NeMo Fabric reports planning rejections
as config errors).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


class FabricError(RuntimeError):
    """Base class of every SDK error."""

    def __init__(
        self,
        message: str,
        *,
        stage: str | None = None,
        code: str | None = None,
        retryable: bool = False,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.stage = stage
        self.code = code
        self.retryable = retryable
        self.details: dict[str, Any] = copy.deepcopy(dict(details or {}))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, stage={self.stage!r}, "
            f"code={self.code!r})"
        )


class FabricConfigError(FabricError):
    """Invalid config, request, override or argument."""


class FabricRuntimeError(FabricError):
    """Runtime startup, invocation or shutdown failed before a normalized result."""


class FabricStateError(FabricRuntimeError):
    """Invalid runtime state transition (invoke after stop, overlapping invokes, ...)."""


class FabricCapabilityError(FabricRuntimeError, FabricConfigError):
    """The selected adapter does not support the requested operation or a configured field.

    A subclass of both ``FabricRuntimeError`` (NeMo Fabric's hierarchy) and
    ``FabricConfigError`` (NeMo Fabric's ``plan()``/``inspect_adapter()`` report unaccepted
    fields as config errors), so ``except`` clauses written for either port unchanged.
    """


class ServiceInUseError(FabricRuntimeError):
    """``Service.release()`` was refused: runtimes connected to the service still run
    (code ``service_in_use``, stage ``stop``; ``details["fields"]`` lists their ids). The
    service stays active."""


class FabricNativeUnavailableError(FabricRuntimeError):
    """The native library is not installed, not loadable, or has another ABI version."""


class ResourceObservationUnavailableError(FabricRuntimeError):
    """A runtime resource observation could not be read."""


class ResourceObservationUnsupportedError(FabricRuntimeError):
    """No resource reader exists for this adapter kind, provider or operating system."""


__all__ = [
    "FabricCapabilityError",
    "FabricConfigError",
    "FabricError",
    "FabricNativeUnavailableError",
    "FabricRuntimeError",
    "FabricStateError",
    "ResourceObservationUnavailableError",
    "ResourceObservationUnsupportedError",
    "ServiceInUseError",
]
