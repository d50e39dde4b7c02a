"""``Fabric.batch`` (issue 31) over the C ABI's batch engine, with the scripted adapter:
ids, concurrency, retries, back-pressure, per-item timeouts, input errors naming the line,
resume after a cancel and after SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabric_core import Fabric, FabricConfigError, RunRequest

from fcsupport import REPO


async def collect(batch) -> list:
    return [done async for done in batch]


def sleepy(count: int, ms: int) -> list[dict]:
    return [{"id": f"s{i}", "input": {"scripted": {"sleep_ms": ms}}} for i in range(count)]


def test_two_hundred_items_at_concurrency_8_succeed_with_their_ids(config) -> None:
    items = [
        {"id": f"item-{i}", "input": f"hello {i}"} if i % 3 == 0
        else RunRequest(input=f"hello {i}", request_id=f"item-{i}") if i % 3 == 1
        else f"hello {i}"
        for i in range(200)
    ]
    want = {(f"item-{i}" if i % 3 != 2 else str(i + 1)): f"echo: hello {i}" for i in range(200)}
    batch = Fabric().batch(config, items, concurrency=8)
    lines = asyncio.run(collect(batch))
    assert len(lines) == 200
    assert {line["id"] for line in lines} == set(want)
    for line in lines:
        assert line["result"]["output"]["response"] == want[line["id"]], line["id"]
        assert line["attempts"] == 1
    assert batch.summary["succeeded"] == 200 and batch.summary["items"] == 200
    assert batch.summary.system_stats.invocations == 200


def test_sleep_items_run_concurrently(config) -> None:
    began = time.monotonic()
    batch = Fabric().batch(config, sleepy(64, 200), concurrency=16)
    lines = asyncio.run(collect(batch))
    wall = time.monotonic() - began
    assert len(lines) == 64
    # One after another: 64 x 200 ms = 12.8 s.
    assert wall < 6.4, wall


def test_crashing_items_are_retried_with_their_attempts(config) -> None:
    items = [{"id": "crash", "input": {"scripted": {"crash": True}}}, {"id": "ok", "input": "x"}]
    batch = Fabric().batch(config, items, attempts=3)
    by_id = {line["id"]: line for line in asyncio.run(collect(batch))}
    assert by_id["crash"]["attempts"] == 3
    assert by_id["crash"]["error"]["code"] == "host_crashed"
    assert [a["code"] for a in by_id["crash"]["attempt_log"]] == ["host_crashed"] * 3
    assert by_id["ok"]["attempts"] == 1
    assert batch.summary["retries"] == 2 and batch.summary["errored"] == 1


def test_per_item_timeout_cancels_that_item_only(config) -> None:
    items = [
        {"id": "slow", "input": {"scripted": {"sleep_ms": 20000}}},
        {"id": "quick", "input": {"scripted": {"sleep_ms": 100}}},
    ]
    began = time.monotonic()
    by_id = {line["id"]: line for line in asyncio.run(collect(Fabric().batch(config, items, timeout_seconds=1.5)))}
    assert time.monotonic() - began < 10
    assert by_id["slow"]["error"]["code"] == "batch_item_timeout"
    assert by_id["quick"]["result"]["status"] == "succeeded"


def test_bad_items_raise_naming_the_line(config) -> None:
    items = [{"id": "a", "input": 1}, "b", {"request_id": "a", "input": 2}]
    with pytest.raises(FabricConfigError) as caught:
        asyncio.run(collect(Fabric().batch(config, items, concurrency=1)))
    assert caught.value.code == "batch_item_duplicate"
    assert "line 3" in str(caught.value) and "line 1" in str(caught.value)


def test_items_are_pulled_as_slots_free(config) -> None:
    pulled = 0

    def generator():
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield {"id": str(i), "input": {"scripted": {"sleep_ms": 50}}}

    async def first_then_cancel():
        batch = Fabric().batch(config, generator(), concurrency=2)
        async for _ in batch:
            seen = pulled
            batch.cancel()
            batch.cancel()
            return seen, batch

    seen, _ = asyncio.run(first_then_cancel())
    # Two running, two queued, one waiting to be pushed: never the whole generator.
    assert seen <= 8, seen


def test_resume_after_cancel_completes_the_set(config, tmp_path: Path) -> None:
    output = tmp_path / "results.jsonl"

    async def cancel_after_three():
        batch = Fabric().batch(config, sleepy(30, 200), concurrency=3, output=output, grace_seconds=5)
        count = 0
        async for _ in batch:
            count += 1
            if count == 3:
                # The feeder (a task of this loop) refills the queue the finished items
                # emptied before the cancel drops what it holds: queued items are what a
                # cancel counts as cancelled (in-flight ones finish within the grace).
                await asyncio.sleep(0.05)
                batch.cancel()
        return batch.summary

    summary = asyncio.run(cancel_after_three())
    assert summary["interrupted"] and summary["cancelled"] > 0
    written = [json.loads(line) for line in output.read_text().splitlines()]
    assert 3 <= len(written) < 30
    batch = Fabric().batch(config, sleepy(30, 200), concurrency=8, output=output)
    asyncio.run(collect(batch))
    ids = [json.loads(line)["id"] for line in output.read_text().splitlines()]
    assert sorted(ids) == sorted(f"s{i}" for i in range(30))
    assert batch.summary["skipped"] == len(written)


def test_resume_after_sigkill_completes_the_set(config, tmp_path: Path) -> None:
    output = tmp_path / "results.jsonl"
    script = tmp_path / "run.py"
    script.write_text(
        "import asyncio, sys\n"
        "sys.path.insert(0, %r)\n"
        "from fcsupport import scripted_config\n"
        "from fabric_core import Fabric\n"
        "items = [{'id': f's{i}', 'input': {'scripted': {'sleep_ms': 300}}} for i in range(30)]\n"
        "async def main():\n"
        "    async for _ in Fabric().batch(scripted_config(['echo: {input}']), items, concurrency=3, output=%r):\n"
        "        pass\n"
        "asyncio.run(main())\n" % (str(Path(__file__).parent), str(output))
    )
    child = subprocess.Popen([sys.executable, str(script)], env=os.environ.copy())
    try:
        deadline = time.monotonic() + 30
        while not output.exists() or len(output.read_text().splitlines()) < 3:
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
    before = output.read_text()
    assert before.endswith("\n")
    assert len(before.splitlines()) < 30
    asyncio.run(collect(Fabric().batch(config, sleepy(30, 300), concurrency=8, output=output)))
    ids = [json.loads(line)["id"] for line in output.read_text().splitlines()]
    assert sorted(ids) == sorted(f"s{i}" for i in range(30))
