"""The Pydantic-shaped model methods (``model_validate``, ``model_dump``, ...), checked
against NeMo Fabric 0.5.0's own Pydantic models on the same inputs, and upstream model
instances passed where a config or request is taken."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

import fabric_core
from fabric_core import (
    AdapterCapabilityProfile,
    CheckRequest,
    DiscoveryConfig,
    Fabric,
    FabricConfig,
    FabricConfigError,
    HarnessConfig,
    McpAuthenticationConfig,
    MetadataConfig,
    ModelConfig,
    RelayS3StorageConfig,
    RunRequest,
    RunResult,
    RuntimeConfig,
    inspect_adapter,
)
from fabric_core._sdk_model import SdkModel
from fcsupport import SCRIPTED_DIR

METHODS = ("model_validate", "model_validate_json", "model_dump", "model_dump_json", "model_json_schema", "model_copy")

#: One config touching every section whose fields NeMo Fabric 0.5.0 shares with us.
RICH: dict[str, Any] = {
    "metadata": {"name": "rich", "description": "d"},
    "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": ["a"], "k": None}},
    "discovery": {"local_paths": ["adapters/scripted"]},
    "runtime": {"timeout_seconds": 30, "max_turns": 3, "artifacts": "out"},
    "environment": {"provider": "local", "workspace": "ws", "env": {"HOME": "HOME"}},
    "models": {"default": {"provider": "openai", "model": "m", "api_key_env": "OPENAI_API_KEY", "temperature": 0.2}},
    "instructions": {"system": {"content": "be brief", "mode": "append"}},
    "mcp": {
        "servers": {
            "gh": {"transport": "stdio", "url": "mcp-gh", "args": ["-v"], "allowed_tools": ["a"]},
            "web": {
                "transport": "streamable-http",
                "url": "https://x.example/mcp",
                "authentication": {"type": "oauth2", "client_id": "c"},
                "allowed_tools": [],
            },
        }
    },
    "skills": {"paths": ["skills/a"]},
    "tools": {"blocked": ["Bash"], "definitions": {"search": {"kind": "python", "ref": "m:f", "settings": {"x": 1}}}},
    "telemetry": {"providers": {"relay": {"enabled": True}}},
    "relay": {"project": "p", "output_dir": "relay-out"},
    "x-extension": {"kept": True},
}

REQUEST: dict[str, Any] = {
    "input": {"q": 1},
    "request_id": "r1",
    "context": {"a": None},
    "overrides": {"model": {"temperature": 0.1}},
}


def _upstream():
    """NeMo Fabric 0.5.0 (the oracle; installed by scripts/setup.sh)."""

    try:
        import nemo_fabric
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("upstream nemo-fabric 0.5.0 is not importable")
        pytest.skip("upstream nemo-fabric 0.5.0 is not importable")
    return nemo_fabric


def _models() -> list[type]:
    names = [name for name in fabric_core.__all__ if name[:1].isupper()]
    found = [getattr(fabric_core, name) for name in names]
    return [item for item in found if isinstance(item, type) and issubclass(item, (fabric_core.FabricBaseModel, fabric_core.FabricMapping))]


def test_every_public_model_has_the_sdk_methods() -> None:
    models = _models()
    assert FabricConfig in models and RunResult in models and AdapterCapabilityProfile in models
    for model in models:
        assert issubclass(model, SdkModel), model
        for method in METHODS:
            assert callable(getattr(model, method, None)), (model, method)
        schema = model.model_json_schema()
        assert isinstance(schema.get("title"), str) and json.loads(json.dumps(schema)) == schema, model


def test_config_dump_matches_upstream() -> None:
    up = _upstream()
    ours = FabricConfig.model_validate(RICH)
    theirs = up.FabricConfig.model_validate(RICH)
    assert ours.model_dump(mode="json") == theirs.model_dump(mode="json")
    assert list(ours.model_dump(mode="json")) == list(theirs.model_dump(mode="json"))
    assert ours.model_dump(mode="json", exclude_none=True) == theirs.model_dump(mode="json", exclude_none=True)
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours.model_dump_json(indent=2) == theirs.model_dump_json(indent=2)
    assert ours.model_dump(include={"metadata", "runtime"}) == theirs.model_dump(include={"metadata", "runtime"})
    assert ours.model_dump(exclude={"mcp", "tools"}, mode="json") == theirs.model_dump(exclude={"mcp", "tools"}, mode="json")
    assert ours.model_dump(by_alias=True, mode="json") == theirs.model_dump(by_alias=True, mode="json")


def test_config_built_with_constructors_and_helpers_matches_upstream() -> None:
    up = _upstream()

    def build(lib: Any) -> Any:
        config = lib.FabricConfig(
            metadata=lib.MetadataConfig(name="typed"),
            harness=lib.HarnessConfig(adapter_id="fabric.scripted"),
            discovery=lib.DiscoveryConfig(local_paths=["adapters/scripted"]),
            runtime=lib.RuntimeConfig(max_turns=2, timeout_seconds=12.5),
            models={"default": lib.ModelConfig(provider="openai", model="m")},
        )
        config.add_skill_path("skills/a").block_tools("Bash", "WebFetch")
        return config.add_mcp_server("gh", transport="stdio", url="mcp-gh", args=["-v"])

    ours, theirs = build(fabric_core), build(up)
    assert ours.model_dump(mode="json") == theirs.model_dump(mode="json")
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours.model_dump(mode="json", exclude_defaults=True) == theirs.model_dump(mode="json", exclude_defaults=True)


def test_request_dump_matches_upstream() -> None:
    up = _upstream()
    ours, theirs = RunRequest.model_validate(REQUEST), up.RunRequest.model_validate(REQUEST)
    assert ours.model_dump(mode="json") == theirs.model_dump(mode="json")
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours.model_dump() == theirs.model_dump()


def test_json_round_trips_both_ways() -> None:
    up = _upstream()
    ours = FabricConfig.model_validate(RICH)
    again = FabricConfig.model_validate_json(ours.model_dump_json())
    assert again.model_dump(mode="json") == ours.model_dump(mode="json")
    assert again.to_mapping() == ours.to_mapping()
    # Our JSON is upstream's input, and upstream's JSON is ours. (Upstream rejects its own
    # full dump here: an explicit `token_url: null` fails its oauth2 check; without nulls it
    # reads it.)
    theirs = up.FabricConfig.model_validate_json(ours.model_dump_json(exclude_none=True))
    assert theirs.model_dump_json() == ours.model_dump_json()
    assert FabricConfig.model_validate_json(theirs.model_dump_json().encode()).model_dump_json() == ours.model_dump_json()
    request = RunRequest.model_validate_json(up.RunRequest.model_validate(REQUEST).model_dump_json())
    assert request.to_mapping() == RunRequest.model_validate(REQUEST).to_mapping()


BAD_CONFIGS = [
    {"metadata": {"name": 5}},
    {"harness": {"adapter_id": "a"}},
    {"metadata": {"name": "x"}, "runtime": {"max_turns": [3]}},
    {"metadata": {"name": "x"}, "models": {"default": {"provider": 1, "model": "m"}}},
    {"metadata": {"name": "x"}, "harness": {"adapter_id": "a", "settings": ["no"]}},
    {"metadata": {"name": "x"}, "mcp": {"servers": {"gh": {"transport": "bogus", "url": "u"}}}},
    {"metadata": {"name": "x"}, "mcp": {"servers": {"gh": {"transport": "stdio"}}}},
    {"metadata": {"name": "x"}, "instructions": {"system": {"content": "c", "mode": "prepend"}}},
]


@pytest.mark.parametrize("bad", BAD_CONFIGS, ids=lambda bad: json.dumps(bad)[:60])
def test_validate_errors_name_the_field_upstream_names(bad: dict[str, Any]) -> None:
    up = _upstream()
    with pytest.raises(Exception) as theirs:
        up.FabricConfig.model_validate(bad)
    upstream_path = ".".join(str(part) for part in theirs.value.errors()[0]["loc"])
    with pytest.raises(FabricConfigError) as ours:
        FabricConfig.model_validate(bad)
    assert ours.value.details["path"] == upstream_path
    assert upstream_path in str(ours.value)
    assert ours.value.code in ("missing_field", "invalid_config_type")
    assert ours.value.stage == "config"


def test_validate_errors_for_requests_and_json() -> None:
    up = _upstream()
    with pytest.raises(Exception):
        up.RunRequest.model_validate({"context": ["no"]})
    with pytest.raises(FabricConfigError) as info:
        RunRequest.model_validate({"context": ["no"]})
    assert info.value.details["path"] == "context"
    with pytest.raises(FabricConfigError) as info:
        FabricConfig.model_validate_json("{not json")
    assert info.value.code == "invalid_json"
    with pytest.raises(FabricConfigError) as info:
        FabricConfig.model_validate(["not", "a", "mapping"])
    assert info.value.code == "invalid_config_type"
    with pytest.raises(FabricConfigError) as info:
        RunResult.model_validate({"status": "succeeded"})
    assert info.value.code == "missing_field" and info.value.details["path"] in RunResult._required


def test_model_copy_update_and_deep_as_pydantic() -> None:
    up = _upstream()
    for lib in (fabric_core, up):
        config = lib.FabricConfig.model_validate(RICH)
        shallow = config.model_copy(update={"metadata": lib.MetadataConfig(name="other"), "x-new": 1})
        assert shallow.metadata.name == "other" and config.metadata.name == "rich"
        assert shallow.runtime is config.runtime  # shallow: nested models are shared
        assert shallow.extra_fields["x-new"] == 1 and "x-new" not in config.extra_fields
        deep = config.model_copy(deep=True)
        assert deep.runtime is not config.runtime
        deep.runtime.max_turns = 9
        assert config.runtime.max_turns == 3
        assert config.model_copy().model_dump() == config.model_dump()
    profile = AdapterCapabilityProfile.model_validate({"adapter_id": "a", "skills": True, "mcp": False, "atif": False})
    updated = profile.model_copy(update={"skills": False})
    assert updated.skills is False and profile.skills is True


def test_json_schema_comes_from_the_rust_types() -> None:
    schema = FabricConfig.model_json_schema()
    assert schema["title"] == "FabricConfig" and "metadata" in schema["required"]
    text = json.dumps(schema)
    for name in ("MetadataConfig", "HarnessConfig", "McpServerConfig"):
        assert name in schema["$defs"]
    refs = {part.split('"')[0] for part in text.split('"$ref": "#/$defs/')[1:]}
    assert refs <= set(schema["$defs"])
    assert McpAuthenticationConfig.model_json_schema()["oneOf"]
    assert RunRequest.model_json_schema()["title"] == "RunRequest"
    assert CheckRequest.model_json_schema()["title"] == "CheckRequest"
    assert "status" in RunResult.model_json_schema()["properties"]
    custom = FabricConfig.model_json_schema(ref_template="#/components/schemas/{model}")
    assert '"#/components/schemas/MetadataConfig"' in json.dumps(custom)
    # A typed view of a member the Rust types leave free-form.
    assert RelayS3StorageConfig.model_json_schema()["properties"].keys() >= {"type", "bucket"}


def test_result_models_dump_as_the_core_wrote_them() -> None:
    data = {"adapter_id": "a", "skills": True, "mcp": False, "atif": False, "descriptor_sha256": None}
    profile = AdapterCapabilityProfile.model_validate(data)
    assert profile.model_dump() == data
    assert profile.model_dump(exclude_none=True) == {"adapter_id": "a", "skills": True, "mcp": False, "atif": False}
    assert json.loads(profile.model_dump_json()) == data
    assert AdapterCapabilityProfile.model_validate_json(profile.model_dump_json()) == profile


def test_pydantic_is_not_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fabric_core; c = fabric_core.FabricConfig.model_validate({'metadata': {'name': 'x'}});"
        "c.model_dump_json(); c.model_copy(update={}); fabric_core.FabricConfig.model_json_schema();"
        "print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ))
    assert out.stdout.strip() == "False"


def _upstream_scripted(up: Any) -> Any:
    return up.FabricConfig(
        metadata=up.MetadataConfig(name="pytest-scripted"),
        harness=up.HarnessConfig(adapter_id="fabric.scripted", settings={"replies": ["echo: {input}"]}),
        discovery=up.DiscoveryConfig(local_paths=[str(SCRIPTED_DIR)]),
        runtime=up.RuntimeConfig(max_turns=4, timeout_seconds=60),
    )


def test_upstream_models_are_accepted_by_plan_and_run(scripted) -> None:
    up = _upstream()
    theirs = _upstream_scripted(up)
    ours = scripted(["echo: {input}"])
    fabric = Fabric()
    assert fabric.plan(theirs)["descriptor_sha256"] == fabric.plan(ours)["descriptor_sha256"]
    assert fabric.validate(theirs).to_mapping() == fabric.validate(ours).to_mapping()
    descriptor = json.loads((SCRIPTED_DIR / "scripted.fabric-adapter.json").read_text())
    assert inspect_adapter(theirs, descriptor) == inspect_adapter(ours, descriptor)

    import asyncio

    async def run() -> Any:
        return await fabric.run(theirs, request=up.RunRequest(input="hello", request_id="upstream-1"))

    result = asyncio.run(run())
    assert result.status == "succeeded", result.error
    assert result.request_id == "upstream-1"
    assert "echo: hello" in result.model_dump_json()


def test_a_mapping_is_still_not_a_config() -> None:
    with pytest.raises(FabricConfigError) as info:
        Fabric().plan({"metadata": {"name": "x"}})  # type: ignore[arg-type]
    assert info.value.code == "invalid_config_type"
    assert isinstance(FabricConfig(metadata=MetadataConfig(name="x"), harness=HarnessConfig(adapter_id="a"), discovery=DiscoveryConfig(), runtime=RuntimeConfig(), models={"m": ModelConfig(provider="p", model="m")}), SdkModel)


class _ForeignCheckRequest:
    """Another library's model (NeMo Fabric 0.5.0 has no CheckRequest): duck-typed on
    ``model_dump``."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        return dict(self.fields)


def test_check_takes_a_foreign_request_model() -> None:
    import asyncio

    fabric = Fabric()
    report = asyncio.run(
        fabric.check(request=_ForeignCheckRequest(scope="runtime", runtime_id="no-such-runtime", level="live", timeout_seconds=1.0))
    )
    assert report.outcome == "unknown"
    with pytest.raises(FabricConfigError) as info:
        asyncio.run(fabric.check(request=_ForeignCheckRequest(scope="runtime", level=5)))
    assert info.value.details["path"] == "level"
