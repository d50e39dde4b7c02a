"""A program that exits right after ``Fabric.run`` does not cut the background stop short.

``run`` returns at the host's answer to ``stop``; the host's exit, its reap and the removal of
its temporary FABRIC_HOME finish afterwards. The library waits for them (bounded) when the
process exits normally, so the host ends on its own instead of by ``PR_SET_PDEATHSIG`` and no
home is left for the next core's sweeper.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from fcsupport import binding_paths
from test_embedder_death import _alive

TESTS = Path(__file__).resolve().parent

PROGRAM = """
import asyncio, json, time
from fcsupport import scripted_config
from fabric_core import Fabric

# The host answers `stop`, then keeps running for 0.5 s before exiting on its own.
result = asyncio.run(Fabric().run(scripted_config(["echo: {input}"], exit_delay_ms=500), input="x"))
meta = result.to_mapping()["metadata"]
print(json.dumps({"status": result.status, "pid": meta["host_pid"], "home": meta["fabric_home"],
                  "returned": time.monotonic()}), flush=True)
"""


def _env(runtime_dir: Path) -> dict[str, str]:
    """The test's environment, with the homes under ``runtime_dir`` and this binding importable."""
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *binding_paths()])
    return env


def test_a_program_exiting_after_run_waits_for_the_host_and_leaves_no_home(
    scripted_built, tmp_path
) -> None:
    env = _env(tmp_path)
    program = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=60
    )
    exited = time.monotonic()
    assert program.returncode == 0, program
    report = json.loads(program.stdout)
    assert report["status"] == "succeeded", report
    pid = int(report["pid"])
    home = Path(report["home"])
    assert home.is_relative_to(tmp_path), home
    try:
        # The program's exit waited for the host's own exit (its 0.5 s delay after the answer)
        # instead of killing it: the host is gone and its home removed by this core, not swept.
        assert exited - report["returned"] >= 0.4, "the exit did not wait for the host"
        assert not _alive(pid), f"host {pid} outlived its program"
        assert not home.exists(), "the temporary FABRIC_HOME outlived its program"
        assert [p for p in tmp_path.iterdir() if p.name.startswith("fabric-runtime-")] == []
    finally:
        if _alive(pid):
            os.kill(pid, 9)


FORKED = """
import asyncio, os, sys
from fcsupport import scripted_config
from fabric_core import Fabric

asyncio.run(Fabric().run(scripted_config(["echo: {input}"], exit_delay_ms=500), input="x"))
child = os.fork()
if child == 0:
    sys.exit(0)  # a normal exit in a forked child: it has the handler but not the reactor
print(child, flush=True)
_, status = os.waitpid(child, 0)
print(os.waitstatus_to_exitcode(status), flush=True)
"""


def test_a_forked_child_exits_without_waiting_for_its_parents_reactor(scripted_built, tmp_path) -> None:
    env = _env(tmp_path)
    program = subprocess.Popen([sys.executable, "-c", FORKED], env=env, stdout=subprocess.PIPE, text=True)
    child = int(program.stdout.readline())
    try:
        out, _ = program.communicate(timeout=30)
    finally:
        for pid in (program.pid, child):
            if _alive(pid):
                os.kill(pid, 9)
        program.wait()
    assert program.returncode == 0
    assert out.strip() == "0", out
