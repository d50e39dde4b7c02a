"""Shared helpers: the repository layout, the scripted and Python echo adapters.

The tests exercise the installed ``fabric_core`` package (``pip install ./bindings/python``)
or, for development, the library named by ``FABRIC_CORE_LIB`` with ``bindings/python/src``
on ``PYTHONPATH``. The scripted adapter binary must be built (``cargo build``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPTED_DIR = REPO / "adapters" / "scripted"
ECHO_DIR = REPO / "adapters" / "python-echo"

# Python adapters run with this interpreter (it has the adapter's dependencies).
os.environ.setdefault("ADAPTER_PYTHON", sys.executable)


def _scripted_binary_present() -> bool:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return any((target / profile / "fabric-adapter-scripted").exists() for profile in ("debug", "release"))


def scripted_config(replies: list[Any] | None = None, **settings: Any):
    """A FabricConfig for the scripted adapter, found through ``discovery.local_paths``."""

    from fabric_core import DiscoveryConfig, FabricConfig, HarnessConfig, MetadataConfig, RuntimeConfig

    harness_settings: dict[str, Any] = dict(settings)
    if replies is not None:
        harness_settings["replies"] = replies
    return FabricConfig(
        metadata=MetadataConfig(name="pytest-scripted"),
        harness=HarnessConfig(adapter_id="fabric.scripted", settings=harness_settings),
        discovery=DiscoveryConfig(local_paths=[str(SCRIPTED_DIR)]),
        runtime=RuntimeConfig(max_turns=4, timeout_seconds=60),
    )


def echo_config_mapping() -> dict[str, Any]:
    data = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    data["discovery"] = {"local_paths": [str(ECHO_DIR)]}
    return data


def echo_adapter_importable() -> bool:
    try:
        import fabric_python_echo  # noqa: F401
        import nemo_fabric_adapters  # noqa: F401
    except ImportError:
        return False
    return True


def interpreter() -> str:
    """The venv with upstream nemo-fabric 0.5.0 and fabric-python-echo (``FABRIC_TEST_PYTHON``);
    a test fails without it (``tests/fabric_dependency.py``)."""

    python = os.environ.get("FABRIC_TEST_PYTHON")
    if not python:
        pytest.skip("FABRIC_TEST_PYTHON is not set; make the venv with scripts/setup.sh (nemo-fabric 0.5.0 and fabric-python-echo)")
    return python


def binding_paths() -> list[str]:
    """``PYTHONPATH`` entries a child process needs to import the ``fabric_core`` under test:
    the source tree in development mode (``FABRIC_CORE_LIB`` names the library), else none
    (the installed package, which bundles its library)."""

    return [str(REPO / "bindings" / "python" / "src")] if os.environ.get("FABRIC_CORE_LIB") else []
