"""Warm invocations of the scripted adapter through the Python binding (fabric_core).

Prints one JSON line per measure, like the Go and TypeScript benches. Run with the
repository's bindings/python/src on PYTHONPATH (bench/bindings/run.sh does that).
Usage: python bench/bindings/py_bench.py [n] [warmup]
"""

import asyncio
import json
import pathlib
import sys
import time

from fabric_core import Fabric
from fabric_core.models import FabricConfig
from fabric_core.types import RunResult

ROOT = pathlib.Path(__file__).resolve().parents[2]
DESCRIPTOR = ROOT / "adapters" / "scripted" / "scripted.fabric-adapter.json"


async def measure(n, call):
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
    }


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
