"""What a cold run pays beyond the adapter's own start-up (bench/README.md).

An adapter host imports ``fabric_core.adapter_evidence`` (standard library only) at start;
importing the package must not load the SDK's models, the FFI or the client with it (that
cost every host's start-up and shutdown, and so every cold run, tens of milliseconds): the
package's public names load lazily. A host that exits on ``stop`` is reaped without any
escalation, and the run's events carry the marks the benchmark splits a cold run by.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fabric_core
from test_runtime import process_gone

PACKAGE_DIR = Path(fabric_core.__file__).resolve().parent


def fresh_modules(code: str) -> list[str]:
    """The ``fabric_core*`` modules a fresh interpreter holds after running ``code``."""

    paths = [str(PACKAGE_DIR.parent), os.environ.get("PYTHONPATH")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, paths)))
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('fabric_core'))))"
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_evidence_helper_imports_without_the_sdk() -> None:
    assert fresh_modules("import fabric_core.adapter_evidence") == ["fabric_core", "fabric_core.adapter_evidence"]


def test_a_public_name_loads_its_module_on_first_use() -> None:
    loaded = fresh_modules("from fabric_core import FabricConfig")
    assert "fabric_core.models" in loaded
    assert "fabric_core.client" not in loaded


def test_every_public_name_resolves_to_its_module_object() -> None:
    exports = fabric_core._EXPORTS
    for module, names in exports.items():
        source = __import__(module, fromlist=["_"])
        for name in names:
            assert getattr(fabric_core, name) is getattr(source, name), name
    lazy = {name for names in exports.values() for name in names}
    assert lazy | {"native_version"} == set(fabric_core.__all__)
    assert set(fabric_core.__all__) <= set(dir(fabric_core))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        fabric_core.NoSuchName  # noqa: B018
    except AttributeError as error:
        assert "NoSuchName" in str(error)
    else:
        raise AssertionError("fabric_core.NoSuchName resolved")


def test_the_type_checking_imports_match_the_lazy_table() -> None:
    tree = ast.parse((PACKAGE_DIR / "__init__.py").read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    declared: dict[str, tuple[str, ...]] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom)
        declared[node.module] = tuple(alias.name for alias in node.names)
    assert declared == fabric_core._EXPORTS


def test_an_echo_host_that_exits_on_stop_is_reaped_without_escalation(monkeypatch) -> None:
    from fcsupport import ECHO_DIR, echo_adapter_importable, echo_config_mapping

    if not echo_adapter_importable():
        pytest.skip("fabric_python_echo / nemo_fabric_adapters are missing; install them: scripts/setup.sh (pip install -e adapters/python-echo)")
    paths = [str(ECHO_DIR / "src"), str(PACKAGE_DIR.parent), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))

    config = fabric_core.FabricConfig.from_mapping(echo_config_mapping())
    result = asyncio.run(fabric_core.Fabric().run(config, input="cold"))
    assert result.status == "succeeded"
    events = {event.kind: event for event in result.events}
    stop = events["runtime_stop"].metadata
    assert stop["escalation"] == "none"
    assert stop["host_crashed"] is False
    # run() returns at the host's answer to `stop`; the exit and reap finish in the background,
    # before the 2 s grace period would have sent SIGTERM (so the host ended on its own).
    assert stop["host_reaped"] is False and stop["host_exit"] is None
    assert process_gone(int(result.metadata["host_pid"]), timeout=1.5)
    # The marks bench/python/side_by_side.py splits a cold run by, in order.
    marks = [events[kind].timestamp_millis for kind in ("runtime_start", "invocation_end", "runtime_stop")]
    assert marks == sorted(marks)
