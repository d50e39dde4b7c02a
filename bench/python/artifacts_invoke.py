"""Warm invoke with core-collected artifacts: our Python binding vs upstream's Python SDK on
the same python-echo adapter, in the same git workspace, with an artifact root.

Fresh processes, alternated (upstream, ours, upstream, ours, ...), one run. Per process:
start a runtime, warm up, then time N invokes; report the median wall time per invoke and
the CPU time per invoke (caller process + reaped children, i.e. git; the adapter host is
not reaped during the loop and is the same program on both sides).

    FABRIC_CORE_LIB=$PWD/target/debug/libfabric_ffi.so PYTHONPATH=bindings/python/src \
      .venv/bin/python bench/python/artifacts_invoke.py [--workspace DIR] [--rounds 3]

Without --workspace a temporary clone-like checkout is made with a few modified and
untracked files (dirty, as a checkout under development is). --no-root measures without an
artifact root.
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
import asyncio, json, resource, statistics, sys, time
from MODULE import Fabric, FabricConfig

config, n, warm = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])


def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


async def main():
    async with await Fabric().start_runtime(FabricConfig.from_mapping(config)) as runtime:
        for _ in range(warm):
            await runtime.invoke(input="warm")
        times = []
        c0 = cpu()
        for _ in range(n):
            t0 = time.perf_counter()
            result = await runtime.invoke(input="x")
            times.append(time.perf_counter() - t0)
        c1 = cpu()
        names = [a["name"] for a in result.to_mapping()["artifacts"]["artifacts"]]
    print(json.dumps({"median_ms": statistics.median(times) * 1e3,
                      "p90_ms": sorted(times)[int(0.9 * n)] * 1e3,
                      "cpu_ms": (c1 - c0) / n * 1e3, "artifacts": names}))


asyncio.run(main())
'''


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    subprocess.run(["git", "-C", str(cwd), *args], check=True, env=env, capture_output=True)


def dirty_checkout(base: Path) -> Path:
    ws = base / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    for i in range(200):
        (ws / f"src{i % 10}").mkdir(exist_ok=True)
        (ws / f"src{i % 10}" / f"f{i}.txt").write_text(f"line {i}\n" * 50)
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "base")
    for i in range(0, 200, 40):
        (ws / f"src{i % 10}" / f"f{i}.txt").write_text("changed\n")
    for i in range(3):
        (ws / f"untracked{i}.txt").write_text("new\n")
    return ws


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--warm", type=int, default=30)
    parser.add_argument("--no-root", action="store_true")
    args = parser.parse_args()
    python = os.environ.get("FABRIC_TEST_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws = Path(args.workspace).resolve() if args.workspace else dirty_checkout(base)
        config = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
        config["discovery"] = {"local_paths": [str(REPO / "adapters" / "python-echo")]}
        config["environment"] = {"workspace": str(ws)}
        env = activated(python, dict(os.environ))  # as a user runs it (userenv.py)
        results: dict[str, list[dict]] = {"nemo_fabric": [], "fabric_core": []}
        for round_ in range(args.rounds):
            for module in ("nemo_fabric", "fabric_core"):
                if not args.no_root:
                    config["environment"]["artifacts"] = str(base / f"art-{module}-{round_}")
                out = subprocess.run(
                    [python, "-c", CHILD.replace("MODULE", module), json.dumps(config),
                     str(args.n), str(args.warm)],
                    env=env, capture_output=True, text=True, check=True, cwd=base,
                )
                results[module].append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"workspace {ws} ({'no artifact root' if args.no_root else 'artifact root'}), "
              f"n={args.n}, rounds={args.rounds}")
        for module, runs in results.items():
            cells = ", ".join(f"{r['median_ms']:.2f} ms wall (p90 {r['p90_ms']:.2f}) / "
                              f"{r['cpu_ms']:.2f} ms CPU" for r in runs)
            print(f"{module:12} {cells}  artifacts={runs[-1]['artifacts']}")


if __name__ == "__main__":
    main()
