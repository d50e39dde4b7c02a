"""``RuntimePool`` and ``PoolSession``: the driver side of the Ray scale-out.

The driver holds Ray actor handles only (``RuntimeHost`` actors, one ``Fabric`` and a
bounded set of runtimes each); configs, requests and results cross Ray as JSON-able dicts.
Ray is imported when a pool is created, never when this module is imported.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabric_core import _ffi
from fabric_core._codes import Code
from fabric_core._sdk_model import foreign_model
from fabric_core.errors import FabricConfigError, FabricError, FabricStateError
from fabric_core.models import FabricConfig, RunRequest
from fabric_core.ray._batch import DEFAULT_GRACE_SECONDS, PoolBatch
from fabric_core.ray._host import METADATA_KEY, RuntimeHost, failed_result
from fabric_core.types import RunResult

_EXTRA_HINT = "fabric_core.ray needs Ray: install the extra with `pip install 'fabric-core[ray]'`"
#: Added to the config's ``runtime.timeout_seconds`` for the driver's own deadline: the core
#: times a hung turn out first; the driver's deadline only catches a stuck actor.
DEFAULT_DEADLINE_MARGIN_SECONDS = 30.0
#: The core's default invocation timeout (``runtime.timeout_seconds`` unset).
_CORE_DEFAULT_TIMEOUT_SECONDS = 3600.0
#: How long the pool keeps trying to start a replacement for a lost actor.
DEFAULT_REPLACE_TIMEOUT_SECONDS = 120.0


def _ray() -> Any:
    """Import Ray, or raise ``ImportError`` naming the extra."""

    try:
        import ray
    except ImportError as error:
        raise ImportError(_EXTRA_HINT) from error
    return ray


def _error(code: str, message: str, **details: Any) -> FabricError:
    """The SDK exception for a registered code (class from the generated code table)."""

    info = {"code": code, "stage": "invoke", "message": message, "metadata": details}
    return _ffi.error_from_status(_ffi.STATUS_RUNTIME, json.dumps(info))


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    exceptions = ray.exceptions
    return (exceptions.RayActorError, exceptions.ObjectLostError, exceptions.NodeDiedError)


def _request_mapping(request: Any) -> dict[str, Any]:
    if foreign_model(request):
        request = RunRequest.model_validate(request)
    if isinstance(request, RunRequest):
        return request.to_mapping()
    if isinstance(request, Mapping):
        return RunRequest.from_mapping(request).to_mapping()
    raise FabricConfigError(
        "request must be a RunRequest or a RunRequest mapping",
        stage="config",
        code=Code.INVALID_REQUEST,
    )


@dataclass
class _Member:
    """The driver's record of one ``RuntimeHost`` actor."""

    handle: Any
    size: int
    identity: dict[str, Any] = field(default_factory=dict)
    alive: bool = True
    in_flight: int = 0
    reserved: int = 0
    invocations: int = 0
    failures: int = 0
    sessions: set[PoolSession] = field(default_factory=set)

    @property
    def free(self) -> int:
        return self.size - self.in_flight - self.reserved if self.alive else 0

    def matches(self, affinity: str | None) -> bool:
        return affinity is None or affinity in (
            self.identity.get("node_id"),
            self.identity.get("actor_id"),
        )


class RuntimePool:
    """Runtimes of one config spread over a Ray cluster, ``per_actor`` to an actor.

    Create it with ``await RuntimePool.create(config, runtimes=N, per_actor=K)``; use it as
    an async context manager or call ``await pool.close()``. Every result is a
    ``RunResult`` with ``metadata["ray"]`` = ``{"node_id", "actor_id", "runtime_slot"}``.
    """

    def __init__(self, ray: Any, remote: Any, options: dict[str, Any], init_args: tuple[Any, ...]) -> None:
        self._ray = ray
        self._remote = remote
        self._options = options
        self._init_args = init_args
        self._members: list[_Member] = []
        self._changed = asyncio.Condition()
        self._lost: list[dict[str, Any]] = []
        self._replacements: set[asyncio.Task[None]] = set()
        self._replacement_failures: list[str] = []
        self._replacement_retries = 0
        self._replace_timeout = DEFAULT_REPLACE_TIMEOUT_SECONDS
        self._closed = False
        self._in_flight = 0
        self._peak_in_flight = 0
        self._deadline = 0.0

    # -- creation --------------------------------------------------------------------

    @classmethod
    async def create(
        cls,
        config: FabricConfig | Mapping[str, Any],
        *,
        runtimes: int,
        per_actor: int = 4,
        resources: Mapping[str, float] | None = None,
        num_cpus: float = 0,
        scheduling_strategy: str = "SPREAD",
        runtime_env: Mapping[str, Any] | None = None,
        base_dir: str | None = None,
        start_timeout_seconds: float | None = None,
        deadline_margin_seconds: float = DEFAULT_DEADLINE_MARGIN_SECONDS,
    ) -> RuntimePool:
        """Start ``ceil(runtimes / per_actor)`` actors holding ``runtimes`` runtimes in all.

        ``resources`` (Ray custom resources, e.g. ``{"fabric": 1}``), ``num_cpus`` (default 0:
        the adapter processes are not Ray tasks), ``scheduling_strategy`` and
        ``runtime_env`` apply to every actor. ``base_dir`` and ``start_timeout_seconds`` are
        passed to ``Fabric.start_runtime`` on the actor's node. Raises ``ImportError`` when
        Ray is missing, ``FabricConfigError`` for bad sizes, and the start error of the
        first actor that could not start its runtimes (every actor is then closed).
        """

        ray = _ray()
        if foreign_model(config):
            config = FabricConfig.model_validate(config)
        elif not isinstance(config, FabricConfig):
            config = FabricConfig.from_mapping(config)
        if not isinstance(runtimes, int) or runtimes < 1:
            raise FabricConfigError("runtimes must be a positive integer", stage="config", code=Code.INVALID_ARGUMENT)
        if not isinstance(per_actor, int) or per_actor < 1:
            raise FabricConfigError("per_actor must be a positive integer", stage="config", code=Code.INVALID_ARGUMENT)
        start_options: dict[str, Any] = {}
        if base_dir is not None:
            start_options["base_dir"] = str(base_dir)
        if start_timeout_seconds is not None:
            start_options["start_timeout_seconds"] = float(start_timeout_seconds)
        actor_options: dict[str, Any] = {
            "num_cpus": num_cpus,
            "max_restarts": 0,
            "max_task_retries": 0,
            "scheduling_strategy": scheduling_strategy,
        }
        if resources:
            actor_options["resources"] = dict(resources)
        if runtime_env:
            actor_options["runtime_env"] = dict(runtime_env)
        remote = ray.remote(RuntimeHost)
        pool = cls(ray, remote, actor_options, (config.to_mapping(), start_options))
        timeout = config.runtime.timeout_seconds if config.runtime is not None else None
        pool._deadline = float(timeout or _CORE_DEFAULT_TIMEOUT_SECONDS) + deadline_margin_seconds
        sizes = [per_actor] * (runtimes // per_actor)
        if runtimes % per_actor:
            sizes.append(runtimes % per_actor)
        outcomes = await asyncio.gather(*(pool._spawn(size) for size in sizes), return_exceptions=True)
        problem = next((item for item in outcomes if isinstance(item, BaseException)), None)
        if problem is not None:
            await pool.close()
            if isinstance(problem, ray.exceptions.RayTaskError):
                raise problem.as_instanceof_cause() from None
            raise problem
        return pool

    async def _spawn(self, size: int) -> _Member:
        """Create one actor, start its runtimes, and add it to the pool."""

        config, start_options = self._init_args
        handle = self._remote.options(**self._options).remote(config, size, start_options)
        member = _Member(handle=handle, size=size)
        try:
            member.identity = await handle.start.remote()
        except BaseException:
            self._kill(handle)
            raise
        async with self._changed:
            closed = self._closed
            if not closed:
                self._members.append(member)
                self._changed.notify_all()
        if closed:
            await self._close_member(member)
        return member

    # -- placement -------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Runtimes of live actors (reserved ones included)."""

        return sum(member.size for member in self._members if member.alive)

    def _check_open(self) -> None:
        if self._closed:
            raise FabricStateError("the runtime pool was closed", stage="invoke", code=Code.POOL_CLOSED)

    async def _take(self, affinity: str | None, reserve: bool) -> _Member | None:
        """Wait for a live actor with an idle runtime (matching ``affinity``, a node or an
        actor id) and claim one; ``None`` when ``affinity`` names a lost node or actor."""

        async with self._changed:
            while True:
                self._check_open()
                candidates = [member for member in self._members if member.alive and member.matches(affinity)]
                if not candidates and not self._replacements:
                    if affinity is None:
                        raise _error(Code.NODE_LOST, "every actor of the pool was lost and none could be replaced")
                    if any(affinity in (lost["node_id"], lost["actor_id"]) for lost in self._lost):
                        return None
                    raise FabricConfigError(
                        "affinity names no node or actor of this pool",
                        stage="invoke",
                        code=Code.INVALID_ARGUMENT,
                        details={"path": "affinity"},
                    )
                idle = [member for member in candidates if member.free > 0]
                if idle:
                    member = max(idle, key=lambda item: item.free)
                    if reserve:
                        member.reserved += 1
                    else:
                        member.in_flight += 1
                        self._in_flight += 1
                        self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
                    return member
                await self._changed.wait()

    async def _give_back(self, member: _Member, reserved: bool) -> None:
        async with self._changed:
            if reserved:
                member.reserved -= 1
            else:
                member.in_flight -= 1
                self._in_flight -= 1
            self._changed.notify_all()

    def _lose(self, member: _Member, cause: str) -> None:
        """Record an actor as lost, end what is left of it, tell its sessions, and start a
        replacement (Ray places it on a node that is still alive)."""

        if not member.alive:
            return
        member.alive = False
        self._lost.append(
            {
                "node_id": member.identity.get("node_id"),
                "actor_id": member.identity.get("actor_id"),
                "runtimes": member.size,
                "cause": cause,
                "at": time.time(),
            }
        )
        for session in list(member.sessions):
            session._mark_lost()
        self._kill(member.handle)
        if not self._closed:
            task = asyncio.get_running_loop().create_task(self._replace(member.size))
            self._replacements.add(task)
            task.add_done_callback(self._replacements.discard)

    async def _replace(self, size: int) -> None:
        """Start a replacement actor. Ray may place it on the dying node before it has
        noticed the node is gone (the actor then dies unstarted): try again, with a short
        backoff, until ``replace_timeout_seconds``."""

        deadline = time.monotonic() + self._replace_timeout
        attempt = 0
        try:
            while not self._closed:
                try:
                    await self._spawn(size)
                    return
                except _lost_errors(self._ray) as error:
                    attempt += 1
                    self._replacement_retries += 1
                    if time.monotonic() >= deadline:
                        self._replacement_failures.append(f"{type(error).__name__}: {error}")
                        return
                    await asyncio.sleep(min(0.25 * attempt, 2.0))
        except Exception as error:  # noqa: BLE001 - recorded in stats; the pool runs smaller
            self._replacement_failures.append(f"{type(error).__name__}: {error}")
        finally:
            async with self._changed:
                self._changed.notify_all()

    def _kill(self, handle: Any) -> None:
        try:
            self._ray.kill(handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    def _lost_result(self, request: dict[str, Any], member: _Member, cause: str, slot: int | None = None) -> RunResult:
        placement = {
            "node_id": member.identity.get("node_id"),
            "actor_id": member.identity.get("actor_id"),
            "runtime_slot": slot,
        }
        error = {
            "code": Code.NODE_LOST,
            "stage": "invoke",
            "message": "the Ray actor or node running the invocation was lost",
            "retryable": False,
            "metadata": {"cause": cause, **placement},
        }
        return RunResult.from_mapping(
            failed_result(request, error, identity=member.identity, placement=placement)
        )

    async def _call(self, member: _Member, request: dict[str, Any], session: int | None) -> RunResult:
        """One invocation on ``member``; actor death or a stuck actor become failed results."""

        try:
            mapping = await asyncio.wait_for(
                member.handle.invoke.remote(request, session), timeout=self._deadline
            )
        except _lost_errors(self._ray) as error:
            member.invocations += 1
            member.failures += 1
            self._lose(member, type(error).__name__)
            return self._lost_result(request, member, type(error).__name__, session)
        except asyncio.TimeoutError:
            member.invocations += 1
            member.failures += 1
            self._lose(member, "deadline")
            result = self._lost_result(request, member, "deadline", session)
            error = dict(result["error"])
            error.update(code=Code.TIMEOUT, message="the actor did not answer within the driver's deadline")
            return RunResult.from_mapping({**result.to_dict(), "error": error})
        except self._ray.exceptions.RayTaskError as error:
            raise error.as_instanceof_cause() from None
        member.invocations += 1
        if mapping.get("status") != "succeeded":
            member.failures += 1
        return RunResult.from_mapping(mapping)

    # -- public API ------------------------------------------------------------------

    async def invoke(self, request: RunRequest | Mapping[str, Any], affinity: str | None = None) -> RunResult:
        """Run one turn on any idle runtime (of the node or actor named by ``affinity``).

        Waits while every runtime is busy. A failed turn, a timed-out turn
        (``runtime.timeout_seconds``) and a lost actor or node (code ``node_lost``) are
        failed ``RunResult``s, not exceptions. Raises ``FabricStateError`` (``pool_closed``)
        after ``close()``, ``FabricConfigError`` for a bad request or an unknown affinity.
        """

        payload = _request_mapping(request)
        member = await self._take(affinity, reserve=False)
        if member is None:
            raise _error(Code.NODE_LOST, "the node or actor named by affinity was lost", affinity=affinity)
        try:
            return await self._call(member, payload, None)
        finally:
            await self._give_back(member, reserved=False)

    async def map(
        self,
        requests: Iterable[Any] | AsyncIterable[Any],
        *,
        max_in_flight: int | None = None,
    ) -> AsyncIterator[RunResult]:
        """Invoke every request, yielding results in request order.

        At most ``max_in_flight`` (default: the pool's capacity) invocations run at once;
        the next request is taken from ``requests`` only when one finishes and the caller
        has consumed the results ahead of it (backpressure: a slow consumer stops the
        intake). Closing the iterator early cancels the invocations still waiting.
        """

        limit = max_in_flight if max_in_flight is not None else max(1, self.capacity)
        if not isinstance(limit, int) or limit < 1:
            raise FabricConfigError(
                "max_in_flight must be a positive integer", stage="config", code=Code.INVALID_ARGUMENT
            )
        pending: collections.deque[asyncio.Task[RunResult]] = collections.deque()
        intake = _aiter(requests)
        try:
            while True:
                # Make room first: the next request is pulled only when it can be submitted.
                while len(pending) >= limit:
                    yield await pending.popleft()
                try:
                    request = await intake.__anext__()
                except StopAsyncIteration:
                    break
                pending.append(asyncio.ensure_future(self.invoke(request)))
            while pending:
                yield await pending.popleft()
        finally:
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    def batch(
        self,
        items: Iterable[Any] | AsyncIterable[Any],
        *,
        concurrency: int | None = None,
        isolation: str = "fresh",
        attempts: int = 1,
        retry_failed: bool = False,
        grace_seconds: float = DEFAULT_GRACE_SECONDS,
        output: str | os.PathLike[str] | None = None,
    ) -> PoolBatch:
        """Run a data set of items over the pool, in the core batch's formats (items, ids,
        ``BatchLine`` output lines, resume from ``output``, ``BatchSummary``):
        ``async for done in pool.batch(items, attempts=3, output="results.jsonl")``.

        ``concurrency`` defaults to the pool's capacity; ``isolation="fresh"`` restarts the
        runtime of each item, ``"reuse"`` keeps runtimes between items (a runtime keeps its
        conversation). An item whose actor or node was lost, or whose runtime failed, is
        retried on another runtime while ``attempts`` allow. The per-turn bound is the
        config's ``runtime.timeout_seconds``.
        """

        self._check_open()
        if isolation not in ("fresh", "reuse"):
            raise FabricConfigError(
                "isolation must be `fresh` or `reuse`", stage="config", code=Code.BATCH_SETTINGS_INVALID,
                details={"path": "isolation"},
            )
        for name, value in (("concurrency", concurrency), ("attempts", attempts)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise FabricConfigError(
                    f"{name} must be a positive integer", stage="config", code=Code.BATCH_SETTINGS_INVALID,
                    details={"path": name},
                )
        settings = {
            "concurrency": concurrency,
            "isolation": isolation,
            "attempts": attempts,
            "retry_failed": bool(retry_failed),
            "grace_seconds": float(grace_seconds),
            "output": output,
        }
        return PoolBatch(self, items, settings)

    def session(self, affinity: str | None = None) -> PoolSession:
        """A sticky runtime for a multi-turn conversation (reserved at the first turn)."""

        self._check_open()
        return PoolSession(self, affinity)

    async def stats(self) -> dict[str, Any]:
        """Per-node and per-actor runtimes, invocations, failures and resource snapshots,
        plus the actors lost and replaced (a JSON-able dict)."""

        actors = []
        nodes: dict[str, dict[str, Any]] = {}
        for member in list(self._members):
            entry: dict[str, Any] = {
                "node_id": member.identity.get("node_id"),
                "actor_id": member.identity.get("actor_id"),
                "alive": member.alive,
                "runtimes": member.size,
                "in_flight": member.in_flight,
                "reserved": member.reserved,
                "invocations": member.invocations,
                "failures": member.failures,
            }
            if member.alive:
                try:
                    detail = await asyncio.wait_for(member.handle.stats.remote(), timeout=30)
                    entry["runtime_slots"] = detail["runtime_slots"]
                except (asyncio.TimeoutError, *_lost_errors(self._ray)) as error:
                    entry["stats_error"] = type(error).__name__
            actors.append(entry)
            node = nodes.setdefault(
                str(entry["node_id"]), {"actors": 0, "runtimes": 0, "invocations": 0, "failures": 0}
            )
            node["invocations"] += member.invocations
            node["failures"] += member.failures
            if member.alive:
                node["actors"] += 1
                node["runtimes"] += member.size
        return {
            "capacity": self.capacity,
            "invocations": sum(member.invocations for member in self._members),
            "failures": sum(member.failures for member in self._members),
            "peak_in_flight": self._peak_in_flight,
            "nodes": nodes,
            "actors": actors,
            "lost": [dict(item) for item in self._lost],
            "replacements_pending": len(self._replacements),
            "replacement_retries": self._replacement_retries,
            "replacement_failures": list(self._replacement_failures),
            "closed": self._closed,
        }

    async def wait_replaced(self, timeout: float = 120.0) -> None:
        """Wait until every replacement of a lost actor has started (or failed)."""

        if self._replacements:
            await asyncio.wait_for(asyncio.gather(*self._replacements, return_exceptions=True), timeout)

    async def close(self) -> None:
        """Stop every runtime and end every actor; idempotent. Replacements under way are
        awaited and closed too, so no adapter process is left on any node."""

        if self._closed and not self._members and not self._replacements:
            return
        async with self._changed:
            self._closed = True
            self._changed.notify_all()
        while self._replacements:
            await asyncio.gather(*list(self._replacements), return_exceptions=True)
        members, self._members = self._members, []
        await asyncio.gather(*(self._close_member(member) for member in members))
        self._members = [member for member in members if not member.alive]

    async def _close_member(self, member: _Member) -> None:
        for session in list(member.sessions):
            session._closed = True
        if member.alive:
            try:
                await asyncio.wait_for(member.handle.close.remote(), timeout=60)
            except (asyncio.TimeoutError, *_lost_errors(self._ray)):
                pass  # the actor is killed below; its adapter hosts end with it
            member.alive = False
        self._kill(member.handle)

    async def __aenter__(self) -> RuntimePool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class PoolSession:
    """One runtime of the pool kept for a conversation (``pool.session()``).

    The runtime is reserved (and restarted fresh) at the first ``invoke``; ``close()``
    returns it. If its actor or node is lost, the turn in flight is a failed ``RunResult``
    with code ``node_lost`` and every later ``invoke`` raises ``FabricRuntimeError``
    (``node_lost``): the conversation is never moved to another runtime silently.
    """

    def __init__(self, pool: RuntimePool, affinity: str | None) -> None:
        self._pool = pool
        self._affinity = affinity
        self._member: _Member | None = None
        self._slot: int | None = None
        self._lost = False
        self._closed = False
        self._busy = False

    @property
    def lost(self) -> bool:
        """Whether the session's actor or node was lost."""

        return self._lost

    @property
    def node_id(self) -> str | None:
        return None if self._member is None else self._member.identity.get("node_id")

    @property
    def actor_id(self) -> str | None:
        return None if self._member is None else self._member.identity.get("actor_id")

    def _mark_lost(self) -> None:
        self._lost = True

    async def _reserve(self) -> None:
        while self._member is None:
            member = await self._pool._take(self._affinity, reserve=True)
            if member is None:
                raise _error(Code.NODE_LOST, "the node or actor named by affinity was lost", affinity=self._affinity)
            try:
                self._slot = await member.handle.reserve.remote()
            except _lost_errors(self._pool._ray) as error:
                # Nothing of the conversation existed yet: take another runtime.
                self._pool._lose(member, type(error).__name__)
                await self._pool._give_back(member, reserved=True)
                continue
            except self._pool._ray.exceptions.RayTaskError as error:
                # The fresh runtime did not start: the slot went back to the actor's pool.
                await self._pool._give_back(member, reserved=True)
                raise error.as_instanceof_cause() from None
            self._member = member
            member.sessions.add(self)

    async def invoke(self, request: RunRequest | Mapping[str, Any]) -> RunResult:
        """Run the conversation's next turn on its runtime (one turn at a time)."""

        payload = _request_mapping(request)
        if self._closed:
            raise FabricStateError("the session was closed", stage="invoke", code=Code.POOL_CLOSED)
        if self._lost:
            raise _error(
                Code.NODE_LOST,
                "the session's actor or node was lost; its conversation cannot continue",
                node_id=self.node_id,
                actor_id=self.actor_id,
            )
        if self._busy:
            raise FabricStateError("the session is already running a turn", stage="invoke", code=Code.RUNTIME_BUSY)
        self._busy = True
        try:
            await self._reserve()
            assert self._member is not None
            return await self._pool._call(self._member, payload, self._slot)
        finally:
            self._busy = False

    async def close(self) -> None:
        """Return the runtime to the pool (fresh); idempotent."""

        if self._closed:
            return
        self._closed = True
        member, self._member = self._member, None
        if member is None:
            return
        member.sessions.discard(self)
        self._member = member  # keep node/actor ids readable
        try:
            if member.alive and not self._lost:
                await member.handle.release.remote(self._slot)
        except _lost_errors(self._pool._ray) as error:
            self._pool._lose(member, type(error).__name__)
        finally:
            await self._pool._give_back(member, reserved=True)

    async def __aenter__(self) -> PoolSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _aiter(items: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


__all__ = ["DEFAULT_DEADLINE_MARGIN_SECONDS", "METADATA_KEY", "PoolSession", "RuntimePool"]
