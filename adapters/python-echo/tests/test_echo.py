"""Speak the lifecycle protocol to `python -m fabric_python_echo` (upstream's host library).

Needs `nemo_fabric_adapters` (nemo-fabric-adapters-common 0.5.0; conftest.py fails the tests without it).
The package itself need not be installed: `src/` is put on PYTHONPATH for the child.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
DEADLINE = 20.0


def _context(runtime_id: str) -> dict:
    return {
        "runtime_id": runtime_id,
        "invocation_id": "invocation-1",
        "request_id": "request-1",
        "environment": {
            "environment_id": "env-1",
            "provider": "local",
            "control_location": "in_env_control",
            "ownership": "caller_owned",
        },
        "artifacts": {},
    }


def start_msg(runtime_id: str = "R1", settings: dict | None = None, **config) -> dict:
    config.setdefault("harness", {"settings": settings or {}})
    return {
        "operation": "start",
        "payload": {"agent_name": "t", "config": config, "runtime_context": _context(runtime_id)},
    }


def invoke_msg(runtime_id: str, input, context: dict | None = None) -> dict:
    return {
        "operation": "invoke",
        "payload": {
            "runtime_context": _context(runtime_id),
            "request": {"input": input, "context": context or {}},
        },
    }


def stop_msg(runtime_id: str = "R1") -> dict:
    return {"operation": "stop", "payload": {"runtime_id": runtime_id}}


class Host:
    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fabric_python_echo"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self) -> dict:
        line = self.lines.get(timeout=DEADLINE)
        assert line is not None, "stdout closed before a response"
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert set(message) == {"operation", "outcome"}
        return message

    def request(self, message: dict) -> dict:
        self.send_raw(json.dumps(message).encode() + b"\n")
        return self.recv()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self) -> int:
        return self.proc.wait(timeout=DEADLINE)

    def assert_stdout_closed(self) -> None:
        assert self.lines.get(timeout=DEADLINE) is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=DEADLINE)


@pytest.fixture
def host():
    h = Host()
    yield h
    h.kill()


def started(h: Host, **kwargs) -> Host:
    response = h.request(start_msg(**kwargs))
    assert response == {"operation": "start", "outcome": {"status": "succeeded", "output": None}}
    return h


def result_of(response: dict) -> dict:
    assert response["outcome"]["status"] == "succeeded", response
    return response["outcome"]["output"]


def code_of(response: dict) -> str:
    assert response["outcome"]["status"] == "failed", response
    return response["outcome"]["error"]["code"]


def test_echo_keeps_turn_state_and_stop_exits(host):
    started(host, settings={"prefix": "> "}, instructions={"system": {"content": "Hi.", "mode": "append"}})
    one = result_of(host.request(invoke_msg("R1", "alpha")))
    assert one["status"] == "succeeded"
    assert one["output"]["response"] == "> alpha"
    assert one["output"]["turn"] == 1
    assert one["output"]["previous_input"] is None
    assert one["output"]["metadata"]["system_instruction"] == {"content": "Hi.", "mode": "append"}
    two = result_of(host.request(invoke_msg("R1", {"text": "beta"})))
    assert two["output"]["turn"] == 2
    assert two["output"]["history"] == 1
    assert two["output"]["previous_input"] == "alpha"
    stop = host.request(stop_msg())
    assert stop == {"operation": "stop", "outcome": {"status": "succeeded", "output": None}}
    assert host.wait() == 0
    host.assert_stdout_closed()


def test_fail_directive_returns_failed_result(host):
    started(host)
    response = host.request(
        invoke_msg("R1", "x", {"scripted": {"fail": {"code": "tool_error", "message": "broke"}, "usage": {"input_tokens": 3}}})
    )
    result = result_of(response)
    assert result["status"] == "failed"
    assert result["error"] == {"code": "tool_error", "message": "broke", "retryable": False}
    assert result["usage"] == {"input_tokens": 3}
    # Not a lifecycle failure: the next invoke succeeds.
    assert result_of(host.request(invoke_msg("R1", "y")))["status"] == "succeeded"


def test_raise_latches_runtime(host):
    started(host)
    response = host.request(invoke_msg("R1", "x", {"scripted": {"raise": {"code": "broken", "message": "m"}}}))
    assert code_of(response) == "broken"
    assert code_of(host.request(invoke_msg("R1", "x"))) == "lifecycle_runtime_failed"


def test_lifecycle_errors_and_malformed_lines(host):
    assert code_of(host.request(invoke_msg("R1", "x"))) == "lifecycle_not_started"
    started(host)
    assert code_of(host.request(invoke_msg("R2", "x"))) == "lifecycle_runtime_mismatch"
    host.send_raw(b"{oops\n")
    bad = host.recv()
    assert bad["operation"] == "start"
    assert code_of(bad) == "lifecycle_invalid_request"
    assert code_of(host.request({"operation": "dance", "payload": {}})) == "lifecycle_invalid_operation"
    assert result_of(host.request(invoke_msg("R1", "still here")))["output"]["response"] == "still here"


def test_invalid_settings_fail_start_and_exit(host):
    response = host.request(start_msg(settings={"nope": True}))
    assert code_of(response) == "invalid_settings"
    assert response["outcome"]["error"]["metadata"] == {"path": "harness.settings.nope"}
    assert host.wait() == 0


def test_eof_exits_zero(host):
    started(host)
    host.close_stdin()
    assert host.wait() == 0
    host.assert_stdout_closed()


def test_two_runtimes_are_isolated():
    a, b = Host(), Host()
    try:
        started(a)
        started(b)
        a.request(invoke_msg("R1", "only-a"))
        assert result_of(b.request(invoke_msg("R1", "b1")))["output"]["previous_input"] is None
        assert result_of(a.request(invoke_msg("R1", "a2")))["output"]["previous_input"] == "only-a"
    finally:
        a.kill()
        b.kill()


def test_request_extensions_are_echoed(host):
    started(host)
    message = invoke_msg("R1", "x")
    message["payload"]["request"]["extensions"] = {"tone": "formal", "limits": {"max_chars": 3}}
    output = result_of(host.request(message))["output"]
    assert output["extensions"] == {"tone": "formal", "limits": {"max_chars": 3}}
    assert "extensions" not in result_of(host.request(invoke_msg("R1", "y")))["output"]


def test_require_env_unset_fails_start_like_a_real_harness(host):
    os.environ.pop("FABRIC_ECHO_TEST_UNSET", None)
    response = host.request(start_msg(settings={"require_env": "FABRIC_ECHO_TEST_UNSET"}))
    # An unexpected exception: upstream's lifecycle.serve reports it with its own code.
    assert code_of(response) == "lifecycle_adapter_start_failed"
    host.wait()  # the host exits after a failed start
