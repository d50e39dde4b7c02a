"""`fabric collector serve` against upstream's collector app (nemo-fabric-collector 0.5.0,
started with its own entry point on 127.0.0.1): the same requests through urllib get the
same status codes and bodies, and the same records come out of the streams.

Both servers run as child processes and are stopped by pid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from fcsupport import REPO, interpreter

TOKEN = "collector-test-token-" + "0123456789abcdef" * 2


def _fabric_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("debug", "release"):
        candidate = target / profile / "fabric"
        if candidate.exists():
            return candidate
    pytest.skip("the fabric CLI is missing; build it: cargo build -p fabric-cli")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_healthy(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"collector exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{base} never became healthy")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture()
def ours() -> Iterator[str]:
    env = dict(os.environ, FABRIC_COLLECTOR_TOKEN=TOKEN)
    process = subprocess.Popen(
        [str(_fabric_binary()), "collector", "serve", "--listen", "127.0.0.1:0"],
        env=env,
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        assert first["token_source"] == "env" and "token" not in first
        _wait_healthy(first["base_url"], process)
        yield first["base_url"]
    finally:
        _stop(process)


@pytest.fixture()
def upstream() -> Iterator[str]:
    python = interpreter()
    port = _free_port()
    env = dict(os.environ, COLLECTOR_TOKEN=TOKEN)
    process = subprocess.Popen(
        [
            python, "-W", "ignore", "-m", "nemo_fabric_collector", "--host", "127.0.0.1",
            "--port", str(port), "--log-level", "warning",
            "--publish-token-env", "COLLECTOR_TOKEN", "--control-token-env", "COLLECTOR_TOKEN",
        ],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, process)
        yield base
    finally:
        _stop(process)


def call(base: str, method: str, path: str, body: bytes | None = None, token: str | None = TOKEN) -> tuple[int, Any]:
    request = urllib.request.Request(f"{base}{path}", data=body, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode()


def ndjson(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def scope_start(uuid: str, request_id: str) -> dict[str, Any]:
    return {"kind": "scope", "scope_category": "start", "uuid": uuid,
            "metadata": {"nemo_fabric_request_id": request_id}}


REQUESTS: list[tuple[str, str, Any, str | None]] = [
    ("GET", "/healthz", None, None),
    ("GET", "/nope", None, TOKEN),
    ("POST", "/healthz", b"", None),
    ("POST", "/v1/register", b'{"request_id": "r"}', None),
    ("POST", "/v1/register", b'{"request_id": "r"}', "wrong-token"),
    ("POST", "/v1/atof", b"{}\n", None),
    ("GET", "/v1/stream/r", None, None),
    ("DELETE", "/v1/deregister-request/r", None, "wrong-token"),
    ("POST", "/v1/register", b"[]", TOKEN),
    ("POST", "/v1/register", b"nope", TOKEN),
    ("POST", "/v1/register", b'{"request_id": 3}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r", "correlation_mode": "other"}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r", "capture_records": "yes"}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r", "capture_records": false}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r", "registration_token": ""}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r", "registration_token": "t"}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r"}', TOKEN),
    ("POST", "/v1/register", b'{"request_id": "r"}', TOKEN),
    ("GET", "/v1/stream/unknown", None, TOKEN),
    ("GET", "/v1/stream/r?registration_token=", None, TOKEN),
    ("DELETE", "/v1/deregister-request/r?remove_queue=maybe", None, TOKEN),
    ("DELETE", "/v1/deregister-request/r?pi_boundary=nope", None, TOKEN),
    ("DELETE", "/v1/deregister-request/r?pi_turn_count=x", None, TOKEN),
    ("DELETE", "/v1/deregister-request/r?pi_turn_count=1", None, TOKEN),
    ("DELETE", "/v1/deregister-request/r?pi_boundary=release", None, TOKEN),
    ("DELETE", "/v1/deregister-request/nobody", None, TOKEN),
    ("POST", "/v1/atof", b"\n[1]\nnot json\n" + ndjson([{"kind": "mark"}]), TOKEN),
    ("POST", "/v1/atof", b"x" * (1024 * 1024 + 1), TOKEN),
    ("POST", "/v1/atof", json.dumps({"pad": "x" * (1024 * 1024 - 11)}).encode(), TOKEN),
    ("DELETE", "/v1/deregister-request/r?remove_queue=true", None, TOKEN),
    ("DELETE", "/v1/deregister-request/r?remove_queue=true", None, TOKEN),
]


def test_the_same_requests_get_the_same_answers(ours: str, upstream: str) -> None:
    assert len(json.dumps({"pad": "x" * (1024 * 1024 - 11)})) == 1024 * 1024
    for method, path, body, token in REQUESTS:
        mine = call(ours, method, path, body, token)
        theirs = call(upstream, method, path, body, token)
        assert mine == theirs, (method, path, body if body is None else body[:80], token)


def test_routing_and_draining_match(ours: str, upstream: str) -> None:
    records = [
        scope_start("sa", "a"),
        scope_start("sb", "b"),
        {"kind": "scope", "scope_category": "start", "uuid": "child", "parent_uuid": "sa", "data": {"é": [1, 2.5]}},
        {"kind": "mark", "uuid": "m1", "parent_uuid": "child"},
        {"kind": "mark", "uuid": "m2", "parent_uuid": "unknown"},
        {"kind": "mark"},
        scope_start("sx", "nobody"),
        {"kind": "scope", "scope_category": "end", "uuid": "sa"},
        scope_start("sa", "b"),
    ]
    outcomes = []
    for base in (ours, upstream):
        for request_id in ("a", "b"):
            assert call(base, "POST", "/v1/register", json.dumps({"request_id": request_id}).encode())[0] == 201
        assert call(base, "POST", "/v1/atof", ndjson(records))[0] == 200
        streams = {}
        for request_id in ("a", "b"):
            assert call(base, "DELETE", f"/v1/deregister-request/{request_id}")[0] == 204
            request = urllib.request.Request(f"{base}/v1/stream/{request_id}")
            request.add_header("Authorization", f"Bearer {TOKEN}")
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.headers["content-type"].startswith("application/x-ndjson")
                streams[request_id] = [json.loads(line) for line in response.read().splitlines()]
        # Delivered and deregistered: the registration is gone.
        assert call(base, "GET", "/v1/stream/a")[0] == 404
        outcomes.append(streams)
    assert outcomes[0] == outcomes[1]
    assert [record.get("uuid") for record in outcomes[0]["a"]] == ["sa", "child", "m1", "sa"]
    assert [record.get("uuid") for record in outcomes[0]["b"]] == ["sb"]
