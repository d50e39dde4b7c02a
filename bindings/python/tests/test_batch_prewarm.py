"""``Fabric.batch`` with ``fresh`` isolation: items start on hosts launched ahead of them
(up to ``concurrency`` kept prewarmed while the batch runs; ``summary.prewarmed`` counts the
items that claimed one), ``prewarm=False`` starts every item cold, and when the batch ends
no host it launched is left (checked by pid)."""

from __future__ import annotations

import asyncio

from fabric_core import Fabric
from test_operations import _child_pids
from test_prewarm import _host_pid
from test_runtime import process_gone


def _run(config, count: int, **options) -> tuple[object, set[int], set[int]]:
    """Runs ``count`` items; returns the batch, the hosts items ran on and every child
    process seen while it ran."""

    before = _child_pids()
    seen: set[int] = set()
    used: set[int] = set()

    async def main():
        batch = Fabric().batch(config, [f"q{i}" for i in range(count)], concurrency=3, **options)
        async for done in batch:
            assert done["result"]["status"] == "succeeded", done
            used.add(_host_pid(done.result))
            seen.update(_child_pids() - before)
        return batch

    batch = asyncio.run(main())
    return batch, used, seen


def test_fresh_items_claim_prewarmed_hosts_and_none_is_left_after_the_batch(config) -> None:
    batch, used, seen = _run(config, 12)
    assert 1 <= batch.summary["prewarmed"] <= 12, batch.summary
    waiting = seen - used
    assert waiting, "hosts waiting ahead of the items were seen while the batch ran"
    assert all(process_gone(pid, timeout=10.0) for pid in seen | used)


def test_prewarm_false_starts_every_item_cold(config) -> None:
    batch, used, _ = _run(config, 6, prewarm=False)
    assert batch.summary["prewarmed"] == 0 and batch.summary["succeeded"] == 6
    assert all(process_gone(pid, timeout=10.0) for pid in used)
