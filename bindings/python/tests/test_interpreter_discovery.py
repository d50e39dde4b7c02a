"""Issue 15 item 8: adapters installed in the running interpreter's prefix are found, and run
with that interpreter, when its environment is not activated — as upstream's SDK does.

A program is run with a virtual environment's interpreter by absolute path, from a neutral
temporary directory, with a clean environment: no ``VIRTUAL_ENV``, no ``ADAPTER_PYTHON``, no
``FABRIC_ADAPTER_PATH``, ``PATH`` without the environment, and an empty bundled adapters
directory (so only the interpreter's prefix can supply the descriptor). The same program runs
against upstream ``nemo_fabric`` 0.5.0 and ``fabric_core``; both must plan and run.

- python-echo: a throwaway environment (``python -m venv --without-pip``) whose
  ``share/nemo-fabric/adapters/python-echo`` holds the descriptor, as a wheel install puts it
  (the development venv's install of it is editable, which installs no data files); its
  ``site-packages`` reaches the development venv's packages through a ``.pth`` file.
- mini-swe-agent: planned straight from the development venv, whose
  ``share/nemo-fabric/adapters`` holds upstream's installed descriptors.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fcsupport import ECHO_DIR, binding_paths

SCRIPT = r'''
import asyncio, json, sys
from MODULE import Fabric, FabricConfig

ADAPTER = sys.argv[1]
RUN = sys.argv[2] == "run"


def config():
    mapping = {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "interpreter-discovery"},
        "harness": {"adapter_id": ADAPTER},
        "runtime": {"timeout_seconds": 60},
    }
    if ADAPTER == "fabric.python-echo":
        mapping["harness"]["settings"] = {"prefix": "echo: "}
    else:
        mapping["models"] = {"default": {"provider": "openai", "model": "stub", "api_key_env": "FABRIC_DUMMY_KEY"}}
    return FabricConfig.from_mapping(mapping)


async def main():
    fabric = Fabric()
    plan = fabric.plan(config()).to_mapping()
    provenance = plan["adapter_descriptor"]["provenance"]
    out = {"adapter_id": plan["adapter_descriptor"]["descriptor"]["adapter_id"],
           "sources": [p["source"] for p in provenance], "paths": [p["path"] for p in provenance]}
    if RUN:
        result = (await fabric.run(config(), input="hello")).to_mapping()
        out["status"] = result["status"]
        out["output"] = result.get("output")
        out["error"] = result.get("error")
    print(json.dumps(out))


asyncio.run(main())
'''


def _require(condition: bool, message: str) -> None:
    if not condition:
        pytest.skip(message)


@pytest.fixture(scope="module")
def venv_python() -> Path:
    python = os.environ.get("FABRIC_TEST_PYTHON")
    _require(bool(python), "FABRIC_TEST_PYTHON is not set (a venv with nemo-fabric 0.5.0 and fabric-python-echo)")
    # Keep the venv's own path: resolving the symlink would name the base interpreter.
    return Path(os.path.abspath(python))


def _site_packages(python: Path) -> str:
    return subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout.strip()


@pytest.fixture(scope="module")
def echo_venv(venv_python: Path, tmp_path_factory) -> Path:
    """A venv with python-echo installed the way a wheel installs it; returns its python."""

    root = tmp_path_factory.mktemp("interp") / "venv"
    subprocess.run(
        [str(venv_python), "-m", "venv", "--without-pip", str(root)],
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    python = root / "bin" / "python"
    outer = _site_packages(venv_python)
    inner = Path(_site_packages(python))
    # This checkout's adapter first, then the development venv's packages (with their .pth).
    (inner / "fabric_test_outer.pth").write_text(
        f"{ECHO_DIR / 'src'}\nimport site; site.addsitedir({outer!r})\n"
    )
    share = root / "share" / "nemo-fabric" / "adapters" / "python-echo"
    share.mkdir(parents=True)
    shutil.copy(ECHO_DIR / "python-echo.fabric-adapter.json", share)
    return python


def _run(python: Path, module: str, adapter: str, mode: str, tmp_path: Path) -> dict:
    workdir = tmp_path / f"cwd-{module}"
    workdir.mkdir()
    bundled = tmp_path / "no-bundled-adapters"
    bundled.mkdir(exist_ok=True)
    script = workdir / "program.py"
    script.write_text(SCRIPT.replace("MODULE", module))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "FABRIC_DUMMY_KEY": "dummy",
        # Only the interpreter's prefix may supply a descriptor: no checkout fallback.
        "FABRIC_BUNDLED_ADAPTERS": str(bundled),
    }
    if module == "fabric_core":
        # The binding and library under test (not a discovery source).
        if binding_paths():
            env["PYTHONPATH"] = os.pathsep.join(binding_paths())
        if os.environ.get("FABRIC_CORE_LIB"):
            env["FABRIC_CORE_LIB"] = os.environ["FABRIC_CORE_LIB"]
    result = subprocess.run(
        [str(python), str(script), adapter, mode],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_python_echo_is_found_and_run_from_the_interpreter_prefix(echo_venv: Path, tmp_path) -> None:
    descriptor = echo_venv.parent.parent / "share/nemo-fabric/adapters/python-echo/python-echo.fabric-adapter.json"
    # Upstream finds the same descriptor (reported as `installed_package`) ...
    upstream = _run(echo_venv, "nemo_fabric", "fabric.python-echo", "plan", tmp_path)
    assert upstream["paths"] == [str(descriptor)]
    assert upstream["sources"] == ["installed_package"]
    # ... and ours names the source and runs the adapter with the calling interpreter.
    # (Upstream 0.5.0 starts python hosts with the resolved base interpreter, which lacks
    # the venv's packages, so its run fails here with `No module named fabric_python_echo`;
    # see docs/python.md.)
    ours = _run(echo_venv, "fabric_core", "fabric.python-echo", "run", tmp_path)
    assert ours["paths"] == [str(descriptor)]
    assert ours["sources"] == ["interpreter_prefix"]
    assert ours["status"] == "succeeded", ours
    assert "echo: hello" in json.dumps(ours["output"])


@pytest.mark.parametrize("module", ["nemo_fabric", "fabric_core"])
def test_installed_upstream_adapter_is_planned_from_the_interpreter_prefix(
    venv_python: Path, module: str, tmp_path
) -> None:
    probe = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_path('data'))"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    )
    descriptor = Path(probe.stdout.strip()) / "share/nemo-fabric/adapters/mini-swe-agent/mini-swe-agent.fabric-adapter.json"
    _require(descriptor.is_file(), f"{descriptor} is missing (install nemo-fabric-adapters-mini-swe-agent 0.5.0)")
    out = _run(venv_python, module, "nvidia.fabric.mini-swe-agent", "plan", tmp_path)
    assert out["adapter_id"] == "nvidia.fabric.mini-swe-agent"
    assert out["paths"] == [str(descriptor)]
