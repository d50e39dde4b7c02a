"""Typed, immutable result models decoded from the native JSON.

Every model is a read-only ``Mapping`` with attribute access (``result.status`` and
``result["status"]``). Unknown fields are kept (visible through ``extra_fields`` and
``to_mapping()``) so newer cores do not break older bindings. Nested JSON objects are
read-only (``MappingProxyType``) and lists are tuples; ``to_mapping()`` returns a detached,
mutable, JSON-compatible copy.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

_T = TypeVar("_T", bound="FabricMapping")


_SCALARS = (str, int, float, bool, type(None))


def _freeze(value: Any) -> Any:
    # Exact type checks first: decoded JSON is plain dict/list/scalars, and ABC
    # isinstance checks dominate decoding time otherwise.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if kind is list or kind is tuple:
        return tuple([_freeze(item) for item in value])
    if isinstance(value, FabricMapping):
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, FabricMapping):
        return value.to_mapping()
    if isinstance(value, Mapping):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return copy.deepcopy(value)


class FabricMapping(Mapping[str, Any]):
    """Immutable mapping-compatible base of results and snapshots."""

    #: Field names this model knows (others are extension fields).
    _fields: ClassVar[frozenset[str]] = frozenset()
    #: Known fields that default to ``None`` when absent.
    _optional: ClassVar[frozenset[str]] = frozenset()

    # `_data` holds the normalized values as decoded (private: copied from callers'
    # mappings, or JSON decoded by the binding); read-only views are built lazily on first
    # access and cached in `_views`, so decoding large results and plans stays cheap.
    __slots__ = ("_data", "_views")

    def __init__(self, mapping: Mapping[str, Any]) -> None:
        if not isinstance(mapping, Mapping):
            raise TypeError(f"{type(self).__name__} requires a mapping")
        self._init(copy.deepcopy(dict(mapping)))

    def _init(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", self._normalize(data))
        object.__setattr__(self, "_views", {})

    @classmethod
    def from_mapping(cls: type[_T], mapping: Mapping[str, Any]) -> _T:
        """Decode a mapping into this model (unknown keys are kept; the input is copied)."""

        if isinstance(mapping, cls):
            return mapping
        return cls(mapping)

    @classmethod
    def _from_json(cls: type[_T], data: Any) -> _T:
        """Wrap a freshly decoded JSON object without copying it (binding-internal)."""

        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__} requires a JSON object")
        model = cls.__new__(cls)
        model._init(data)
        return model

    @classmethod
    def _wrap(cls: type[_T], value: Mapping[str, Any]) -> _T:
        """Nested conversion inside ``_normalize`` (the data is already private)."""

        if isinstance(value, cls):
            return value
        if type(value) is dict:
            return cls._from_json(value)
        return cls(value)

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def __getitem__(self, key: str) -> Any:
        views = self._views
        try:
            return views[key]
        except KeyError:
            view = _freeze(self._data[key])
            views[key] = view
            return view

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_data", "_views"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            if name in self._fields:
                return None
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_mapping()!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FabricMapping):
            return self.to_mapping() == other.to_mapping()
        if isinstance(other, Mapping):
            return self.to_mapping() == _thaw(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def extra_fields(self) -> Mapping[str, Any]:
        """Fields this binding does not know (kept from newer cores)."""

        return MappingProxyType(
            {key: _thaw(value) for key, value in self._data.items() if key not in self._fields}
        )

    def to_mapping(self) -> dict[str, Any]:
        """A detached, JSON-compatible copy."""

        return {key: _thaw(value) for key, value in self._data.items()}

    def to_dict(self) -> dict[str, Any]:
        """Same as ``to_mapping()``."""

        return self.to_mapping()


class ErrorInfo(FabricMapping):
    """A structured error: ``stage``, ``code``, ``message``, ``retryable``, ``metadata``."""

    _fields = frozenset({"stage", "code", "message", "retryable", "metadata"})

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("retryable", False)
        data.setdefault("metadata", {})
        return data


class RunOutput(FabricMapping):
    """Adapter output object; ``response`` is the common response field."""

    _fields = frozenset({"response"})

    @property
    def response(self) -> Any:
        """The ``response`` value, or ``None`` when absent."""

        return self["response"] if "response" in self._data else None


class RunUsage(FabricMapping):
    """Invocation-local usage. Missing counters are unknown (``None``), never zero."""

    _fields = frozenset(
        {
            "input_tokens",
            "cached_input_tokens",
            "input_tokens_include_cache",
            "output_tokens",
            "total_tokens",
            "cost_usd",
            "metadata",
        }
    )

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("metadata", {})
        return data


class ArtifactRef(FabricMapping):
    """One artifact: ``name``, ``kind``, ``path``, ``media_type``, ``metadata``."""

    _fields = frozenset({"name", "kind", "path", "media_type", "metadata"})


class ArtifactManifest(FabricMapping):
    """An artifact manifest: optional ``root`` and ordered ``artifacts``."""

    _fields = frozenset({"root", "artifacts"})

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data["artifacts"] = tuple(
            ArtifactRef._wrap(item) if isinstance(item, Mapping) else item
            for item in data.get("artifacts") or ()
        )
        return data


class TelemetryRef(FabricMapping):
    """A telemetry reference: ``provider``, ``kind``, ``uri``, ``trace_id``, ``metadata``."""

    _fields = frozenset({"provider", "kind", "uri", "trace_id", "metadata", "relay_enabled"})


class FabricEvent(FabricMapping):
    """One lifecycle or invocation event."""

    _fields = frozenset({"event_id", "timestamp_millis", "kind", "message", "metadata"})

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("metadata", {})
        return data


class RuntimeResourceSnapshot(FabricMapping):
    """One reading of a runtime's process tree (the local adapter host and descendants).

    ``runtime_id``, ``started_at`` and ``observed_at`` (RFC 3339 UTC),
    ``resident_memory_bytes`` (sum over live processes), ``process_count`` (live processes,
    the host included) and ``cpu_time_seconds`` (since the host started, exited
    descendants included).
    """

    _fields = frozenset(
        {
            "runtime_id",
            "started_at",
            "observed_at",
            "resident_memory_bytes",
            "process_count",
            "cpu_time_seconds",
        }
    )


class ResourceObservation(FabricMapping):
    """An endpoint observation of invocation stats.

    ``status`` is ``available`` (``snapshot`` set), ``unavailable`` or ``unsupported``
    (``reason`` set) or ``not_collected`` (the ``process`` group was not selected).
    Missing values are never zeros.
    """

    _fields = frozenset({"status", "snapshot", "reason"})

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        snapshot = data.get("snapshot")
        if isinstance(snapshot, Mapping):
            data["snapshot"] = RuntimeResourceSnapshot._wrap(snapshot)
        return data

    @property
    def available(self) -> bool:
        """``status == "available"``."""

        return self._data.get("status") == "available"


class GaugeSummary(FabricMapping):
    """Sampled reductions of one gauge: ``sampled_peak``, ``min``, ``max``,
    ``time_weighted_mean`` (hold-last), ``final``, ``observations``,
    ``covered_seconds``, ``covered_fraction``."""

    _fields = frozenset(
        {
            "observations",
            "final",
            "sampled_peak",
            "min",
            "max",
            "time_weighted_mean",
            "covered_seconds",
            "covered_fraction",
        }
    )


class SampledStats(FabricMapping):
    """Periodic sampling during one invocation (``system_stats.sampled``).

    Gauges (``resident_memory_bytes``, ``process_count``, ``cgroup_memory_current_bytes``)
    are :class:`GaugeSummary` or ``None`` when not collected; ``samples`` and ``summary``
    reference the ``system-stats.jsonl`` and ``system-stats-summary.json`` artifacts.
    """

    _fields = frozenset(
        {
            "interval_ms",
            "max_samples",
            "retained_samples",
            "dropped_samples",
            "truncated",
            "collection_seconds",
            "largest_gap_seconds",
            "span_seconds",
            "resident_memory_bytes",
            "process_count",
            "cgroup_memory_current_bytes",
            "cpu_time_seconds",
            "diagnostics",
            "samples",
            "summary",
        }
    )

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        for name in ("resident_memory_bytes", "process_count", "cgroup_memory_current_bytes"):
            value = data.get(name)
            if isinstance(value, Mapping):
                data[name] = GaugeSummary._wrap(value)
        for name in ("samples", "summary"):
            value = data.get(name)
            if isinstance(value, Mapping):
                data[name] = ArtifactRef._wrap(value)
        return data


class InvocationSystemStats(FabricMapping):
    """Process and cgroup measurements around one invocation (``RunResult.system_stats``).

    ``elapsed_seconds`` (monotonic, the adapter exchange only), ``before``/``after``
    (:class:`ResourceObservation`), ``cpu_time_seconds_estimate`` (``None`` when it cannot
    be derived), ``collected_groups``, ``cgroup`` (before/after/deltas of the host's cgroup,
    a read-only mapping, or ``None``) and ``sampled`` (:class:`SampledStats` or ``None``).
    Unknown fields from newer cores are kept.
    """

    _fields = frozenset(
        {
            "elapsed_seconds",
            "before",
            "after",
            "cpu_time_seconds_estimate",
            "collected_groups",
            "cgroup",
            "sampled",
        }
    )

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        for name in ("before", "after"):
            value = data.get(name)
            if isinstance(value, Mapping):
                data[name] = ResourceObservation._wrap(value)
        sampled = data.get("sampled")
        if isinstance(sampled, Mapping):
            data["sampled"] = SampledStats._wrap(sampled)
        return data


class CheckObservation(FabricMapping):
    """One health observation that ran: ``level``, ``outcome``, ``reason``,
    ``source_id`` (fixed evidence source), ``observed_at`` (RFC 3339 UTC)."""

    _fields = frozenset({"level", "outcome", "reason", "source_id", "observed_at"})


class CheckReport(FabricMapping):
    """An immutable health-check report (``fabric.check/v1alpha1``).

    ``outcome`` is ``passed``, ``failed``, ``unknown`` or ``unsupported`` with a snake_case
    ``reason`` (``None`` when passed); ``checks`` lists the observations that ran, in
    order (:class:`CheckObservation`); ``target`` holds ``runtime_id``/``service_id``;
    ``started_at``/``finished_at`` are UTC, ``elapsed_ms`` monotonic; ``activity`` is
    ``idle``/``busy`` (``None`` when unknown).
    """

    _fields = frozenset(
        {
            "schema_version",
            "scope",
            "target",
            "level",
            "outcome",
            "reason",
            "checks",
            "started_at",
            "finished_at",
            "elapsed_ms",
            "activity",
        }
    )

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data["checks"] = tuple(
            CheckObservation._wrap(item) if isinstance(item, Mapping) else item
            for item in data.get("checks") or ()
        )
        return data

    @property
    def passed(self) -> bool:
        """``outcome == "passed"``."""

        return self._data.get("outcome") == "passed"


class RunResult(FabricMapping):
    """The normalized outcome of one invocation.

    Check ``status`` (``succeeded``, ``failed``, ``cancelled``) and ``error`` before reading
    ``output``. ``runtime_id``, ``invocation_id`` and ``request_id`` correlate the result.
    """

    _fields = frozenset(
        {
            "agent_name",
            "harness",
            "adapter_kind",
            "adapter_id",
            "runtime_id",
            "invocation_id",
            "request_id",
            "status",
            "output",
            "error",
            "usage",
            "artifacts",
            "telemetry",
            "events",
            "metadata",
            "system_stats",
            "resource_snapshot",
        }
    )

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        error = data.get("error")
        data["error"] = ErrorInfo._wrap(error) if isinstance(error, Mapping) else None
        usage = data.get("usage")
        data["usage"] = RunUsage._wrap(usage) if isinstance(usage, Mapping) else None
        artifacts = data.get("artifacts")
        if isinstance(artifacts, Mapping):
            data["artifacts"] = ArtifactManifest._wrap(artifacts)
        else:
            data["artifacts"] = ArtifactManifest._wrap({"artifacts": artifacts or []})
        telemetry = data.get("telemetry")
        if telemetry is None:
            data["telemetry"] = ()
        elif isinstance(telemetry, Mapping):
            data["telemetry"] = (TelemetryRef._wrap(telemetry),)
        else:
            data["telemetry"] = tuple(
                TelemetryRef._wrap(item) if isinstance(item, Mapping) else item
                for item in telemetry
            )
        data["events"] = tuple(
            FabricEvent._wrap(item) if isinstance(item, Mapping) else item
            for item in data.get("events") or ()
        )
        data.setdefault("metadata", {})
        output = data.get("output")
        if isinstance(output, Mapping):
            data["output"] = RunOutput._wrap(output)
        # Absent stays absent (attribute access still gives None): to_mapping() round-trips.
        stats = data.get("system_stats")
        if isinstance(stats, Mapping):
            data["system_stats"] = InvocationSystemStats._wrap(stats)
        snapshot = data.get("resource_snapshot")
        if isinstance(snapshot, Mapping):
            data["resource_snapshot"] = RuntimeResourceSnapshot._wrap(snapshot)
        return data

    @property
    def succeeded(self) -> bool:
        """``status == "succeeded"``."""

        return self._data.get("status") == "succeeded"


class RuntimeCapabilities(FabricMapping):
    """Optional runtime operations declared by the adapter."""

    _fields = frozenset({"cancellation", "service", "streaming", "updates", "metadata"})


class AdapterInfo(FabricMapping):
    """A resolved adapter descriptor (``RunPlan.adapter``)."""

    _fields = frozenset({"adapter_id", "adapter_kind", "contract_version", "capabilities", "runner"})


class RunPlan(FabricMapping):
    """The resolved execution plan (canonical config, adapter, capabilities)."""

    _fields = frozenset(
        {
            "agent_name",
            "base_dir",
            "config",
            "agent_config",
            "capabilities",
            "adapter_descriptor",
            "adapter_target_descriptor",
            "capability_plan",
            "environment_plan",
            "resolution",
            "telemetry_plan",
            "adapter",
        }
    )

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        capabilities = data.get("capabilities")
        if isinstance(capabilities, Mapping):
            data["capabilities"] = RuntimeCapabilities._wrap(capabilities)
        return data

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


class DoctorCheck(FabricMapping):
    """One diagnostic check: ``name``, ``status``, ``message``, ``metadata``."""

    _fields = frozenset({"name", "status", "message", "metadata"})


class DoctorReport(FabricMapping):
    """Preflight diagnostics: aggregate ``status`` and ordered ``checks``."""

    _fields = frozenset({"agent_name", "status", "checks"})

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        data["checks"] = tuple(
            DoctorCheck._wrap(item) if isinstance(item, Mapping) else item
            for item in data.get("checks") or ()
        )
        return data


class RuntimeHandle(FabricMapping):
    """Identity of one started runtime (``runtime_id``, adapter, environment)."""

    _fields = frozenset(
        {
            "runtime_id",
            "runtime_binding",
            "agent_name",
            "harness",
            "adapter_kind",
            "adapter_id",
            "environment",
            "service_id",
        }
    )


class AdapterCapabilityProfile(FabricMapping):
    """Declared support of an adapter for a config (from ``inspect_adapter``)."""

    _fields = frozenset({"adapter_id", "descriptor_sha256", "skills", "mcp", "atif"})


__all__ = [
    "AdapterCapabilityProfile",
    "AdapterInfo",
    "ArtifactManifest",
    "ArtifactRef",
    "CheckObservation",
    "CheckReport",
    "GaugeSummary",
    "InvocationSystemStats",
    "ResourceObservation",
    "RuntimeResourceSnapshot",
    "SampledStats",
    "DoctorCheck",
    "DoctorReport",
    "ErrorInfo",
    "FabricEvent",
    "FabricMapping",
    "RunOutput",
    "RunPlan",
    "RunResult",
    "RunUsage",
    "RuntimeCapabilities",
    "RuntimeHandle",
    "TelemetryRef",
]
