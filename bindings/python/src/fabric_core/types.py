"""Typed, immutable result models decoded from the native JSON.

The fields of every model are generated from the Rust types (``fabric_core._generated``,
written by ``cargo xtask codegen``); this module adds behaviour only: convenience
properties, empty collections for absent members, and tolerance of older result shapes.
Every model is a read-only ``Mapping`` with attribute access (see
:class:`fabric_core._mapping.FabricMapping`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabric_core import _generated as _g
from fabric_core._mapping import FabricMapping, _thaw, register


def _empty_metadata(data: dict[str, Any]) -> dict[str, Any]:
    data.setdefault("metadata", {})
    return data


@register
class ErrorInfo(_g.ErrorInfo):
    __doc__ = _g.ErrorInfo.__doc__
    __slots__ = ()

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("retryable", False)
        return _empty_metadata(super()._normalize(data))


class RunOutput(FabricMapping):
    """Adapter output object (free-form); ``response`` is the common response member."""

    __slots__ = ()

    @property
    def response(self) -> Any:
        """The ``response`` value, or ``None`` when absent."""

        return self["response"] if "response" in self._data else None


@register
class RunUsage(_g.RunUsage):
    __doc__ = _g.RunUsage.__doc__
    __slots__ = ()

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _empty_metadata(super()._normalize(data))


ArtifactRef = _g.ArtifactRef


@register
class ArtifactManifest(_g.ArtifactManifest):
    __doc__ = _g.ArtifactManifest.__doc__
    __slots__ = ()

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("artifacts", [])
        return super()._normalize(data)


TelemetryRef = _g.TelemetryRef


@register
class FabricEvent(_g.FabricEvent):
    __doc__ = _g.FabricEvent.__doc__
    __slots__ = ()

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _empty_metadata(super()._normalize(data))


RuntimeResourceSnapshot = _g.RuntimeResourceSnapshot


@register
class ResourceObservation(_g.Observation):
    __doc__ = _g.Observation.__doc__
    __slots__ = ()

    @property
    def available(self) -> bool:
        """``status == "available"``."""

        return self._data.get("status") == "available"


GaugeSummary = _g.GaugeSummary
SampledStats = _g.SampledStats
InvocationSystemStats = _g.InvocationSystemStats
CheckObservation = _g.CheckObservation


@register
class CheckReport(_g.CheckReport):
    __doc__ = _g.CheckReport.__doc__
    __slots__ = ()

    @property
    def passed(self) -> bool:
        """``outcome == "passed"``."""

        return self._data.get("outcome") == "passed"


@register
class RunResult(_g.RunResult):
    __doc__ = _g.RunResult.__doc__
    __slots__ = ()

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        # Shapes of other Fabric versions are accepted: a bare artifact list, and telemetry
        # as one reference (read as a one-item tuple) or absent.
        artifacts = data.get("artifacts")
        if not isinstance(artifacts, Mapping):
            data["artifacts"] = {"artifacts": artifacts or []}
        telemetry = data.get("telemetry")
        data["telemetry"] = [telemetry] if isinstance(telemetry, Mapping) else telemetry or []
        data.setdefault("events", [])
        data.setdefault("error", None)
        data.setdefault("usage", None)
        data = super()._normalize(_empty_metadata(data))
        output = data.get("output")
        if isinstance(output, Mapping):
            data["output"] = RunOutput._wrap(output)
        return data

    @property
    def succeeded(self) -> bool:
        """``status == "succeeded"``."""

        return self._data.get("status") == "succeeded"

    def model_call_records(self) -> tuple[_g.ModelCallRecord, ...]:
        """The invocation's captured model calls (a run started with
        ``capture_model_calls=True``), read from ``model_calls.path``, one
        ``ModelCallRecord`` per line of ``model-calls.jsonl``; empty when none was
        recorded or capture was off."""

        summary = self._data.get("model_calls")
        path = summary.get("path") if isinstance(summary, Mapping) else None
        if not path:
            return ()
        with open(path, encoding="utf-8") as lines:
            return tuple(
                _g.ModelCallRecord._from_json(json.loads(line)) for line in lines if line.strip()
            )


RuntimeCapabilities = _g.RuntimeCapabilities


class AdapterInfo(FabricMapping):
    """A resolved adapter descriptor (``RunPlan.adapter``): the descriptor's own members."""

    __slots__ = ()


@register
class RunPlan(_g.RunPlan):
    __doc__ = _g.RunPlan.__doc__
    __slots__ = ()

    @property
    def adapter(self) -> Mapping[str, Any] | None:
        """The selected adapter descriptor (``adapter_descriptor.descriptor``)."""

        if self._data.get("adapter") is not None:
            return self["adapter"]
        resolved = self["adapter_descriptor"] if "adapter_descriptor" in self._data else None
        if isinstance(resolved, Mapping) and isinstance(resolved.get("descriptor"), Mapping):
            return AdapterInfo.from_mapping(_thaw(resolved["descriptor"]))
        return None

    @property
    def adapter_id(self) -> str | None:
        """The selected adapter id."""

        adapter = self.adapter
        return adapter.get("adapter_id") if isinstance(adapter, Mapping) else None

    @property
    def base_dir_path(self) -> Path | None:
        """``base_dir`` as a ``Path``."""

        value = self._data.get("base_dir")
        return None if value is None else Path(value)

    def fabric_config(self) -> Any:
        """The canonical config as a typed ``FabricConfig``."""

        from fabric_core.models import FabricConfig

        return FabricConfig.from_mapping(_thaw(self._data.get("config") or {}))


DoctorCheck = _g.DoctorCheck
DoctorReport = _g.DoctorReport
ConformanceReport = _g.ConformanceReport
ConformanceCheck = _g.ConformanceCheck
RuntimeInfo = _g.RuntimeInfo
#: NeMo Fabric's name for a started runtime's identity.
RuntimeHandle = RuntimeInfo
RuntimeStatusInfo = _g.RuntimeStatusInfo
PrewarmInfo = _g.PrewarmInfo
EnvironmentInfo = _g.EnvironmentInfo
EnvironmentReference = _g.EnvironmentReference
#: The result of ``EnvironmentHandle.exec`` (the provider protocol's ``ExecOutput``).
ExecResult = _g.ExecOutput
FileContent = _g.FileContent
FileEntry = _g.FileEntry
FileListing = _g.FileListing
ServiceHandle = _g.ServiceHandle
ServiceInfo = _g.ServiceInfo
ServiceReference = _g.ServiceReference
RuntimeStopResult = _g.RuntimeStopResult
AdapterCapabilityProfile = _g.AdapterCapabilityProfile


__all__ = [
    "AdapterCapabilityProfile",
    "AdapterInfo",
    "ArtifactManifest",
    "ArtifactRef",
    "CheckObservation",
    "CheckReport",
    "ConformanceCheck",
    "ConformanceReport",
    "DoctorCheck",
    "DoctorReport",
    "EnvironmentInfo",
    "EnvironmentReference",
    "ExecResult",
    "FileContent",
    "FileEntry",
    "FileListing",
    "ServiceHandle",
    "ServiceInfo",
    "ServiceReference",
    "ErrorInfo",
    "FabricEvent",
    "FabricMapping",
    "GaugeSummary",
    "InvocationSystemStats",
    "ResourceObservation",
    "RunOutput",
    "PrewarmInfo",
    "RunPlan",
    "RunResult",
    "RunUsage",
    "RuntimeCapabilities",
    "RuntimeHandle",
    "RuntimeInfo",
    "RuntimeResourceSnapshot",
    "RuntimeStatusInfo",
    "RuntimeStopResult",
    "SampledStats",
    "TelemetryRef",
]
