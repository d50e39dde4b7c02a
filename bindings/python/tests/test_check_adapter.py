"""``Fabric.check_adapter``: the adapter conformance kit over the C ABI (the same checks as
``fabric adapters check``, docs/checking-adapters.md)."""

from __future__ import annotations

import asyncio
import os
import tempfile

import pytest

from fabric_core import Fabric
from fabric_core.errors import FabricConfigError
from fabric_core.types import ConformanceReport
from fcsupport import REPO

FIXTURES = REPO / "tests" / "fixtures" / "conformance"


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
