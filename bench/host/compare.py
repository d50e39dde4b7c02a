#!/usr/bin/env python3
"""Hosting benchmark, ours vs upstream NeMo Fabric 0.5.0, in one run (stdlib only).

    python3 bench/host/compare.py [--runs N] [--rounds R] [--debug] [--upstream-python PY]

Ours is measured by a Rust bench binary over the `fabric_host` API (bench/host/host.rs):
a Python script driving our `fabric` CLI would pay a process start per call and is not
comparable for warm invokes. Upstream is measured by bench/host/upstream.py through the
`nemo_fabric` async SDK. Both use the same python-echo adapter (written against upstream's
`nemo-fabric-adapters-common` lifecycle.serve), the same config and the same interpreter
for the adapter host. Rounds alternate ours/upstream and each metric is the median of the
per-round values, which keeps background load from favouring either side.

Ours runs with `"system_stats": null` (upstream 0.5.0 has no invocation system stats); one
extra row measures our default (stats at the invocation endpoints) on the Rust adapter.

`--debug` measures an unoptimized build of ours (no optimized compile needed); upstream is
always its released (optimized) native core, so only optimized numbers are comparable.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
METRICS = [
    ("warm invoke, python-echo (median µs)", "python_warm_invoke_us", "median", "lower"),
    ("warm invoke, Rust scripted (median µs)", "scripted_warm_invoke_us", "median", "lower"),
    ("protocol round trip only, Rust scripted (median µs)", "scripted_protocol_round_trip_us", "median", "lower"),
    ("warm invoke, Rust scripted, system_stats on (median µs)", "scripted_warm_invoke_with_stats_us", "median", "lower"),
    ("cold run, python-echo (median ms)", "python_cold_run_ms", "median", "lower"),
    ("reference: python -c pass (median ms)", "python_startup_ms", "median", None),
    ("reference: adapter start-up, python + import (median ms)", "python_adapter_import_ms", "median", None),
    ("64×20 invoke phase (invocations/s)", "python_64x20", "invocations_per_s", "higher"),
    ("64×20 incl. start+stop (invocations/s)", "python_64x20", "invocations_per_s_including_start_stop", "higher"),
    ("idle runtime, core-side memory (bytes)", "idle_runtime_core_bytes", None, "lower"),
    ("run() with a host that ignores stop (s)", "ignore_stop_run", "seconds", "lower"),
    ("2 s invoke timeout fires after (s)", "invoke_timeout_2s", "seconds", "lower"),
]


def ours(runs: int, debug: bool, python: str) -> dict:
    env = dict(os.environ, FABRIC_BENCH_RUNS=str(runs), FABRIC_BENCH_PYTHON=python)
    # The Rust adapter is built with the same profile as our core.
    profile = "dev" if debug else "bench"
    subprocess.run(
        ["cargo", "build", "-q", "--profile", profile, "-p", "fabric-adapter-scripted"],
        cwd=ROOT, check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    env["FABRIC_ADAPTER_SCRIPTED_BIN"] = str(target / ("debug" if debug else "release") / "fabric-adapter-scripted")
    command = ["cargo", "test" if debug else "bench", "-q", "-p", "fabric-host", "--bench", "host"]
    output = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads([line for line in output.stdout.splitlines() if line.startswith("{")][-1])


def upstream(runs: int, python: str) -> dict:
    output = subprocess.run(
        [python, str(ROOT / "bench/host/upstream.py"), "--runs", str(runs)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(output.stdout.strip().splitlines()[-1])


def pick(result: dict, key: str, field):
    value = result.get(key)
    if value is None:
        return None
    return value if field is None else value.get(field)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--debug", action="store_true")
    parser.add_argument(
        "--upstream-python",
        default=os.environ.get("FABRIC_TEST_PYTHON", str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python")),
    )
    args = parser.parse_args()
    rounds = []
    for index in range(args.rounds):
        ours_result = ours(args.runs, args.debug, args.upstream_python)
        upstream_result = upstream(args.runs, args.upstream_python)
        rounds.append((ours_result, upstream_result))
        print(f"round {index + 1}: ours {json.dumps(ours_result)}", file=sys.stderr)
        print(f"round {index + 1}: upstream {json.dumps(upstream_result)}", file=sys.stderr)
    rows = []
    for label, key, field, better in METRICS:
        mine = [v for v in (pick(o, key, field) for o, _ in rounds) if v is not None]
        theirs = [v for v in (pick(u, key, field) for _, u in rounds) if v is not None]
        m = statistics.median(mine) if mine else None
        t = statistics.median(theirs) if theirs else None
        ratio = None
        if m and t and better:
            ratio = t / m if better == "lower" else m / t
        rows.append((label, m, t, ratio))
    # Cold-run overhead beyond the adapter's own start-up (budget: <= 5 ms).
    def overhead(side):
        values = []
        for pair in rounds:
            result = pair[side]
            cold = pick(result, "python_cold_run_ms", "median")
            start = pick(result, "python_adapter_import_ms", "median")
            if cold is not None and start is not None:
                values.append(cold - start)
        return statistics.median(values) if values else None

    rows.insert(3, ("cold run minus adapter start-up (median ms)", overhead(0), overhead(1), None))
    build = "debug (unoptimized)" if args.debug else "optimized"
    last_ours, last_upstream = rounds[-1]
    statuses = (
        f"ignore-stop run status: ours {pick(last_ours, 'ignore_stop_run', 'status')}, "
        f"upstream {pick(last_upstream, 'ignore_stop_run', 'status')}; "
        f"timeout code: ours {pick(last_ours, 'invoke_timeout_2s', 'code')}, "
        f"upstream {pick(last_upstream, 'invoke_timeout_2s', 'code')}"
    )
    print(f"| measure ({build} build of ours, {args.rounds} rounds) | ours | upstream 0.5.0 | ours is N× better |")
    print("| --- | ---: | ---: | ---: |")
    fmt = lambda v: "n/a" if v is None else f"{v:,.1f}"  # noqa: E731
    for label, m, t, ratio in rows:
        print(f"| {label} | {fmt(m)} | {fmt(t)} | {'n/a' if ratio is None else f'{ratio:.2f}×'} |")
    print()
    print(statuses)


if __name__ == "__main__":
    main()
