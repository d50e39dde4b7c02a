"""Health checks other local users cannot deny, through the C ABI (``Fabric.check``).

For the Rust listener (scripted adapter) and the Python listener
(``fabric_core.adapter_health.serve`` in a small adapter written here): 500 idle attacker
connections from another process on TCP (``FABRIC_HEALTH_TRANSPORT=tcp``), and 500 on the
default unix socket (only our own uid can reach it: the socket is 0600 in the 0700
FABRIC_HOME, which the test checks), and 40/40 legitimate checks pass. A symlinked,
group-writable or foreign-owned endpoint file is refused with its own reason.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fcsupport import REPO, SCRIPTED_DIR, binding_paths

from fabric_core import CheckRequest, Fabric, FabricConfig

# Another local process: holds N idle connections and reopens every one the listener closes.
ATTACKER = r"""
import json, os, socket, sys, time
target, n = json.loads(sys.argv[1]), int(sys.argv[2])

def connect():
    if "socket" in target:
        path, fd = target["socket"], None
        if len(path) > 100:
            fd = os.open(os.path.dirname(path), os.O_RDONLY)
            path = "/proc/self/fd/%d/%s" % (fd, os.path.basename(path))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except OSError:
            s.close()
            return None
        finally:
            if fd is not None:
                os.close(fd)
        return s
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex((target["host"], target["port"]))
    return s

conns, opened, announced = [None] * n, 0, False
while True:
    for i, c in enumerate(conns):
        if c is not None:
            try:
                if c.recv(1) == b"":
                    c.close(); c = conns[i] = None
            except BlockingIOError:
                continue
            except OSError:
                c.close(); c = conns[i] = None
        if c is None:
            conns[i] = connect()
            opened += conns[i] is not None
    if not announced:
        print("ready", sum(c is not None for c in conns), flush=True)
        announced = True
    time.sleep(0.01)
"""

# A Python adapter whose host runs the Python health listener (fabric_core.adapter_health).
ADAPTER_MODULE = textwrap.dedent(
    """
    from fabric_core.adapter_health import serve

    class Runtime:
        async def start(self, payload):
            return None

        async def invoke(self, request, context):
            return {"status": "succeeded", "output": {"response": "ok"}}

        async def stop(self):
            pass

        async def check(self, level):
            return {"outcome": "passed", "source_id": "pyhealth:" + level}

    serve(Runtime)
    """
)

DESCRIPTOR = {
    "contract_version": "fabric.adapter/v1alpha2",
    "adapter_id": "fabric.test-python-health",
    "adapter_kind": "python",
    "runner": {"module": "fabric_test_python_health"},
    "config": {"accepts": []},
    "capabilities": {
        "cancellation": False,
        "service": False,
        "streaming": False,
        "updates": False,
        "metadata": {"health_levels": ["live", "active", "ready"]},
    },
}


def _config(adapter_id: str, adapter_dir: Path, artifacts: Path) -> FabricConfig:
    return FabricConfig.from_mapping(
        {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "health-dos"},
            "harness": {"adapter_id": adapter_id},
            "discovery": {"local_paths": [str(adapter_dir)]},
            "runtime": {"timeout_seconds": 60, "artifacts": str(artifacts)},
        }
    )


@pytest.fixture(params=["rust", "python"])
def listener_kind(request, scripted_built, tmp_path, monkeypatch) -> tuple[str, Path]:
    """(adapter id, adapter directory) for each listener implementation."""

    if request.param == "rust":
        return "fabric.scripted", SCRIPTED_DIR
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "fabric_test_python_health.py").write_text(ADAPTER_MODULE)
    (adapter / "test-python-health.fabric-adapter.json").write_text(json.dumps(DESCRIPTOR))
    paths = [str(adapter), *binding_paths(), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    return "fabric.test-python-health", adapter


def _endpoint(home: Path) -> dict[str, Any]:
    return json.loads((home / "health.endpoint.json").read_text())


def _attack(target: dict[str, Any], n: int = 500) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", ATTACKER, json.dumps(target), str(n)],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().split()
    assert line and line[0] == "ready", line
    assert int(line[1]) >= 100, f"the attacker holds {line[1]} connections"
    return proc


async def _forty_checks(fabric: Fabric, runtime_id: str) -> list[tuple[str, str | None]]:
    # Idle attackers never let go, so a denied check would wait out any deadline; a 15 s
    # deadline (not the default 3 s) keeps a loaded CI machine's scheduling from posing
    # as denial (it flaked about once in 40 runs with 3 s).
    outcomes = []
    for _ in range(40):
        request = CheckRequest(runtime_id=runtime_id, level="ready", timeout_seconds=15)
        report = await fabric.check(request=request)
        outcomes.append((report.outcome, report.reason))
    return outcomes


def _under_attack(adapter_id: str, adapter_dir: Path, artifacts: Path, transport: str) -> None:
    async def main() -> None:
        fabric = Fabric()
        config = _config(adapter_id, adapter_dir, artifacts)
        async with await fabric.start_runtime(config) as runtime:
            home = artifacts / ".fabric" / runtime.runtime_id
            endpoint = _endpoint(home)
            if transport == "tcp":
                assert endpoint["schema_version"] == "fabric.health-endpoint/v1", endpoint
                target = {"host": endpoint["host"], "port": endpoint["port"]}
            else:
                assert endpoint["schema_version"] == "fabric.health-endpoint/v2", endpoint
                assert endpoint["transport"] == "unix"
                socket_path = Path(endpoint["socket"])
                # Other users cannot reach the socket: 0600, inside the 0700 FABRIC_HOME
                # (whose parent .fabric is 0700 too).
                assert socket_path.parent == home.resolve()
                assert stat.S_ISSOCK(os.lstat(socket_path).st_mode)
                assert stat.S_IMODE(os.lstat(socket_path).st_mode) == 0o600
                assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
                assert stat.S_IMODE(os.stat(home.parent).st_mode) == 0o700
                target = {"socket": str(socket_path)}
            attacker = _attack(target)
            try:
                outcomes = await _forty_checks(fabric, runtime.runtime_id)
            finally:
                attacker.kill()
                attacker.wait()
                attacker.stdout.close()
            assert outcomes == [("passed", None)] * 40, outcomes

    asyncio.run(main())


def test_idle_attackers_on_tcp_cannot_deny_checks(listener_kind, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FABRIC_HEALTH_TRANSPORT", "tcp")
    _under_attack(*listener_kind, tmp_path / "artifacts", "tcp")


def test_unix_socket_is_private_and_idle_connections_cannot_deny_checks(
    listener_kind, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("FABRIC_HEALTH_TRANSPORT", raising=False)
    _under_attack(*listener_kind, tmp_path / "artifacts", "unix")


def test_symlinked_group_writable_or_foreign_endpoint_file_is_refused(scripted_built, tmp_path) -> None:
    async def main() -> None:
        fabric = Fabric()
        artifacts = tmp_path / "artifacts"
        async with await fabric.start_runtime(_config("fabric.scripted", SCRIPTED_DIR, artifacts)) as runtime:
            home = artifacts / ".fabric" / runtime.runtime_id
            path = home / "health.endpoint.json"

            async def reason() -> tuple[str, str | None]:
                report = await fabric.check(request=CheckRequest(runtime_id=runtime.runtime_id, level="ready"))
                return report.outcome, report.reason

            assert await reason() == ("passed", None)
            # A symlink in its place (even to a valid copy) is not followed.
            copy = tmp_path / "copy.json"
            copy.write_bytes(path.read_bytes())
            copy.chmod(0o600)
            original = tmp_path / "original.json"
            os.rename(path, original)
            os.symlink(copy, path)
            assert await reason() == ("unknown", "endpoint_symlink")
            os.unlink(path)
            os.rename(original, path)
            assert await reason() == ("passed", None)
            # Group- or world-writable (or readable) files are refused.
            for mode in (0o620, 0o602, 0o640):
                path.chmod(mode)
                assert await reason() == ("unknown", "endpoint_insecure_mode"), oct(mode)
            path.chmod(0o600)
            # A file owned by another user is refused (only a privileged run can build it).
            if os.geteuid() == 0:
                os.chown(path, 65534, -1)
                assert await reason() == ("unknown", "endpoint_foreign_owner")
                os.chown(path, 0, -1)
            assert await reason() == ("passed", None)

    asyncio.run(main())
