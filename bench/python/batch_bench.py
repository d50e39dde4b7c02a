"""Batches (issue 31): N items of the Python echo adapter at concurrency C, `fresh` and
`reuse`, through our core's batch engine (``fabric_core``: ``Fabric().batch``) or through the
loop a user writes over upstream's SDK (``nemo_fabric`` 0.5.0: an asyncio semaphore around
``run()`` for ``fresh``; around warm runtimes' ``invoke()`` for ``reuse``). The same caller
language and config; one process per measurement, run from a non-checkout directory with the
virtual environment activated (as bench/python/side_by_side.py).

    python bench/python/batch_bench.py --sdk fabric_core|nemo_fabric --isolation fresh|reuse
        [-n 1000] [--concurrency 16]

Prints one JSON line: items/s, wall seconds, the CPU time (user+sys) per item of this
process (all its threads: for ours the binding and the core's scheduler, reactor and
runtimes' bookkeeping), split into the event loop's thread (the caller: Python decoding each
line) and every other thread (for ours: the core itself), and of everything it started (the
adapter hosts).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import statistics
import sys
import time
from typing import Any

from meter import Meter
from side_by_side import config_mapping


def items(n: int) -> list[dict[str, Any]]:
    return [{"id": f"item-{i}", "input": f"question {i}"} for i in range(n)]


#: Per-item latency in milliseconds (start to result) of the measured side.
LATENCIES: list[float] = []


async def ours(sdk: Any, config: Any, n: int, concurrency: int, isolation: str, prewarm: bool) -> int:
    batch = sdk.Fabric().batch(
        config, items(n), concurrency=concurrency, isolation=isolation, prewarm=prewarm
    )
    succeeded = 0
    async for done in batch:
        succeeded += done.get("result") is not None and done["result"]["status"] == "succeeded"
        LATENCIES.append(float(done["duration_ms"]))
    return succeeded


async def timed(work: Any) -> Any:
    """Awaits ``work`` and records its latency."""

    began = time.perf_counter()
    try:
        return await work
    finally:
        LATENCIES.append((time.perf_counter() - began) * 1e3)


async def upstream_fresh(sdk: Any, config: Any, n: int, concurrency: int) -> int:
    fabric = sdk.Fabric()
    gate = asyncio.Semaphore(concurrency)

    async def one(item: dict[str, Any]) -> bool:
        async with gate:
            result = await timed(fabric.run(config, input=item["input"]))
            return result.status == "succeeded"

    return sum(await asyncio.gather(*(one(item) for item in items(n))))


async def upstream_reuse(sdk: Any, config: Any, n: int, concurrency: int) -> int:
    fabric = sdk.Fabric()
    runtimes: asyncio.Queue[Any] = asyncio.Queue()
    started = await asyncio.gather(*(fabric.start_runtime(config) for _ in range(concurrency)))
    for runtime in started:
        runtimes.put_nowait(runtime)
    try:

        async def one(item: dict[str, Any]) -> bool:
            runtime = await runtimes.get()
            try:
                result = await timed(runtime.invoke(input=item["input"]))
                return result.status == "succeeded"
            finally:
                runtimes.put_nowait(runtime)

        return sum(await asyncio.gather(*(one(item) for item in items(n))))
    finally:
        for runtime in started:
            await runtime.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdk", required=True, choices=["fabric_core", "nemo_fabric"])
    parser.add_argument("--isolation", required=True, choices=["fresh", "reuse"])
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--no-prewarm", action="store_true", help="ours, fresh: start every item cold")
    args = parser.parse_args()
    sdk = importlib.import_module(args.sdk)
    config = sdk.FabricConfig.from_mapping(config_mapping(stats_off=False))
    if args.sdk == "fabric_core":
        work = ours(sdk, config, args.n, args.concurrency, args.isolation, not args.no_prewarm)
    elif args.isolation == "fresh":
        work = upstream_fresh(sdk, config, args.n, args.concurrency)
    else:
        work = upstream_reuse(sdk, config, args.n, args.concurrency)
    meter = Meter()
    meter.start()
    began = time.perf_counter()
    succeeded = asyncio.run(work)
    wall = time.perf_counter() - began
    cost = meter.stop()
    print(
        json.dumps(
            {
                "sdk": args.sdk,
                "isolation": args.isolation,
                "n": args.n,
                "concurrency": args.concurrency,
                "succeeded": succeeded,
                "wall_s": wall,
                "items_per_s": args.n / wall,
                "cpu_per_item_ms": cost["cpu_caller"] / args.n * 1e3,
                "cpu_thread_per_item_ms": cost["cpu_thread"] / args.n * 1e3,
                "cpu_other_threads_per_item_ms": (cost["cpu_caller"] - cost["cpu_thread"]) / args.n * 1e3,
                "cpu_all_per_item_ms": cost["cpu_all"] / args.n * 1e3,
                "p50_ms": statistics.median(LATENCIES) if LATENCIES else None,
            }
        )
    )
    return 0 if succeeded == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
