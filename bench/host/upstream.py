"""Upstream NeMo Fabric 0.5.0 side of the hosting benchmark (see compare.py).

Run with an interpreter that has nemo-fabric 0.5.0 and nemo-fabric-adapters-common 0.5.0
installed. Uses the same python-echo adapter and the same config as bench/host/host.rs and
prints one JSON object with the same keys (python_*). Stdlib + nemo_fabric only.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from nemo_fabric import Fabric
from nemo_fabric.models import FabricConfig

ROOT = Path(__file__).resolve().parents[2]


def bench_config() -> dict:
    """Identical to `config("fabric.python-echo", ...)` in host.rs."""
    return {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "bench"},
        "harness": {"adapter_id": "fabric.python-echo", "settings": {}},
        "discovery": {"local_paths": [str(ROOT / "adapters/python-echo/python-echo.fabric-adapter.json")]},
        "runtime": {"timeout_seconds": 120},
        "environment": {"env": {"PYTHONPATH": str(ROOT / "adapters/python-echo/src")}},
    }


def stubborn_config() -> dict:
    """Identical to `config("bench.stubborn", ...)` in host.rs."""
    return {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "bench"},
        "harness": {"adapter_id": "bench.stubborn", "settings": {}},
        "discovery": {"local_paths": [str(ROOT / "bench/host/stubborn/stubborn.fabric-adapter.json")]},
        "runtime": {"timeout_seconds": 2},
        "environment": {"env": {"PYTHONPATH": str(ROOT / "bench/host/stubborn")}},
    }


async def faults(fabric, base_dir):
    config = to_config(stubborn_config())
    out = {}
    began = time.perf_counter()
    try:
        result = await fabric.run(config, base_dir=base_dir, input="x")
        status = str(getattr(result.status, "value", result.status))
    except Exception as error:  # noqa: BLE001 - report what upstream raises
        status = f"raised {type(error).__name__}"
    out["ignore_stop_run"] = {"seconds": time.perf_counter() - began, "status": status}
    runtime = await fabric.start_runtime(config, base_dir=base_dir)
    began = time.perf_counter()
    code = None
    try:
        await runtime.invoke(input="sleep")
    except Exception as error:  # noqa: BLE001
        code = getattr(error, "code", None) or type(error).__name__
    out["invoke_timeout_2s"] = {"seconds": time.perf_counter() - began, "code": code}
    try:
        await runtime.stop()
    except Exception:  # noqa: BLE001
        pass
    return out


def to_config(mapping):
    if hasattr(FabricConfig, "from_mapping"):
        return FabricConfig.from_mapping(mapping)
    return FabricConfig.model_validate(mapping)


def pct(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round((len(ordered) - 1) * p))]


async def warm_invoke_us(fabric, config, base_dir, runs):
    runtime = await fabric.start_runtime(config, base_dir=base_dir)
    try:
        for _ in range(runs // 10 + 20):
            await runtime.invoke(input="warm")
        samples = []
        for _ in range(runs):
            began = time.perf_counter()
            await runtime.invoke(input="hello")
            samples.append((time.perf_counter() - began) * 1e6)
    finally:
        await runtime.stop()
    return {"median": pct(samples, 0.5), "p90": pct(samples, 0.9), "runs": runs}


async def cold_run_ms(fabric, config, base_dir, runs):
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        result = await fabric.run(config, base_dir=base_dir, input="cold")
        assert result.status == "succeeded" or str(result.status).endswith("SUCCEEDED"), result.status
        samples.append((time.perf_counter() - began) * 1e3)
    return {"median": pct(samples, 0.5), "p90": pct(samples, 0.9)}


async def many(fabric, config, base_dir, n, k):
    began = time.perf_counter()
    runtimes = await asyncio.gather(*(fabric.start_runtime(config, base_dir=base_dir) for _ in range(n)))
    started = time.perf_counter() - began
    invoke_began = time.perf_counter()

    async def drive(runtime):
        for i in range(k):
            await runtime.invoke(input=f"turn {i}")

    await asyncio.gather(*(drive(r) for r in runtimes))
    invoke_phase = time.perf_counter() - invoke_began
    await asyncio.gather(*(r.stop() for r in runtimes))
    total = time.perf_counter() - began
    return {
        "runtimes": n,
        "invocations_per_runtime": k,
        "start_s": started,
        "invoke_phase_s": invoke_phase,
        "total_s": total,
        "invocations_per_s": n * k / invoke_phase,
        "invocations_per_s_including_start_stop": n * k / total,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000, help="same scale as FABRIC_BENCH_RUNS")
    args = parser.parse_args()
    scale = args.runs / 2000
    runs = lambda base: max(10, round(base * scale))  # noqa: E731
    config = FabricConfig.from_mapping(bench_config()) if hasattr(FabricConfig, "from_mapping") else FabricConfig.model_validate(bench_config())
    base_dir = "/tmp"
    # Same interpreter for the adapter host as ours (host.rs sets python_interpreter).
    os.environ["ADAPTER_PYTHON"] = sys.executable
    fabric = Fabric()
    out = {"python": sys.executable}
    out["python_warm_invoke_us"] = await warm_invoke_us(fabric, config, base_dir, runs(1000))
    startup = []
    for _ in range(min(runs(20), 30)):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        startup.append((time.perf_counter() - began) * 1e3)
    out["python_startup_ms"] = {"median": statistics.median(startup)}
    imports = []
    env = dict(os.environ, PYTHONPATH=str(ROOT / "adapters/python-echo/src"))
    for _ in range(min(runs(20), 30)):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import fabric_python_echo.adapter"], check=True, env=env)
        imports.append((time.perf_counter() - began) * 1e3)
    out["python_adapter_import_ms"] = {"median": statistics.median(imports)}
    out["python_cold_run_ms"] = await cold_run_ms(fabric, config, base_dir, min(runs(20), 30))
    out["python_64x20"] = await many(fabric, config, base_dir, 64, 20)
    out.update(await faults(fabric, base_dir))
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
