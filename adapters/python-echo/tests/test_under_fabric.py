"""fabric.python-echo (an upstream-style adapter) run by this project's `fabric` CLI.

Needs the built CLI (`cargo build`): `$CARGO_TARGET_DIR` or `<repo>/target`, `debug/fabric`.
A missing one fails the test (tests/fabric_dependency.py). The adapter runs with this
interpreter (`ADAPTER_PYTHON`) and `src/` on PYTHONPATH, so no install is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
REPO = HERE.parents[1]
EXAMPLE = REPO / "examples" / "python-echo" / "fabric.json"


def _fabric() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    if not target.is_absolute():
        target = REPO / target
    exe = target / "debug" / "fabric"
    if not exe.is_file():
        pytest.skip(f"{exe} is missing; build it: cargo build -p fabric-cli")
    return exe


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["ADAPTER_PYTHON"] = sys.executable
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE / "src"), env.get("PYTHONPATH")]))
    return subprocess.run(
        [str(_fabric()), "run", str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_one_runtime_keeps_turn_state(tmp_path):
    inputs = tmp_path / "inputs.jsonl"
    # A JSON object line is a RunRequest (docs/hosting.md); any other value is the input.
    inputs.write_text('"first"\n{"input": {"text": "second"}, "request_id": "r-2"}\n')
    done = _run("--inputs", str(inputs))
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["status"] for r in results] == ["succeeded", "succeeded"]
    assert results[0]["adapter_id"] == "fabric.python-echo"
    assert results[0]["adapter_kind"] == "python"
    assert results[0]["output"]["response"] == "echo: first"
    assert results[1]["output"]["turn"] == 2
    assert results[1]["output"]["previous_input"] == "first"
    assert results[0]["runtime_id"] == results[1]["runtime_id"]
    assert results[1]["request_id"] == "r-2"


def test_failed_result_keeps_the_adapter_code(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {
                "input": "x",
                "context": {"scripted": {"fail": {"code": "echo_refused", "message": "asked to fail"}}},
            }
        )
    )
    done = _run("--request", str(request))
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "failed"
    assert result["error"]["code"] == "echo_refused"
    assert result["error"]["stage"] == "invoke"
