"""Issue 15 items 1, 5, 9 side by side: the same script against upstream ``nemo_fabric``
0.5.0 and ``fabric_core`` (only the import differs) on the Python echo adapter.

- request ``overrides`` (and runtime overrides merged underneath) reach the adapter as
  ``request.extensions`` — the adapter echoes what it saw, so both must see the same;
- no ``run_request`` schema / a schema violation / an undeclared key: the same error class
  and stage, the same ``request.extensions[.<key>]`` path in the message;
- unknown top-level RunRequest keys are dropped by both;
- an adapter raising at ``start`` (``require_env``) or at ``invoke`` (``exception``
  directive): both messages end with the same cause line (the traceback's last line);
- a failed AgentRunResult that consumed tokens keeps its usage in both.

Runs in a neutral working directory (not a git checkout). Fails when ``FABRIC_TEST_PYTHON``
is unset (``tests/fabric_dependency.py``; ``FABRIC_ALLOW_SKIPS=1`` skips instead).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from fcsupport import ECHO_DIR, binding_paths, interpreter

SCRIPT = r'''
import asyncio, json, re, sys
from MODULE import Fabric, FabricConfig, RunRequest

with_schema, without_schema = sys.argv[1], sys.argv[2]


def config(path, **settings):
    return FabricConfig.from_mapping({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "overrides-side-by-side"},
        "harness": {"adapter_id": "fabric.python-echo", "settings": {"prefix": "echo: ", **settings}},
        "discovery": {"local_paths": [path]},
        "runtime": {"timeout_seconds": 60},
    })


def result_summary(result):
    data = result.to_mapping()
    output = data.get("output")
    if isinstance(output, dict):
        output = {k: v for k, v in output.items() if k != "metadata"}
    error = data.get("error")
    return {
        "status": data["status"],
        "output": output,
        "usage": data.get("usage"),
        "error": None if error is None else {"code": error.get("code"), "stage": error.get("stage"),
                                             "message": error.get("message")},
    }


def error_summary(error):
    message = str(error)
    paths = re.findall(r"`(request\.extensions[A-Za-z0-9_.]*)`", message)
    return {
        "class": type(error).__name__,
        "stage": getattr(error, "stage", None),
        "paths": paths,
        "no_schema": "cannot implement configuration at `request.extensions`" in message,
        "invalid": "invalid adapter extension" in message,
        "last_line": message.strip().splitlines()[-1] if message.strip() else "",
    }


async def attempt(coro):
    try:
        return {"result": result_summary(await coro)}
    except Exception as error:  # FabricError subclasses
        return {"error": error_summary(error)}


async def main():
    fabric = Fabric()
    schema = config(with_schema)
    out = {}
    out["valid"] = await attempt(fabric.run(schema, request=RunRequest(
        input="x", overrides={"tone": "formal", "limits": {"max_chars": 3}})))
    out["empty"] = await attempt(fabric.run(schema, request=RunRequest(input="x", overrides={})))
    out["bad_value"] = await attempt(fabric.run(schema, request=RunRequest(input="x", overrides={"tone": "s3cret"})))
    out["bad_nested"] = await attempt(fabric.run(schema, request=RunRequest(
        input="x", overrides={"limits": {"max_chars": 0}})))
    out["undeclared_key"] = await attempt(fabric.run(schema, request=RunRequest(input="x", overrides={"zzz": 1})))
    out["unknown_top_level"] = await attempt(fabric.run(schema, request=RunRequest.from_mapping(
        {"input": "x", "priority": 5})))
    out["no_schema"] = await attempt(fabric.run(config(without_schema), request=RunRequest(
        input="x", overrides={"tone": "formal"})))
    out["no_schema_empty"] = await attempt(fabric.run(config(without_schema), request=RunRequest(
        input="x", overrides={})))
    runtime = await fabric.start_runtime(schema, overrides={"limits": {"max_chars": 3, "min_chars": 1}, "tone": "plain"})
    try:
        out["runtime_merge"] = await attempt(runtime.invoke(request=RunRequest(
            input="x", overrides={"limits": {"max_chars": 9}})))
        out["runtime_only"] = await attempt(runtime.invoke(input="y"))
    finally:
        await runtime.stop()
    async with await fabric.start_runtime(schema) as runtime:
        out["failed_with_usage"] = await attempt(runtime.invoke(request=RunRequest(input="x", context={
            "scripted": {"fail": {"code": "echo_failure", "message": "failed after spending tokens"},
                         "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}})))
    async with await fabric.start_runtime(schema) as runtime:
        out["invoke_exception"] = await attempt(runtime.invoke(request=RunRequest(input="x", context={
            "scripted": {"exception": "the model endpoint refused the request"}})))
    out["start_failure_run"] = await attempt(fabric.run(config(with_schema, require_env="FABRIC_SBS_UNSET_KEY"), input="x"))
    out["start_failure_runtime"] = await attempt(fabric.start_runtime(config(with_schema, require_env="FABRIC_SBS_UNSET_KEY")))
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
'''


def run_script(python: str, module: str, workdir, with_schema, without_schema) -> dict:
    env = dict(os.environ)
    env["ADAPTER_PYTHON"] = python
    env.pop("VIRTUAL_ENV", None)
    env.pop("FABRIC_SBS_UNSET_KEY", None)
    # This checkout's adapter (and, in development mode, binding) first.
    paths = [str(ECHO_DIR / "src"), *binding_paths(), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    result = subprocess.run(
        [python, "-c", SCRIPT.replace("MODULE", module), str(with_schema), str(without_schema)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[dict, dict]:
    python = interpreter()
    probe = subprocess.run(
        [python, "-c", "import nemo_fabric, nemo_fabric_adapters.common"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        message = f"{python} lacks nemo_fabric / nemo_fabric_adapters.common:\n{probe.stderr}"
        pytest.skip(message)
    root = tmp_path_factory.mktemp("overrides-sbs")
    descriptor = json.loads((ECHO_DIR / "python-echo.fabric-adapter.json").read_text())
    assert "run_request" in descriptor["extension_schemas"]
    with_schema = root / "with-schema"
    with_schema.mkdir()
    (with_schema / "python-echo.fabric-adapter.json").write_text(json.dumps(descriptor))
    bare = dict(descriptor)
    bare.pop("extension_schemas")
    without_schema = root / "without-schema"
    without_schema.mkdir()
    (without_schema / "python-echo.fabric-adapter.json").write_text(json.dumps(bare))
    workdir = root / "work"
    workdir.mkdir()
    upstream = run_script(python, "nemo_fabric", workdir, with_schema, without_schema)
    ours = run_script(python, "fabric_core", workdir, with_schema, without_schema)
    return upstream, ours


def test_overrides_reach_the_adapter_as_the_same_extensions(both) -> None:
    upstream, ours = both
    assert ours["valid"]["result"]["output"]["extensions"] == {"tone": "formal", "limits": {"max_chars": 3}}
    assert ours["runtime_merge"]["result"]["output"]["extensions"] == {
        "tone": "plain",
        "limits": {"max_chars": 9, "min_chars": 1},
    }
    for key in ("valid", "empty", "unknown_top_level", "no_schema_empty", "runtime_merge", "runtime_only"):
        assert ours[key] == upstream[key], key
    assert "extensions" not in ours["unknown_top_level"]["result"]["output"]


def test_rejected_overrides_fail_the_same_way(both) -> None:
    upstream, ours = both
    assert ours["no_schema"]["error"]["class"] == "FabricRuntimeError"
    assert ours["no_schema"]["error"]["no_schema"]
    assert ours["bad_value"]["error"]["paths"] == ["request.extensions.tone"]
    assert ours["bad_nested"]["error"]["paths"] == ["request.extensions.limits.max_chars"]
    assert ours["undeclared_key"]["error"]["paths"] == ["request.extensions.zzz"]
    for key in ("no_schema", "bad_value", "bad_nested", "undeclared_key"):
        mine, theirs = dict(ours[key]["error"]), dict(upstream[key]["error"])
        # The reason text after the path differs (ours never quotes values); compare the rest.
        mine.pop("last_line")
        theirs.pop("last_line")
        assert mine == theirs, key


def test_start_and_invoke_failures_end_with_the_adapters_cause(both) -> None:
    upstream, ours = both
    cause = "RuntimeError: the model-provider credential env var 'FABRIC_SBS_UNSET_KEY' is not set"
    for key in ("start_failure_run", "start_failure_runtime"):
        assert ours[key]["error"]["last_line"] == cause, ours[key]
        assert ours[key] == upstream[key], key
    invoke_cause = "RuntimeError: the model endpoint refused the request"
    assert ours["invoke_exception"]["error"]["last_line"] == invoke_cause, ours["invoke_exception"]
    assert ours["invoke_exception"] == upstream["invoke_exception"]


def test_failed_results_keep_their_usage(both) -> None:
    upstream, ours = both
    failed = ours["failed_with_usage"]["result"]
    assert failed["status"] == "failed"
    assert failed["usage"]["total_tokens"] == 12
    assert ours["failed_with_usage"] == upstream["failed_with_usage"]
