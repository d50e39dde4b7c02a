"""Iteration limits: the adapter-side hook ``on_iteration_limit_reached(*, invocation_id)``
(``fabric_core.adapter_observer``, and the scripted adapter's turn limit) records
``stop_reason="max_iterations"`` once on that invocation; the core carries it to
``RunResult.metadata.stop_reason`` and the Gym export to that invocation only."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import pytest

from fabric_core import Fabric, gym
from fabric_core.adapter_observer import MAX_ITERATIONS, STOP_REASON_EXTENSION, StopObserver
from fcsupport import scripted_config


def test_scripted_turn_limit_reaches_the_gym_export() -> None:
    async def main() -> list:
        config = scripted_config(["fine"])
        config.runtime.max_turns = 2
        async with await Fabric().start_runtime(config) as runtime:
            before = await runtime.invoke(input="first")
            limited = await runtime.invoke(input={"message": "long", "scripted": {"turns": 3}})
            after = await runtime.invoke(input="after")
        return [before, limited, after]

    before, limited, after = asyncio.run(main())
    assert limited.status == "failed" and limited.error.code == "max_turns_exceeded"
    assert limited.metadata["stop_reason"] == MAX_ITERATIONS
    assert "stop_reason" not in before.metadata and "stop_reason" not in after.metadata

    out = gym.observations([before, limited, after], task_id="task", rollout_id="rollout")
    reasons = {record["invocation_id"]: record.get("stop_reason")
               for record in out["ng_agent_observations"]["records"] if record["kind"] == "agent_invocation"}
    assert reasons == {before.invocation_id: None, limited.invocation_id: MAX_ITERATIONS,
                       after.invocation_id: None}
    assert [i.get("stop_reason") for i in out["trajectory"]["invocations"]] == [None, MAX_ITERATIONS, None]


def test_observer_records_once_on_that_invocation() -> None:
    observer = StopObserver()
    threads = [threading.Thread(target=observer.on_iteration_limit_reached, kwargs={"invocation_id": "child"})
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert observer.stop_reason("child") == MAX_ITERATIONS
    assert observer.stop_reason("root") is None

    root = {"status": "succeeded", "output": "ok"}
    assert observer.finish("root", root) is root
    child = observer.finish("child", {"status": "succeeded", "output": "ok", "extensions": {"x": 1}})
    assert child["extensions"] == {"x": 1, STOP_REASON_EXTENSION: MAX_ITERATIONS}
    # Taken: a later result of the same invocation id carries nothing.
    assert observer.finish("child", {"status": "succeeded", "output": None}) == {"status": "succeeded", "output": None}

    model = SimpleNamespace(extensions={})  # upstream's AgentRunResult has an extensions dict
    observer.on_iteration_limit_reached(invocation_id="i")
    assert observer.finish("i", model).extensions == {STOP_REASON_EXTENSION: MAX_ITERATIONS}
    with pytest.raises(TypeError):
        observer.on_iteration_limit_reached("i")  # type: ignore[misc]  # keyword-only, as Gym's hook
    with pytest.raises(ValueError):
        observer.on_iteration_limit_reached(invocation_id="")
