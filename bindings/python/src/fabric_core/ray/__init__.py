"""Scale out on Ray: runtimes of one config spread over the nodes of a Ray cluster.

An optional extra (``pip install 'fabric-core[ray]'``). Importing this module does not
import Ray; creating a pool does, and raises ``ImportError`` naming the extra when Ray is
missing::

    import ray
    from fabric_core.ray import RuntimePool

    ray.init(address="auto")
    async with await RuntimePool.create(config, runtimes=16, per_actor=4) as pool:
        result = await pool.invoke(RunRequest(input="hello"))
        async for result in pool.map(requests, max_in_flight=32):
            ...
        async with pool.session() as episode:        # one runtime for a conversation
            await episode.invoke(RunRequest(input="turn 1"))
        async for done in pool.batch(items, attempts=3, output="results.jsonl"):
            ...                                      # the `fabric batch` formats
        print(await pool.stats())

Each Ray actor (``RuntimeHost``) owns one ``Fabric`` and ``per_actor`` runtimes on its node;
only JSON-able dicts cross Ray (the config, requests, results, stats). Results carry
``metadata["ray"] = {"node_id", "actor_id", "runtime_slot"}``. An actor or node lost
mid-invocation yields a failed ``RunResult`` with code ``node_lost``; its runtimes are
started again on the nodes still alive. See ``docs/scale-out.md``.
"""

from fabric_core.ray._batch import PoolBatch
from fabric_core.ray._host import METADATA_KEY, RuntimeHost
from fabric_core.ray._pool import DEFAULT_DEADLINE_MARGIN_SECONDS, PoolSession, RuntimePool

__all__ = [
    "DEFAULT_DEADLINE_MARGIN_SECONDS",
    "METADATA_KEY",
    "PoolBatch",
    "PoolSession",
    "RuntimeHost",
    "RuntimePool",
]
