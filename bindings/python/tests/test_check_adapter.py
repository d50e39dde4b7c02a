"""``Fabric.check_adapter``: the adapter conformance kit over the C ABI (the same checks as
``fabric adapters check``, docs/checking-adapters.md)."""

from __future__ import annotations

import asyncio
import os
import tempfile

import pytest

from fabric_core import Fabric, FabricConfig
from fabric_core.errors import FabricConfigError
from fabric_core.types import ConformanceReport
from fcsupport import REPO

FIXTURES = REPO / "tests" / "fixtures" / "conformance"
MODEL_CALLER = FIXTURES / "model_caller.fabric-adapter.json"


def test_the_scripted_adapter_passes(scripted_built) -> None:
    descriptor = REPO / "adapters" / "scripted" / "scripted.fabric-adapter.json"
    report = asyncio.run(Fabric().check_adapter(descriptor=descriptor))
    assert isinstance(report, ConformanceReport)
    failed = [check.id for check in report.checks if check.status == "failed"]
    assert failed == [], report
    assert report.summary.required_profile_passed
    assert report.adapter.adapter_id == "fabric.scripted"
    ids = {check.id for check in report.checks if check.status == "passed"}
    assert {"lifecycle.stop", "lifecycle.eof", "lifecycle.leftovers", "configs.settings.unknown_property"} <= ids


def test_a_broken_adapter_fails_its_check_with_evidence() -> None:
    report = asyncio.run(
        Fabric().check_adapter(descriptor=FIXTURES / "leak_state.fabric-adapter.json", only=["lifecycle"])
    )
    failed = [check for check in report.checks if check.status == "failed"]
    assert [check.id for check in failed] == ["lifecycle.isolation"]
    assert "leaked" in failed[0].evidence
    assert {check.group for check in report.checks} == {"lifecycle"}
    # The fixture's shared state file (what it leaks between runtimes).
    for directory in {tempfile.gettempdir(), "/tmp"}:
        path = os.path.join(directory, f"fabric-conformance-leak-{os.getuid()}")
        if os.path.exists(path):
            os.remove(path)


def test_bad_input_raises_naming_it() -> None:
    with pytest.raises(FabricConfigError) as caught:
        asyncio.run(Fabric().check_adapter("no.such.adapter"))
    assert caught.value.code == "adapter_not_found"
    with pytest.raises(Exception) as caught:
        asyncio.run(Fabric().check_adapter("fabric.scripted", only=["nonsense"]))
    assert "nonsense" in str(caught.value)


def model_caller_config() -> FabricConfig:
    # The model's base_url is unreachable: only the stub model server can answer it.
    return FabricConfig.from_mapping({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "model-stub-check"},
        "harness": {"adapter_id": "test.conformance.model-caller"},
        "discovery": {"local_paths": [str(FIXTURES)]},
        "models": {"default": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}},
    })


def test_model_stub_serves_an_adapter_that_calls_a_model() -> None:
    report = asyncio.run(
        Fabric().check_adapter(
            descriptor=MODEL_CALLER,
            config=model_caller_config(),
            only=["lifecycle"],
            model_stub={"replies": [{"text": "answered by the stub"}]},
            stop_deadline_seconds=5,
        )
    )
    status = {check.id: check.status for check in report.checks}
    assert [i for i, s in status.items() if s == "failed"] == [], report
    # The invocations reach the stub, and the kit makes the target fail through its other
    # two stubs (an HTTP 401, a malformed body): both are caused, not skipped.
    for check_id in ("lifecycle.invoke", "lifecycle.repeat", "lifecycle.target_failure",
                     "lifecycle.malformed_target_output"):
        assert status[check_id] == "passed", (check_id, report)
    # `True` is the default script.
    report = asyncio.run(
        Fabric().check_adapter(descriptor=MODEL_CALLER, config=model_caller_config(),
                               only=["lifecycle"], model_stub=True)
    )
    assert {c.id: c.status for c in report.checks}["lifecycle.invoke"] == "passed"


def test_a_bad_model_stub_or_stop_deadline_raises_naming_the_field() -> None:
    with pytest.raises(FabricConfigError) as caught:
        asyncio.run(Fabric().check_adapter(
            descriptor=MODEL_CALLER, config=model_caller_config(),
            model_stub={"replies": [{"error": {"status": 200, "message": "not an error"}}]},
        ))
    assert caught.value.code == "stub_model_script_invalid"
    assert "replies[0].error.status" in str(caught.value)
    with pytest.raises(FabricConfigError) as caught:
        asyncio.run(Fabric().check_adapter("fabric.scripted", stop_deadline_seconds=0))
    assert caught.value.code == "invalid_timeout_seconds"
    assert "stop_deadline_seconds" in str(caught.value)
