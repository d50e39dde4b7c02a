"""Python binding of the Fabric core (NeMo Fabric compatible SDK).

Porting from NeMo Fabric is an import change::

    from fabric_core import Fabric, FabricConfig, HarnessConfig, MetadataConfig

    config = FabricConfig(
        metadata=MetadataConfig(name="hello"),
        harness=HarnessConfig(adapter_id="fabric.scripted"),
    )
    result = await Fabric().run(config, input="Hello")

The package loads the bundled native library (``fabric_core/libfabric_ffi.so``, or
``_native*.so`` when built with setuptools-rust) or the one
named by ``FABRIC_CORE_LIB`` through ctypes, lazily on first use; importing never fails
because of the native library (calls raise ``FabricNativeUnavailableError`` instead).
"""

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
