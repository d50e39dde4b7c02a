"""Prewarmed hosts (``Fabric.prewarm``): a matching ``run``/``start_runtime`` takes a waiting
host and a replacement is launched; a config that launches another host does not; a claimed
run returns what a cold run returns; ``close()`` and a SIGKILL of the embedding program leave
no host behind."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fabric_core import Fabric, FabricCapabilityError, FabricConfigError, Prewarm
from fcsupport import binding_paths, scripted_config
from test_embedder_death import _alive
from test_runtime import process_gone

TESTS = Path(__file__).resolve().parent


def _host_pid(result: Any) -> int:
    for event in result.to_mapping()["events"]:
        if event["kind"] == "runtime_start":
            return int(event["metadata"]["host_pid"])
    raise AssertionError(f"no runtime_start event in {result}")


def _eventually(what: str, done: Any, bound: float = 10.0) -> None:
    deadline = time.monotonic() + bound
    while not done():
        assert time.monotonic() < deadline, f"{what} within {bound} s"
        time.sleep(0.01)


def test_a_matching_run_and_start_take_waiting_hosts_and_close_ends_the_rest(scripted_built) -> None:
    config = scripted_config(["echo: {input}"])
    fabric = Fabric()

    async def main() -> None:
        with fabric.prewarm(config, hosts=2) as pool:
            assert isinstance(pool, Prewarm)
            ready = list(pool.status().ready_pids)
            assert len(ready) == 2 and all(_alive(pid) for pid in ready)
            result = await fabric.run(config, input="hi")
            assert result.status == "succeeded"
            assert _host_pid(result) in ready
            assert pool.status().claimed == 1
            _eventually("a replacement host", lambda: len(pool.status().ready_pids) == 2)
            waiting = list(pool.status().ready_pids)
            async with await fabric.start_runtime(config) as runtime:
                assert int(runtime.handle["host_pid"]) in waiting
                assert (await runtime.invoke(input="again")).status == "succeeded"
            assert pool.status().claimed == 2
            left = list(pool.status().ready_pids)
        final = pool.close()  # idempotent after the with block
        assert final.closed and list(final.ready_pids) == [] and pool.closed
        assert all(process_gone(pid, timeout=5.0) for pid in left)

    asyncio.run(main())


def test_a_config_that_launches_another_host_starts_cold(scripted_built) -> None:
    config = scripted_config(["echo: {input}"])
    other = scripted_config(["other: {input}"])
    fabric = Fabric()

    async def main() -> None:
        with fabric.prewarm(config, hosts=1) as pool:
            ready = list(pool.status().ready_pids)
            result = await fabric.run(other, input="hi")
            assert _host_pid(result) not in ready
            result = await fabric.run(config, input="hi", base_dir=TESTS)
            assert _host_pid(result) not in ready  # another base directory: another plan
            assert pool.status().claimed == 0
            assert list(pool.status().ready_pids) == ready

    asyncio.run(main())


def _normalized(value: Any, key: str = "") -> Any:
    """``value`` without what differs between any two runs: ids, times, pids, paths naming a
    runtime, measured amounts (counts stay)."""

    counts = {"process_count", "turn", "history", "turns_used"}
    varies = key.endswith(("_id", "_pid", "_at")) or key.startswith("timestamp") or key in {
        "message",
        "fabric_home",
        "path",
    }
    if isinstance(value, dict):
        return {name: _normalized(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_normalized(item, key) for item in value]
    if isinstance(value, bool):
        return None if varies else value
    if isinstance(value, (int, float)):
        return value if key in counts else None
    if isinstance(value, str) and (varies or "runtime-" in value):
        return None
    return None if varies else value


def test_a_claimed_run_returns_what_a_cold_run_returns(scripted_built) -> None:
    config = scripted_config(["echo: {input}"])
    fabric = Fabric()

    async def main() -> None:
        cold = await fabric.run(config, input="same")
        with fabric.prewarm(config, hosts=1) as pool:
            ready = list(pool.status().ready_pids)
            warm = await fabric.run(config, input="same")
            assert _host_pid(warm) in ready
        assert _normalized(warm.to_mapping()) == _normalized(cold.to_mapping())

    asyncio.run(main())


def test_prewarm_refuses_what_it_cannot_keep(scripted_built) -> None:
    config = scripted_config(["echo: {input}"])
    for hosts in (0, 65):
        with pytest.raises(FabricConfigError) as raised:
            Fabric().prewarm(config, hosts=hosts)
        assert raised.value.details["path"] == "hosts"
    with pytest.raises(FabricConfigError):
        Fabric().prewarm(config, hosts="2")  # type: ignore[arg-type]
    remote = scripted_config(["echo: {input}"]).to_mapping()
    remote["environment"] = {"provider": "subprocess"}
    from fabric_core import FabricConfig

    with pytest.raises((FabricCapabilityError, FabricConfigError)):
        Fabric().prewarm(FabricConfig.from_mapping(remote), hosts=1)


PROGRAM = """
import json, sys, time
from fcsupport import scripted_config
from fabric_core import Fabric

pool = Fabric().prewarm(scripted_config(["echo: {input}"]), hosts=3)
print(json.dumps(list(pool.status().ready_pids)), flush=True)
time.sleep(600)
"""


def test_a_killed_program_leaves_no_prewarmed_host_behind(scripted_built, tmp_path) -> None:
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = str(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *binding_paths()])
    program = subprocess.Popen(
        [sys.executable, "-c", PROGRAM], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        pids = json.loads(program.stdout.readline())
        assert len(pids) == 3 and all(_alive(pid) for pid in pids)
        program.send_signal(signal.SIGKILL)
        program.wait(timeout=10)
        deadline = time.monotonic() + 5.0
        while any(_alive(pid) for pid in pids):
            assert time.monotonic() < deadline, f"prewarmed hosts {pids} outlived the program"
            time.sleep(0.02)
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
        program.stdout.close()
