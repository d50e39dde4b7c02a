#!/usr/bin/env python3
"""Ray scale-out bench: invocations/s of a ``fabric_core.ray.RuntimePool`` on 1 and 2 Ray
worker nodes vs our single-process Python binding, and the per-invocation latency Ray adds,
in one run (docs/scale-out.md has the numbers).

It starts its own loopback cluster (head 127.0.0.2, workers 127.0.0.3/4, one CPU each; the
cluster helper of bindings/python/tests/raycluster.py) and stops it by pid. The adapter is the
Rust scripted adapter (``cargo build``). Rows:

* ``local``: one process, ``runtimes`` runtimes from ``Fabric.start_runtime``, each invoked in
  a loop (asyncio.gather), the baseline;
* ``ray 1 worker``: a pool of ``runtimes`` runtimes whose actors all sit on worker w1
  (``resources={"w1": 0.001}``), ``pool.map`` with ``max_in_flight=runtimes``;
* ``ray 2 workers``: the same pool spread over w1 and w2 (``resources={"fabric": 1}``);
* latency: one invocation at a time, p50/p90, through ``Runtime.invoke`` and through
  ``pool.invoke`` (the difference is what Ray adds per call).

CPU is user+sys of every process involved over the measured phase, beside the wall time: the
driver and its adapter hosts for the local row; the driver and every process of the cluster
(GCS, raylets, actors, adapter hosts) for the Ray rows.

    FABRIC_CORE_LIB=$PWD/target/debug/libfabric_ffi.so PYTHONPATH=$PWD/bindings/python/src \\
        .venv/bin/python bench/ray_bench.py [--invocations 2000] [--runtimes 8]

Not part of ``bench/run.sh --quick`` (it takes about a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bindings" / "python" / "tests"))

from raycluster import HEAD_IP, LocalRayCluster  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")


def config():
    from fabric_core import DiscoveryConfig, FabricConfig, HarnessConfig, MetadataConfig, RuntimeConfig

    return FabricConfig(
        metadata=MetadataConfig(name="ray-bench"),
        harness=HarnessConfig(adapter_id="fabric.scripted", settings={"replies": ["echo: {input}"]}),
        discovery=DiscoveryConfig(local_paths=[str(ROOT / "adapters" / "scripted")]),
        runtime=RuntimeConfig(max_turns=4, timeout_seconds=60),
    )


def request(index: int):
    from fabric_core import RunRequest

    return RunRequest(input=f"bench {index}")


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime


def cpu_of(pids: list[int]) -> dict[int, float]:
    """user+sys seconds of each live pid (its own time, plus that of reaped children)."""

    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = sum(int(value) for value in fields[11:15]) / _TICKS
    return seconds


class CpuMeter:
    """CPU of this process plus, optionally, of a cluster's processes over one phase."""

    def __init__(self, cluster: LocalRayCluster | None, pids: list[int] | None = None) -> None:
        self.cluster = cluster
        self.pids = list(pids or [])

    def _pids(self) -> list[int]:
        return (self.cluster.processes() if self.cluster else []) + self.pids

    def __enter__(self) -> CpuMeter:
        self.start_own = own_cpu()
        self.start_cluster = cpu_of(self._pids())
        self.start_wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.start_wall
        self.cpu = own_cpu() - self.start_own
        after = cpu_of(self._pids())
        # Processes that started during the phase count from zero.
        self.cpu += sum(value - self.start_cluster.get(pid, 0.0) for pid, value in after.items())


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def local_rows(args: argparse.Namespace) -> dict[str, Any]:
    from fabric_core import Fabric

    fabric = Fabric()
    runtimes = await asyncio.gather(*(fabric.start_runtime(config()) for _ in range(args.runtimes)))
    try:
        each = args.invocations // args.runtimes

        async def loop(runtime: Any, offset: int) -> None:
            for index in range(each):
                result = await runtime.invoke(request=request(offset + index))
                assert result.status == "succeeded", result.error

        for runtime in runtimes:  # warm-up
            await runtime.invoke(request=request(-1))
        hosts = [int(runtime.handle["host_pid"]) for runtime in runtimes]
        with CpuMeter(None, hosts) as meter:
            await asyncio.gather(*(loop(runtime, n * each) for n, runtime in enumerate(runtimes)))
        latencies = []
        for index in range(args.latency_samples):
            started = time.perf_counter()
            await runtimes[0].invoke(request=request(index))
            latencies.append(time.perf_counter() - started)
        return {
            "throughput": each * args.runtimes / meter.wall,
            "wall_s": meter.wall,
            "cpu_s": meter.cpu,
            "invocations": each * args.runtimes,
            "latency_p50_ms": statistics.median(latencies) * 1000,
            "latency_p90_ms": percentile(latencies, 0.9) * 1000,
        }
    finally:
        await asyncio.gather(*(runtime.stop() for runtime in runtimes))


async def pool_rows(args: argparse.Namespace, cluster: LocalRayCluster, resources: dict[str, float], latency: bool) -> dict[str, Any]:
    from fabric_core.ray import RuntimePool

    async with await RuntimePool.create(
        config(), runtimes=args.runtimes, per_actor=args.per_actor, resources=resources
    ) as pool:
        nodes = sorted((await pool.stats())["nodes"])
        warm = [result async for result in pool.map([request(-1)] * args.runtimes)]
        assert all(result.status == "succeeded" for result in warm)
        requests = [request(index) for index in range(args.invocations)]
        with CpuMeter(cluster) as meter:
            results = [result async for result in pool.map(requests, max_in_flight=args.runtimes)]
        assert all(result.status == "succeeded" for result in results)
        row: dict[str, Any] = {
            "throughput": args.invocations / meter.wall,
            "wall_s": meter.wall,
            "cpu_s": meter.cpu,
            "invocations": args.invocations,
            "nodes": len(nodes),
        }
        if latency:
            latencies = []
            for index in range(args.latency_samples):
                started = time.perf_counter()
                await pool.invoke(request(index))
                latencies.append(time.perf_counter() - started)
            row["latency_p50_ms"] = statistics.median(latencies) * 1000
            row["latency_p90_ms"] = percentile(latencies, 0.9) * 1000
        return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--invocations", type=int, default=2000)
    parser.add_argument("--runtimes", type=int, default=8)
    parser.add_argument("--per-actor", type=int, default=4)
    parser.add_argument("--latency-samples", type=int, default=200)
    args = parser.parse_args()

    import ray

    library = os.environ.get("FABRIC_CORE_LIB", "the installed fabric_core")
    load_before = os.getloadavg()
    rows: dict[str, Any] = {"local": asyncio.run(local_rows(args))}
    env = {key: os.environ[key] for key in ("FABRIC_CORE_LIB", "PYTHONPATH") if key in os.environ}
    with LocalRayCluster(workers=2, env=env) as cluster:
        ray.init(address=cluster.address, _node_ip_address=HEAD_IP, log_to_driver=False)
        try:
            cluster.wait_nodes(ray, 3)
            rows["ray_1_worker"] = asyncio.run(pool_rows(args, cluster, {"w1": 0.001}, latency=True))
            rows["ray_2_workers"] = asyncio.run(pool_rows(args, cluster, {"fabric": 1}, latency=False))
        finally:
            ray.shutdown()
    load_after = os.getloadavg()

    local, one, two = rows["local"], rows["ray_1_worker"], rows["ray_2_workers"]
    print(
        f"# fabric_core.ray bench, {datetime.date.today()}, {os.cpu_count()} cores, load "
        f"{load_before[0]:.2f} -> {load_after[0]:.2f}, Ray {ray.__version__}, library {library}"
    )
    print(f"# {args.runtimes} runtimes ({args.per_actor} per actor), {args.invocations} invocations per row\n")
    print("| row | invocations/s | wall s | CPU s (all processes) | CPU ms / invocation |")
    print("|---|---:|---:|---:|---:|")
    for label, row in (("single process (Python binding)", local), ("Ray, 1 worker node", one), ("Ray, 2 worker nodes", two)):
        print(
            f"| {label} | {row['throughput']:.0f} | {row['wall_s']:.2f} | {row['cpu_s']:.2f} | "
            f"{row['cpu_s'] / row['invocations'] * 1000:.2f} |"
        )
    print("\n| one invocation at a time | p50 ms | p90 ms |")
    print("|---|---:|---:|")
    print(f"| `Runtime.invoke` (single process) | {local['latency_p50_ms']:.2f} | {local['latency_p90_ms']:.2f} |")
    print(f"| `RuntimePool.invoke` (Ray) | {one['latency_p50_ms']:.2f} | {one['latency_p90_ms']:.2f} |")
    print(f"| Ray adds per invocation | {one['latency_p50_ms'] - local['latency_p50_ms']:.2f} | |")
    print(json.dumps({"date": str(datetime.date.today()), "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
