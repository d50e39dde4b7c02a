"""Python binding of the Fabric core (NeMo Fabric compatible SDK).

Porting from NeMo Fabric is an import change (the models carry Pydantic's ``model_*``
methods without Pydantic; docs/python.md lists what differs)::

    from fabric_core import Fabric, FabricConfig, HarnessConfig, MetadataConfig

    config = FabricConfig(
        metadata=MetadataConfig(name="hello"),
        harness=HarnessConfig(adapter_id="fabric.scripted"),
    )
    result = await Fabric().run(config, input="Hello")

The package loads the bundled native library (``fabric_core/libfabric_ffi.so``, the one
name it looks for) or the one named by ``FABRIC_CORE_LIB`` through ctypes, lazily on first use; importing never fails
because of the native library (calls raise ``FabricNativeUnavailableError`` instead).

The public names are loaded lazily (PEP 562): ``import fabric_core.adapter_evidence`` (what
an adapter host imports) stays standard-library only and does not load the SDK's models,
which would cost the host's start-up (and its shutdown) tens of milliseconds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabric_core.client import Fabric, inspect_adapter
    from fabric_core.environment import EnvironmentHandle
    from fabric_core.errors import (
        FabricCapabilityError,
        FabricConfigError,
        FabricError,
        FabricNativeUnavailableError,
        FabricRuntimeError,
        FabricStateError,
        ResourceObservationUnavailableError,
        ResourceObservationUnsupportedError,
        ServiceInUseError,
    )
    from fabric_core.models import (
        UNSET,
        DiscoveryConfig,
        EnvironmentConfig,
        FabricBaseModel,
        FabricConfig,
        HarnessConfig,
        InstructionConfig,
        InstructionsConfig,
        McpAuthenticationConfig,
        McpConfig,
        McpServerConfig,
        MetadataConfig,
        ModelConfig,
        ProvenanceConfig,
        RelayAtifConfig,
        RelayAtofConfig,
        RelayAtofFileSinkConfig,
        RelayAtofStreamSinkConfig,
        RelayComponentConfig,
        RelayConfig,
        RelayConfigPolicy,
        RelayHttpStorageConfig,
        RelayObservabilityConfig,
        RelayOpenTelemetryConfig,
        RelayOpenTelemetryEndpointConfig,
        RelayS3StorageConfig,
        RunRequest,
        RuntimeConfig,
        SkillConfig,
        CheckRequest,
        SystemStatsConfig,
        SystemStatsSamplingConfig,
        TelemetryConfig,
        TelemetryProviderConfig,
        ToolDefinitionConfig,
        ToolsConfig,
        WorkflowConfig,
    )
    from fabric_core.prewarm import Prewarm
    from fabric_core.runtime import Runtime, RuntimeStatus
    from fabric_core.service import Service, ServiceStatus
    from fabric_core.streaming import InvokeStream, OpenAIInvokeStream
    from fabric_core.types import (
        AdapterCapabilityProfile,
        AdapterInfo,
        ArtifactManifest,
        ArtifactRef,
        CheckObservation,
        CheckReport,
        DoctorCheck,
        DoctorReport,
        EnvironmentReference,
        ErrorInfo,
        FabricEvent,
        FabricMapping,
        GaugeSummary,
        InvocationSystemStats,
        ResourceObservation,
        RunOutput,
        RunPlan,
        RunResult,
        RunUsage,
        RuntimeCapabilities,
        RuntimeHandle,
        RuntimeResourceSnapshot,
        SampledStats,
        ServiceHandle,
        ServiceInfo,
        ServiceReference,
        TelemetryRef,
    )

# Submodule -> the public names it defines (loaded on first access).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "fabric_core.client": (
        "Fabric",
        "inspect_adapter",
    ),
    "fabric_core.environment": (
        "EnvironmentHandle",
    ),
    "fabric_core.errors": (
        "FabricCapabilityError",
        "FabricConfigError",
        "FabricError",
        "FabricNativeUnavailableError",
        "FabricRuntimeError",
        "FabricStateError",
        "ResourceObservationUnavailableError",
        "ResourceObservationUnsupportedError",
        "ServiceInUseError",
    ),
    "fabric_core.models": (
        "UNSET",
        "DiscoveryConfig",
        "EnvironmentConfig",
        "FabricBaseModel",
        "FabricConfig",
        "HarnessConfig",
        "InstructionConfig",
        "InstructionsConfig",
        "McpAuthenticationConfig",
        "McpConfig",
        "McpServerConfig",
        "MetadataConfig",
        "ModelConfig",
        "ProvenanceConfig",
        "RelayAtifConfig",
        "RelayAtofConfig",
        "RelayAtofFileSinkConfig",
        "RelayAtofStreamSinkConfig",
        "RelayComponentConfig",
        "RelayConfig",
        "RelayConfigPolicy",
        "RelayHttpStorageConfig",
        "RelayObservabilityConfig",
        "RelayOpenTelemetryConfig",
        "RelayOpenTelemetryEndpointConfig",
        "RelayS3StorageConfig",
        "RunRequest",
        "RuntimeConfig",
        "SkillConfig",
        "CheckRequest",
        "SystemStatsConfig",
        "SystemStatsSamplingConfig",
        "TelemetryConfig",
        "TelemetryProviderConfig",
        "ToolDefinitionConfig",
        "ToolsConfig",
        "WorkflowConfig",
    ),
    "fabric_core.prewarm": (
        "Prewarm",
    ),
    "fabric_core.runtime": (
        "Runtime",
        "RuntimeStatus",
    ),
    "fabric_core.service": (
        "Service",
        "ServiceStatus",
    ),
    "fabric_core.streaming": (
        "InvokeStream",
        "OpenAIInvokeStream",
    ),
    "fabric_core.types": (
        "AdapterCapabilityProfile",
        "AdapterInfo",
        "ArtifactManifest",
        "ArtifactRef",
        "CheckObservation",
        "CheckReport",
        "DoctorCheck",
        "DoctorReport",
        "EnvironmentReference",
        "ErrorInfo",
        "FabricEvent",
        "FabricMapping",
        "GaugeSummary",
        "InvocationSystemStats",
        "ResourceObservation",
        "RunOutput",
        "RunPlan",
        "RunResult",
        "RunUsage",
        "RuntimeCapabilities",
        "RuntimeHandle",
        "RuntimeResourceSnapshot",
        "SampledStats",
        "ServiceHandle",
        "ServiceInfo",
        "ServiceReference",
        "TelemetryRef",
    ),
}
_SOURCE = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _SOURCE.get(name)
    if module is None:
        raise AttributeError(f"module 'fabric_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCE))


__version__ = "0.1.0"


def native_version() -> str:
    """The version of the loaded native library (loads it)."""

    from fabric_core import _ffi

    return _ffi.library().version


__all__ = [
    "Service",
    "ServiceHandle",
    "ServiceInUseError",
    "ServiceInfo",
    "ServiceReference",
    "ServiceStatus",
    "UNSET",
    "AdapterCapabilityProfile",
    "AdapterInfo",
    "ArtifactManifest",
    "ArtifactRef",
    "CheckObservation",
    "CheckReport",
    "CheckRequest",
    "DiscoveryConfig",
    "DoctorCheck",
    "EnvironmentReference",
    "DoctorReport",
    "EnvironmentConfig",
    "EnvironmentHandle",
    "ErrorInfo",
    "Fabric",
    "FabricBaseModel",
    "FabricCapabilityError",
    "FabricConfig",
    "FabricConfigError",
    "FabricError",
    "FabricEvent",
    "FabricMapping",
    "FabricNativeUnavailableError",
    "FabricRuntimeError",
    "FabricStateError",
    "GaugeSummary",
    "HarnessConfig",
    "InstructionConfig",
    "InstructionsConfig",
    "InvocationSystemStats",
    "McpAuthenticationConfig",
    "McpConfig",
    "McpServerConfig",
    "MetadataConfig",
    "ModelConfig",
    "ProvenanceConfig",
    "RelayAtifConfig",
    "RelayAtofConfig",
    "RelayAtofFileSinkConfig",
    "RelayAtofStreamSinkConfig",
    "RelayComponentConfig",
    "RelayConfig",
    "RelayConfigPolicy",
    "RelayHttpStorageConfig",
    "RelayObservabilityConfig",
    "RelayOpenTelemetryConfig",
    "RelayOpenTelemetryEndpointConfig",
    "RelayS3StorageConfig",
    "ResourceObservation",
    "ResourceObservationUnavailableError",
    "ResourceObservationUnsupportedError",
    "RunOutput",
    "RunPlan",
    "RunRequest",
    "RunResult",
    "RunUsage",
    "InvokeStream",
    "OpenAIInvokeStream",
    "Prewarm",
    "Runtime",
    "RuntimeCapabilities",
    "RuntimeConfig",
    "RuntimeHandle",
    "RuntimeResourceSnapshot",
    "RuntimeStatus",
    "SampledStats",
    "SkillConfig",
    "SystemStatsConfig",
    "SystemStatsSamplingConfig",
    "TelemetryConfig",
    "TelemetryProviderConfig",
    "TelemetryRef",
    "ToolDefinitionConfig",
    "ToolsConfig",
    "WorkflowConfig",
    "inspect_adapter",
    "native_version",
]
