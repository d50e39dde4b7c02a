"""One measurement of one Python SDK, in a fresh process (bench/runner.py alternates them).

The same caller for both sides: this script, an asyncio loop, the SDK's public API, the
Python echo adapter (upstream-style, on ``nemo-fabric-adapters-common``), the same config.
Prints one JSON line: per-call wall time (median, p90), the CPU time (user+sys) of this
process per call (``cpu_per_call``: all its threads, ours includes the core's reactor), the
CPU time per call of this process and of every process it started (``cpu_all_per_call``:
the adapter hosts and any helper), and the tasks (processes and threads) started during the
timed loop (``tasks``; counted when the script runs as PID 1 of its own PID namespace, as
bench/runner.py starts it — see meter.py).

Nothing here changes one side's behaviour: no ``ADAPTER_PYTHON`` (with it, upstream 0.5.0
starts ``python -c "import json, sysconfig; ..."`` on every plan). Run it the way a user
runs an SDK: from an activated virtual environment (``VIRTUAL_ENV`` set, its ``bin`` first
on ``PATH``) and from a directory that is not a git checkout.

    python bench/python/side_by_side.py --sdk fabric_core|nemo_fabric --phase PHASE [-n N]
        [--stats-off] [--gap none|plan|run|sleep] [--idle-ms MS]

Phases: ``plan``; ``warm`` (a warm runtime invoked in a plain loop, or with ``--gap`` work
between the measured invokes: the alternating-loop artifact, bench/README.md); ``cold``
(``Fabric.run`` per call; with ``--prewarm N``, ours runs from ``Fabric.prewarm(config,
hosts=N)`` and both sides idle ``--idle-ms`` untimed before each run); ``fanout`` (64 runtimes x 20 invokes, invocations/s of the invoke
phase); ``startup`` (the adapter's own start-up: a fresh interpreter with the adapter host's
environment importing what the host imports, running nothing, until it has exited);
``bare-cycle`` and ``bare-invoke`` (the same echo host driven directly, no SDK: spawn,
start, one invoke, stop, exit; and a warm invoke round trip, ``--gap sleep`` for the idle
case — bare_host.py; ``--sdk`` is ignored).

The ``cold`` phase of ``fabric_core`` also reports where each run's time went, from the
RunResult's own event timestamps (Unix milliseconds, the same clock as ``time.time()``):
``to_start`` (the call until ``runtime_start``: plan, spawn, the host's interpreter and
imports, the ``start`` handshake), ``invoke`` (``runtime_start`` to ``invocation_end``),
``stop`` (``invocation_end`` to ``runtime_stop``: the ``stop`` request, the host's own
shutdown, the reap) and ``after_stop`` (``runtime_stop`` until the call returned: the
result's assembly and its decoding in the binding). Upstream 0.5.0 stamps its invocation
events when it assembles the result, so its events do not split a run the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import bare_host
from meter import Meter

REPO = Path(__file__).resolve().parents[2]

# What the echo adapter's host imports before it reads its first request (`python -m
# fabric_python_echo`: runpy, the adapter, fabric_core's evidence helper when importable,
# upstream's lifecycle host and the stdin reader thread it starts).
HOST_IMPORTS = """\
import runpy
import concurrent.futures.thread
import fabric_python_echo.adapter
try:
    import fabric_core.adapter_evidence
except ImportError:
    pass
"""
# What the core adds to a python host's environment (fabric-host/src/launch.rs).
HOST_ENV = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def config_mapping(stats_off: bool) -> dict[str, Any]:
    data = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    data["discovery"] = {"local_paths": [str(REPO / "adapters" / "python-echo")]}
    if stats_off:
        data["system_stats"] = None
    return data


def summary(samples: list[float], cost: dict[str, Any], unit: float) -> dict[str, Any]:
    """Median and p90 wall time, CPU per call (this process; with every process it started)
    and the tasks started, of one timed loop (``cost`` from ``Meter.stop``)."""
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "median": statistics.median(ordered) * unit,
        "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * unit,
        "cpu_per_call": cost["cpu_caller"] / len(samples) * unit,
        "cpu_all_per_call": cost["cpu_all"] / len(samples) * unit,
        "tasks": cost["tasks"],
    }


def timed(samples: list[float], call: Any) -> Any:
    started = time.perf_counter()
    value = call()
    samples.append(time.perf_counter() - started)
    return value


async def phase_warm(fabric: Any, config: Any, n: int, gap: str, idle_ms: float) -> dict[str, Any]:
    samples: list[float] = []
    meter = Meter()
    total: dict[str, Any] | None = None
    async with await fabric.start_runtime(config) as runtime:
        for _ in range(20):
            await runtime.invoke(input="warm")
        if gap == "none":
            meter.start()
        for index in range(n):
            if gap == "plan":
                fabric.plan(config)
            elif gap == "run":
                await fabric.run(config, input="gap")
            elif gap == "sleep":
                await asyncio.sleep(idle_ms / 1000)  # about a cold run's duration, doing nothing
            if gap != "none":
                # Only the measured invoke is metered: the gap's work is not the row's.
                meter.start()
            started = time.perf_counter()
            result = await runtime.invoke(input=f"bench {index}")
            samples.append(time.perf_counter() - started)
            if gap != "none":
                total = add(total, meter.stop())
            if result.status != "succeeded":
                raise RuntimeError(f"invoke {index}: {result.status}")
        if gap == "none":
            total = meter.stop()
    assert total is not None
    return summary(samples, total, 1e3)  # ms


def add(total: dict[str, Any] | None, cost: dict[str, Any]) -> dict[str, Any]:
    """The sum of two ``Meter.stop`` results (``total`` None: the first)."""
    if total is None:
        return cost
    tasks = None if total["tasks"] is None or cost["tasks"] is None else total["tasks"] + cost["tasks"]
    return {"cpu_caller": total["cpu_caller"] + cost["cpu_caller"], "cpu_all": total["cpu_all"] + cost["cpu_all"], "tasks": tasks}


def split(called_ms: float, returned_ms: float, events: Any) -> dict[str, float] | None:
    """Where one run went, from its events' timestamps (ms); None when one is missing."""
    stamps = {event.kind: event.timestamp_millis for event in events}
    marks = [stamps.get(kind) for kind in ("runtime_start", "invocation_end", "runtime_stop")]
    if None in marks:
        return None
    start, invoked, stopped = marks
    return {
        "to_start": start - called_ms,
        "invoke": invoked - start,
        "stop": stopped - invoked,
        "after_stop": returned_ms - stopped,
    }


async def phase_cold(
    fabric: Any, config: Any, n: int, sdk: str, prewarm: int = 0, idle_ms: float = 0.0
) -> dict[str, Any]:
    """``n`` runs; with ``prewarm`` (ours only: upstream has no prewarming) from a pool of that
    many prewarmed hosts, and with ``idle_ms`` of untimed idleness before each run (both
    sides) so that the pool's replacement host is up again. The meter covers the whole loop:
    the CPU and tasks of the replacements launched in the background are counted."""
    samples: list[float] = []
    phases: list[dict[str, float]] = []
    pool = fabric.prewarm(config, hosts=prewarm) if prewarm and sdk == "fabric_core" else None
    meter = Meter()
    meter.start()
    for index in range(n):
        if idle_ms:
            await asyncio.sleep(idle_ms / 1000)
        called = time.time()
        started = time.perf_counter()
        result = await fabric.run(config, input=f"cold {index}")
        samples.append(time.perf_counter() - started)
        returned = time.time()
        if result.status != "succeeded":
            raise RuntimeError(f"run {index}: {result.status}")
        parts = split(called * 1e3, returned * 1e3, result.events) if sdk == "fabric_core" else None
        if parts is not None:
            phases.append(parts)
    out = summary(samples, meter.stop(), 1e3)  # ms
    if pool is not None:
        claimed = pool.close().claimed
        if claimed != n:
            raise RuntimeError(f"prewarm: {claimed} of {n} runs took a prewarmed host")
    if phases:
        out["phases"] = {key: statistics.median(p[key] for p in phases) for key in phases[0]}
    return out


async def phase_fanout(fabric: Any, config: Any, runtimes: int, invokes: int) -> dict[str, Any]:
    started_all = [await fabric.start_runtime(config) for _ in range(runtimes)]
    try:
        for runtime in started_all:
            await runtime.invoke(input="warm")

        async def drive(runtime: Any) -> None:
            for index in range(invokes):
                result = await runtime.invoke(input=f"fan {index}")
                if result.status != "succeeded":
                    raise RuntimeError(f"fanout: {result.status}")

        meter = Meter()
        meter.start()
        started = time.perf_counter()
        await asyncio.gather(*(drive(runtime) for runtime in started_all))
        elapsed = time.perf_counter() - started
        cost = meter.stop()
        calls = runtimes * invokes
        return {
            "n": calls,
            "invocations_per_s": calls / elapsed,
            "wall_per_call": elapsed / calls * 1e3,  # ms
            "cpu_per_call": cost["cpu_caller"] / calls * 1e3,  # ms
            "cpu_all_per_call": cost["cpu_all"] / calls * 1e3,  # ms
            "tasks": cost["tasks"],
        }
    finally:
        for runtime in started_all:
            await runtime.stop()


def phase_startup(n: int) -> dict[str, Any]:
    # The interpreter our core runs a python host with: the calling interpreter (the
    # binding's `python_interpreter`), as upstream's resolves it from the activated venv.
    env = {**os.environ, **HOST_ENV}
    samples: list[float] = []
    meter = Meter()
    meter.start()
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", HOST_IMPORTS], env=env, check=True)
        samples.append(time.perf_counter() - started)
    return summary(samples, meter.stop(), 1e3)  # ms


def phase_bare_cycle(n: int) -> dict[str, Any]:
    """The bare host cycle (bare_host.py): spawn, start, one invoke, stop, exit."""
    env = {**os.environ, **HOST_ENV}
    prefix = config_mapping(False)["harness"]["settings"]["prefix"]
    samples: list[float] = []
    meter = Meter()
    meter.start()
    for index in range(n):
        timed(samples, lambda index=index: bare_host.cycle(env, prefix, f"cold {index}"))
    return summary(samples, meter.stop(), 1e3)  # ms


def phase_bare_invoke(n: int, gap: str, idle_ms: float) -> dict[str, Any]:
    """The bare warm invoke (bare_host.py): one host, single invoke round trips."""
    env = {**os.environ, **HOST_ENV}
    host = bare_host.BareHost(env, config_mapping(False)["harness"]["settings"]["prefix"])
    samples: list[float] = []
    meter = Meter()
    total: dict[str, Any] | None = None
    try:
        for _ in range(20):
            host.invoke("warm")
        meter.start()
        for index in range(n):
            if gap == "sleep":
                total = add(total, meter.stop())
                time.sleep(idle_ms / 1000)
                meter.start()
            timed(samples, lambda index=index: host.invoke(f"bench {index}"))
        total = add(total, meter.stop())
    finally:
        host.stop()
    return summary(samples, total, 1e3)  # ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdk", required=True, choices=["fabric_core", "nemo_fabric"])
    parser.add_argument(
        "--phase", required=True, choices=["plan", "warm", "cold", "fanout", "startup", "bare-cycle", "bare-invoke"]
    )
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--runtimes", type=int, default=64)
    parser.add_argument("--invokes", type=int, default=20)
    parser.add_argument("--stats-off", action="store_true")
    parser.add_argument("--gap", default="none", choices=["none", "plan", "run", "sleep"])
    parser.add_argument("--idle-ms", type=float, default=60.0, help="the sleep gap (default 60)")
    parser.add_argument(
        "--prewarm",
        type=int,
        default=0,
        help="cold phase: run from a pool of this many prewarmed hosts (ours), idle --idle-ms before each run (both)",
    )
    args = parser.parse_args()
    if args.phase == "startup":
        result = phase_startup(args.n)
    elif args.phase == "bare-cycle":
        result = phase_bare_cycle(args.n)
    elif args.phase == "bare-invoke":
        result = phase_bare_invoke(args.n, args.gap, args.idle_ms)
    else:
        sdk = importlib.import_module(args.sdk)
        config = sdk.FabricConfig.from_mapping(config_mapping(args.stats_off))
        fabric = sdk.Fabric()
        if args.phase == "plan":
            for _ in range(20):
                fabric.plan(config)
            samples: list[float] = []
            meter = Meter()
            meter.start()
            for _ in range(args.n):
                timed(samples, lambda: fabric.plan(config))
            result = summary(samples, meter.stop(), 1e6)  # µs
        elif args.phase == "warm":
            result = asyncio.run(phase_warm(fabric, config, args.n, args.gap, args.idle_ms))
        elif args.phase == "cold":
            idle = args.idle_ms if args.prewarm else 0.0
            result = asyncio.run(phase_cold(fabric, config, args.n, args.sdk, args.prewarm, idle))
        else:
            result = asyncio.run(phase_fanout(fabric, config, args.runtimes, args.invokes))
    print(
        json.dumps(
            {"sdk": args.sdk, "phase": args.phase, "stats_off": args.stats_off, "gap": args.gap, "prewarm": args.prewarm, **result}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
