"""``Fabric.batch`` runs on the event loop's thread: items are pushed and finished lines pulled
(every ready one at once) with zero timeouts, and in between the loop waits on the batch's
readiness descriptor, so no item costs a worker-thread hop (only start, summary and free
do)."""

from __future__ import annotations

import asyncio
from typing import Any

import fabric_core.batch as batch_module
from fabric_core import Fabric


def test_a_batch_waits_on_its_descriptor_not_in_worker_threads(config, monkeypatch) -> None:
    hops: list[Any] = []
    original = batch_module.to_thread

    async def counted(function: Any) -> Any:
        hops.append(function)
        return await original(function)

    monkeypatch.setattr(batch_module, "to_thread", counted)
    items = [{"id": f"r{i}", "input": {"scripted": {"sleep_ms": 5}}} for i in range(120)]

    async def main() -> tuple[list[Any], Any]:
        batch = Fabric().batch(config, items, concurrency=4, isolation="reuse")
        return [done async for done in batch], batch

    lines, batch = asyncio.run(main())
    assert sorted(line["id"] for line in lines) == sorted(item["id"] for item in items)
    assert batch.summary["succeeded"] == 120
    # start, summary, free: never one per item (a full queue or an empty pull waits on the
    # descriptor).
    assert len(hops) <= 3, len(hops)
