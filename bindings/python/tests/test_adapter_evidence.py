"""Software evidence on the adapter side (``fabric_core.adapter_evidence``): the bounded
dist-info attribution, every collector limit, the one-worker deadline (with an injected
lookup that blocks until released, so no timing assertion), the ``enabled`` switch, and a
Python adapter's report in ``RunResult.execution`` through the binding (issue 18)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

_MODULE_PATH = Path(__file__).resolve().parents[1] / "src" / "fabric_core" / "adapter_evidence.py"


def _load() -> Any:
    # Loaded from its file: the module must work without the native library.
    spec = importlib.util.spec_from_file_location("fabric_adapter_evidence_under_test", _MODULE_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ev = _load()


def _dist(site: Path, name: str, version: str, files: list[str], header_padding: int = 0) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    padding = "".join(f"Classifier: {'x' * 60}\n" for _ in range(header_padding))
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\n{padding}Name: {name}\nVersion: {version}\n\nbody\n")
    (info / "RECORD").write_text("".join(f"{f},sha256=abc,1\n" for f in files))


def test_a_loaded_module_is_attributed_to_the_distribution_that_records_it(tmp_path: Path) -> None:
    _dist(tmp_path, "other_pkg", "9.0", ["other/__init__.py"])
    _dist(tmp_path, "my_pkg", "1.2.3rc1+local", ["my_pkg/__init__.py"])
    assert ev.attribute(str(tmp_path), "my_pkg/__init__.py", "my_pkg") == ("my_pkg", "1.2.3rc1+local")
    # A shadowing source tree (or an editable checkout): no RECORD lists the loaded file.
    with pytest.raises(ev._Missing) as missing:
        ev.attribute(str(tmp_path), "shadow/__init__.py", "my_pkg")
    assert missing.value.reason == "metadata_not_found"


def test_more_than_4096_candidate_metadata_files_is_a_limit(tmp_path: Path) -> None:
    for index in range(ev.MAX_METADATA_FILES + 1):
        (tmp_path / f"pkg{index}-1.0.dist-info").mkdir()
    with pytest.raises(ev._Missing) as missing:
        ev.attribute(str(tmp_path), "pkg0/__init__.py", "pkg0")
    assert missing.value.reason == "metadata_file_limit_reached"


def test_more_than_64_kib_of_headers_is_a_limit(tmp_path: Path) -> None:
    _dist(tmp_path, "big", "1.0", ["big/__init__.py"], header_padding=1200)  # ~86 KiB
    with pytest.raises(ev._Missing) as missing:
        ev.attribute(str(tmp_path), "big/__init__.py", "big")
    assert missing.value.reason == "metadata_file_limit_reached"


def test_more_than_512_kib_of_record_data_is_a_limit(tmp_path: Path) -> None:
    files = [f"big/file{index:06d}_{'y' * 40}.py" for index in range(12000)] + ["big/__init__.py"]
    _dist(tmp_path, "big", "1.0", files)  # ~700 KiB before the module's line
    with pytest.raises(ev._Missing) as missing:
        ev.attribute(str(tmp_path), "big/__init__.py", "big")
    assert missing.value.reason == "metadata_file_limit_reached"


def _inventory(report: dict[str, Any]) -> dict[str, Any]:
    (inventory,) = report["inventories"]
    assert inventory["participants"] == ["guest_sdk", "adapter"]
    assert inventory["entries"][0]["role"] == "interpreter"
    return inventory


def test_more_than_32_lookups_reports_the_rest_as_unknown() -> None:
    targets = [f"t{index}" for index in range(ev.MAX_LOOKUPS + 1)]
    report = ev.collect(targets, lookup=lambda target: (f"dist-{target}", "1.0"))
    entries = _inventory(report)["entries"][1:]
    assert [e["version"].get("value") for e in entries[:32]] == ["1.0"] * 32
    assert entries[32]["version"] == {"status": "unknown", "reason": "lookup_limit_reached"}
    assert report["coverage"] == {
        "status": "incomplete",
        "gaps": [{"participant": "guest_sdk", "reason": "lookup_limit_reached"}],
    }


def test_the_deadline_leaves_unfinished_lookups_unknown_and_one_worker_at_most() -> None:
    release = threading.Event()
    entered = threading.Event()

    def slow(target: str) -> tuple[str, str]:
        if target == "slow":
            entered.set()
            release.wait()
        return target, "2.0"

    try:
        # The lookup blocks until released, so the deadline passes whatever the timing.
        report = ev.collect(["fast", "slow"], lookup=slow, deadline=0.05)
        entries = _inventory(report)["entries"][1:]
        assert entered.is_set()
        assert entries[0]["version"]["value"] == "2.0"
        assert entries[1]["version"] == {"status": "unknown", "reason": "collection_deadline_exceeded"}
        assert report["coverage"]["gaps"] == [{"participant": "guest_sdk", "reason": "collection_deadline_exceeded"}]
        # The first worker is still out: a second snapshot starts none.
        second = ev.collect(["fast"], lookup=slow, deadline=5.0)
        assert _inventory(second)["entries"][1]["version"]["reason"] == "collection_deadline_exceeded"
    finally:
        release.set()
        worker = ev.last_worker()
        if worker is not None:
            worker.join()


def test_a_failing_lookup_is_unavailable_not_an_error() -> None:
    def broken(target: str) -> tuple[str, str]:
        raise ValueError("boom")

    report = ev.collect(["x"], lookup=broken)
    assert _inventory(report)["entries"][1]["version"] == {"status": "unavailable", "reason": "metadata_not_found"}


def test_the_installed_lookup_attributes_an_imported_distribution() -> None:
    pytest.importorskip(
        "nemo_fabric_adapters.common",
        reason="nemo_fabric_adapters.common is missing; install it: scripts/setup.sh (pip install nemo-fabric-adapters-common==0.5.0)",
    )
    from importlib.metadata import version

    report = ev.collect(["nemo_fabric_adapters.common", "not_imported_module_xyz"])
    entries = _inventory(report)["entries"]
    assert len(entries) == 2, "targets that are not imported are not selected"
    assert entries[1]["name"] == "nemo-fabric-adapters-common"
    assert entries[1]["version"]["value"] == version("nemo-fabric-adapters-common")
    assert entries[1]["version"]["origin"] == "adapter"


class _Runtime:
    async def start(self, payload: dict[str, Any]) -> None:
        return None


def test_disabled_or_unasked_evidence_does_no_collector_work() -> None:
    calls: list[list[str]] = []

    def collector(targets: list[str]) -> dict[str, Any]:
        calls.append(targets)
        return {"inventories": []}

    runtime = ev.EvidenceRuntime(_Runtime(), collector=collector)
    for payload in ({"provenance": {"enabled": False}}, {}):
        assert asyncio.run(runtime.start(payload)) is None
    assert calls == []
    output = asyncio.run(runtime.start({"provenance": {"enabled": True}}))
    assert output == {"execution": {"inventories": []}}
    assert calls and calls[0][0] == __name__.split(".", 1)[0]


def test_a_python_adapter_reports_its_evidence_in_the_run_result(monkeypatch) -> None:
    from fcsupport import ECHO_DIR, REPO, echo_adapter_importable, echo_config_mapping

    from fabric_core import Fabric, FabricConfig, __version__

    if not echo_adapter_importable():
        pytest.skip("fabric_python_echo / nemo_fabric_adapters are missing; install them: scripts/setup.sh (pip install -e adapters/python-echo)")
    # The host imports this checkout's adapter and adapter helpers.
    paths = [str(ECHO_DIR / "src"), str(REPO / "bindings" / "python" / "src"), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))

    result = asyncio.run(Fabric().run(FabricConfig.from_mapping(echo_config_mapping()), input="hi"))
    assert result.status == "succeeded"
    execution = result["execution"]
    core, guest = execution["inventories"]
    assert [e["name"] for e in core["entries"]] == ["fabric-core", "fabric-core", sys.implementation.name]
    assert core["entries"][1]["version"]["value"] == __version__
    assert guest["context_ref"] == "ctx-2"
    names = {e["name"]: e["version"] for e in guest["entries"]}
    assert names["nemo-fabric-adapters-common"]["value"] == "0.5.0"
    # The adapter runs from this checkout's source tree: not attributed to installed metadata.
    assert names["fabric_python_echo"] == {"status": "unavailable", "reason": "metadata_not_found"}
    assert execution["coverage"]["status"] == "complete", execution


def test_disabled_evidence_through_the_binding_has_no_execution() -> None:
    from fcsupport import scripted_config

    from fabric_core import Fabric, ProvenanceConfig

    config = scripted_config()
    config.provenance = ProvenanceConfig(enabled=False)
    result = asyncio.run(Fabric().run(config, input="hi"))
    assert result.status == "succeeded"
    assert result.get("execution") is None


def test_the_documented_example_prints_what_docs_provenance_md_says() -> None:
    import re
    import subprocess

    from fcsupport import REPO

    text = (REPO / "docs" / "provenance.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    expected = re.findall(r"prints\n\n```text\n(.*?)```", text, flags=re.S)[0]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=dict(os.environ), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
