"""The reference adapters emit NeMo Relay ATOF (issue 14 item 5), checked through upstream's
SDK and collectors (``nemo_fabric`` 0.5.0 with ``nemo-fabric[streaming]``) and, side by side,
through ours (``fabric_core`` and the core's collector):
``start_runtime(config.enable_relay(), streaming=True)`` + ``runtime.invoke_stream(...)``.

Each case runs ``SCRIPT`` in a fresh interpreter (``FABRIC_TEST_PYTHON``): it starts the
runtimes, runs rounds of concurrent streamed invocations and prints, per invocation, the
records its stream yielded, whether the first record came before the invocation finished,
and the result. ``MODULE`` is the SDK under test.

Upstream's embedded collector is *standalone*: it hands every record to its one registered
request, so request-id routing is checked on a shared collector (upstream's
``python -m nemo_fabric_collector``, ``launch_collector=False``), which routes by the scope
start's ``metadata.nemo_fabric_request_id`` and ``uuid``/``parent_uuid`` ancestry and drops
what it cannot correlate.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from fcsupport import ECHO_DIR, SCRIPTED_DIR, binding_paths, interpreter

# The shared collector's bearer token; adapters and SDK clients send it through the sink's
# header_env (the variable holds the whole header value).
TOKEN = "atof-test-token-0123456789abcdef0123456789"
TOKEN_ENV = {"ATOF_SINK_AUTH": f"Bearer {TOKEN}"}
SINK_HEADER_ENV = {"Authorization": "ATOF_SINK_AUTH"}

# SDKs whose ``start_runtime(..., streaming=True)`` / ``invoke_stream`` these cases run under.
# Upstream 0.5.0 and ours (the core's embedded collector, issue 14 item 2), side by side.
STREAMING_SDKS = ["nemo_fabric", "fabric_core"]

SCRIPT = r'''
import asyncio, json, sys, time
from MODULE import Fabric, FabricConfig, RunRequest

spec = json.loads(sys.argv[1])


async def one(runtime, request):
    stream = runtime.invoke_stream(request=RunRequest(**request))
    records, first_received = [], None
    async for record in stream:
        if first_received is None:
            first_received = time.time()
        records.append(record)
    result = (await stream.result()).to_mapping()
    return {"records": records, "first_received": first_received,
            "status": result["status"], "output": result["output"]}


async def main():
    fabric = Fabric()
    runtimes = []
    for config in spec["configs"]:
        options = {"streaming": True}
        if spec.get("external"):
            options["launch_collector"] = False
        runtimes.append(await fabric.start_runtime(FabricConfig.from_mapping(config).enable_relay(), **options))
    out = []
    try:
        for round_ in spec["rounds"]:
            out.append(await asyncio.gather(*(one(runtimes[i], request) for i, request in round_)))
    finally:
        for runtime in runtimes:
            await runtime.stop()
    print(json.dumps(out))


asyncio.run(main())
'''


# The collector's control API driven by the test itself (register, invoke, deregister,
# drain), so the same case runs under an SDK without ``invoke_stream``: what it checks is
# that the core hands the adapter the sink (with its header_env) and the request id.
MANUAL = r'''
import asyncio, json, os, sys, urllib.error, urllib.request
from MODULE import Fabric, FabricConfig, RunRequest

spec = json.loads(sys.argv[1])


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": os.environ["ATOF_SINK_AUTH"], "Content-Type": "application/json"}
    request = urllib.request.Request(spec["collector"] + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return answer.read()


async def main():
    config = FabricConfig.from_mapping(spec["config"]).enable_relay()
    out = []
    async with await Fabric().start_runtime(config) as runtime:
        for request in spec["requests"]:
            rid = request["request_id"]
            call("POST", "/v1/register", {"request_id": rid})
            result = (await runtime.invoke(request=RunRequest(**request))).to_mapping()
            call("DELETE", "/v1/deregister-request/%s?remove_queue=false" % rid)
            try:
                body = call("GET", "/v1/stream/" + rid).decode()
            except urllib.error.HTTPError as error:
                if error.code != 404:  # 404: deregistered with nothing queued
                    raise
                body = ""
            records = [json.loads(line) for line in body.splitlines() if line.strip()]
            out.append({"records": records, "status": result["status"], "output": result["output"]})
    print(json.dumps(out))


asyncio.run(main())
'''


def scripted(base: Path, name: str, atof: dict[str, Any], sink_url: str | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": name},
        "harness": {"adapter_id": "fabric.scripted", "settings": {"atof": atof}},
        "discovery": {"local_paths": [str(SCRIPTED_DIR)]},
        "models": {"default": {"provider": "openai", "model": "m-1"}},
        "environment": {"workspace": str(base), "artifacts": str(base / name)},
    }
    if sink_url is not None:
        config["relay"] = {"observability": {"atof": {"enabled": True, "sinks": [
            {"type": "stream", "name": "nemo-fabric-stream", "url": sink_url, "transport": "ndjson",
             "header_env": SINK_HEADER_ENV}]}}}
    return config


def echo(base: Path) -> dict[str, Any]:
    return {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "echo"},
        "harness": {"adapter_id": "fabric.python-echo"},
        "discovery": {"local_paths": [str(ECHO_DIR)]},
        "environment": {"workspace": str(base), "artifacts": str(base / "echo")},
    }


def run(module: str, base: Path, spec: dict[str, Any], script: str = SCRIPT) -> Any:
    python = interpreter()
    env = dict(os.environ, **TOKEN_ENV)
    env["ADAPTER_PYTHON"] = python
    # The python-echo adapter under test is this checkout's (the venv may hold another copy).
    paths = [str(ECHO_DIR / "src"), *binding_paths(), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in paths)
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [python, "-c", script.replace("MODULE", module), json.dumps(spec)],
        cwd=base, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def epoch(stamp: str) -> float:
    """Seconds since the epoch of an RFC 3339 UTC timestamp with any number of fraction digits."""

    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(?:Z|\+00:00)", stamp)
    assert match, stamp
    whole = datetime.fromisoformat(match.group(1) + "+00:00").timestamp()
    return whole + float("0." + (match.group(2) or "0"))


def shape(records: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(r["kind"], r.get("scope_category")) for r in records]


def check_scope(records: list[dict[str, Any]], request_id: str, marks: int) -> None:
    """One root scope for `request_id` with `marks` marks under it, in order."""

    assert shape(records) == [("scope", "start"), *[("mark", None)] * marks, ("scope", "end")]
    start, end = records[0], records[-1]
    assert start["metadata"]["nemo_fabric_request_id"] == request_id
    assert end["uuid"] == start["uuid"]
    assert all(mark["parent_uuid"] == start["uuid"] for mark in records[1:-1])


@pytest.fixture(scope="module")
def scripted_built() -> None:
    target = Path(os.environ.get("CARGO_TARGET_DIR", SCRIPTED_DIR.parents[1] / "target"))
    if not any((target / p / "fabric-adapter-scripted").exists() for p in ("debug", "release")):
        pytest.fail("build the scripted adapter first (cargo build -p fabric-adapter-scripted)")


@pytest.mark.parametrize("sdk", STREAMING_SDKS)
def test_scripted_records_stream_in_order_while_the_invocation_runs(tmp_path, scripted_built, sdk):
    spec = {"configs": [scripted(tmp_path, "a", {"marks": 3, "delay_ms": 300})],
            "rounds": [[[0, {"input": "hi", "request_id": "request-slow-1"}]]]}
    [[item]] = run(sdk, tmp_path, spec)
    assert item["status"] == "succeeded"
    check_scope(item["records"], "request-slow-1", 3)
    assert [m["data"]["index"] for m in item["records"][1:-1]] == [0, 1, 2]
    assert item["records"][0]["data"] == {"input": "hi"}
    assert item["records"][-1]["metadata"]["otel.status_code"] == "OK"
    # A slow producer: the consumer had the first record before the adapter ended its scope
    # (same machine, same clock; the marks are 300 ms apart).
    assert item["first_received"] < epoch(item["records"][-1]["timestamp"])
    assert item["output"]["atof"] == {"sent": 5, "http_statuses": [200]}


@pytest.mark.parametrize("sdk", STREAMING_SDKS)
def test_two_runtimes_stream_concurrently_each_its_own_records(tmp_path, scripted_built, sdk):
    spec = {"configs": [scripted(tmp_path, "a", {"marks": 4, "delay_ms": 20}),
                        scripted(tmp_path, "b", {"marks": 2, "delay_ms": 30})],
            "rounds": [[[0, {"input": "one", "request_id": "request-a-1"}],
                        [1, {"input": "two", "request_id": "request-b-1"}]]]}
    [[a, b]] = run(sdk, tmp_path, spec)
    check_scope(a["records"], "request-a-1", 4)
    check_scope(b["records"], "request-b-1", 2)


@pytest.mark.parametrize("sdk", STREAMING_SDKS)
def test_an_oversize_record_is_refused_and_the_rest_delivered(tmp_path, scripted_built, sdk):
    spec = {"configs": [scripted(tmp_path, "a", {"marks": 3, "fault": "oversize"})],
            "rounds": [[[0, {"input": "hi", "request_id": "request-big-1"}]]]}
    [[item]] = run(sdk, tmp_path, spec)
    assert item["status"] == "succeeded"
    check_scope(item["records"], "request-big-1", 2)
    assert [m["data"]["index"] for m in item["records"][1:-1]] == [1, 2]
    assert item["output"]["atof"]["oversize_http_status"] == 413


@pytest.mark.parametrize("sdk", STREAMING_SDKS)
def test_uncorrelated_records_at_the_embedded_collector(tmp_path, scripted_built, sdk):
    """Upstream's embedded collector is standalone: it hands every record to its one
    registered request. Ours routes by request id there too and drops what it cannot
    correlate."""

    spec = {"configs": [scripted(tmp_path, "a", {"marks": 1})],
            "rounds": [[[0, {"input": "x", "request_id": "request-w-1",
                             "context": {"scripted_atof": {"fault": "wrong_request_id"}}}]],
                       [[0, {"input": "y", "request_id": "request-n-1",
                             "context": {"scripted_atof": {"fault": "no_correlation"}}}]]]}
    [[wrong], [none]] = run(sdk, tmp_path, spec)
    for item in (wrong, none):
        assert item["status"] == "succeeded"
        assert item["output"]["atof"] == {"sent": 3, "http_statuses": [200]}
    if sdk == "fabric_core":
        assert wrong["records"] == none["records"] == []
        return
    assert shape(wrong["records"]) == shape(none["records"]) == [("scope", "start"), ("mark", None), ("scope", "end")]
    assert wrong["records"][0]["metadata"]["nemo_fabric_request_id"] != "request-w-1"
    assert "nemo_fabric_request_id" not in none["records"][0]["metadata"]


@pytest.fixture
def shared_collector():
    """Upstream's collector as a shared service on a free loopback port, publishing and control
    both behind ``TOKEN``; stopped by pid."""

    python = interpreter()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, ATOF_COLLECTOR_TOKEN=TOKEN)
    process = subprocess.Popen(
        [python, "-W", "ignore", "-m", "nemo_fabric_collector", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning", "--publish-token-env", "ATOF_COLLECTOR_TOKEN",
         "--control-token-env", "ATOF_COLLECTOR_TOKEN"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"collector did not start: {process.stderr.read().decode() if process.stderr else ''}")
        time.sleep(0.05)
    try:
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.parametrize("sdk", STREAMING_SDKS)
def test_a_shared_collector_routes_by_request_id_and_drops_the_uncorrelated(tmp_path, scripted_built, shared_collector, sdk):
    spec = {"external": True,
            "configs": [scripted(tmp_path, "a", {"marks": 3, "delay_ms": 20}, shared_collector),
                        scripted(tmp_path, "b", {"marks": 2, "delay_ms": 30}, shared_collector)],
            "rounds": [[[0, {"input": "one", "request_id": "request-a-1"}],
                        [1, {"input": "two", "request_id": "request-b-1"}]],
                       [[0, {"input": "w", "request_id": "request-a-2",
                             "context": {"scripted_atof": {"fault": "wrong_request_id"}}}],
                        [1, {"input": "n", "request_id": "request-b-2",
                             "context": {"scripted_atof": {"fault": "no_correlation"}}}]]]}
    [[a, b], [wrong, none]] = run(sdk, tmp_path, spec)
    check_scope(a["records"], "request-a-1", 3)
    check_scope(b["records"], "request-b-1", 2)
    # Posted and accepted, but routed to nobody.
    for item, sent in ((wrong, 5), (none, 4)):
        assert item["status"] == "succeeded"
        assert item["output"]["atof"] == {"sent": sent, "http_statuses": [200]}
        assert item["records"] == []


@pytest.mark.parametrize("sdk", STREAMING_SDKS)
def test_python_echo_marks_each_echoed_chunk(tmp_path, sdk):
    text = "hello world, this is a longer echo"
    spec = {"configs": [echo(tmp_path)],
            "rounds": [[[0, {"input": text, "request_id": "request-echo-1",
                             "context": {"scripted_stream": {"chunk_chars": 8}}}]]]}
    [[item]] = run(sdk, tmp_path, spec)
    assert item["status"] == "succeeded"
    records = item["records"]
    check_scope(records, "request-echo-1", 5)
    start = records[0]
    assert start["name"] == "python-echo-request"
    assert start["metadata"]["nemo_fabric_invocation_id"].startswith("invocation-")
    assert start["metadata"]["nemo_fabric_runtime_id"].startswith("runtime-")
    assert "".join(m["data"]["text"] for m in records[1:-1]) == text
    assert item["output"]["response"] == text


@pytest.mark.parametrize("module", ["nemo_fabric", "fabric_core"])
def test_the_core_hands_the_adapter_the_sink_and_the_request_id(tmp_path, scripted_built, shared_collector, module):
    """Under upstream's core and ours: the Relay config the core writes names the shared
    collector's sink with its header_env, the adapter has the variable, and the records of each
    request reach that request's queue (and only those)."""

    spec = {"collector": shared_collector,
            # Without streaming=True the SDK leaves the sink as configured: the full ATOF URL.
            "config": scripted(tmp_path, "m", {"marks": 2}, shared_collector + "/v1/atof"),
            "requests": [{"input": "one", "request_id": "request-m-1"},
                         {"input": "two", "request_id": "request-m-2",
                          "context": {"scripted_atof": {"fault": "wrong_request_id"}}},
                         {"input": "three", "request_id": "request-m-3",
                          "context": {"scripted_atof": {"fault": "bad_token"}}}]}
    ok, wrong, unauthorized = run(module, tmp_path, spec, MANUAL)
    assert ok["status"] == "succeeded"
    check_scope(ok["records"], "request-m-1", 2)
    assert ok["records"][-1]["data"] == {"response": "one"}
    assert ok["output"]["atof"] == {"sent": 4, "http_statuses": [200]}
    assert wrong["records"] == [] and wrong["output"]["atof"]["http_statuses"] == [200]
    assert unauthorized["records"] == [] and unauthorized["output"]["atof"]["http_statuses"] == [401]
