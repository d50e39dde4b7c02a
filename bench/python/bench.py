"""Plan and warm-invoke latency through the Python binding vs upstream NeMo Fabric 0.5.0.

Both SDKs run in this interpreter, in the same run, on the same config (the Python echo
adapter, ``examples/python-echo/fabric.json``). Budgets: plan <= 200 us, warm invoke
<= 0.4 ms. Prints one line per measurement (ours, upstream, ratio) and a JSON summary;
``--check`` exits 1 when a budget is missed.

    python bench/python/bench.py [--plan N] [--invoke N] [--check] [--ours-only]

Needs ``fabric_core`` (installed, or ``FABRIC_CORE_LIB`` + ``PYTHONPATH=bindings/python/src``),
``fabric-python-echo`` and, unless ``--ours-only``, ``nemo-fabric==0.5.0``. Runs as a user
would (userenv.py): this interpreter's virtual environment activated, no ``ADAPTER_PYTHON``,
a new temporary directory as the working directory.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from userenv import activate_here  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUDGET_PLAN_US = 200.0
BUDGET_INVOKE_MS = 0.4


def config_mapping(stats_off: bool = False) -> dict[str, Any]:
    data = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    data["discovery"] = {"local_paths": [str(REPO / "adapters" / "python-echo")]}
    if stats_off:
        # Upstream 0.5.0 collects no invocation stats; this gives ours the same work.
        data["system_stats"] = None
    return data


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_sdk(
    module_name: str, plan_iterations: int, invoke_iterations: int, stats_off: bool = False
) -> dict[str, Any]:
    sdk = importlib.import_module(module_name)
    config = sdk.FabricConfig.from_mapping(config_mapping(stats_off))
    fabric = sdk.Fabric()

    for _ in range(20):
        fabric.plan(config)
    plan_samples = []
    for _ in range(plan_iterations):
        started = time.perf_counter()
        fabric.plan(config)
        plan_samples.append((time.perf_counter() - started) * 1e6)

    async def invokes() -> list[float]:
        samples = []
        async with await fabric.start_runtime(config) as runtime:
            for _ in range(20):
                await runtime.invoke(input="warm")
            for index in range(invoke_iterations):
                started = time.perf_counter()
                result = await runtime.invoke(input=f"bench {index}")
                samples.append((time.perf_counter() - started) * 1e3)
                if result.status != "succeeded":
                    raise RuntimeError(f"{module_name}: invoke {index} {result.status}")
        return samples

    invoke_samples = asyncio.run(invokes())
    return {
        "plan_us": {
            "median": statistics.median(plan_samples),
            "p90": percentile(plan_samples, 0.9),
            "mean": statistics.fmean(plan_samples),
        },
        "invoke_ms": {
            "median": statistics.median(invoke_samples),
            "p90": percentile(invoke_samples, 0.9),
            "mean": statistics.fmean(invoke_samples),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", type=int, default=500, help="plan iterations (default 500)")
    parser.add_argument("--invoke", type=int, default=300, help="warm invoke iterations (default 300)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is missed")
    parser.add_argument("--ours-only", action="store_true", help="skip upstream nemo_fabric")
    parser.add_argument(
        "--stats-off",
        action="store_true",
        help="run ours with system_stats: null (upstream 0.5.0 collects no invocation stats)",
    )
    args = parser.parse_args()
    workdir = activate_here()

    ours = bench_sdk("fabric_core", args.plan, args.invoke, args.stats_off)
    upstream = None if args.ours_only else bench_sdk("nemo_fabric", args.plan, args.invoke)

    import fabric_core
    from fabric_core import _ffi

    print(f"fabric_core {fabric_core.__version__}, native library {_ffi.library().path}")
    rows = [("plan (us)", "plan_us", BUDGET_PLAN_US), ("warm invoke (ms)", "invoke_ms", BUDGET_INVOKE_MS)]
    failed = False
    for label, key, budget in rows:
        mine = ours[key]["median"]
        line = f"{label:18} ours median {mine:10.3f} p90 {ours[key]['p90']:10.3f}"
        if upstream is not None:
            theirs = upstream[key]["median"]
            line += f" | upstream median {theirs:10.3f} | ratio upstream/ours {theirs / mine:7.1f}x"
        ok = mine <= budget
        failed |= not ok
        line += f" | budget {budget} {'ok' if ok else 'MISSED'}"
        print(line)
    print(json.dumps({"ours": ours, "upstream": upstream}, sort_keys=True))
    shutil.rmtree(workdir, ignore_errors=True)
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
