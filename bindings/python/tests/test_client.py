"""Fabric: validate, plan, doctor, run, inspect_adapter, descriptor fingerprints."""

from __future__ import annotations

import asyncio
import json

import pytest

from fabric_core import (
    AdapterCapabilityProfile,
    DoctorReport,
    Fabric,
    FabricConfigError,
    RunPlan,
    RunRequest,
    RunResult,
    inspect_adapter,
)
from fcsupport import REPO, SCRIPTED_DIR


def test_plan(config) -> None:
    plan = Fabric().plan(config, base_dir=REPO)
    assert isinstance(plan, RunPlan)
    assert plan.adapter_id == "fabric.scripted"
    assert plan.agent_name == "pytest-scripted"
    assert plan.capabilities.streaming is True  # the scripted adapter streams (OpenAI chunks)
    assert plan.fabric_config().harness.adapter_id == "fabric.scripted"
    assert len(plan["descriptor_sha256"]) == 64
    assert plan.to_mapping()["config"]["metadata"] == {"name": "pytest-scripted"}


def test_plan_resolves_relative_discovery_against_base_dir(scripted) -> None:
    config = scripted()
    config.discovery.local_paths = ["adapters/scripted"]
    assert Fabric().plan(config, base_dir=REPO).adapter_id == "fabric.scripted"
    with pytest.raises(FabricConfigError):
        Fabric().plan(config, base_dir=REPO / "docs")


def test_plan_finds_bundled_adapters_without_discovery_paths(scripted, monkeypatch) -> None:
    # The executable is `python`, so the library falls back to the checkout's `adapters/`.
    monkeypatch.delenv("FABRIC_BUNDLED_ADAPTERS", raising=False)
    monkeypatch.delenv("FABRIC_ADAPTER_PATH", raising=False)
    config = scripted()
    config.discovery = None
    plan = Fabric().plan(config, base_dir=REPO)
    assert plan.adapter_id == "fabric.scripted"
    provenance = plan.to_mapping()["adapter_descriptor"]["provenance"]
    assert provenance[0]["source"] == "bundled"
    assert provenance[0]["path"].endswith("scripted.fabric-adapter.json")


def test_doctor(config) -> None:
    report = asyncio.run(Fabric().doctor(config, base_dir=REPO))
    assert isinstance(report, DoctorReport)
    assert report.status in ("pass", "warn")
    names = [check.name for check in report.checks]
    assert "config" in names and "adapter_descriptor" in names
    assert all(check.status in ("pass", "warn", "fail") for check in report.checks)


def test_doctor_reports_failures_without_raising(scripted) -> None:
    config = scripted()
    config.add_mcp_server("gh", transport="stdio", url="mcp")
    report = asyncio.run(Fabric().doctor(config))
    assert report.status == "fail"
    assert any(check.status == "fail" for check in report.checks)


def test_run_with_input(config) -> None:
    result = asyncio.run(Fabric().run(config, input="hello"))
    assert isinstance(result, RunResult)
    assert result.status == "succeeded"
    assert result.succeeded
    assert result.output.response == "echo: hello"
    assert result.error is None
    assert result.runtime_id.startswith("runtime-")
    assert result.invocation_id.startswith("invocation-")
    assert result.request_id.startswith("request-")
    kinds = [event.kind for event in result.events]
    assert kinds[0] == "runtime_start" and kinds[-1] == "runtime_stop"
    assert result.artifacts.artifacts == ()


def test_run_with_request_usage_and_failed_result(scripted) -> None:
    config = scripted(
        [
            {"response": "ok {input}", "usage": {"input_tokens": 3, "output_tokens": 2}},
            {"fail": {"code": "scripted_failure", "message": "nope"}},
        ]
    )
    request = RunRequest(input="a", request_id="request-mine", context={"source": "pytest"})
    result = asyncio.run(Fabric().run(config, request=request))
    assert result.request_id == "request-mine"
    assert result.output.response == "ok a"
    assert result.usage.input_tokens == 3
    assert result.usage.get("cached_input_tokens") is None
    assert result.usage.cost_usd is None


def test_harness_failure_is_a_result_not_an_exception(scripted) -> None:
    config = scripted([{"fail": {"code": "scripted_failure", "message": "nope"}}])
    result = asyncio.run(Fabric().run(config, input="x"))
    assert result.status == "failed"
    assert result.error.code == "scripted_failure"
    assert result.error.stage == "invoke"


def test_results_tolerate_unknown_fields() -> None:
    result = RunResult.from_mapping(
        {
            "status": "succeeded",
            "runtime_id": "runtime-1",
            "invocation_id": "invocation-1",
            "request_id": "request-1",
            "output": {"response": "r", "extra": 1},
            "brand_new_field": {"x": [1, 2]},
            "events": [{"kind": "k", "new_event_field": True}],
        }
    )
    assert result.extra_fields == {"brand_new_field": {"x": [1, 2]}}
    assert result.events[0]["new_event_field"] is True
    assert result.usage is None and result.error is None
    assert result.to_mapping()["brand_new_field"] == {"x": [1, 2]}
    with pytest.raises(AttributeError):
        result.status = "x"  # type: ignore[misc]


def test_expected_descriptor_sha256(config) -> None:
    plan = Fabric().plan(config)
    good = plan["descriptor_sha256"]
    result = asyncio.run(Fabric().run(config, input="x", expected_descriptor_sha256=good))
    assert result.status == "succeeded"
    with pytest.raises(FabricConfigError) as info:
        asyncio.run(Fabric().run(config, input="x", expected_descriptor_sha256="0" * 64))
    assert info.value.code == "descriptor_mismatch"
    # Enforced by the core in the one native call (options object), at stage plan.
    assert info.value.stage == "plan"
    assert info.value.details["expected_sha256"] == "0" * 64
    assert info.value.details["actual_sha256"] == good
    with pytest.raises(FabricConfigError) as info:
        asyncio.run(Fabric().start_runtime(config, expected_descriptor_sha256="0" * 64))
    assert info.value.code == "descriptor_mismatch"


def test_unknown_option_key_names_the_field(config) -> None:
    from fabric_core import _ffi

    library = _ffi.library()
    payload = json.dumps(config.to_mapping()).encode()
    with pytest.raises(FabricConfigError) as info:
        library.fabric_plan(payload, b'{"base_dir": ".", "bogus": 1}', _ffi.out_slot())
    assert info.value.code == "unknown_field"
    assert info.value.details["path"] == "options.bogus"


def test_inspect_adapter(scripted) -> None:
    descriptor = json.loads((SCRIPTED_DIR / "scripted.fabric-adapter.json").read_text())
    config = scripted()
    profile = inspect_adapter(config, descriptor)
    assert isinstance(profile, AdapterCapabilityProfile)
    assert profile.adapter_id == "fabric.scripted"
    assert profile.skills is True
    assert profile.mcp is False
    assert profile.atif is False
    assert profile.descriptor_sha256 == Fabric().plan(config)["descriptor_sha256"]

    without = inspect_adapter(config, None)
    assert without.skills is False and without.descriptor_sha256 is None

    config.add_skill_path("skills/a")
    with pytest.raises(FabricConfigError) as info:
        inspect_adapter(config, None)
    assert info.value.details.get("path") == "skills"
