"""Run multi-turn episodes on a Ray runtime pool and stream one NeMo Gym observation document
per episode to a JSON Lines file as each episode finishes:
``{"task_id", "rollout_id", "ng_agent_observations": bundle, "trajectory": record}``.

Each episode is a pool session (one runtime for the whole conversation, started fresh); its
results are mapped with ``fabric_core.gym.observations`` in the driver. Without ``--address``
a one-node Ray instance is started on 127.0.0.1 for the run; with it, the pool's actors go to
the cluster's nodes (``--resources`` picks them, e.g. '{"fabric": 1}').

    python examples/ray/ray_rollouts.py --episodes 8 --out ray-rollouts.jsonl
    python examples/ray/ray_rollouts.py --address 10.0.0.5:6379 --runtimes 64 --per-actor 8
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
from pathlib import Path
from typing import Any

import ray

from fabric_core import FabricConfig, RunRequest, gym
from fabric_core.ray import RuntimePool

HERE = Path(__file__).resolve().parent


async def episode(pool: RuntimePool, task_id: str, index: int, turns: int) -> dict[str, Any]:
    async with pool.session() as session:
        results = [await session.invoke(RunRequest(input=f"episode {index}, turn {turn}")) for turn in range(turns)]
    rollout_id = f"rollout-{index}"
    observed = gym.observations(results, task_id=task_id, rollout_id=rollout_id)
    node = results[0].metadata["ray"]["node_id"]
    return {"task_id": task_id, "rollout_id": rollout_id, "node_id": node, **observed}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", help="a running Ray cluster (host:port); default: start one here")
    parser.add_argument("--node-ip-address", help="this machine's address in the cluster (Ray's _node_ip_address)")
    parser.add_argument("--resources", type=json.loads, default=None, help="Ray resources of each actor (JSON)")
    parser.add_argument("--runtimes", type=int, default=4)
    parser.add_argument("--per-actor", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--task-id", default="scripted-task")
    parser.add_argument("--out", type=Path, default=Path("ray-rollouts.jsonl"))
    args = parser.parse_args()

    if args.address:
        ray.init(address=args.address, _node_ip_address=args.node_ip_address, log_to_driver=False)
    else:
        ray.init(
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            num_cpus=2,
            object_store_memory=100 * 1024 * 1024,
            log_to_driver=False,
        )
    config = FabricConfig.from_mapping(json.loads((HERE / "fabric.json").read_text()))
    try:
        async with await RuntimePool.create(
            config,
            runtimes=args.runtimes,
            per_actor=args.per_actor,
            resources=args.resources,
            base_dir=str(HERE),
        ) as pool:
            episodes = [episode(pool, args.task_id, index, args.turns) for index in range(args.episodes)]
            per_node: collections.Counter[str] = collections.Counter()
            with args.out.open("w") as handle:
                # Results stream back: each document is written as soon as its episode ends.
                for finished in asyncio.as_completed(episodes):
                    document = await finished
                    per_node[document.pop("node_id")] += 1
                    handle.write(json.dumps(document) + "\n")
            stats = await pool.stats()
            print(
                f"{args.episodes} episodes, {stats['invocations']} invocations, "
                f"{stats['failures']} failures, {len(per_node)} node(s), written to {args.out}"
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
