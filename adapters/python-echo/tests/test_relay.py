"""fabric.python-echo and NeMo Relay: ATOF records only when Relay is enabled (through an ATOF
file sink here; the collector path is in bindings/python/tests/test_atof_adapters.py), and no
`nemo_relay` import otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_echo import SRC, Host, _context, invoke_msg, result_of


def _require_relay() -> None:
    try:
        import nemo_relay  # noqa: F401
    except ImportError:
        pytest.skip("nemo_relay is missing; install it: scripts/setup.sh (pip install 'nemo-fabric[streaming]==0.5.0')")


def test_relay_off_never_imports_nemo_relay():
    probe = (
        "import sys, fabric_python_echo.adapter as a, asyncio\n"
        "rt = a.EchoRuntime()\n"
        "from nemo_fabric_adapter_contract.models import AgentConfig\n"
        "asyncio.run(rt.start({'config': AgentConfig.from_mapping({}), 'runtime_context': {'telemetry': {'relay_enabled': False}}}))\n"
        "print('nemo_relay' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_relay_on_writes_a_scope_with_a_mark_per_chunk(tmp_path, monkeypatch):
    _require_relay()
    config_path = tmp_path / "relay-config.json"
    sink = {"type": "file", "output_directory": str(tmp_path / "relay"), "filename": "events.atof.jsonl"}
    config_path.write_text(json.dumps({
        "schema_version": "fabric.relay/v1alpha1",
        "relay": {"enabled": True, "config": {"version": 1, "components": [
            {"kind": "observability", "enabled": True, "config": {"version": 4, "atof": {"enabled": True, "sinks": [sink]}}}]}},
    }))
    monkeypatch.setenv("FABRIC_RELAY_CONFIG_PATH", str(config_path))
    monkeypatch.setenv("FABRIC_RELAY_ENABLED", "true")
    host = Host()
    try:
        context = _context("R1")
        context["telemetry"] = {"relay_enabled": True, "config_path": str(config_path)}
        start = {"operation": "start", "payload": {
            "agent_name": "t", "base_dir": str(tmp_path), "config": {}, "runtime_context": context}}
        assert host.request(start)["outcome"]["status"] == "succeeded"
        text = "abcdefghij"
        output = result_of(host.request(invoke_msg("R1", text, {"scripted_stream": {"chunk_chars": 4}})))["output"]
        [artifact] = output["relay_artifacts"]
        assert artifact["kind"] == "atof"
        records = [json.loads(line) for line in Path(artifact["path"]).read_text().splitlines()]
    finally:
        host.kill()
    scopes = [r for r in records if r["kind"] == "scope"]
    marks = [r for r in records if r["kind"] == "mark"]
    assert [s["scope_category"] for s in scopes] == ["start", "end"]
    assert scopes[0]["metadata"]["nemo_fabric_request_id"] == "request-1"
    assert scopes[0]["metadata"]["nemo_fabric_invocation_id"] == "invocation-1"
    assert [m["data"]["text"] for m in marks] == ["abcd", "efgh", "ij"]
    assert all(m["parent_uuid"] == scopes[0]["uuid"] for m in marks)
