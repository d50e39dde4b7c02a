"""Native OpenAI streaming: time to first chunk and chunks per second for a 2,000-chunk reply,
our Python binding vs upstream 0.5.0's Python SDK, with the same python-echo adapter (which
emits through upstream's common lifecycle writer). One run each, in fresh processes; CPU
time of the consuming process beside the wall time.

    cargo build --release -p fabric-ffi
    FABRIC_CORE_LIB=$PWD/target/release/libfabric_ffi.so \
      PYTHONPATH=bindings/python/src:adapters/python-echo/src \
      .venv/bin/python bench/python/openai_stream.py [--chunks 2000]
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
import asyncio, json, resource, sys, time
from MODULE import Fabric, FabricConfig

config, chunks = json.loads(sys.argv[1]), int(sys.argv[2])


def cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime


async def main():
    runtime = await Fabric().start_runtime(FabricConfig.from_mapping(config))
    try:
        # Warm-up turn (imports, first connection).
        warm = runtime.invoke_openai_stream(input="w")
        [c async for c in warm]
        await warm.result()
        text = "x" * chunks
        request_context = {"scripted_stream": {"chunk_chars": 1}}
        from MODULE import RunRequest
        request = RunRequest(input=text, context=request_context)
        cpu0, t0 = cpu(), time.perf_counter()
        stream = runtime.invoke_openai_stream(request=request)
        first = None
        count = 0
        async for _chunk in stream:
            if first is None:
                first = time.perf_counter() - t0
            count += 1
        last = time.perf_counter() - t0
        result = await stream.result()
        total = time.perf_counter() - t0
        assert result.status == "succeeded", result
        print(json.dumps({
            "chunks": count,
            "first_chunk_ms": first * 1e3,
            "chunks_per_s": (count - 1) / (last - first),
            "total_ms": total * 1e3,
            "cpu_ms": (cpu() - cpu0) * 1e3,
        }))
    finally:
        await runtime.stop()

asyncio.run(main())
'''


def run(module: str, chunks: int) -> dict:
    config = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    config["discovery"] = {"local_paths": [str(REPO / "adapters" / "python-echo")]}
    # As a user runs it (userenv.py): not from the git checkout (upstream then runs git on
    # every invoke), no ADAPTER_PYTHON, the interpreter's virtual environment activated.
    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as workdir:
        result = subprocess.run(
            [sys.executable, "-c", CHILD.replace("MODULE", module), json.dumps(config), str(chunks)],
            cwd=workdir,
            env=activated(sys.executable, dict(os.environ)),
            capture_output=True,
            text=True,
            timeout=600,
        )
    if result.returncode != 0:
        raise SystemExit(f"{module} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=2000)
    args = parser.parse_args()
    rows = [("upstream nemo_fabric 0.5.0", run("nemo_fabric", args.chunks))]
    rows.append(("fabric_core (ours)", run("fabric_core", args.chunks)))
    print(f"{'':28} {'chunks':>7} {'first ms':>9} {'chunks/s':>10} {'total ms':>9} {'CPU ms':>8}")
    for name, row in rows:
        print(
            f"{name:28} {row['chunks']:>7} {row['first_chunk_ms']:>9.2f} "
            f"{row['chunks_per_s']:>10.0f} {row['total_ms']:>9.1f} {row['cpu_ms']:>8.1f}"
        )


if __name__ == "__main__":
    main()
