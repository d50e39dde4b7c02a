"""``RuntimePool.batch``: a data set of items over a Ray pool, in the formats of the core's
batch engine (``fabric_core.batch``, ``fabric batch``): the same items and ids, the same
output lines (``BatchLine``), the same resume rule and the same ``BatchSummary``, so a job
moves from one machine to a cluster by changing the call, not the files.

The driver schedules: ``concurrency`` items in flight, each on a pool runtime (``reuse``:
any idle runtime, kept between items) or a reserved, freshly restarted one (``fresh``, and
every multi-turn item: its turns stay on one runtime). An item whose actor or node is lost
(code ``node_lost``) or whose runtime failed (the core's ``BATCH_RETRYABLE`` codes) is
retried on another runtime with exponential backoff and jitter, while ``attempts`` allow.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from fabric_core._codes import Code
from fabric_core._generated import BATCH_RETRYABLE, BatchLine, BatchSummary
from fabric_core.batch import _item_bytes
from fabric_core.errors import FabricConfigError, FabricError
from fabric_core.models import RunRequest

if TYPE_CHECKING:
    from fabric_core.ray._pool import RuntimePool

#: Backoff before the second attempt, doubled per attempt up to the cap (seconds).
BACKOFF_BASE_SECONDS = 0.2
BACKOFF_CAP_SECONDS = 10.0
DEFAULT_GRACE_SECONDS = 10.0
_ITEM_LINE = (
    "each item must be one JSON value: a RunRequest object, any other value (such as a string) "
    'used as the input, or {"id": ..., "requests": [...]}'
)


def _invalid(line: int, reason: str, code: str = Code.BATCH_ITEM_INVALID) -> FabricConfigError:
    return FabricConfigError(
        f"items line {line}: {reason}; {_ITEM_LINE}",
        stage="config",
        code=code,
        details={"line": line},
    )


def _id_field(item: dict[str, Any], key: str, line: int) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _invalid(line, f"`{key}` must be a non-blank string or an integer")


def _turn(value: Any, line: int, field: str) -> dict[str, Any]:
    request = value if isinstance(value, dict) else {"input": value}
    try:
        RunRequest.from_mapping(request)
    except FabricError as error:
        raise _invalid(line, f"`{field}`: {error.message}") from None
    return request


def parse_item(value: Any, line: int) -> tuple[str, list[dict[str, Any]]]:
    """An item's id and turns, by the core's rules (``id``, else ``request_id``, else the
    1-based line number). Raises ``FabricConfigError`` (``batch_item_invalid``)."""

    try:
        value = json.loads(_item_bytes(value))
    except (TypeError, ValueError) as error:
        raise _invalid(line, f"not JSON-compatible: {error}") from None
    if not isinstance(value, dict):
        return str(line), [_turn(value, line, "item")]
    item_id = _id_field(value, "id", line)
    if "requests" in value:
        extra = next((key for key in value if key not in ("id", "requests")), None)
        if extra is not None:
            raise _invalid(line, f"a multi-turn item holds only `id` and `requests`, not `{extra}`")
        turns = value["requests"]
        if not isinstance(turns, list):
            raise _invalid(line, "`requests` must be an array")
        if not turns:
            raise _invalid(line, "`requests` must hold at least one request")
        return item_id or str(line), [_turn(turn, line, f"requests[{index}]") for index, turn in enumerate(turns)]
    request_id = _id_field(value, "request_id", line)
    request = {key: item for key, item in value.items() if key != "id"}
    return item_id or request_id or str(line), [_turn(request, line, "item")]


class _Output:
    """The results file: whole lines appended with one ``write`` each; a torn last line
    (a process killed mid-write) is cut off on open; ``done`` holds the ids with a line."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        with open(self.path, "rb") as handle:
            text = handle.read()
        whole = text.rfind(b"\n") + 1
        if whole < len(text):
            os.ftruncate(self.fd, whole)
        self.done: set[str] = set()
        for raw in text[:whole].splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict) and isinstance(line.get("id"), str) and ("result" in line or "error" in line):
                self.done.add(line["id"])

    def write(self, line: dict[str, Any]) -> None:
        os.write(self.fd, json.dumps(line, separators=(",", ":")).encode() + b"\n")

    def close(self) -> None:
        os.close(self.fd)


def _percentile(ordered: list[int], p: int) -> int:
    if not ordered:
        return 0
    rank = max(1, -(-p * len(ordered) // 100))
    return ordered[min(rank, len(ordered)) - 1]


class _Tally:
    """The counts of the core's summary (``fabric-batch``'s tally, the same fields)."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(("items", "succeeded", "failed", "errored", "skipped", "cancelled", "retries"), 0)
        self.usage: dict[str, Any] = dict.fromkeys(
            ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens"), 0
        )
        self.latencies: list[int] = []
        self.system: dict[str, Any] | None = None

    def _system_stats(self, stats: dict[str, Any] | None) -> None:
        if not stats:
            return
        if self.system is None:
            self.system = {"invocations": 0, "elapsed_seconds": 0.0, "cpu_time_seconds": 0.0, "peak_resident_memory_bytes": 0}
        totals = self.system
        totals["invocations"] += 1
        totals["elapsed_seconds"] += stats.get("elapsed_seconds") or 0.0
        totals["cpu_time_seconds"] += stats.get("cpu_time_seconds_estimate") or 0.0
        after = ((stats.get("after") or {}).get("snapshot") or {}).get("resident_memory_bytes") or 0
        gauge = (stats.get("sampled") or {}).get("resident_memory_bytes") or {}
        peak = max(after, int(gauge.get("sampled_peak") or 0))
        totals["peak_resident_memory_bytes"] = max(totals["peak_resident_memory_bytes"], peak)

    def finished(self, line: dict[str, Any]) -> None:
        result = line.get("result")
        if result is None:
            self.counts["errored"] += 1
        elif result.get("status") == "succeeded":
            self.counts["succeeded"] += 1
        else:
            self.counts["failed"] += 1
        self.counts["retries"] += line["attempts"] - 1
        for turn in line.get("results") or ([result] if result else []):
            usage = turn.get("usage") or {}
            for key in ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens"):
                self.usage[key] += usage.get(key) or 0
            if usage.get("cost_usd") is not None:
                self.usage["cost_usd"] = self.usage.get("cost_usd", 0.0) + usage["cost_usd"]
            self._system_stats(turn.get("system_stats"))
        self.latencies.append(line["duration_ms"])
        self.counts["items"] += 1

    def summary(self, wall: float, interrupted: bool, input_error: dict[str, Any] | None) -> BatchSummary:
        ordered = sorted(self.latencies)
        raw: dict[str, Any] = {
            **self.counts,
            "interrupted": interrupted,
            "wall_ms": int(wall * 1000),
            "items_per_second": len(ordered) / wall if wall > 0 else 0.0,
            "latency": {f"p{p}_ms": _percentile(ordered, p) for p in (50, 90, 99)},
            "usage": dict(self.usage),
        }
        if self.system is not None:
            raw["system_stats"] = dict(self.system)
        if input_error is not None:
            raw["input_error"] = input_error
        return BatchSummary._from_json(raw)


def _error_info(error: FabricError) -> dict[str, Any]:
    info: dict[str, Any] = {"code": error.code, "stage": error.stage or "invoke", "message": error.message}
    if error.details:
        info["metadata"] = dict(error.details)
    return info


class PoolBatch:
    """A running batch over a ``RuntimePool``: iterate it (``async for``) for the finished
    ``BatchLine``s in completion order; ``summary`` is set when the iteration ends;
    ``cancel()`` stops taking items and lets in-flight ones finish within ``grace_seconds``
    (a second call stops them now: they count as cancelled)."""

    def __init__(self, pool: RuntimePool, items: Iterable[Any] | AsyncIterable[Any], settings: dict[str, Any]) -> None:
        self._pool = pool
        self._items = items
        self._concurrency = settings["concurrency"] or max(1, pool.capacity)
        self._fresh = settings["isolation"] == "fresh"
        self._attempts = settings["attempts"]
        self._retry_failed = settings["retry_failed"]
        self._grace = settings["grace_seconds"]
        self._output_path = settings["output"]
        self._draining = False
        self._tasks: set[asyncio.Task[dict[str, Any] | None]] = set()
        #: The BatchSummary, once the iteration ended.
        self.summary: BatchSummary | None = None

    def cancel(self) -> None:
        """First call: stop taking items (grace for in-flight ones); second: stop now."""

        if self._draining:
            for task in self._tasks:
                task.cancel()
            return
        self._draining = True
        asyncio.get_running_loop().call_later(self._grace, self._stop_now)

    def _stop_now(self) -> None:
        for task in self._tasks:
            task.cancel()

    def __aiter__(self) -> AsyncIterator[BatchLine]:
        return self._run()

    async def _turns(self, turns: list[dict[str, Any]]) -> list[Any]:
        if not self._fresh and len(turns) == 1:
            return [await self._pool.invoke(turns[0])]
        async with self._pool.session() as session:
            results = []
            for turn in turns:
                result = await session.invoke(turn)
                results.append(result)
                if result.status != "succeeded":
                    break
            return results

    async def _item(self, item_id: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
        began = time.monotonic()
        log: list[dict[str, Any]] = []
        attempt = 1
        while True:
            started = time.monotonic()
            results: list[Any] = []
            error: dict[str, Any] | None = None
            try:
                results = await self._turns(turns)
            except FabricError as failure:
                error = _error_info(failure)
            if error is not None:
                outcome, code = "error", error["code"]
                retry = code in BATCH_RETRYABLE or code == Code.NODE_LOST
            else:
                last = results[-1]
                outcome = last.status
                code = last.error["code"] if last.error is not None else None
                # A lost actor or a crashed host is a failed result in a pool: retried as
                # the core retries those errors; another failure only with retry_failed.
                runtime_failure = code == Code.NODE_LOST or code in BATCH_RETRYABLE
                retry = outcome != "succeeded" and (self._retry_failed or runtime_failure)
            record = {"attempt": attempt, "duration_ms": int((time.monotonic() - started) * 1000), "outcome": outcome}
            if code is not None:
                record["code"] = code
            log.append(record)
            if not retry or attempt >= self._attempts or self._draining:
                break
            attempt += 1
            pause = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (attempt - 2))
            await asyncio.sleep(pause * random.uniform(0.5, 1.0))
        line: dict[str, Any] = {"id": item_id, "attempts": len(log), "attempt_log": log}
        if error is not None:
            line["error"] = error
        else:
            line["result"] = results[-1].to_dict()
            if len(turns) > 1:
                line["results"] = [result.to_dict() for result in results]
        line["duration_ms"] = int((time.monotonic() - began) * 1000)
        return line

    async def _guarded(self, item_id: str, turns: list[dict[str, Any]]) -> dict[str, Any] | None:
        try:
            return await self._item(item_id, turns)
        except asyncio.CancelledError:
            return None

    async def _run(self) -> AsyncIterator[BatchLine]:
        from fabric_core.ray._pool import _aiter

        began = time.monotonic()
        output = None if self._output_path is None else _Output(self._output_path)
        done = set() if output is None else set(output.done)
        tally = _Tally()
        seen: dict[str, int] = {}
        input_error: FabricConfigError | None = None
        intake = _aiter(self._items)
        number = 0
        exhausted = False
        try:
            while self._tasks or not (exhausted or self._draining or input_error):
                while len(self._tasks) < self._concurrency and not (exhausted or self._draining or input_error):
                    try:
                        value = await intake.__anext__()
                    except StopAsyncIteration:
                        exhausted = True
                        break
                    number += 1
                    try:
                        item_id, turns = parse_item(value, number)
                        if item_id in seen:
                            raise _invalid(
                                number,
                                f"id `{item_id}` was already used on line {seen[item_id]}",
                                Code.BATCH_ITEM_DUPLICATE,
                            )
                    except FabricConfigError as error:
                        input_error = error
                        break
                    seen[item_id] = number
                    if item_id in done:
                        tally.counts["skipped"] += 1
                        tally.counts["items"] += 1
                        continue
                    self._tasks.add(asyncio.ensure_future(self._guarded(item_id, turns)))
                if not self._tasks:
                    continue
                finished, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    self._tasks.discard(task)
                    line = task.result()
                    if line is None:
                        tally.counts["cancelled"] += 1
                        tally.counts["items"] += 1
                        continue
                    if output is not None:
                        output.write(line)
                    tally.finished(line)
                    yield BatchLine._from_json(line)
        finally:
            for task in self._tasks:
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            if output is not None:
                output.close()
        problem = None if input_error is None else _error_info(input_error)
        self.summary = tally.summary(time.monotonic() - began, self._draining, problem)
        if input_error is not None:
            raise input_error
