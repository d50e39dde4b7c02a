"""``fabric_core.ray`` on a real Ray cluster: a head and two worker nodes started with
``ray start`` on 127.0.0.2-4 of this machine (``raycluster.LocalRayCluster``), stopped by pid.

Marked ``ray`` (deselect with ``-m 'not ray'``). Ray is the ``ray`` extra
(``pip install 'fabric-core[ray]'``; scripts/setup.sh installs it): a missing Ray fails
these tests (``tests/fabric_dependency.py``; ``FABRIC_ALLOW_SKIPS=1`` skips instead). The fault test (a worker node killed
mid-run) comes last: it leaves the cluster with one worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from fcsupport import REPO, binding_paths, scripted_config

pytestmark = pytest.mark.ray

#: Upper bound of one test's asyncio body (the module's cluster takes ~15 s to start).
DEADLINE_SECONDS = 150


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        message = "ray is not installed (pip install 'fabric-core[ray]'; scripts/setup.sh)"
        pytest.skip(message)
    return ray


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, DEADLINE_SECONDS))


@pytest.fixture(scope="module")
def cluster(scripted_built):
    ray = _ray()
    from raycluster import HEAD_IP, LocalRayCluster

    env = {"PYTHONPATH": os.pathsep.join([*binding_paths(), os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)}
    if os.environ.get("FABRIC_CORE_LIB"):
        env["FABRIC_CORE_LIB"] = os.environ["FABRIC_CORE_LIB"]
    with LocalRayCluster(workers=2, env=env) as started:
        ray.init(address=started.address, _node_ip_address=HEAD_IP, log_to_driver=False)
        try:
            started.wait_nodes(ray, 3)
            started.node_ids = {
                node["NodeManagerAddress"]: node["NodeID"] for node in ray.nodes() if node.get("Alive")
            }
            yield started
        finally:
            ray.shutdown()
    assert started.processes() == [], "the cluster left processes behind"


def _config(timeout_seconds: float = 60):
    config = scripted_config(["echo: {input}"])
    config.runtime.timeout_seconds = timeout_seconds
    return config


def _request(text: str, **scripted: Any):
    from fabric_core import RunRequest

    return RunRequest(input=text, context={"scripted": scripted} if scripted else {})


def _placement(result: Any) -> dict[str, Any]:
    return dict(result.metadata["ray"])


def test_missing_ray_names_the_extra(monkeypatch) -> None:
    from fabric_core.ray import RuntimePool

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"fabric-core\[ray\]"):
        asyncio.run(RuntimePool.create(scripted_config(), runtimes=1))


def test_failed_result_is_a_run_result_the_schema_accepts() -> None:
    """The result of a turn that produced none (a lost actor, a raised runtime) has the
    shape the Rust ``RunResult`` has: every required member, only members the generated
    model knows, and the model's defaults for the rest (no Ray needed)."""

    import jsonschema

    from fabric_core import _generated
    from fabric_core.ray._host import METADATA_KEY, failed_result

    schema = json.loads((REPO / "schemas" / "sdk" / "run-result.schema.json").read_text())
    error = {"code": "node_lost", "stage": "invoke", "message": "lost", "retryable": False, "metadata": {}}
    identity = {"adapter_id": "a", "adapter_kind": "process", "agent_name": "agent", "harness": "a", "pid": 1}
    placement = {"node_id": "n", "actor_id": "x", "runtime_slot": 0}
    result = failed_result(
        {"request_id": "r-1", "input": "hi"}, error, identity=identity, placement=placement, runtime_id="runtime-1"
    )
    jsonschema.validate(result, schema)
    assert set(schema["required"]) <= set(result) <= _generated.RunResult._fields
    assert result == {
        "status": "failed",
        "request_id": "r-1",
        "runtime_id": "runtime-1",
        "invocation_id": "",
        "adapter_id": "a",
        "adapter_kind": "process",
        "agent_name": "agent",
        "harness": "a",
        "output": None,
        "events": [],
        "telemetry": [],
        "error": error,
        "metadata": {METADATA_KEY: placement},
        "artifacts": {"artifacts": []},
        "usage": None,
    }


def test_invoke_spreads_over_workers_and_reports_placement(cluster) -> None:
    from fabric_core.ray import RuntimePool

    workers = {cluster.node_ids["127.0.0.3"], cluster.node_ids["127.0.0.4"]}

    async def main() -> None:
        async with await RuntimePool.create(_config(), runtimes=4, per_actor=2, resources={"fabric": 1}) as pool:
            result = await pool.invoke(_request("hello"))
            assert result.status == "succeeded" and result.output["response"] == "echo: hello"
            placement = _placement(result)
            assert placement["node_id"] in workers and placement["actor_id"]
            # Affinity pins a turn to a node.
            for node in workers:
                pinned = await pool.invoke(_request("pinned"), affinity=node)
                assert _placement(pinned)["node_id"] == node
            stats = await pool.stats()
            assert set(stats["nodes"]) == workers, "SPREAD puts one actor on each worker"
            assert all(node["runtimes"] == 2 for node in stats["nodes"].values())
            assert stats["invocations"] == 3 and stats["failures"] == 0
            slots = [slot for actor in stats["actors"] for slot in actor["runtime_slots"]]
            assert len(slots) == 4 and all(slot["resource_snapshot"]["process_count"] >= 1 for slot in slots)
            from fabric_core import FabricConfigError

            with pytest.raises(FabricConfigError) as error:
                await pool.invoke(_request("x"), affinity="no-such-node")
            assert error.value.code == "invalid_argument"

    run(main())


def test_map_is_ordered_bounded_and_applies_backpressure(cluster) -> None:
    from fabric_core.ray import RuntimePool

    async def main() -> None:
        async with await RuntimePool.create(_config(), runtimes=4, per_actor=2, resources={"fabric": 1}) as pool:
            pulled = 0

            def requests(count: int):
                nonlocal pulled
                for index in range(count):
                    pulled += 1
                    yield _request(f"n{index}")

            limit, consumed, outputs = 3, 0, []
            async for result in pool.map(requests(40), max_in_flight=limit):
                consumed += 1
                assert pulled - consumed < limit, "map pulled requests the caller has not made room for"
                outputs.append(result.output["response"])
            assert outputs == [f"echo: n{index}" for index in range(40)]
            assert (await pool.stats())["peak_in_flight"] <= limit

            # Leaving early cancels what is still waiting; the pool stays usable.
            pulled = 0
            stream = pool.map(requests(1000), max_in_flight=4)
            first = [await stream.__anext__() for _ in range(5)]
            await stream.aclose()
            assert [item.output["response"] for item in first] == [f"echo: n{i}" for i in range(5)]
            assert pulled <= 5 + 4
            again = [result async for result in pool.map([_request("after")] * 8)]
            assert [item.status for item in again] == ["succeeded"] * 8

    run(main())


def test_session_keeps_one_fresh_runtime(cluster) -> None:
    from fabric_core.ray import RuntimePool

    node = cluster.node_ids["127.0.0.4"]

    async def main() -> None:
        async with await RuntimePool.create(_config(), runtimes=2, per_actor=2, resources={"fabric": 1}) as pool:
            # Warm the pooled runtimes so a session that reused one would see history.
            await asyncio.gather(*(pool.invoke(_request("warm")) for _ in range(4)))
            async with pool.session() as session:
                first = await session.invoke(_request("one"))
                second = await session.invoke(_request("two"))
                assert (first.output["turn"], second.output["turn"]) == (1, 2)
                assert first.runtime_id == second.runtime_id
                assert _placement(first) == _placement(second)
                # The session's runtime is out of the pool: pooled turns use the other one.
                pooled = await pool.invoke(_request("pooled"))
                assert pooled.runtime_id != first.runtime_id
            # Returned fresh: a new session starts a new conversation.
            async with pool.session() as again:
                assert (await again.invoke(_request("x"))).output["turn"] == 1
            stats = await pool.stats()
            assert stats["actors"][0]["reserved"] == 0

        async with await RuntimePool.create(
            _config(), runtimes=2, per_actor=1, resources={"fabric": 1}
        ) as pool:
            async with pool.session(affinity=node) as pinned:
                result = await pinned.invoke(_request("here"))
                assert _placement(result)["node_id"] == node == pinned.node_id

    run(main())


def test_failed_and_hung_turns_are_results_and_the_runtime_is_replaced(cluster) -> None:
    from fabric_core.ray import RuntimePool

    async def main() -> None:
        async with await RuntimePool.create(_config(timeout_seconds=1), runtimes=1, resources={"fabric": 1}) as pool:
            failed = await pool.invoke(_request("no", fail={"code": "scripted_no", "message": "no"}))
            assert failed.status == "failed" and failed.error["code"] == "scripted_no"
            started = time.monotonic()
            hung = await pool.invoke(_request("hang", sleep_ms=60000))
            assert time.monotonic() - started < 20
            assert hung.status == "failed" and hung.error["code"] == "timeout"
            assert _placement(hung)["actor_id"]
            after = await pool.invoke(_request("after"))
            assert after.status == "succeeded" and after.runtime_id != hung.runtime_id
            stats = await pool.stats()
            assert stats["failures"] == 2
            assert stats["actors"][0]["runtime_slots"][0]["replaced"] == 1

            # A session's failed runtime is not swapped under the conversation.
            async with pool.session() as session:
                assert (await session.invoke(_request("one"))).output["turn"] == 1
                timed_out = await session.invoke(_request("hang", sleep_ms=60000))
                assert timed_out.error["code"] == "timeout"
                later = await session.invoke(_request("two"))
                assert later.status == "failed" and later.error["code"] == "runtime_stopped"
            back = await pool.invoke(_request("back"))
            assert back.status == "succeeded" and back.output["turn"] == 1

    run(main())


def test_close_is_idempotent_and_leaves_no_adapter(cluster) -> None:
    from fabric_core import FabricStateError
    from fabric_core.ray import RuntimePool

    async def main() -> None:
        pool = await RuntimePool.create(_config(), runtimes=3, per_actor=2, resources={"fabric": 1})
        assert len(cluster.adapter_processes()) == 3
        session = pool.session()
        await session.invoke(_request("a"))
        await pool.close()
        await pool.close()
        with pytest.raises(FabricStateError) as error:
            await pool.invoke(_request("late"))
        assert error.value.code == "pool_closed"
        with pytest.raises(FabricStateError):
            await session.invoke(_request("late"))
        await session.close()

    run(main())
    _wait_for(lambda: cluster.adapter_processes() == [], "adapter processes left after close()")


def test_example_streams_gym_documents(cluster, tmp_path) -> None:
    """examples/ray/ray_rollouts.py on this cluster: one Gym document per episode."""

    from raycluster import HEAD_IP

    out = tmp_path / "rollouts.jsonl"
    command = [
        sys.executable,
        str(REPO / "examples" / "ray" / "ray_rollouts.py"),
        "--address", cluster.address,
        "--node-ip-address", HEAD_IP,
        "--resources", '{"fabric": 1}',
        "--episodes", "6",
        "--turns", "3",
        "--out", str(out),
    ]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "6 episodes, 18 invocations, 0 failures, 2 node(s)" in done.stdout
    documents = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(item["rollout_id"] for item in documents) == [f"rollout-{i}" for i in range(6)]
    for document in documents:
        trajectory = document["trajectory"]
        assert trajectory["task_id"] == "scripted-task" and len(trajectory["invocations"]) == 3
        assert document["ng_agent_observations"]["records"]


def test_worker_killed_mid_run_pool_recovers(cluster) -> None:
    """16 runtimes over both workers, 1,000 invocations, worker w1 killed mid-run by pid."""

    from fabric_core import FabricRuntimeError
    from fabric_core.ray import RuntimePool

    w1, w2 = cluster.node_ids["127.0.0.3"], cluster.node_ids["127.0.0.4"]
    seen_pids: set[int] = set()

    async def main() -> None:
        pool = await RuntimePool.create(_config(), runtimes=16, per_actor=4, resources={"fabric": 1})
        try:
            stats = await pool.stats()
            assert {node: item["runtimes"] for node, item in stats["nodes"].items()} == {w1: 8, w2: 8}
            seen_pids.update(_host_pids(stats))
            session = pool.session(affinity=w1)
            assert (await session.invoke(_request("before"))).status == "succeeded"

            requests = [_request(f"r{index}") for index in range(1000)]
            results = []
            async for result in pool.map(requests, max_in_flight=32):
                results.append(result)
                if len(results) == 250:
                    killed = await asyncio.to_thread(cluster.kill_node, "w1")
                    assert killed, "no process of w1 was found to kill"
            assert [item.request_id for item in results] == [item.request_id for item in requests]
            lost = [item for item in results if item.status != "succeeded"]
            assert lost, "no invocation was in flight on the killed node"
            assert all(item.error["code"] == "node_lost" for item in lost)
            assert all(_placement(item)["node_id"] == w1 for item in lost)
            assert sum(item.status == "succeeded" for item in results) >= 1000 - 16

            # The session pinned to w1 reports the loss instead of moving.
            assert session.lost
            with pytest.raises(FabricRuntimeError) as error:
                await session.invoke(_request("after"))
            assert error.value.code == "node_lost"
            await session.close()

            await pool.wait_replaced(timeout=90)
            stats = await pool.stats()
            assert stats["capacity"] == 16 and stats["replacement_failures"] == [], json.dumps({k: v for k, v in stats.items() if k != "actors"}) + json.dumps([{k: v for k, v in a.items() if k != "runtime_slots"} for a in stats["actors"]])
            assert {item["node_id"] for item in stats["lost"]} == {w1} and len(stats["lost"]) == 2
            live = [actor for actor in stats["actors"] if actor["alive"]]
            assert {actor["node_id"] for actor in live} == {w2}
            seen_pids.update(_host_pids(stats))
            after = [result async for result in pool.map([_request("again")] * 64)]
            assert all(item.status == "succeeded" and _placement(item)["node_id"] == w2 for item in after)
        finally:
            await pool.close()

    started = time.monotonic()
    run(main())
    assert cluster.processes("w1") == []
    _wait_for(lambda: cluster.adapter_processes() == [], "adapter processes left after close()")
    assert [pid for pid in seen_pids if _alive(pid)] == []
    assert time.monotonic() - started < DEADLINE_SECONDS


def _host_pids(stats: dict[str, Any]) -> set[int]:
    return {
        pid
        for actor in stats["actors"]
        for slot in actor.get("runtime_slots", [])
        for pid in slot["host_pids"]
    }


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(condition: Any, message: str, timeout: float = 15.0) -> None:
    """Adapter hosts are reaped asynchronously after their actor is killed: poll to a deadline."""

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(message)
        time.sleep(0.1)

