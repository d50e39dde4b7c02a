"""Typed config and request models (stdlib dataclasses).

The models are an authoring surface: they build the canonical ``fabric.agent/v1alpha1``
JSON that the native core validates (``Fabric().validate(config)`` / ``plan``). The native
core is the source of truth for validation; these classes check only what Python must
(JSON compatibility, required constructor arguments) and keep unknown keys in
``extra_fields`` so the core can reject them with their path.

Serialization (``to_mapping()``) omits ``None`` values and empty containers whose default
is empty, keeps meaningful empties (``tools.enabled=[]``, ``allowed_tools=[]``), and always
emits ``schema_version`` and ``runtime``. ``system_stats`` is tri-state: leave it unset for
the default, set ``None`` to disable (serialized as ``null``), or give a
``SystemStatsConfig``.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePath
from typing import Any, ClassVar, Literal, TypeVar

from fabric_core._codes import Code
from fabric_core._sdk_model import SdkModel
from fabric_core.errors import FabricConfigError

SCHEMA_VERSION = "fabric.agent/v1alpha1"

_M = TypeVar("_M", bound="_Model")


class _Unset(Enum):
    UNSET = "unset"

    def __repr__(self) -> str:
        return "UNSET"


#: Marker for "field not given" where ``None`` has its own meaning (``system_stats``).
UNSET = _Unset.UNSET


def _json_value(value: Any, name: str) -> Any:
    """Validate and detach a JSON-compatible value."""

    # Exact types first (what configs hold): the ABC checks below cost more than the copy.
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return value
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise FabricConfigError(
                    f"{name} JSON object keys must be strings", code=Code.INVALID_JSON_VALUE
                )
            copied[key] = _json_value(item, name)
        return copied
    if kind is list:
        return [_json_value(item, name) for item in value]
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FabricConfigError(
                f"{name} must contain only finite JSON numbers", code=Code.INVALID_JSON_VALUE
            )
        return value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, _Model):
        return value.to_mapping()
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise FabricConfigError(
                    f"{name} JSON object keys must be strings", code=Code.INVALID_JSON_VALUE
                )
            result[key] = _json_value(item, name)
        return result
    if isinstance(value, (list, tuple)):
        return [_json_value(item, name) for item in value]
    raise FabricConfigError(f"{name} must be JSON-compatible", code=Code.INVALID_JSON_VALUE)


def _is_empty_container(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple)) and len(value) == 0


@dataclass(kw_only=True)
class _Model(SdkModel):
    """Base of the config models: mapping conversion, extension fields (``SdkModel``: Pydantic's methods)."""

    #: Unknown keys preserved for the native core (which rejects them outside extension
    #: points, naming their path).
    extra_fields: dict[str, Any] = field(default_factory=dict, repr=False)

    #: field → model class (single nested model)
    _nested: ClassVar[dict[str, type[_Model]]] = {}
    #: field → model class (mapping of name → nested model)
    _nested_map: ClassVar[dict[str, type[_Model]]] = {}
    #: field → model class (list of nested models; mappings are converted)
    _nested_list: ClassVar[dict[str, type[_Model]]] = {}
    #: field → default value omitted when serializing (``to_mapping``, ``model_dump``)
    _omit_default: ClassVar[dict[str, Any]] = {}

    def __post_init__(self) -> None:
        for name, model in self._nested.items():
            value = getattr(self, name)
            if isinstance(value, Mapping) and not isinstance(value, _Model):
                setattr(self, name, model.from_mapping(value))
        for name, model in self._nested_map.items():
            value = getattr(self, name)
            if isinstance(value, Mapping):
                setattr(
                    self,
                    name,
                    {
                        key: item
                        if isinstance(item, _Model)
                        else model.from_mapping(item)
                        for key, item in value.items()
                    },
                )
        for name, model in self._nested_list.items():
            value = getattr(self, name)
            if isinstance(value, (list, tuple)):
                setattr(
                    self,
                    name,
                    [
                        model.from_mapping(item)
                        if isinstance(item, Mapping) and not isinstance(item, _Model)
                        else item
                        for item in value
                    ],
                )

    @classmethod
    def _field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if f.name != "extra_fields"]

    @classmethod
    def from_mapping(cls: type[_M], value: Mapping[str, Any]) -> _M:
        """Build the model from its JSON mapping; unknown keys go to ``extra_fields``."""

        if isinstance(value, cls):
            return copy.deepcopy(value)
        if not isinstance(value, Mapping):
            raise FabricConfigError(
                f"{cls.__name__} must be built from a mapping, not {type(value).__name__}",
                code=Code.INVALID_CONFIG_TYPE,
            )
        names = set(cls._field_names())
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise FabricConfigError(
                    f"{cls.__name__} keys must be strings", code=Code.INVALID_CONFIG_TYPE
                )
            if key in names:
                known[key] = copy.deepcopy(item)
            else:
                extra[key] = copy.deepcopy(item)
        try:
            return cls(**known, extra_fields=extra)
        except TypeError as error:
            raise FabricConfigError(
                f"{cls.__name__}: {error}", code=Code.INVALID_CONFIG_TYPE
            ) from error

    @classmethod
    def _serialized_fields(cls) -> tuple[tuple[str, bool, Any, bool], ...]:
        """Per field, in order: its name, whether its default is omitted, that default, and
        whether its default is an (empty) container. Computed once per class."""

        spec = cls.__dict__.get("_serialized_fields_cache")
        if spec is None:
            spec = tuple(
                (
                    f.name,
                    f.name in cls._omit_default,
                    cls._omit_default.get(f.name),
                    f.default_factory is not dataclasses.MISSING,
                )
                for f in dataclasses.fields(cls)
                if f.name != "extra_fields"
            )
            type.__setattr__(cls, "_serialized_fields_cache", spec)
        return spec

    def to_mapping(self) -> dict[str, Any]:
        """Return a detached, JSON-compatible mapping in the canonical shape."""

        data: dict[str, Any] = {}
        for name, omits_default, default, container_default in self._serialized_fields():
            value = getattr(self, name)
            if value is UNSET:
                continue
            if value is None and not self._keeps_null(name):
                continue
            if omits_default and value == default:
                continue
            encoded = _json_value(value, name)
            if container_default and _is_empty_container(encoded):
                continue
            data[name] = encoded
        for key, item in self.extra_fields.items():
            data[key] = _json_value(item, key)
        return data

    def _keeps_null(self, name: str) -> bool:
        return False

    def copy(self: _M) -> _M:
        """A deep copy."""

        return copy.deepcopy(self)


@dataclass(kw_only=True)
class MetadataConfig(_Model):
    """Human-readable agent identity."""

    name: str
    description: str | None = None


@dataclass(kw_only=True)
class HarnessConfig(_Model):
    """Harness adapter selection plus adapter-owned settings."""

    adapter_id: str
    resolution: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    _omit_default: ClassVar[dict[str, Any]] = {"settings": {}}


@dataclass(kw_only=True)
class WorkflowConfig(_Model):
    """Registered workflow target and its construction settings."""

    target_id: str
    settings: dict[str, Any] = field(default_factory=dict)

    _omit_default: ClassVar[dict[str, Any]] = {"settings": {}}


@dataclass(kw_only=True)
class DiscoveryConfig(_Model):
    """Explicit local descriptor discovery paths."""

    local_paths: list[str | PurePath] = field(default_factory=list)


@dataclass(kw_only=True)
class InstructionConfig(_Model):
    """One portable instruction value (``mode``: ``replace`` or ``append``)."""

    content: str
    mode: Literal["replace", "append"] = "replace"


@dataclass(kw_only=True)
class InstructionsConfig(_Model):
    """Harness-neutral agent instructions."""

    system: InstructionConfig | None = None

    _nested: ClassVar[dict[str, type[_Model]]] = {"system": InstructionConfig}


@dataclass(kw_only=True)
class RuntimeConfig(_Model):
    """Invocation runtime contract."""

    input_schema: str | None = None
    output_schema: str | None = None
    artifacts: str | PurePath | None = None
    timeout_seconds: float | None = None
    max_turns: int | None = None


@dataclass(kw_only=True)
class EnvironmentConfig(_Model):
    """Execution environment supplied by the caller.

    ``env`` values are serialized into config and plans; prefer ``env_names`` (names
    only, values read from this process's environment) for credentials.
    """

    provider: str = "local"
    workspace: str | PurePath | None = None
    artifacts: str | PurePath | None = None
    env: dict[str, str] = field(default_factory=dict)
    env_names: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    connection: dict[str, Any] = field(default_factory=dict)
    ownership: Literal["caller_owned", "fabric_owned"] = "caller_owned"
    control_location: Literal["external_control", "in_env_control"] = "in_env_control"


@dataclass(kw_only=True)
class ModelConfig(_Model):
    """Configuration for one model role."""

    provider: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    base_url: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class SkillConfig(_Model):
    """Skill capability configuration."""

    paths: list[str | PurePath] = field(default_factory=list)

    def add_path(self, path: str | PurePath) -> SkillConfig:
        """Add a skill path if absent."""

        value = str(path)
        paths = [str(item) for item in self.paths]
        if value not in paths:
            paths.append(value)
        self.paths = paths
        return self

    def remove_path(self, path: str | PurePath) -> SkillConfig:
        """Remove a skill path if present."""

        value = str(path)
        self.paths = [item for item in self.paths if str(item) != value]
        return self


@dataclass(kw_only=True)
class McpAuthenticationConfig(_Model):
    """MCP server authentication (``oauth2`` or ``service_account``)."""

    type: Literal["oauth2", "service_account"]
    client_id: str | None = None
    client_secret_env: str | None = None
    scopes: list[str] = field(default_factory=list)
    redirect_uri: str | None = None
    enable_dynamic_registration: bool = True
    client_name: str | None = None
    token_endpoint_auth_method: str | None = None
    authorization_timeout_seconds: int = 300
    token_url: str | None = None
    token_cache_buffer_seconds: int = 300

    _omit_default: ClassVar[dict[str, Any]] = {
        "scopes": [], "enable_dynamic_registration": True, "authorization_timeout_seconds": 300,
        "token_cache_buffer_seconds": 300,
    }


@dataclass(kw_only=True)
class McpServerConfig(_Model):
    """One MCP server. For stdio, ``url`` is the executable and ``args`` its arguments."""

    transport: Literal["stdio", "sse", "streamable-http"]
    url: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    authentication: McpAuthenticationConfig | None = None
    custom_headers: dict[str, str] = field(default_factory=dict)
    exposure: Literal["harness_native", "fabric_managed"] = "harness_native"
    allowed_tools: list[str] | None = None
    blocked_tools: list[str] = field(default_factory=list)

    _nested: ClassVar[dict[str, type[_Model]]] = {"authentication": McpAuthenticationConfig}
    _omit_default: ClassVar[dict[str, Any]] = {
        "args": [], "env": {}, "authentication": None, "custom_headers": {}, "allowed_tools": None, "blocked_tools": []
    }


@dataclass(kw_only=True)
class McpConfig(_Model):
    """MCP capability configuration."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)

    _nested_map: ClassVar[dict[str, type[_Model]]] = {"servers": McpServerConfig}

    def add_server(
        self,
        name: str,
        *,
        transport: str,
        url: str,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        authentication: McpAuthenticationConfig | Mapping[str, Any] | None = None,
        custom_headers: Mapping[str, str] | None = None,
        exposure: Literal["harness_native", "fabric_managed"] = "harness_native",
        allowed_tools: Sequence[str] | None = None,
        blocked_tools: Sequence[str] = (),
        extra_fields: Mapping[str, Any] | None = None,
    ) -> McpConfig:
        """Add or replace a named MCP server."""

        if isinstance(allowed_tools, str) or isinstance(blocked_tools, str):
            raise TypeError("tool lists must be sequences of strings, not a string")
        auth = authentication
        if isinstance(auth, Mapping):
            auth = McpAuthenticationConfig.from_mapping(auth)
        self.servers[name] = McpServerConfig(
            transport=transport,  # type: ignore[arg-type]
            url=url,
            args=list(args or ()),
            env=dict(env or {}),
            authentication=auth,
            custom_headers=dict(custom_headers or {}),
            exposure=exposure,
            allowed_tools=None if allowed_tools is None else list(allowed_tools),
            blocked_tools=list(blocked_tools),
            extra_fields=dict(extra_fields or {}),
        )
        return self

    def remove_server(self, name: str) -> McpConfig:
        """Remove a named MCP server if present."""

        self.servers.pop(name, None)
        return self


@dataclass(kw_only=True)
class TelemetryProviderConfig(_Model):
    """Provider-specific telemetry configuration."""

    config: dict[str, Any] | None = None


@dataclass(kw_only=True)
class TelemetryConfig(_Model):
    """Telemetry providers (``relay``, ``native``)."""

    providers: dict[str, TelemetryProviderConfig] = field(default_factory=dict)

    _nested_map: ClassVar[dict[str, type[_Model]]] = {"providers": TelemetryProviderConfig}

    def enable_relay(self) -> TelemetryConfig:
        """Enable NeMo Relay telemetry."""

        self.providers["relay"] = TelemetryProviderConfig()
        return self

    def enable_native(self, *, config: Mapping[str, Any] | None = None) -> TelemetryConfig:
        """Let the selected adapter handle telemetry natively."""

        provider = self.providers.get("native") or TelemetryProviderConfig()
        if config is not None:
            provider.config = dict(config)
        self.providers["native"] = provider
        return self

    def remove_provider(self, provider: str) -> TelemetryConfig:
        """Remove a configured telemetry provider."""

        self.providers.pop(provider, None)
        return self


@dataclass(kw_only=True)
class RelayComponentConfig(_Model):
    """A generic NeMo Relay plugin component."""

    kind: str
    enabled: bool = True
    config: dict[str, Any] = field(default_factory=dict)


# NeMo Relay models. Relay owns these subtrees: every field is optional and only what is
# set is serialized (the core keeps unknown keys at these extension points).


@dataclass(kw_only=True)
class RelayConfigPolicy(_Model):
    """Relay config validation policy (``ignore``, ``warn`` or ``error``)."""

    unknown_component: str | None = None
    unknown_field: str | None = None
    unsupported_value: str | None = None


@dataclass(kw_only=True)
class RelayAtofFileSinkConfig(_Model):
    """ATOF file sink."""

    type: Literal["file"] = "file"
    output_directory: str | PurePath | None = None
    filename: str | None = None
    mode: Literal["append", "overwrite"] | None = None


@dataclass(kw_only=True)
class RelayAtofStreamSinkConfig(_Model):
    """ATOF stream sink (``http_post``, ``websocket`` or ``ndjson`` transport)."""

    url: str
    type: Literal["stream"] = "stream"
    transport: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    timeout_millis: int | None = None
    field_name_policy: str | None = None
    name: str | None = None

    _omit_default: ClassVar[dict[str, Any]] = {"headers": {}, "header_env": {}}


def _typed_items(items: Any, kinds: dict[str, type[_Model]]) -> Any:
    """Convert mappings in a list to the model named by their ``type`` (others kept)."""

    if not isinstance(items, (list, tuple)):
        return items
    converted = []
    for item in items:
        if isinstance(item, Mapping) and not isinstance(item, _Model):
            model = kinds.get(str(item.get("type")))
            if model is not None:
                item = model.from_mapping(item)
        converted.append(item)
    return converted


@dataclass(kw_only=True)
class RelayAtofConfig(_Model):
    """ATOF output: ``enabled`` and file/stream ``sinks``."""

    enabled: bool | None = None
    sinks: list[RelayAtofFileSinkConfig | RelayAtofStreamSinkConfig | dict[str, Any]] = field(
        default_factory=list
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.sinks = _typed_items(
            self.sinks, {"file": RelayAtofFileSinkConfig, "stream": RelayAtofStreamSinkConfig}
        )


@dataclass(kw_only=True)
class RelayS3StorageConfig(_Model):
    """ATIF upload to S3-compatible storage (credentials by variable name)."""

    type: Literal["s3"] = "s3"
    bucket: str | None = None
    key_prefix: str | None = None
    access_key_id: str | None = None
    secret_access_key_var: str | None = None
    session_token_var: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    allow_http: bool | None = None


@dataclass(kw_only=True)
class RelayHttpStorageConfig(_Model):
    """ATIF upload to an HTTP endpoint."""

    type: Literal["http"] = "http"
    endpoint: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    timeout_millis: int | None = None


@dataclass(kw_only=True)
class RelayAtifConfig(_Model):
    """ATIF trajectory output."""

    enabled: bool | None = None
    agent_name: str | None = None
    agent_version: str | None = None
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None
    output_directory: str | PurePath | None = None
    filename_template: str | None = None
    storage: list[RelayS3StorageConfig | RelayHttpStorageConfig | dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.storage is not None:
            self.storage = _typed_items(
                self.storage, {"s3": RelayS3StorageConfig, "http": RelayHttpStorageConfig}
            )


@dataclass(kw_only=True)
class RelayOpenTelemetryEndpointConfig(_Model):
    """One OpenTelemetry exporter endpoint (``full``, ``gen_ai`` or ``openinference``)."""

    type: Literal["full", "gen_ai", "openinference"]
    endpoint: str
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    transport: str | None = None
    service_name: str | None = None
    timeout_millis: int | None = None

    _omit_default: ClassVar[dict[str, Any]] = {"headers": {}, "header_env": {}}


@dataclass(kw_only=True)
class RelayOpenTelemetryConfig(_Model):
    """OpenTelemetry output: ``endpoints`` and/or ``file_sinks``."""

    enabled: bool | None = None
    endpoints: list[RelayOpenTelemetryEndpointConfig] = field(default_factory=list)
    file_sinks: list[dict[str, Any]] = field(default_factory=list)

    _nested_list: ClassVar[dict[str, type[_Model]]] = {"endpoints": RelayOpenTelemetryEndpointConfig}
    _omit_default: ClassVar[dict[str, Any]] = {"endpoints": []}


@dataclass(kw_only=True)
class RelayObservabilityConfig(_Model):
    """Relay observability (config version 4): ATOF, ATIF, OpenTelemetry."""

    version: int | None = None
    atof: RelayAtofConfig | None = None
    atif: RelayAtifConfig | None = None
    opentelemetry: RelayOpenTelemetryConfig | None = None
    policy: RelayConfigPolicy | None = None
    enable_full_payloads: bool | None = None

    _nested: ClassVar[dict[str, type[_Model]]] = {
        "atof": RelayAtofConfig,
        "atif": RelayAtifConfig,
        "opentelemetry": RelayOpenTelemetryConfig,
        "policy": RelayConfigPolicy,
    }


@dataclass(kw_only=True)
class RelayConfig(_Model):
    """The top-level NeMo Relay block (observability, components, policy, plugins)."""

    project: str | None = None
    output_dir: str | PurePath | None = None
    observability: RelayObservabilityConfig | None = None
    components: list[RelayComponentConfig] = field(default_factory=list)
    policy: RelayConfigPolicy | None = None
    plugins: dict[str, Any] | None = None  # not in NeMo Fabric 0.5.0: model_dump omits None

    _omit_default: ClassVar[dict[str, Any]] = {"plugins": None}

    _nested: ClassVar[dict[str, type[_Model]]] = {
        "observability": RelayObservabilityConfig,
        "policy": RelayConfigPolicy,
    }
    _nested_list: ClassVar[dict[str, type[_Model]]] = {"components": RelayComponentConfig}


@dataclass(kw_only=True)
class ToolDefinitionConfig(_Model):
    """One named tool or tool-group definition."""

    kind: str
    ref: str
    settings: dict[str, Any] = field(default_factory=dict)

    _omit_default: ClassVar[dict[str, Any]] = {"settings": {}}


@dataclass(kw_only=True)
class ToolsConfig(_Model):
    """Harness-neutral tool policy. ``enabled=None`` keeps the harness default; ``[]``
    disables every tool."""

    definitions: dict[str, ToolDefinitionConfig] = field(default_factory=dict)
    enabled: list[str] | None = None
    blocked: list[str] = field(default_factory=list)

    _nested_map: ClassVar[dict[str, type[_Model]]] = {"definitions": ToolDefinitionConfig}
    _omit_default: ClassVar[dict[str, Any]] = {"definitions": {}, "blocked": []}

    def block(self, *tools: str) -> ToolsConfig:
        """Add tool names to ``blocked`` (keeping order, no duplicates)."""

        blocked = list(self.blocked)
        for tool in tools:
            if tool not in blocked:
                blocked.append(tool)
        self.blocked = blocked
        return self

    def add_definition(
        self,
        name: str,
        *,
        kind: str,
        ref: str,
        settings: Mapping[str, Any] | None = None,
        extra_fields: Mapping[str, Any] | None = None,
    ) -> ToolsConfig:
        """Add or replace one named definition."""

        if not name.strip():
            raise FabricConfigError("tool definition names must not be empty", code=Code.BLANK_TOOL_DEFINITION_NAME)
        self.definitions[name] = ToolDefinitionConfig(
            kind=kind, ref=ref, settings=dict(settings or {}), extra_fields=dict(extra_fields or {})
        )
        return self

    def remove_definition(self, name: str) -> ToolsConfig:
        """Remove one named definition if present."""

        self.definitions.pop(name, None)
        return self


@dataclass(kw_only=True)
class SystemStatsSamplingConfig(_Model):
    """Periodic sampling during an invocation."""

    interval_ms: int | None = None
    max_samples: int | None = None


@dataclass(kw_only=True)
class SystemStatsConfig(_Model):
    """Invocation system stats: ``collect`` groups (None = all) and optional sampling."""

    collect: list[str] | None = None
    sampling: SystemStatsSamplingConfig | None = None

    _nested: ClassVar[dict[str, type[_Model]]] = {"sampling": SystemStatsSamplingConfig}


@dataclass(kw_only=True)
class ProvenanceConfig(_Model):
    """Software evidence collection (enabled by default)."""

    enabled: bool = True
    reports: list[Any] | None = None


@dataclass(kw_only=True)
class FabricConfig(_Model):
    """The typed ``fabric.agent/v1alpha1`` agent configuration.

    At least one of ``harness`` or ``workflow`` selects what runs. Helpers
    (``add_skill_path``, ``add_mcp_server``, ``enable_relay``, ``block_tools``, ...) edit
    this config in place and return it; copy first (``model_copy(deep=True)``) to make variants.
    """

    schema_version: str = SCHEMA_VERSION
    metadata: MetadataConfig
    harness: HarnessConfig | None = None
    workflow: WorkflowConfig | None = None
    discovery: DiscoveryConfig | None = None
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    environment: EnvironmentConfig | None = None
    models: dict[str, ModelConfig] = field(default_factory=dict)
    instructions: InstructionsConfig | None = None
    mcp: McpConfig | None = None
    skills: SkillConfig | None = None
    telemetry: TelemetryConfig | None = None
    relay: RelayConfig | None = None
    tools: ToolsConfig | None = None
    system_stats: SystemStatsConfig | None | _Unset = UNSET
    provenance: ProvenanceConfig | None = None  # not in NeMo Fabric 0.5.0: model_dump omits None

    _nested: ClassVar[dict[str, type[_Model]]] = {
        "metadata": MetadataConfig,
        "harness": HarnessConfig,
        "workflow": WorkflowConfig,
        "discovery": DiscoveryConfig,
        "runtime": RuntimeConfig,
        "environment": EnvironmentConfig,
        "instructions": InstructionsConfig,
        "mcp": McpConfig,
        "skills": SkillConfig,
        "telemetry": TelemetryConfig,
        "relay": RelayConfig,
        "tools": ToolsConfig,
        "system_stats": SystemStatsConfig,
        "provenance": ProvenanceConfig,
    }
    _nested_map: ClassVar[dict[str, type[_Model]]] = {"models": ModelConfig}
    _omit_default: ClassVar[dict[str, Any]] = {"provenance": None}

    def _keeps_null(self, name: str) -> bool:
        return name == "system_stats"

    def to_mapping(self) -> dict[str, Any]:
        data = super().to_mapping()
        data.setdefault("schema_version", SCHEMA_VERSION)
        data.setdefault("runtime", {})
        return data

    def add_mcp_server(
        self,
        name: str,
        *,
        transport: str,
        url: str,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        authentication: McpAuthenticationConfig | Mapping[str, Any] | None = None,
        custom_headers: Mapping[str, str] | None = None,
        exposure: Literal["harness_native", "fabric_managed"] = "harness_native",
        allowed_tools: Sequence[str] | None = None,
        blocked_tools: Sequence[str] = (),
        extra_fields: Mapping[str, Any] | None = None,
    ) -> FabricConfig:
        """Add or replace a named MCP server and return this config."""

        if self.mcp is None:
            self.mcp = McpConfig()
        self.mcp.add_server(
            name,
            transport=transport,
            url=url,
            args=args,
            env=env,
            authentication=authentication,
            custom_headers=custom_headers,
            exposure=exposure,
            allowed_tools=allowed_tools,
            blocked_tools=blocked_tools,
            extra_fields=extra_fields,
        )
        return self

    def remove_mcp_server(self, name: str) -> FabricConfig:
        """Remove a named MCP server (and the empty ``mcp`` block) and return this config."""

        if self.mcp is not None:
            self.mcp.remove_server(name)
            if not self.mcp.servers and not self.mcp.extra_fields:
                self.mcp = None
        return self

    def add_skill_path(self, path: str | PurePath) -> FabricConfig:
        """Add a skill path and return this config."""

        if self.skills is None:
            self.skills = SkillConfig()
        self.skills.add_path(path)
        return self

    def remove_skill_path(self, path: str | PurePath) -> FabricConfig:
        """Remove a skill path (and the empty ``skills`` block) and return this config."""

        if self.skills is not None:
            self.skills.remove_path(path)
            if not self.skills.paths and not self.skills.extra_fields:
                self.skills = None
        return self

    def block_tools(self, *tools: str) -> FabricConfig:
        """Block adapter-native tool names and return this config."""

        if self.tools is None:
            self.tools = ToolsConfig()
        self.tools.block(*tools)
        return self

    def add_tool_definition(
        self,
        name: str,
        *,
        kind: str,
        ref: str,
        settings: Mapping[str, Any] | None = None,
        extra_fields: Mapping[str, Any] | None = None,
    ) -> FabricConfig:
        """Add or replace one named tool definition and return this config."""

        if self.tools is None:
            self.tools = ToolsConfig()
        self.tools.add_definition(
            name, kind=kind, ref=ref, settings=settings, extra_fields=extra_fields
        )
        return self

    def remove_tool_definition(self, name: str) -> FabricConfig:
        """Remove one named tool definition and return this config."""

        if self.tools is not None:
            self.tools.remove_definition(name)
            if (
                not self.tools.definitions
                and self.tools.enabled is None
                and not self.tools.blocked
                and not self.tools.extra_fields
            ):
                self.tools = None
        return self

    def enable_relay(
        self,
        *,
        project: str | None = None,
        output_dir: str | PurePath | None = None,
        observability: RelayObservabilityConfig | Mapping[str, Any] | None = None,
        components: Sequence[RelayComponentConfig | Mapping[str, Any]] | None = None,
        policy: RelayConfigPolicy | Mapping[str, Any] | None = None,
    ) -> FabricConfig:
        """Enable NeMo Relay telemetry (``telemetry.providers.relay``) and update the
        top-level ``relay`` block; return this config."""

        relay = copy.deepcopy(self.relay) if self.relay is not None else RelayConfig()
        if project is not None:
            relay.project = project
        if output_dir is not None:
            relay.output_dir = output_dir
        if observability is not None:
            relay.observability = RelayObservabilityConfig.from_mapping(observability)
        if components is not None:
            relay.components = [
                item if isinstance(item, RelayComponentConfig) else RelayComponentConfig.from_mapping(item)
                for item in components
            ]
        if policy is not None:
            relay.policy = RelayConfigPolicy.from_mapping(policy)
        if self.telemetry is None:
            self.telemetry = TelemetryConfig()
        self.telemetry.enable_relay()
        self.relay = relay
        return self


@dataclass(kw_only=True)
class RunRequest(_Model):
    """One invocation request. ``request_id`` defaults to a fresh ``request-…`` id."""

    input: Any = ""
    relay_session_root: str | None = None
    request_id: str = field(default_factory=lambda: f"request-{uuid.uuid4().hex}")
    context: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.input = _json_value("" if self.input is None else self.input, "request input")
        if not isinstance(self.context, Mapping):
            raise FabricConfigError("request context must be a JSON object", code=Code.INVALID_REQUEST)
        self.context = _json_value(self.context, "request context")
        if self.overrides is not None:
            if not isinstance(self.overrides, Mapping):
                raise FabricConfigError("request overrides must be a JSON object", code=Code.INVALID_REQUEST)
            self.overrides = _json_value(self.overrides, "request overrides")
        if not isinstance(self.request_id, str) or not self.request_id:
            raise FabricConfigError("request_id must be a non-empty string", code=Code.INVALID_REQUEST)

    def to_mapping(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "input": self.input,
            "request_id": self.request_id,
            "context": copy.deepcopy(self.context),
        }
        if self.relay_session_root is not None:
            data["relay_session_root"] = self.relay_session_root
        if self.overrides is not None:
            data["overrides"] = copy.deepcopy(self.overrides)
        for key, item in self.extra_fields.items():
            data[key] = _json_value(item, f"request extension {key!r}")
        return data


@dataclass(kw_only=True)
class CheckRequest(_Model):
    """A health-check request for ``Fabric.check()``.

    ``scope="runtime"`` needs ``runtime_id``, ``scope="service"`` needs ``service_id``,
    ``scope="server"`` takes neither (unsupported in a local environment). ``level`` is
    ``live`` (default), ``active`` or ``ready``; ``timeout_seconds`` (default 3 in the core)
    must be positive and finite. The native core validates the request and rejects unknown
    fields with their path (``FabricConfigError``, code ``invalid_check_request``).
    """

    scope: Literal["runtime", "service", "server"] | str = "runtime"
    runtime_id: str | None = None
    service_id: str | None = None
    level: Literal["live", "active", "ready"] | str = "live"
    timeout_seconds: float | None = None


#: NeMo Fabric's name for the config-model base class.
FabricBaseModel = _Model

__all__ = [
    "CheckRequest", "DiscoveryConfig", "FabricBaseModel", "EnvironmentConfig", "FabricConfig",
    "HarnessConfig", "InstructionConfig", "InstructionsConfig", "McpAuthenticationConfig",
    "McpConfig", "McpServerConfig", "MetadataConfig", "ModelConfig", "ProvenanceConfig",
    "RelayAtifConfig", "RelayAtofConfig", "RelayAtofFileSinkConfig",
    "RelayAtofStreamSinkConfig", "RelayComponentConfig", "RelayConfig", "RelayConfigPolicy",
    "RelayHttpStorageConfig", "RelayObservabilityConfig", "RelayOpenTelemetryConfig",
    "RelayOpenTelemetryEndpointConfig", "RelayS3StorageConfig", "RunRequest", "RuntimeConfig",
    "SkillConfig", "SystemStatsConfig", "SystemStatsSamplingConfig", "TelemetryConfig",
    "TelemetryProviderConfig", "ToolDefinitionConfig", "ToolsConfig", "UNSET", "WorkflowConfig",
]
