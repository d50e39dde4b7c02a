"""``RuntimePool.batch`` on a real local Ray cluster (``test_ray``'s ``cluster`` fixture: a
head and two workers on 127.0.0.2-4, stopped by pid): the core batch's item, output-line,
resume and summary formats, and the items of a worker killed mid-batch retried elsewhere.
The fault test comes last (it leaves the cluster with one worker)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from test_ray import _config, _request, cluster, run  # noqa: F401 - `cluster` is a fixture

pytestmark = pytest.mark.ray


def _lines(path: Any) -> list[dict[str, Any]]:
    text = path.read_text()
    assert text.endswith("\n"), "torn last line"
    return [json.loads(line) for line in text.splitlines()]


def test_pool_batch_writes_core_lines_resumes_and_summarizes(cluster, tmp_path) -> None:  # noqa: F811
    from fabric_core import FabricConfigError
    from fabric_core.batch import BatchLine, BatchSummary
    from fabric_core.ray import RuntimePool

    output = tmp_path / "results.jsonl"
    first = [{"id": f"q{index}", "input": f"hello {index}"} for index in range(30)]
    first.append({"id": "talk", "requests": [{"input": "one"}, {"input": "two"}]})
    first.append("plain")  # an input: its id is its line number, 32
    first.append({"id": "crash", **_request("boom", crash=True).to_mapping()})

    async def main() -> None:
        async with await RuntimePool.create(_config(), runtimes=4, per_actor=2, resources={"fabric": 1}) as pool:
            batch = pool.batch(first, concurrency=8, attempts=2, output=output)
            done = [line async for line in batch]
            assert all(isinstance(line, BatchLine) for line in done)
            by_id = {line.id: line for line in done}
            assert sorted(by_id) == sorted([f"q{index}" for index in range(30)] + ["talk", "32", "crash"])
            assert by_id["q7"].result.status == "succeeded" and "hello 7" in json.dumps(by_id["q7"].result.to_dict()["output"])
            assert [turn.status for turn in by_id["talk"].results] == ["succeeded", "succeeded"]
            crash = by_id["crash"]
            assert crash.attempts == 2 and crash.result.status == "failed"
            assert [record.code for record in crash.attempt_log] == ["host_crashed", "host_crashed"]
            summary = batch.summary
            assert isinstance(summary, BatchSummary)
            assert (summary["items"], summary.succeeded, summary.failed, summary.retries) == (33, 32, 1, 1)
            assert summary.latency.p99_ms >= summary.latency.p50_ms and summary.items_per_second > 0
            assert summary.system_stats.invocations >= 33 and summary.system_stats.elapsed_seconds > 0
            assert [line["id"] for line in _lines(output)] == [line.id for line in done]

            # Resume: the ids already written are skipped, the rest appended.
            more = first[:5] + [{"id": "new", "input": "fresh"}]
            again = pool.batch(more, isolation="reuse", output=output)
            assert [line.id async for line in again] == ["new"]
            assert (again.summary.skipped, again.summary.succeeded, again.summary["items"]) == (5, 1, 6)
            ids = [line["id"] for line in _lines(output)]
            assert len(ids) == len(set(ids)) == 34

            # A duplicate id is an input error naming the line; what ran before is kept.
            with pytest.raises(FabricConfigError) as error:
                async for _ in pool.batch([{"id": "a", "input": 1}, {"id": "a", "input": 2}]):
                    pass
            assert error.value.code == "batch_item_duplicate" and "line 2" in error.value.message

    run(main())


def test_pool_batch_retries_the_items_of_a_killed_worker(cluster, tmp_path) -> None:  # noqa: F811
    from fabric_core.ray import RuntimePool

    output = tmp_path / "results.jsonl"
    items = [{"id": f"i{index}", **_request(f"r{index}", sleep_ms=20).to_mapping()} for index in range(400)]

    async def main() -> None:
        async with await RuntimePool.create(_config(), runtimes=16, per_actor=4, resources={"fabric": 1}) as pool:
            batch = pool.batch(items, concurrency=16, isolation="reuse", attempts=3, output=output)
            seen = 0
            async for _ in batch:
                seen += 1
                if seen == 80:
                    assert await asyncio.to_thread(cluster.kill_node, "w1"), "no process of w1 was found"
            lines = _lines(output)
            assert sorted(line["id"] for line in lines) == sorted(item["id"] for item in items)
            assert all(line["result"]["status"] == "succeeded" for line in lines)
            retried = [line for line in lines if line["attempts"] > 1]
            assert retried, "no item was in flight on the killed worker"
            assert all(line["attempt_log"][0]["code"] == "node_lost" for line in retried)
            assert batch.summary.succeeded == 400 and batch.summary.retries == sum(
                line["attempts"] - 1 for line in lines
            )

    run(main())
