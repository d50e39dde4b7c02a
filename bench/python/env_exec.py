"""`exec` latency in a warm environment: ``EnvironmentHandle.exec`` of ``sh -c :`` in a
subprocess environment and in a container environment, against ``podman exec`` of the same
command in the same container, measured in the same run (issue 35's bench row; the sandbox
image has ``/bin/sh`` but no ``true``).

    FABRIC_CORE_LIB=$PWD/target/debug/libfabric_ffi.so PYTHONPATH=bindings/python/src \\
      .venv/bin/python bench/python/env_exec.py [--samples 200] [--warmup 20]

Needs the built providers (``cargo build -p fabric-cli``) and podman with the image of
``scripts/container-image.sh``. Prints one JSON line per measure: median and p90 in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from fabric_core import EnvironmentConfig, Fabric, FabricConfig

REPO = Path(__file__).resolve().parents[2]
COMMAND = ["sh", "-c", ":"]


def config(provider: str, settings: dict[str, object]) -> FabricConfig:
    config = FabricConfig.from_mapping(
        {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "bench-exec"},
            "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": ["ok"]}},
            "discovery": {"local_paths": [str(REPO / "adapters/scripted/scripted.fabric-adapter.json")]},
        }
    )
    config.environment = EnvironmentConfig(provider=provider, settings=settings)
    return config


def summary(measure: str, samples: list[float]) -> dict[str, object]:
    ordered = sorted(samples)
    return {
        "measure": measure,
        "samples": len(samples),
        "median_ms": round(statistics.median(ordered), 3),
        "p90_ms": round(ordered[int(len(ordered) * 0.9) - 1], 3),
    }


async def time_exec(environment, samples: int, warmup: int) -> list[float]:
    times = []
    for index in range(warmup + samples):
        began = time.perf_counter()
        result = await environment.exec(COMMAND, timeout_seconds=30)
        elapsed = (time.perf_counter() - began) * 1000
        assert result["exit_code"] == 0, result
        if index >= warmup:
            times.append(elapsed)
    return times


def time_podman(container: str, samples: int, warmup: int) -> list[float]:
    times = []
    for index in range(warmup + samples):
        began = time.perf_counter()
        subprocess.run(["podman", "exec", container, *COMMAND], check=True)
        elapsed = (time.perf_counter() - began) * 1000
        if index >= warmup:
            times.append(elapsed)
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    image = subprocess.run(
        ["bash", str(REPO / "scripts/container-image.sh")], check=True, capture_output=True, text=True
    ).stdout.strip()
    fabric = Fabric()
    with tempfile.TemporaryDirectory(prefix="fb-", dir="/tmp") as root:
        environment = await fabric.prepare_environment(config("subprocess", {"root": root}))
        try:
            print(json.dumps(summary("exec_subprocess", await time_exec(environment, args.samples, args.warmup))))
        finally:
            await fabric.release_environment(environment)
        environment = await fabric.prepare_environment(config("container", {"root": root, "image": image}))
        try:
            container = str(environment.info["reference"]["resource"]["container_id"])
            # Alternate the two callers in blocks so both see the same machine load.
            ours: list[float] = []
            podman: list[float] = []
            block = max(args.samples // 5, 1)
            for round_index in range(5):
                ours += await time_exec(environment, block, args.warmup if round_index == 0 else 0)
                podman += time_podman(container, block, args.warmup if round_index == 0 else 0)
            print(json.dumps(summary("exec_container", ours)))
            print(json.dumps(summary("podman_exec_same_container", podman)))
        finally:
            await fabric.release_environment(environment)


if __name__ == "__main__":
    asyncio.run(main())
