"""Nothing outlives a killed embedding program (issue 21, item 2).

A Python program using the binding starts a runtime and is killed with SIGKILL: its adapter
host ends with it (``PR_SET_PDEATHSIG``), and the temporary FABRIC_HOME it leaves behind is
removed by the next core that starts on the machine (its owner lock is free).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from fcsupport import binding_paths
from test_runtime import process_gone

TESTS = Path(__file__).resolve().parent

PROGRAM = """
import asyncio, json, sys
from fcsupport import scripted_config
from fabric_core import Fabric, RunRequest

async def main():
    runtime = await Fabric().start_runtime(scripted_config())
    handle = runtime.handle
    print(json.dumps({"pid": handle["host_pid"], "home": handle["fabric_home"]}), flush=True)
    if sys.argv[1] == "hold":
        # Busy for ten minutes (after starting one child): the host is not reading its stdin,
        # so it does not notice this program's end by EOF.
        request = RunRequest(
            input="busy", context={"scripted": {"spawn_children": 1, "sleep_ms": 600000}}
        )
        await runtime.invoke(request=request)
    await runtime.stop()

asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except OSError:
            pass
    return found


def _program(mode: str, runtime_dir: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *binding_paths()])
    return subprocess.Popen(
        [sys.executable, "-c", PROGRAM, mode],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_host_dies_with_a_killed_program_and_the_next_core_sweeps_its_home(
    scripted_built, tmp_path
) -> None:
    program = _program("hold", tmp_path)
    children: list[int] = []
    try:
        started = json.loads(program.stdout.readline())
        pid = int(started["pid"])
        deadline = time.monotonic() + 20
        while not children:
            assert time.monotonic() < deadline, "the host never started its invocation"
            children = _children(pid)
            time.sleep(0.01)
    finally:
        program.kill()  # SIGKILL: nothing of the program runs after this
        program.wait()
    root = Path(started["home"]).parents[1]
    assert root.parent == tmp_path and root.name.startswith("fabric-runtime-")
    try:
        assert process_gone(pid, timeout=5.0), f"host {pid} outlived its killed program"
        assert root.is_dir(), "a killed program cannot remove its home"
        # The host's child outlives the host's death signal (re-parented to PID 1) ...
        assert _alive(children[0])

        # ... until the next core on the machine (another program) sweeps the stale home:
        # it ends what still carries the dead runtime's id, removes the home, keeps its own.
        second = _program("stop", tmp_path)
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 0
        assert json.loads(out.splitlines()[0])["pid"] != pid
        assert not root.exists(), "the stale home of a dead owner was not swept"
        assert list(tmp_path.iterdir()) == []
        assert process_gone(children[0], timeout=5.0), "the dead host's child was not ended"
    finally:
        for leftover in [pid, *children]:
            if _alive(leftover):
                os.kill(leftover, 9)
