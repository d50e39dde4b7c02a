#!/usr/bin/env python3
"""Plan latency, ours vs upstream nemo-fabric 0.5.0, in one run.

Run with an interpreter that has nemo-fabric 0.5.0 installed, from the repository root:

    /path/to/venv/bin/python bench/plan/bench_plan.py            # builds with `cargo bench`
    /path/to/venv/bin/python bench/plan/bench_plan.py --ours BIN # a prebuilt bench binary

Ours: the in-process Rust bench (`bench/plan/plan.rs`), median of N `fabric_plan::plan` calls
for the catalog `nvidia.fabric.pi` descriptor. Upstream: median of N
`nemo_fabric.Fabric().plan(config, base_dir=...)` calls with the same config and descriptor.
Prints one line per side and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "upstream"))
from oracle import catalog_path  # noqa: E402

# The 0.5.0 catalog of the installed `nemo-fabric-adapter-catalog` package (both sides use it).
CATALOG = catalog_path()


def run_ours(binary: Path | None, runs: int) -> dict[str, dict]:
    env = dict(os.environ, FABRIC_BENCH_RUNS=str(runs), FABRIC_BENCH_CATALOG=str(CATALOG))
    if binary is None:
        command = ["cargo", "bench", "-q", "-p", "fabric-plan", "--bench", "plan"]
    else:
        command = [str(binary)]
    out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout
    results = {}
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            record = json.loads(line)
            results[record["name"]] = record
    return results


def config_json(binary: Path | None) -> dict:
    if binary is None:
        command = ["cargo", "bench", "-q", "-p", "fabric-plan", "--bench", "plan", "--", "--print-config"]
    else:
        command = [str(binary), "--print-config"]
    env = dict(os.environ, FABRIC_BENCH_CATALOG=str(CATALOG))
    out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_upstream(config: dict, runs: int) -> dict:
    from nemo_fabric import Fabric, FabricConfig

    catalog = json.loads(CATALOG.read_text())
    with tempfile.TemporaryDirectory(prefix="fabric-plan-bench-up-") as tmp:
        base = Path(tmp)
        (base / "nvidia.fabric.pi.fabric-adapter.json").write_text(
            json.dumps(catalog["adapters"]["nvidia.fabric.pi"]["descriptor"])
        )
        typed = FabricConfig.model_validate(config)
        fabric = Fabric()
        for _ in range(min(runs, 50)):
            fabric.plan(typed, base_dir=base)
        samples = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            fabric.plan(typed, base_dir=base)
            samples.append(time.perf_counter_ns() - start)
    samples.sort()
    return {
        "name": "upstream Fabric().plan",
        "runs": runs,
        "median_ns": int(statistics.median(samples)),
        "p90_ns": samples[len(samples) * 9 // 10],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", type=Path, help="prebuilt bench binary (default: cargo bench)")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--upstream-runs", type=int, default=500)
    args = parser.parse_args()

    ours = run_ours(args.ours, args.runs)
    upstream = run_upstream(config_json(args.ours), args.upstream_runs)
    plan = ours["plan"]
    for record in list(ours.values()) + [upstream]:
        print(f"{record['name']:<28} median {record['median_ns'] / 1000:9.1f} µs   p90 {record['p90_ns'] / 1000:9.1f} µs   (n={record['runs']})")
    ratio = upstream["median_ns"] / plan["median_ns"]
    print(f"ratio upstream/ours (plan median): {ratio:.1f}x; budget ≤ 50 µs in-process: "
          f"{'met' if plan['median_ns'] <= 50_000 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
