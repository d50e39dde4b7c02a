"""``RuntimeHost``: the Ray actor that owns one ``Fabric`` and a bounded set of runtimes on
its node.

Only JSON-able values cross Ray: the config and requests arrive as mappings, results and
stats leave as dicts. Native handles never leave the actor's process. The class is plain
Python; ``fabric_core.ray._pool`` makes it a Ray actor (``ray.remote``) so importing this
module does not need Ray.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from fabric_core._codes import Code
from fabric_core.client import Fabric
from fabric_core.errors import FabricError
from fabric_core.models import FabricConfig, RunRequest
from fabric_core.runtime import Runtime, RuntimeStatus
from fabric_core.types import RunResult

#: Where a result's placement is recorded in ``RunResult.metadata``.
METADATA_KEY = "ray"


@dataclass
class _Slot:
    """One runtime position of the actor: the runtime in it changes when it is replaced."""

    index: int
    runtime: Runtime | None = None
    reserved: bool = False
    busy: bool = False
    invocations: int = 0
    failures: int = 0
    replaced: int = 0
    host_pids: list[int] = field(default_factory=list)


def failed_result(
    request: dict[str, Any],
    error: dict[str, Any],
    *,
    identity: dict[str, Any],
    placement: dict[str, Any],
    runtime_id: str = "",
) -> dict[str, Any]:
    """A failed ``RunResult`` mapping for an invocation that produced no result of its own
    (the actor or node died, the driver's deadline passed, the runtime raised).

    Built through the ``RunResult`` model, like the success path's ``to_dict()``: only what
    this helper knows is given; events, telemetry, artifacts and usage are the model's
    defaults, and optional members the Rust type gains stay absent (``None`` through the
    model). ``test_ray`` validates the result against the schema generated from the Rust type,
    so a new required member fails there instead of being missed here."""

    return RunResult.from_mapping(
        {
            "status": "failed",
            "request_id": str(request.get("request_id") or ""),
            "runtime_id": runtime_id,
            "invocation_id": "",
            "adapter_id": identity.get("adapter_id"),
            "adapter_kind": identity.get("adapter_kind") or "",
            "agent_name": identity.get("agent_name") or "",
            "harness": identity.get("harness") or "",
            "output": None,
            "error": error,
            "metadata": {METADATA_KEY: dict(placement)},
        }
    ).to_mapping()


def error_info(error: FabricError) -> dict[str, Any]:
    """The ErrorInfo mapping of an SDK exception."""

    return {
        "code": error.code or "internal",
        "stage": error.stage or "invoke",
        "message": error.message,
        "retryable": error.retryable,
        "metadata": dict(error.details),
    }


class RuntimeHost:
    """Owns one ``Fabric`` and ``runtimes`` runtimes of one config on this node.

    Pooled invocations take any idle runtime; a reserved runtime (``reserve``) serves one
    session until ``release``, which replaces it with a fresh runtime so no conversation
    leaks into the pool. A runtime that ends up failed (a timed-out turn, a dead adapter
    host) is stopped and replaced by a new one on this node.
    """

    def __init__(self, config: dict[str, Any], runtimes: int, options: dict[str, Any]) -> None:
        self._config = FabricConfig.from_mapping(config)
        self._options = dict(options)
        self._fabric = Fabric()
        self._slots = [_Slot(index) for index in range(runtimes)]
        self._idle: asyncio.Condition | None = None
        self._closed = False
        self._identity: dict[str, Any] = {}

    # -- lifecycle -------------------------------------------------------------------

    def _condition(self) -> asyncio.Condition:
        if self._idle is None:
            self._idle = asyncio.Condition()
        return self._idle

    async def _start_runtime(self, slot: _Slot) -> None:
        runtime = await self._fabric.start_runtime(self._config, **self._options)
        slot.runtime = runtime
        slot.host_pids.append(int(runtime.handle.get("host_pid") or 0))

    async def start(self) -> dict[str, Any]:
        """Start every runtime; return this actor's identity (node, actor, adapter)."""

        import ray

        context = ray.get_runtime_context()
        try:
            await asyncio.gather(*(self._start_runtime(slot) for slot in self._slots))
        except BaseException:
            await self.close()
            raise
        handle = self._slots[0].runtime.handle if self._slots else {}
        self._identity = {
            "node_id": context.get_node_id(),
            "actor_id": context.get_actor_id(),
            "pid": os.getpid(),
            "runtimes": len(self._slots),
            "adapter_id": handle.get("adapter_id"),
            "adapter_kind": handle.get("adapter_kind"),
            "agent_name": handle.get("agent_name"),
            "harness": handle.get("harness"),
        }
        return dict(self._identity)

    async def _retire(self, slot: _Slot) -> None:
        """Stop the slot's runtime (best effort: it may be failed) and leave the slot empty."""

        old, slot.runtime = slot.runtime, None
        if old is not None:
            try:
                await old.stop()
            except FabricError:
                pass  # the core ended and reaped its host; the stop problem is not ours to report

    async def _replace(self, slot: _Slot) -> None:
        """Stop the slot's runtime and start a fresh one (raises the start error)."""

        await self._retire(slot)
        if not self._closed:
            slot.replaced += 1
            await self._start_runtime(slot)

    async def close(self) -> dict[str, Any]:
        """Stop every runtime (idempotent); returns how many were stopped."""

        self._closed = True
        stopped = 0
        for slot in self._slots:
            runtime, slot.runtime = slot.runtime, None
            if runtime is None:
                continue
            try:
                await runtime.stop()
            except FabricError:
                pass  # stopped anyway: the core always ends and reaps the host
            stopped += 1
        return {"stopped": stopped}

    # -- invocations -----------------------------------------------------------------

    def _placement(self, slot: _Slot) -> dict[str, Any]:
        return {
            "node_id": self._identity.get("node_id"),
            "actor_id": self._identity.get("actor_id"),
            "runtime_slot": slot.index,
        }

    async def _acquire(self) -> _Slot:
        """An idle pooled slot (its runtime may be missing: a replacement that failed to
        start is started again by the next turn that takes the slot)."""

        condition = self._condition()
        async with condition:
            while True:
                for slot in self._slots:
                    if not slot.busy and not slot.reserved:
                        slot.busy = True
                        return slot
                await condition.wait()

    async def _release_slot(self, slot: _Slot) -> None:
        condition = self._condition()
        async with condition:
            slot.busy = False
            condition.notify_all()

    async def invoke(self, request: dict[str, Any], session: int | None = None) -> dict[str, Any]:
        """Run one turn on an idle runtime (or the session's reserved one); always returns a
        RunResult mapping with this actor's placement in ``metadata["ray"]``."""

        if session is None:
            slot = await self._acquire()
        else:
            slot = self._slots[session]
            if not slot.reserved or slot.busy:
                raise RuntimeError(f"runtime slot {session} is not reserved or busy")
            slot.busy = True
        try:
            return await self._invoke_on(slot, request)
        finally:
            await self._release_slot(slot)

    async def _invoke_on(self, slot: _Slot, request: dict[str, Any]) -> dict[str, Any]:
        placement = self._placement(slot)
        slot.invocations += 1
        if slot.runtime is None and not slot.reserved and not self._closed:
            try:
                await self._start_runtime(slot)
            except FabricError as error:
                slot.failures += 1
                return failed_result(request, error_info(error), identity=self._identity, placement=placement)
        runtime = slot.runtime
        if runtime is None:
            slot.failures += 1
            error = {
                "code": Code.RUNTIME_STOPPED,
                "stage": "invoke",
                "message": "the session's runtime failed in an earlier turn; the session cannot continue",
                "retryable": False,
                "metadata": {},
            }
            return failed_result(request, error, identity=self._identity, placement=placement)
        try:
            result = (await runtime.invoke(request=RunRequest.from_mapping(request))).to_dict()
        except FabricError as error:
            result = failed_result(
                request,
                error_info(error),
                identity=self._identity,
                placement=placement,
                runtime_id=runtime.runtime_id,
            )
        metadata = dict(result.get("metadata") or {})
        metadata[METADATA_KEY] = placement
        result["metadata"] = metadata
        if result.get("status") != "succeeded":
            slot.failures += 1
        if runtime.status is not RuntimeStatus.ACTIVE:
            # A failed runtime is stopped. A pooled slot gets a fresh one (now, or at its next
            # turn if this start fails); a session's is not swapped silently: its later turns
            # fail with `runtime_stopped` until the session ends.
            await self._retire(slot)
            if not slot.reserved and not self._closed:
                slot.replaced += 1
                try:
                    await self._start_runtime(slot)
                except FabricError:
                    pass  # the slot stays empty; its next turn starts a runtime or reports why not
        return result

    # -- sessions --------------------------------------------------------------------

    async def reserve(self) -> int:
        """Take an idle runtime out of the pool for one session; it is restarted first so
        the session begins with a fresh conversation. Returns the slot index."""

        slot = await self._acquire()
        slot.reserved = True
        try:
            await self._replace(slot)
        except BaseException:
            slot.reserved = False  # back to the pool (empty: its next turn starts a runtime)
            raise
        finally:
            await self._release_slot(slot)
        return slot.index

    async def release(self, session: int) -> None:
        """End a session: its runtime is replaced by a fresh one back in the pool."""

        slot = self._slots[session]
        if not slot.reserved:
            return
        condition = self._condition()
        try:
            await self._retire(slot)
            if not self._closed:
                slot.replaced += 1
                await self._start_runtime(slot)
        except FabricError:
            pass  # the slot stays empty; its next pooled turn starts a runtime or reports why not
        finally:
            async with condition:
                slot.reserved = False
                condition.notify_all()

    # -- observation -----------------------------------------------------------------

    async def stats(self) -> dict[str, Any]:
        """Invocations, failures, replacements and a resource snapshot of every runtime."""

        runtimes = []
        for slot in self._slots:
            entry: dict[str, Any] = {
                "slot": slot.index,
                "reserved": slot.reserved,
                "busy": slot.busy,
                "invocations": slot.invocations,
                "failures": slot.failures,
                "replaced": slot.replaced,
                "host_pids": list(slot.host_pids),
                "runtime_id": None,
                "resource_snapshot": None,
            }
            runtime = slot.runtime
            if runtime is not None:
                entry["runtime_id"] = runtime.runtime_id
                try:
                    entry["resource_snapshot"] = (await runtime.resource_snapshot()).to_dict()
                except FabricError as error:
                    entry["resource_snapshot_error"] = error.code
            runtimes.append(entry)
        return {**self._identity, "runtime_slots": runtimes}

    def ping(self) -> str:
        return str(self._identity.get("actor_id") or "")
