"""Issue 15 item 7: the full RunResult mapping of our Python binding, key by key, against
upstream ``nemo_fabric`` 0.5.0's on the same adapter (python-echo) and config: a success,
an adapter failure with usage, and the CLI's JSON. Values that are ids, times, pids and
paths are compared by type; every remaining difference is listed in ``KNOWN`` and
documented in docs/hosting.md ("Result shape against upstream").
"""

from __future__ import annotations

import json
import os
import subprocess


from fcsupport import ECHO_DIR, REPO, interpreter

SCRIPT = r'''
import asyncio, json, sys
from MODULE import Fabric, FabricConfig, RunRequest

config = FabricConfig.from_mapping(json.loads(sys.argv[1]))


async def main():
    fabric = Fabric()
    ok = await fabric.run(config, input="hello")
    failed = await fabric.run(config, request=RunRequest(input="bad", context={"scripted": {
        "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
        "fail": {"code": "echo_failure", "message": "failed on purpose"}}}))
    print(json.dumps({"ok": ok.to_mapping(), "failed": failed.to_mapping()}, default=str))


asyncio.run(main())
'''

# Volatile leaves: compared by JSON type only.
VOLATILE = {"runtime_id", "invocation_id", "request_id", "event_id", "timestamp_millis",
            "host_pid", "fabric_home", "fabric_invocation", "host_command", "environment_id"}

# Paths whose difference is deliberate (docs/hosting.md).
KNOWN = {
    # Ours: one event per lifecycle step with its own time and richer metadata (status, ...).
    "events",
    # Ours only: per-invocation system stats and the runtime resource snapshot (stats.md).
    "system_stats",
    "resource_snapshot",
    # Ours only: selected software evidence (0.6 spec; 0.5.0 predates it; provenance.md).
    "execution",
}


def run(python: str, module: str) -> dict:
    config = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    config["discovery"] = {"local_paths": [str(ECHO_DIR)]}
    env = dict(os.environ, ADAPTER_PYTHON=python)
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run([python, "-c", SCRIPT.replace("MODULE", module), json.dumps(config)],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{module}:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def differences(upstream, ours, path="") -> list[str]:
    key = path.rsplit(".", 1)[-1]
    if path in KNOWN:
        return []
    if key in VOLATILE:
        return [] if type(upstream) is type(ours) else [f"{path}: type {type(upstream).__name__} != {type(ours).__name__}"]
    if isinstance(upstream, dict) and isinstance(ours, dict):
        out = []
        for name in sorted(set(upstream) | set(ours)):
            sub = f"{path}.{name}" if path else name
            if sub in KNOWN:
                continue
            if name not in ours:
                out.append(f"{sub}: missing from ours")
            elif name not in upstream:
                out.append(f"{sub}: only in ours")
            else:
                out += differences(upstream[name], ours[name], sub)
        return out
    if upstream != ours:
        return [f"{path}: upstream={upstream!r} ours={ours!r}"]
    return []


def test_run_result_mapping_matches_upstream_key_by_key(scripted_built) -> None:
    python = interpreter()
    upstream = run(python, "nemo_fabric")
    ours = run(python, "fabric_core")
    for case in ("ok", "failed"):
        found = differences(upstream[case], ours[case], "")
        print(case, json.dumps(found, indent=1))
        assert found == [], case
    # The shapes issue 15 names, explicitly.
    assert ours["ok"]["artifacts"] == {"artifacts": [], "root": None}
    assert ours["ok"]["telemetry"] == []
    assert ours["failed"]["error"]["metadata"] == upstream["failed"]["error"]["metadata"]
    if upstream["failed"]["usage"] is not None:
        assert ours["failed"]["usage"]["metadata"] == {}
