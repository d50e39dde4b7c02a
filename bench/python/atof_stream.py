"""Relay ATOF streaming through the embedded collector to a Python consumer, our Python
binding vs upstream 0.5.0's Python SDK (``nemo-fabric[streaming]``), with the same producer:
the scripted adapter posting ``marks`` mark records (one chunked NDJSON POST per invocation)
to the collector that ``start_runtime(config.enable_relay(), streaming=True)`` starts.

Two measurements, each in fresh processes alternated upstream/ours, from a neutral working
directory (a temporary directory), one run each:

* throughput: one invocation of ``--records`` marks read by ``async for``; first-record latency
  (from ``invoke_stream`` to the first record), records/s between the first and the last
  record, the wall time to the result, and the CPU time of the consuming process (which hosts
  the collector on both sides: upstream's runs on its event loop, ours in the core library);
* stalled consumer: an invocation of ``--stall-records`` marks of ``--stall-payload`` bytes each
  (far more than the 16 MiB queue bound) whose stream is not read for ``--stall-seconds``; the
  consuming process's RSS is sampled meanwhile (growth over the pre-invocation baseline is the
  memory the stall costs), then the stream is drained and every record must arrive (the stall
  stays under the collectors' 30 s backpressure timeout, so nothing may be dropped).

    cargo build -p fabric-adapter-scripted && cargo build --release -p fabric-ffi
    FABRIC_CORE_LIB=$PWD/target/release/libfabric_ffi.so PYTHONPATH=bindings/python/src \\
      .venv/bin/python bench/python/atof_stream.py [--records 5000] [--sides upstream,ours]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from userenv import activated  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

CHILD = r'''
import asyncio, json, resource, sys, threading, time
from MODULE import Fabric, FabricConfig, RunRequest

config, mode, args = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])


def cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime


def rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def throughput(runtime):
    request = RunRequest(input="b", context={"scripted_atof": {"marks": args["records"]}})
    cpu0, t0 = cpu(), time.perf_counter()
    stream = runtime.invoke_stream(request=request)
    first, count = None, 0
    async for _record in stream:
        if first is None:
            first = time.perf_counter() - t0
        count += 1
    last = time.perf_counter() - t0
    result = await stream.result()
    total = time.perf_counter() - t0
    assert result.status == "succeeded", result
    assert count == args["records"] + 2, count
    return {"records": count, "first_record_ms": first * 1e3,
            "records_per_s": (count - 1) / (last - first),
            "total_ms": total * 1e3, "cpu_ms": (cpu() - cpu0) * 1e3}


async def stalled(runtime):
    marks, payload = args["stall_records"], args["stall_payload"]
    baseline = rss_kib()
    peak = [baseline]
    sampling = threading.Event()

    def sample():
        while not sampling.wait(0.05):
            peak[0] = max(peak[0], rss_kib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    request = RunRequest(input="s", context={"scripted_atof": {"marks": marks, "payload_bytes": payload}})
    stream = runtime.invoke_stream(request=request)
    await asyncio.sleep(args["stall_seconds"])  # the consumer reads nothing meanwhile
    stalled_peak = peak[0]
    count = 0
    async for _record in stream:
        count += 1
    result = await stream.result()
    sampling.set()
    sampler.join()
    assert result.status == "succeeded", result
    return {"records": count, "expected": marks + 2, "posted_mib": marks * payload / 2**20,
            "baseline_mib": baseline / 1024, "stall_growth_mib": (stalled_peak - baseline) / 1024,
            "drain_growth_mib": (peak[0] - baseline) / 1024}


async def main():
    runtime = await Fabric().start_runtime(FabricConfig.from_mapping(config).enable_relay(), streaming=True)
    try:
        warm = runtime.invoke_stream(input="w")  # imports, first connections
        [r async for r in warm]
        await warm.result()
        out = await (throughput(runtime) if mode == "throughput" else stalled(runtime))
    finally:
        await runtime.stop()
    print(json.dumps(out))


asyncio.run(main())
'''


def config(workdir: Path) -> dict:
    return {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "atof-bench"},
        "harness": {"adapter_id": "fabric.scripted", "settings": {"atof": {"marks": 1}}},
        "discovery": {"local_paths": [str(REPO / "adapters" / "scripted")]},
        "models": {"default": {"provider": "openai", "model": "bench"}},
        "environment": {"workspace": str(workdir), "artifacts": str(workdir / "artifacts")},
    }


def run(module: str, mode: str, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="atof-bench-") as tmp:
        workdir = Path(tmp)
        env = activated(sys.executable, dict(os.environ))  # as a user runs it (userenv.py)
        options = {"records": args.records, "stall_records": args.stall_records,
                   "stall_payload": args.stall_payload, "stall_seconds": args.stall_seconds}
        result = subprocess.run(
            [sys.executable, "-c", CHILD.replace("MODULE", module), json.dumps(config(workdir)), mode,
             json.dumps(options)],
            cwd=workdir, env=env, capture_output=True, text=True, timeout=900,
        )
    if result.returncode != 0:
        sys.stderr.write(f"--- {module} {mode} failed:\n{result.stderr}\n")
        return {"error": (result.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--stall-records", type=int, default=1000)
    parser.add_argument("--stall-payload", type=int, default=64 * 1024)
    parser.add_argument("--stall-seconds", type=float, default=5.0)
    parser.add_argument("--sides", default="upstream,ours")
    parser.add_argument("--modes", default="throughput,stalled")
    args = parser.parse_args()
    names = {"upstream": ("upstream nemo_fabric 0.5.0", "nemo_fabric"), "ours": ("fabric_core (ours)", "fabric_core")}
    sides = [names[s] for s in args.sides.split(",")]
    modes = args.modes.split(",")
    results = {mode: [(name, run(module, mode, args)) for name, module in sides] if mode in modes else []
               for mode in ("throughput", "stalled")}

    if results["throughput"]:
        print_throughput(args, results["throughput"])
    if results["stalled"]:
        print_stalled(args, results["stalled"])


def print_throughput(args: argparse.Namespace, rows: list) -> None:
    print(f"throughput: {args.records} marks (+ scope start/end), one invocation")
    print(f"{'':28} {'records':>8} {'first ms':>9} {'records/s':>10} {'total ms':>9} {'CPU ms':>8}")
    for name, row in rows:
        if "error" in row:
            print(f"{name:28} failed: {row['error']}")
            continue
        print(f"{name:28} {row['records']:>8} {row['first_record_ms']:>9.2f} {row['records_per_s']:>10.0f} "
              f"{row['total_ms']:>9.1f} {row['cpu_ms']:>8.1f}")
    print()


def print_stalled(args: argparse.Namespace, rows: list) -> None:
    print(f"stalled consumer: {args.stall_records} marks x {args.stall_payload} B, "
          f"not read for {args.stall_seconds:g} s, then drained")
    print(f"{'':28} {'posted MiB':>10} {'base MiB':>9} {'stall +MiB':>10} {'drain +MiB':>10} {'delivered':>10}")
    for name, row in rows:
        if "error" in row:
            print(f"{name:28} failed: {row['error']}")
            continue
        print(f"{name:28} {row['posted_mib']:>10.1f} {row['baseline_mib']:>9.1f} {row['stall_growth_mib']:>10.1f} "
              f"{row['drain_growth_mib']:>10.1f} {row['records']:>5}/{row['expected']}")


if __name__ == "__main__":
    main()
