"""Warm invocations of the scripted adapter through the Python binding (fabric_core).

Prints one JSON line per measure, like the Go and TypeScript benches. Run with the
repository's bindings/python/src on PYTHONPATH (bench/bindings/run.sh does that).
Usage: python bench/bindings/py_bench.py [n] [warmup]
"""

import asyncio
import json
import os
import pathlib
import sys
import time

from fabric_core import Fabric
from fabric_core.models import FabricConfig
from fabric_core.types import RunResult

ROOT = pathlib.Path(__file__).resolve().parents[2]
DESCRIPTOR = ROOT / "adapters" / "scripted" / "scripted.fabric-adapter.json"


def last_pid():
    """Tasks (processes and threads) allocated so far in this PID namespace, or None:
    counted only when this program is PID 1 of its own namespace (bench/runner.py runs it
    so; bench/python/meter.py explains the count)."""
    if os.getpid() != 1:
        return None
    try:
        return int(pathlib.Path("/proc/sys/kernel/ns_last_pid").read_text())
    except (OSError, ValueError):
        return None


async def measure(n, call):
    before = last_pid()
    cpu = time.process_time()
    samples = []
    for _ in range(n):
        started = time.perf_counter_ns()
        await call()
        samples.append((time.perf_counter_ns() - started) / 1000)
    samples.sort()
    return {
        "n": n,
        "median_us": samples[len(samples) // 2],
        "p90_us": samples[len(samples) * 9 // 10],
        "mean_us": sum(samples) / len(samples),
        "min_us": samples[0],
        # CPU time (user+sys) of this process, all threads, per call.
        "cpu_per_call_us": (time.process_time() - cpu) / n * 1e6,
        "tasks": tasks(before, last_pid()),
    }


def tasks(before, after):
    return None if before is None or after is None else after - before


async def main(n, warmup):
    config = FabricConfig.from_mapping(
        {
            "metadata": {"name": "bench-python"},
            "harness": {"adapter_id": "fabric.scripted"},
            "discovery": {"local_paths": [str(DESCRIPTOR)]},
        }
    )
    async with await Fabric().start_runtime(config) as runtime:

        async def invoke():
            result = await runtime.invoke(input="ping")
            if result.status != "succeeded":
                raise RuntimeError(f"status {result.status}")

        async def status():
            await runtime.status_info()

        for _ in range(warmup):
            await invoke()
        # Decoding one RunResult's JSON (re-encoded from a real result) into the binding's
        # types, as Runtime.invoke does: the binding's own share of an invoke.
        text = json.dumps(dict((await runtime.invoke(input="ping")).items()), default=dict)

        async def decode():
            RunResult._from_json(json.loads(text))

        for name, call in (("warm_invoke_us", invoke), ("status_call_us", status), ("result_decode_us", decode)):
            summary = await measure(n, call)
            print(json.dumps({"binding": "python", "measure": name, **summary}))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 200))
