"""Soak: start/invoke/stop cycles and many concurrent runtimes through the C ABI.

Drives the Python binding (ctypes over ``libfabric_ffi``, i.e. the C ABI) against the
scripted adapter (default) or the stdlib Python echo adapter, and checks that everything a
runtime takes is given back:

- open file descriptors of this process,
- descendant processes of this process (adapter hosts and anything they spawned),
- threads of this process (other than the binding's executor pool, which keeps idle
  workers for reuse; its size is reported as ``pool_threads``),
- resident memory (RSS; allowed to grow by ``--rss-slack-mib``: allocator caches and
  fragmentation level off, see ``rss_kib_trace`` and ``rss_kib_after_each_round``),
- temporary FABRIC_HOME roots (``<$XDG_RUNTIME_DIR or /dev/shm>/fabric-<runtime_id>``) of
  every runtime this run started.

Phases: a warm-up (loads the library; two full-size concurrent rounds grow the binding's
thread pool and the allocator's per-thread arenas towards their peak), the baseline snapshot, then
``--cycles`` sequential start → invoke → stop cycles, then ``--rounds`` rounds of
``--concurrent`` runtimes alive at once (all started, all invoked, all stopped). After
each phase the snapshot must return to the baseline (waiting at most ``--settle`` seconds
for asynchronous cleanup). Prints one JSON line with the figures (before, peak, after,
duration) and exits 1 when anything leaked.

    python bench/soak/soak.py                 # full: 10,000 cycles, 3 rounds of 200
    python bench/soak/soak.py --short         # CI: 200 cycles, 2 rounds of 20
    python bench/soak/soak.py --short --inject-leak   # must exit 1 (the detector works)

Then the collector load (``collector_load.py``): a standalone ``fabric collector serve``
(``target/debug/fabric``, or ``$FABRIC_BIN``) takes ``--collector-rounds`` rounds of 100
registrations publishing at once while 200 idle connections are held; its RSS and open
descriptors after each round must stay within ``--collector-rss-slack-mib`` (16) and
``--collector-fd-slack`` (4) of the first round's.

Needs ``fabric_core`` (installed, or ``FABRIC_CORE_LIB`` + ``PYTHONPATH=bindings/python/src``)
and the built scripted adapter (``cargo build``); ``--adapter python-echo`` needs
``fabric-python-echo`` and ``nemo-fabric-adapters-common`` in ``$ADAPTER_PYTHON`` (default:
this interpreter).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def config_mapping(adapter: str) -> dict[str, Any]:
    if adapter == "scripted":
        return {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "soak"},
            "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": ["echo: {input}"]}},
            "discovery": {"local_paths": [str(REPO / "adapters" / "scripted")]},
            "runtime": {"timeout_seconds": 120},
        }
    data = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    data["discovery"] = {"local_paths": [str(REPO / "adapters" / "python-echo")]}
    return data


def temporary_base() -> Path:
    """Where the core puts temporary FABRIC_HOME roots (fabric-host/src/home.rs)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg):
        return Path(xdg)
    if os.path.isdir("/dev/shm"):
        return Path("/dev/shm")
    import tempfile

    return Path(tempfile.gettempdir())


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def pool_threads() -> int:
    """Worker threads of the binding's executor (``fabric_core._util``): idle workers are
    kept for reuse, so the pool grows to the peak concurrency and stays (not a leak)."""
    import threading

    return sum(t.name.startswith("fabric-core") for t in threading.enumerate())


def snapshot(runtime_ids: list[str]) -> dict[str, int]:
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    base = temporary_base()
    pool = pool_threads()
    return {
        "fds": len(os.listdir("/proc/self/fd")) - 1,  # minus the listing's own descriptor
        "processes": len(descendants(os.getpid())),
        "threads": int(fields["Threads"].strip()) - pool,
        "pool_threads": pool,
        "rss_kib": int(fields["VmRSS"].split()[0]),
        "temp_homes": sum((base / f"fabric-{rid}").exists() for rid in runtime_ids),
    }


def leaks(now: dict[str, int], baseline: dict[str, int], rss_slack_kib: int) -> list[str]:
    problems = [
        f"{key}: {now[key]} (baseline {baseline[key]})"
        for key in ("fds", "processes", "threads")
        if now[key] > baseline[key]
    ]
    if now["temp_homes"]:
        problems.append(f"temp_homes: {now['temp_homes']} FABRIC_HOME roots left behind")
    if now["rss_kib"] > baseline["rss_kib"] + rss_slack_kib:
        problems.append(f"rss_kib: {now['rss_kib']} (baseline {baseline['rss_kib']} + {rss_slack_kib})")
    return problems


async def settle(runtime_ids: list[str], baseline: dict[str, int], rss_slack_kib: int, seconds: float) -> dict[str, int]:
    deadline = time.monotonic() + seconds
    while True:
        now = snapshot(runtime_ids)
        if not leaks(now, baseline, rss_slack_kib) or time.monotonic() >= deadline:
            return now
        await asyncio.sleep(0.05)


async def cycle(fabric: Any, config: Any, index: int, runtime_ids: list[str]) -> None:
    async with await fabric.start_runtime(config) as runtime:
        runtime_ids.append(runtime.runtime_id)
        result = await runtime.invoke(input=f"soak {index}")
        if result.status != "succeeded":
            raise RuntimeError(f"invoke {index} failed: {result.error}")


async def concurrent_round(fabric: Any, config: Any, n: int, runtime_ids: list[str]) -> dict[str, int]:
    runtimes = await asyncio.gather(*(fabric.start_runtime(config) for _ in range(n)))
    try:
        runtime_ids.extend(r.runtime_id for r in runtimes)
        results = await asyncio.gather(*(r.invoke(input=f"soak {i}") for i, r in enumerate(runtimes)))
        failed = [r.error for r in results if r.status != "succeeded"]
        if failed:
            raise RuntimeError(f"{len(failed)} concurrent invokes failed: {failed[0]}")
        return snapshot(runtime_ids)
    finally:
        await asyncio.gather(*(r.aclose() for r in runtimes), return_exceptions=True)


async def main(args: argparse.Namespace) -> int:
    from fabric_core import Fabric, FabricConfig

    fabric = Fabric()
    config = FabricConfig.from_mapping(config_mapping(args.adapter))
    runtime_ids: list[str] = []
    slack = args.rss_slack_mib * 1024
    started = time.monotonic()

    # Warm-up: the library, the binding's executor threads (full-size concurrent rounds
    # grow the pool to its peak; idle workers stay) and the allocator arenas of those threads.
    for i in range(args.warmup):
        await cycle(fabric, config, i, runtime_ids)
    for _ in range(2 if args.rounds else 0):
        await concurrent_round(fabric, config, args.concurrent, runtime_ids)
    baseline = await settle(runtime_ids, snapshot(runtime_ids), 0, 0.5)
    report: dict[str, Any] = {
        "mode": "short" if args.short else "custom" if args.custom else "full",
        "adapter": args.adapter,
        "baseline": baseline,
        "load_before": os.getloadavg()[0],
    }
    problems: list[str] = []

    leaked = None
    if args.inject_leak:
        # Self-check of the detector: one runtime started and never stopped must be reported.
        leaked = await fabric.start_runtime(config)
        runtime_ids.append(leaked.runtime_id)

    t0 = time.monotonic()
    peak = dict(baseline)
    rss_trace = []
    for i in range(args.cycles):
        await cycle(fabric, config, i, runtime_ids)
        if i % 250 == 0:
            now = snapshot(runtime_ids)
            peak = {k: max(peak[k], now[k]) for k in peak}
        if i % max(1, args.cycles // 10) == 0:
            rss_trace.append(snapshot(runtime_ids)["rss_kib"])
    after_cycles = await settle(runtime_ids, baseline, slack, args.settle)
    problems += [f"after {args.cycles} cycles: {p}" for p in leaks(after_cycles, baseline, slack)]
    report["cycles"] = {
        "count": args.cycles,
        "seconds": round(time.monotonic() - t0, 2),
        "peak": peak,
        "after": after_cycles,
        "rss_kib_trace": rss_trace,
    }

    t0 = time.monotonic()
    peaks, round_rss = [], []
    for _ in range(args.rounds):
        peaks.append(await concurrent_round(fabric, config, args.concurrent, runtime_ids))
        now = await settle(runtime_ids, baseline, slack, args.settle)
        round_rss.append(now["rss_kib"])
        problems += [f"after a round of {args.concurrent}: {p}" for p in leaks(now, baseline, slack)]
    after_concurrent = await settle(runtime_ids, baseline, slack, args.settle)
    report["concurrent"] = {
        "runtimes": args.concurrent,
        "rounds": args.rounds,
        "seconds": round(time.monotonic() - t0, 2),
        "peak": {k: max(p[k] for p in peaks) for k in baseline} if peaks else None,
        "after": after_concurrent,
        "rss_kib_after_each_round": round_rss,
    }
    if peaks and peaks[0]["processes"] < args.concurrent:
        problems.append(f"only {peaks[0]['processes']} host processes were alive at once")
    if args.collector_rounds:
        from collector_load import run as collector_load

        binary = Path(os.environ.get("FABRIC_BIN", REPO / "target" / "debug" / "fabric"))
        report["collector"], found = collector_load(
            binary, args.collector_rounds, args.collector_rss_slack_mib, args.collector_fd_slack
        )
        problems += found
    report["runtimes_started"] = len(runtime_ids)
    report["seconds"] = round(time.monotonic() - started, 2)
    report["load_after"] = os.getloadavg()[0]
    report["leaks"] = problems
    print(json.dumps(report, sort_keys=True))
    if leaked is not None:
        await leaked.aclose()
    return 1 if problems else 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="CI mode: 200 cycles, 2 rounds of 20")
    parser.add_argument("--cycles", type=int)
    parser.add_argument("--concurrent", type=int)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--adapter", choices=["scripted", "python-echo"], default="scripted")
    parser.add_argument("--rss-slack-mib", type=int, default=32, help="allowed RSS growth over the baseline")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds to wait for asynchronous cleanup")
    parser.add_argument(
        "--collector-rounds",
        type=int,
        help="rounds of the collector load (100 registrations publishing, 200 idle connections held); "
        "default 3 short, 20 full, 0 when --cycles/--concurrent/--rounds is given",
    )
    parser.add_argument("--collector-rss-slack-mib", type=int, default=16, help="allowed collector RSS growth")
    parser.add_argument("--collector-fd-slack", type=int, default=4, help="allowed collector descriptor growth")
    parser.add_argument(
        "--inject-leak",
        action="store_true",
        help="self-check: keep one runtime running through the phases; the run must then fail",
    )
    args = parser.parse_args(argv)
    args.custom = any(v is not None for v in (args.cycles, args.concurrent, args.rounds))
    defaults = (200, 20, 2) if args.short else (10_000, 200, 3)
    args.cycles = defaults[0] if args.cycles is None else args.cycles
    args.concurrent = defaults[1] if args.concurrent is None else args.concurrent
    args.rounds = defaults[2] if args.rounds is None else args.rounds
    if args.collector_rounds is None:
        args.collector_rounds = 0 if args.custom else 3 if args.short else 20
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
