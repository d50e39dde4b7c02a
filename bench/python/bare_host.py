"""The echo adapter host driven directly, with no SDK: the floor under every Python row.

``side_by_side.py --phase bare-cycle`` spawns the same host command a ``python``-kind
descriptor runs (this interpreter, ``-m fabric_python_echo``, the host environment the core
adds: ``HOST_ENV``), writes ``start``, one ``invoke`` and ``stop`` as lifecycle lines, reads
each answer and waits for the process to exit: the bare cycle a cold ``run()`` wraps.
``--phase bare-invoke`` keeps one host and times single ``invoke`` round trips (after
``--gap sleep`` idle time when asked): the bare warm invoke. Every timed loop runs in the
same process, directory and environment as the SDK rows, so "cold run minus the bare cycle"
is what an SDK adds around the host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from typing import Any

_ENVIRONMENT = {
    "environment_id": "environment-bench",
    "provider": "local",
    "control_location": "in_env_control",
    "ownership": "caller_owned",
}
_ARTIFACTS = {"root": None, "artifacts": []}


class BareHost:
    """One echo host process spoken to line by line (blocking reads: the fastest driver)."""

    def __init__(self, env: dict[str, str], prefix: str) -> None:
        self.runtime_id = f"runtime-{uuid.uuid4().hex}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fabric_python_echo"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.call(
            "start",
            {
                "agent_name": "python-echo",
                "base_dir": os.getcwd(),
                "config": {"harness": {"settings": {"prefix": prefix}}},
                "runtime_context": self._context("runtime-start"),
            },
        )

    def _context(self, kind: str) -> dict[str, Any]:
        tag = uuid.uuid4().hex
        return {
            "runtime_id": self.runtime_id,
            "invocation_id": f"{kind}-{tag}",
            "request_id": f"{kind}-request-{tag}",
            "environment": _ENVIRONMENT,
            "artifacts": _ARTIFACTS,
        }

    def call(self, operation: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Writes one request line and returns the answer's outcome (raising unless it
        succeeded)."""

        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"operation": operation, "payload": payload}).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        outcome = json.loads(line)["outcome"] if line else {"status": "no answer"}
        if outcome.get("status") != "succeeded":
            raise RuntimeError(f"bare host {operation}: {outcome}")
        return outcome

    def invoke(self, text: str) -> dict[str, Any]:
        context = self._context("invocation")
        context["deadline_millis"] = int(time.time() * 1000) + 60_000
        return self.call("invoke", {"runtime_context": context, "request": {"input": text}})

    def stop(self) -> int:
        """Sends ``stop``, closes stdin and waits for the exit (the status)."""

        self.call("stop", {"runtime_id": self.runtime_id})
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait()


def cycle(env: dict[str, str], prefix: str, text: str) -> None:
    """Spawn, ``start``, one ``invoke``, ``stop``, exit."""

    host = BareHost(env, prefix)
    try:
        host.invoke(text)
    finally:
        status = host.stop()
    if status != 0:
        raise RuntimeError(f"bare host exited with {status}")
