"""Run N episodes of the scripted adapter with system stats and Relay ATOF streaming on, and
write one NeMo Gym observation document per episode (JSON Lines):
``{"task_id", "rollout_id", "ng_agent_observations": bundle, "trajectory": record}``.

Each episode starts a runtime, streams ``--turns`` invocations (collecting their ATOF
records), stops the runtime and maps the results with ``fabric_core.gym.observations``.

    python examples/gym/gym_rollouts.py --episodes 2 --out gym-rollouts.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from fabric_core import Fabric, FabricConfig, gym

HERE = Path(__file__).resolve().parent


async def episode(fabric: Fabric, config: FabricConfig, task_id: str, index: int, turns: int) -> dict[str, Any]:
    results: list[Any] = []
    records: list[dict[str, Any]] = []
    async with await fabric.start_runtime(config, base_dir=HERE, streaming=True) as runtime:
        for turn in range(turns):
            stream = runtime.invoke_stream(input=f"episode {index}, turn {turn}")
            records.extend([record async for record in stream])
            results.append(await stream.result())
    rollout_id = f"rollout-{index}"
    observed = gym.observations(results, atof=records, task_id=task_id, rollout_id=rollout_id)
    return {"task_id": task_id, "rollout_id": rollout_id, **observed}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--task-id", default="scripted-task")
    parser.add_argument("--out", type=Path, default=Path("gym-rollouts.jsonl"))
    args = parser.parse_args()
    config = FabricConfig.from_mapping(json.loads((HERE / "fabric.json").read_text()))
    fabric = Fabric()
    with args.out.open("w") as handle:
        for index in range(args.episodes):
            document = await episode(fabric, config, args.task_id, index, args.turns)
            handle.write(json.dumps(document) + "\n")
            bundle = document[gym.NG_AGENT_OBSERVATIONS_KEY]
            kinds = [record["kind"] for record in bundle["records"]]
            print(
                f"{document['rollout_id']}: {kinds.count('agent_invocation')} invocations, "
                f"{kinds.count('tool_call')} tool calls, {kinds.count('sandbox')} sandbox, "
                f"{len(bundle['gaps'])} gaps"
            )


if __name__ == "__main__":
    asyncio.run(main())
