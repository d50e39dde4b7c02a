"""Typed config models: construction, helpers, canonical JSON, native validation."""

from __future__ import annotations

import json

import pytest

from fabric_core import (
    UNSET,
    EnvironmentConfig,
    Fabric,
    FabricConfig,
    FabricConfigError,
    HarnessConfig,
    InstructionConfig,
    InstructionsConfig,
    McpAuthenticationConfig,
    McpServerConfig,
    MetadataConfig,
    ModelConfig,
    ProvenanceConfig,
    RelayConfig,
    RunRequest,
    RuntimeConfig,
    SkillConfig,
    SystemStatsConfig,
    SystemStatsSamplingConfig,
    TelemetryConfig,
    ToolsConfig,
    WorkflowConfig,
)
from fcsupport import REPO


def base() -> FabricConfig:
    return FabricConfig(
        metadata=MetadataConfig(name="review-agent"),
        harness=HarnessConfig(adapter_id="nvidia.fabric.hermes"),
        instructions=InstructionsConfig(system=InstructionConfig(content="Review code.")),
        runtime=RuntimeConfig(max_turns=8),
        models={
            "default": ModelConfig(
                provider="nvidia", model="nvidia/nemotron", api_key_env="NVIDIA_API_KEY"
            )
        },
    )


def test_minimal_config_serializes_canonically() -> None:
    config = FabricConfig(
        metadata=MetadataConfig(name="x"), harness=HarnessConfig(adapter_id="a")
    )
    assert config.to_mapping() == {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "x"},
        "harness": {"adapter_id": "a"},
        "runtime": {},
    }


def test_nested_mappings_are_coerced_and_round_trip() -> None:
    config = FabricConfig(
        metadata={"name": "x"},
        harness={"adapter_id": "a", "settings": {"k": 1}},
        models={"default": {"provider": "openai", "model": "gpt", "top_p": 0.5}},
        environment={"workspace": "ws", "env_names": ["HOME"]},
    )
    assert isinstance(config.harness, HarnessConfig)
    assert isinstance(config.models["default"], ModelConfig)
    assert isinstance(config.environment, EnvironmentConfig)
    again = FabricConfig.from_mapping(config.to_mapping())
    assert again == config
    assert again.to_mapping() == config.to_mapping()


def test_unknown_keys_are_kept_for_the_native_validator() -> None:
    config = FabricConfig.from_mapping(
        {"metadata": {"name": "x", "team": "a"}, "harness": {"adapter_id": "a"}, "bogus": 1}
    )
    assert config.extra_fields == {"bogus": 1}
    assert config.metadata.extra_fields == {"team": "a"}
    assert config.to_mapping()["bogus"] == 1
    with pytest.raises(FabricConfigError) as info:
        Fabric().validate(config)
    assert "bogus" in str(info.value)
    assert info.value.stage == "config"


def test_from_mapping_rejects_non_mappings() -> None:
    with pytest.raises(FabricConfigError):
        FabricConfig.from_mapping(["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(FabricConfigError):
        FabricConfig.from_mapping({"harness": {"adapter_id": "a"}})  # metadata is required


def test_helpers_edit_in_place_and_serialize() -> None:
    config = base()
    returned = (
        config.add_skill_path("skills/review")
        .add_skill_path("skills/review")
        .add_mcp_server(
            "github",
            transport="streamable-http",
            url="${GITHUB_MCP_URL}",
            allowed_tools=["issues.read"],
            blocked_tools=["issues.delete"],
        )
        .enable_relay(project="fabric-review", output_dir="./artifacts/relay")
        .block_tools("WebFetch", "Bash")
        .block_tools("Bash")
        .add_tool_definition("search", kind="function", ref="pkg.search", settings={"k": 1})
    )
    assert returned is config
    data = config.to_mapping()
    assert data["skills"] == {"paths": ["skills/review"]}
    assert data["mcp"]["servers"]["github"] == {
        "transport": "streamable-http",
        "url": "${GITHUB_MCP_URL}",
        "exposure": "harness_native",
        "allowed_tools": ["issues.read"],
        "blocked_tools": ["issues.delete"],
    }
    assert data["telemetry"] == {"providers": {"relay": {}}}
    assert data["relay"] == {"project": "fabric-review", "output_dir": "./artifacts/relay"}
    assert data["tools"] == {
        "definitions": {"search": {"kind": "function", "ref": "pkg.search", "settings": {"k": 1}}},
        "blocked": ["WebFetch", "Bash"],
    }

    config.remove_mcp_server("github").remove_skill_path("skills/review").remove_tool_definition(
        "search"
    )
    data = config.to_mapping()
    assert "mcp" not in data and "skills" not in data
    assert data["tools"] == {"blocked": ["WebFetch", "Bash"]}


def test_model_copy_is_deep() -> None:
    config = base()
    variant = config.model_copy(deep=True)
    variant.add_skill_path("only/in/variant")
    variant.models["default"].temperature = 0.1
    assert config.skills is None
    assert config.models["default"].temperature is None


def test_meaningful_empties_are_kept() -> None:
    config = base()
    config.tools = ToolsConfig(enabled=[])
    config.add_mcp_server("s", transport="stdio", url="mcp", allowed_tools=[])
    data = config.to_mapping()
    assert data["tools"] == {"enabled": []}
    assert data["mcp"]["servers"]["s"]["allowed_tools"] == []


def test_system_stats_is_tri_state() -> None:
    config = base()
    assert config.system_stats is UNSET
    assert "system_stats" not in config.to_mapping()
    config.system_stats = None
    assert config.to_mapping()["system_stats"] is None
    config.system_stats = SystemStatsConfig(
        collect=["process", "cgroup.cpu"],
        sampling=SystemStatsSamplingConfig(interval_ms=1000, max_samples=10_000),
    )
    assert config.to_mapping()["system_stats"] == {
        "collect": ["process", "cgroup.cpu"],
        "sampling": {"interval_ms": 1000, "max_samples": 10_000},
    }
    disabled = FabricConfig.from_mapping({**base().to_mapping(), "system_stats": None})
    assert disabled.system_stats is None
    assert disabled.to_mapping()["system_stats"] is None


def test_mcp_authentication_omits_defaults() -> None:
    server = McpServerConfig(
        transport="streamable-http",
        url="https://mcp.example",
        authentication=McpAuthenticationConfig(type="oauth2", client_id="cid", scopes=["r"]),
    )
    assert server.to_mapping()["authentication"] == {
        "type": "oauth2",
        "client_id": "cid",
        "scopes": ["r"],
    }


def test_other_models_serialize() -> None:
    assert WorkflowConfig(target_id="t").to_mapping() == {"target_id": "t"}
    assert SkillConfig().add_path("a").remove_path("a").to_mapping() == {}
    assert TelemetryConfig().enable_native(config={"x": 1}).to_mapping() == {
        "providers": {"native": {"config": {"x": 1}}}
    }
    assert TelemetryConfig().enable_relay().remove_provider("relay").to_mapping() == {}
    assert ProvenanceConfig(enabled=False).to_mapping() == {"enabled": False}
    assert RelayConfig(plugins={"dynamic": [{"manifest": "/m.toml"}]}).to_mapping() == {
        "plugins": {"dynamic": [{"manifest": "/m.toml"}]}
    }


def test_run_request_defaults_and_json_checks() -> None:
    request = RunRequest(input={"text": "hi"}, context={"source": "test"})
    data = request.to_mapping()
    assert data["request_id"].startswith("request-")
    assert data == {"input": {"text": "hi"}, "request_id": data["request_id"], "context": {"source": "test"}}
    assert RunRequest().to_mapping()["input"] == ""
    assert RunRequest(input=None).input == ""
    with pytest.raises(FabricConfigError):
        RunRequest(input=float("nan"))
    with pytest.raises(FabricConfigError):
        RunRequest(input=object())
    with pytest.raises(FabricConfigError):
        RunRequest(context=[1])  # type: ignore[arg-type]
    with pytest.raises(FabricConfigError):
        RunRequest(request_id="")


@pytest.mark.parametrize(
    "path",
    ["examples/hello/fabric.json", "examples/python-echo/fabric.json"],
)
def test_python_serialization_matches_native_canonical_json(path: str) -> None:
    raw = json.loads((REPO / path).read_text())
    config = FabricConfig.from_mapping(raw)
    canonical = Fabric().validate(config)
    assert canonical.to_mapping() == config.to_mapping()


def test_rich_config_matches_native_canonical_json() -> None:
    config = base()
    config.add_skill_path("skills/a").enable_relay(project="p").block_tools("Bash")
    config.add_mcp_server("gh", transport="stdio", url="mcp-gh", args=["--x"], env={"A": "1"})
    config.environment = EnvironmentConfig(workspace="ws", env_names=["HOME"])
    config.system_stats = None
    canonical = Fabric().validate(config)
    assert canonical.to_mapping() == config.to_mapping()


def test_validate_resolves_relative_paths_only_with_a_base_dir(tmp_path) -> None:
    config = base()
    config.add_skill_path("skills/a")
    config.environment = EnvironmentConfig(workspace="ws")
    as_written = Fabric().validate(config).to_mapping()
    assert as_written["skills"]["paths"] == ["skills/a"]
    resolved = Fabric().validate(config, base_dir=tmp_path).to_mapping()
    assert resolved["skills"]["paths"] == [str(tmp_path / "skills" / "a")]
    assert resolved["environment"]["workspace"] == str(tmp_path / "ws")


def test_native_validation_names_the_path() -> None:
    config = base()
    config.models["default"].top_p = 2.0
    with pytest.raises(FabricConfigError) as info:
        Fabric().validate(config)
    assert info.value.code == "top_p_out_of_range"
    assert info.value.details["path"] == "models.default.top_p"


def test_relay_models_match_native_canonical_json() -> None:
    from fabric_core import (
        RelayAtifConfig,
        RelayAtofConfig,
        RelayAtofFileSinkConfig,
        RelayAtofStreamSinkConfig,
        RelayObservabilityConfig,
        RelayOpenTelemetryConfig,
        RelayOpenTelemetryEndpointConfig,
    )

    config = base()
    config.enable_relay(
        output_dir="./artifacts/relay",
        observability=RelayObservabilityConfig(
            atof=RelayAtofConfig(
                enabled=True,
                sinks=[
                    RelayAtofFileSinkConfig(
                        output_directory="./artifacts/relay", filename="events.atof.jsonl", mode="overwrite"
                    ),
                    RelayAtofStreamSinkConfig(
                        name="nemo-fabric-stream", url="http://localhost:4319", transport="ndjson"
                    ),
                ],
            ),
            atif=RelayAtifConfig(enabled=True, model_name="m"),
            opentelemetry=RelayOpenTelemetryConfig(
                enabled=True,
                endpoints=[RelayOpenTelemetryEndpointConfig(type="openinference", endpoint="http://otel")],
            ),
        ),
    )
    data = config.to_mapping()
    assert data["relay"]["observability"]["atof"]["sinks"][0] == {
        "type": "file",
        "output_directory": "./artifacts/relay",
        "filename": "events.atof.jsonl",
        "mode": "overwrite",
    }
    assert Fabric().validate(config).to_mapping() == data
    # Mappings are accepted too and convert to the typed models.
    again = base().enable_relay(observability=data["relay"]["observability"])
    assert isinstance(again.relay.observability.atof.sinks[1], RelayAtofStreamSinkConfig)
    assert again.relay.observability.to_mapping() == data["relay"]["observability"]


def test_exports_cover_nemo_fabric() -> None:
    """Every name NeMo Fabric 0.5.0 exports exists here, except streams and services."""

    try:
        import nemo_fabric
    except ImportError:
        pytest.skip("nemo_fabric is missing; install it: scripts/setup.sh (pip install nemo-fabric==0.5.0)")
    import fabric_core

    later = {
        "InvokeStream",
        "OpenAIInvokeStream",
    }
    missing = sorted(set(nemo_fabric.__all__) - set(fabric_core.__all__) - later)
    assert missing == []
