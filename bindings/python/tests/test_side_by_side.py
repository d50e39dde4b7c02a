"""The same script against upstream ``nemo_fabric`` 0.5.0 and ``fabric_core`` (only the import
differs) on the Python echo adapter: statuses, outputs, usage and error codes must match.

Both run with ``FABRIC_TEST_PYTHON`` (a venv holding nemo-fabric 0.5.0, fabric-python-echo
and fabric-core); fails without it (``tests/fabric_dependency.py``; ``FABRIC_ALLOW_SKIPS=1`` skips instead).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fcsupport import ECHO_DIR, REPO, interpreter

SCRIPT = r'''
import asyncio, json, re, sys
from MODULE import Fabric, FabricConfig, RunRequest, FabricError

config_map = json.loads(sys.argv[1])
config = FabricConfig.from_mapping(config_map)
with_instruction = FabricConfig.from_mapping(
    {**config_map, "instructions": {"system": {"content": "Be brief.", "mode": "append"}}}
)


def summary(result):
    data = result.to_mapping()
    output = data.get("output")
    if isinstance(output, dict):
        output = dict(output)
        metadata = dict(output.get("metadata") or {})
        metadata.pop("runtime_id", None)
        output["metadata"] = metadata
    error = data.get("error")
    return {
        "status": data["status"],
        "output": output,
        "usage": data.get("usage"),
        "error": None if error is None else {"code": error.get("code"), "stage": error.get("stage")},
        "request_id": re.sub(r"^request-[0-9a-f]{32}$", "request-<generated>", data["request_id"]),
        "id_prefixes": [data["runtime_id"].split("-")[0], data["invocation_id"].split("-")[0]],
    }


async def main():
    fabric = Fabric()
    out = {}
    plan = fabric.plan(config)
    out["plan"] = {"agent_name": plan.agent_name, "capabilities": dict(plan.to_mapping()["capabilities"])}
    out["run"] = summary(await fabric.run(config, input="hello"))
    out["run_request"] = summary(
        await fabric.run(config, request=RunRequest(input={"text": "structured"}, request_id="request-side", context={"k": "v"}))
    )
    out["run_instruction"] = summary(await fabric.run(with_instruction, input="hi"))
    turns = []
    async with await fabric.start_runtime(config) as runtime:
        turns.append(summary(await runtime.invoke(input="one")))
        turns.append(summary(await runtime.invoke(input="two")))
        turns.append(summary(await runtime.invoke(request=RunRequest(
            input="usage", request_id="request-usage",
            context={"scripted": {"usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}}))))
        turns.append(summary(await runtime.invoke(request=RunRequest(
            input="bad", request_id="request-fail",
            context={"scripted": {"fail": {"code": "echo_failure", "message": "failed on purpose"}}}))))
        turns.append(summary(await runtime.invoke(input="three")))
    out["turns"] = turns
    crash = await fabric.start_runtime(config)
    try:
        await crash.invoke(request=RunRequest(input="x", context={"scripted": {"crash": True}}))
        out["crash"] = "no error"
    except FabricError as error:
        out["crash"] = type(error).__name__
    finally:
        try:
            await crash.stop()
        except FabricError:
            pass
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
'''


def run_script(python: str, module: str) -> dict:
    config = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    config["discovery"] = {"local_paths": [str(ECHO_DIR)]}
    env = dict(os.environ)
    env["ADAPTER_PYTHON"] = python
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [python, "-c", SCRIPT.replace("MODULE", module), json.dumps(config)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_same_script_same_results(scripted_built) -> None:
    python = interpreter()
    probe = subprocess.run(
        [python, "-c", "import nemo_fabric, fabric_python_echo, fabric_core"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    if probe.returncode != 0:
        message = f"{python} lacks nemo_fabric / fabric_python_echo / fabric_core:\n{probe.stderr}"
        pytest.skip(message)

    upstream = run_script(python, "nemo_fabric")
    ours = run_script(python, "fabric_core")

    assert ours["run"]["status"] == "succeeded"
    assert ours["run"]["output"]["response"] == "echo: hello"
    assert [turn["status"] for turn in ours["turns"]] == [
        "succeeded",
        "succeeded",
        "succeeded",
        "failed",
        "succeeded",
    ]
    for key in ("plan", "run", "run_request", "run_instruction", "crash"):
        assert ours[key] == upstream[key], key
    for index, (mine, theirs) in enumerate(zip(ours["turns"], upstream["turns"], strict=True)):
        assert mine == theirs, f"turn {index}"
