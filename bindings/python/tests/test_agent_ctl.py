"""Our runtime server (``fabric-agent-ctl serve``, docs/sandbox.md) driven by upstream
NeMo Fabric 0.5.0's own bridge client in Python (``nemo_fabric.runtime_server.transport``),
which validates every response with the SDK's ``RuntimeHandle`` / ``RunResult`` models.

Needs the built ``target/debug/fabric-agent-ctl`` (``cargo build``) and upstream 0.5.0 in the
running interpreter; a missing dependency fails the test
(``tests/fabric_dependency.py``; ``FABRIC_ALLOW_SKIPS=1`` skips instead).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fcsupport import REPO, SCRIPTED_DIR, _scripted_binary_present, echo_adapter_importable, echo_config_mapping


def _require(condition: bool, message: str) -> None:
    if not condition:
        pytest.skip(message)


def _agent_ctl() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "debug" / "fabric-agent-ctl"
    _require(path.exists(), "target/debug/fabric-agent-ctl is not built; run `cargo build`")
    return path


def _upstream_transport():
    try:
        from nemo_fabric.runtime_server import transport
    except ImportError:
        _require(False, "upstream nemo-fabric 0.5.0 (nemo_fabric.runtime_server) is not importable")
        raise
    return transport


@pytest.fixture
def server(tmp_path: Path):
    """Our server on a socket in a temp dir; stopped by pid (SIGTERM)."""

    program = _agent_ctl()
    socket = tmp_path / "fabric.sock"
    env = dict(os.environ, FABRIC_HOST_SOCKET=str(socket))
    env.setdefault("VIRTUAL_ENV", str(Path(sys.executable).parent.parent))
    process = subprocess.Popen(
        [str(program), "serve"], env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stderr.readline()
        assert "listening on" in line, line
        yield socket
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                assert process.wait(timeout=30) == 0
            finally:
                if process.poll() is None:
                    process.kill()
        process.stderr.close()


def _call(socket: Path, request: dict[str, Any]) -> dict[str, Any]:
    transport = _upstream_transport()
    return asyncio.run(transport.client(request, socket_path=socket))


def _request(operation: str, **fields: Any) -> dict[str, Any]:
    return {"interface_version": 2, "operation": operation, **fields}


def test_upstream_client_runs_a_python_echo_conversation(server: Path) -> None:
    _require(echo_adapter_importable(), "fabric-python-echo and nemo-fabric-adapters-common are not importable")
    config = echo_config_mapping()
    agent = config["metadata"]["name"]
    started = _call(server, _request("start", agent=agent, config=config))
    assert started["status"] == "succeeded", started
    assert started["changed"] is True
    runtime_id = started["result"]["runtime_id"]
    target = {"agent": agent, "runtime_id": runtime_id}

    first = _call(server, _request("invoke", input="hello", **target))
    assert first["status"] == "succeeded", first
    assert first["changed"] is None
    assert first["result"]["output"]["response"] == "echo: hello"
    second = _call(server, _request("invoke", request={"input": "again", "request_id": "turn-2"}, **target))
    assert second["result"]["output"]["turn"] == 2
    assert second["result"]["output"]["previous_input"] == "hello"
    assert second["result"]["request_id"] == "turn-2"

    wrong = _call(server, _request("invoke", input="x", agent="someone-else", runtime_id=runtime_id))
    assert wrong["error"]["code"] == "wrong_agent"
    stopped = _call(server, _request("stop", **target))
    assert (stopped["status"], stopped["changed"], stopped["result"]) == ("succeeded", True, None)
    again = _call(server, _request("stop", **target))
    assert (again["status"], again["changed"]) == ("succeeded", False)


def test_upstream_client_drives_two_scripted_runtimes_by_id(server: Path) -> None:
    _require(_scripted_binary_present(), "fabric-adapter-scripted is not built; run `cargo build`")

    def config(name: str) -> dict[str, Any]:
        return {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": name},
            "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": [f"{name} {{turn}}: {{input}}"]}},
            "discovery": {"local_paths": [str(SCRIPTED_DIR)]},
        }

    ids = {}
    for name in ("alpha", "beta"):
        started = _call(server, _request("start", agent=name, config=config(name)))
        assert started["status"] == "succeeded", started
        ids[name] = started["result"]["runtime_id"]
    assert ids["alpha"] != ids["beta"]
    reply = _call(server, _request("invoke", input="x", agent="alpha", runtime_id=ids["alpha"]))
    assert reply["result"]["output"]["response"] == "alpha 1: x"
    _call(server, _request("stop", agent="alpha", runtime_id=ids["alpha"]))
    reply = _call(server, _request("invoke", input="y", agent="beta", runtime_id=ids["beta"]))
    assert reply["result"]["output"]["response"] == "beta 1: y"
    # A start after a stop (upstream 0.5.0's server would answer runtime_exists here).
    restarted = _call(server, _request("start", agent="alpha", config=config("alpha")))
    assert restarted["status"] == "succeeded", restarted
    # Upstream's client reports a missing server as host_unavailable with no effects.
    missing = _call(server.parent / "absent.sock", _request("stop", agent="a", runtime_id="r"))
    assert (missing["error"]["code"], missing["error"]["effects"]) == ("host_unavailable", "none")
