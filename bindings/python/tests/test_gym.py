"""NeMo Gym rollout observations through the binding (``fabric_core.gym.observations``):
the mapping, its errors, the example rollout loop (examples/gym/gym_rollouts.py with two
episodes), and validation of our output against our generated schema and against nemo-gym's
own pydantic models (``FABRIC_GYM_PYTHON``: an interpreter with nemo-gym 0.7.0, made by
scripts/setup.sh in .venv-gym; a missing one fails the test, tests/fabric_dependency.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fabric_core import FabricConfigError, gym
from fcsupport import REPO, binding_paths

SCHEMA = json.loads((REPO / "schemas" / "sdk" / "gym-observations.schema.json").read_text())


def result(invocation: str, status: str = "succeeded", code: str | None = None, **extra: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "agent_name": "agent", "harness": "scripted", "adapter_kind": "process",
        "runtime_id": "runtime-1", "invocation_id": invocation, "request_id": f"request-{invocation}",
        "status": status, "output": {"response": f"answer {invocation}"},
        "events": [{"event_id": "e", "timestamp_millis": 1_700_000_000_000, "kind": "invocation_start", "message": ""}],
    }
    if code:
        value["error"] = {"stage": "invoke", "code": code, "message": "m"}
    value.update(extra)
    return value


def scope(uuid: str, parent: str | None, category: str, phase: str, second: int, **extra: Any) -> dict[str, Any]:
    record = {"atof_version": "0.1", "kind": "scope", "scope_category": phase, "uuid": uuid,
              "parent_uuid": parent, "category": category, "name": f"{category}.{uuid}",
              "timestamp": f"2026-01-01T00:00:{second:02d}Z"}
    record.update(extra)
    return record


def stats() -> dict[str, Any]:
    snapshot = {"runtime_id": "runtime-1", "started_at": "2026-01-01T00:00:00.000Z",
                "observed_at": "2026-01-01T00:00:30.000Z", "resident_memory_bytes": 1 << 20,
                "process_count": 1, "cpu_time_seconds": 4.25}
    nc = {"status": "not_collected"}
    cgroup_snapshot = {"path": "/x", "observed_at": "2026-01-01T00:00:30.000Z", **{key: nc for key in (
        "cpu_limit_cores", "cpu_usage_seconds", "cpu_throttled_periods", "cpu_throttled_seconds",
        "memory_max_bytes", "memory_high_bytes", "memory_swap_max_bytes", "memory_current_bytes",
        "memory_swap_current_bytes", "memory_oom_kills", "cpu_pressure_some_seconds",
        "cpu_pressure_full_seconds", "memory_pressure_some_seconds", "memory_pressure_full_seconds",
        "io_pressure_some_seconds", "io_pressure_full_seconds")},
        "memory_peak_bytes": {"status": "available", "value": 256 << 20}}
    observation = {"status": "available", "snapshot": cgroup_snapshot}
    return {"elapsed_seconds": 1.0, "before": {"status": "available", "snapshot": snapshot},
            "after": {"status": "available", "snapshot": snapshot},
            "cgroup": {"before": observation, "after": observation, "deltas": {
                "cpu_usage_seconds": nc, "cpu_throttled_periods": nc, "cpu_throttled_seconds": nc,
                "memory_oom_kills": nc}}}


def every_kind() -> dict[str, Any]:
    """A rollout whose output has every record kind, a subagent, model references of both
    forms and gaps."""

    root = scope("root", None, "agent", "start", 0, metadata={"nemo_fabric_request_id": "request-a"})
    atof = [
        root,
        scope("spawn", "root", "tool", "start", 1, category_profile={"tool_call_id": "call-task"}),
        scope("sub", "spawn", "agent", "start", 2),
        scope("llm1", "sub", "llm", "start", 3, metadata={"model_call_id": "mc-1"}),
        scope("llm1", "sub", "llm", "end", 4),
        scope("sub", "spawn", "agent", "end", 5),
        scope("spawn", "root", "tool", "end", 6, data={"summary": "done"}),
        scope("llm2", "root", "llm", "end", 7, metadata={
            "model_ref": {"type": "responses_api_models", "name": "policy"}, "response_id": "resp-2"}),
        scope("llm3", "root", "llm", "end", 8),
        {"kind": "mark", "uuid": "m", "parent_uuid": "root", "name": "context_compaction",
         "timestamp": "2026-01-01T00:00:09Z",
         "data": {"trigger": "tokens", "tokens_before": 900, "tokens_after": 100, "outcome": "completed"}},
        scope("root", None, "agent", "end", 10),
    ]
    results = [result("a", system_stats=stats()), result("b", "failed", "timeout")]
    return gym.observations(results, atof=atof, task_id="task", rollout_id="rollout-1")


def test_observations_are_plain_dicts_with_every_kind() -> None:
    out = every_kind()
    assert type(out) is dict and set(out) == {"ng_agent_observations", "trajectory"}
    jsonschema.validate(out, SCHEMA)
    bundle = out[gym.NG_AGENT_OBSERVATIONS_KEY]
    kinds = sorted({record["kind"] for record in bundle["records"]})
    assert kinds == ["agent_invocation", "context_compaction", "sandbox", "tool_call"]
    invocations = {r["invocation_id"]: r for r in bundle["records"] if r["kind"] == "agent_invocation"}
    assert invocations["sub"]["parent_invocation_id"] == "a"
    assert invocations["sub"]["spawned_by_tool_call_id"] == "call-task"
    assert invocations["sub"]["model_calls"] == [{"model_call_id": "mc-1"}]
    assert invocations["b"]["status"] == "failed" and invocations["b"]["error_type"] == "timeout"
    sandbox = next(r for r in bundle["records"] if r["kind"] == "sandbox")
    assert sandbox["cpu_time_s"] == 4.25 and sandbox["peak_memory_mib"] == 256.0
    codes = {gap["code"] for gap in bundle["gaps"]}
    assert {"model_call_ids_unreported", "tool_calls_unobserved", "conversation_unavailable"} <= codes
    assert out["trajectory"]["turns"][0]["step_count"] == 2


def test_results_may_be_models_and_errors_are_config_errors() -> None:
    from fabric_core import RunResult

    model = RunResult.from_mapping(result("a"))
    out = gym.observations([model], task_id="t", rollout_id="r", source="my-agent-server")
    assert out["ng_agent_observations"]["source"] == "my-agent-server"
    with pytest.raises(FabricConfigError) as raised:
        gym.observations([result("a"), result("a")], task_id="t", rollout_id="r")
    assert raised.value.code == "gym_invocation_id_duplicate"
    assert raised.value.details["path"] == "results[1].invocation_id"
    with pytest.raises(FabricConfigError) as raised:
        gym.observations([], task_id="", rollout_id="r")
    assert raised.value.code == "gym_id_blank"


def run_example(tmp_path: Path) -> list[dict[str, Any]]:
    """Runs the example with two episodes; its artifact root (examples/gym/out) is removed
    afterwards unless it was there before."""

    artifacts = REPO / "examples" / "gym" / "out"
    existed = artifacts.exists()
    try:
        return _run_example(tmp_path)
    finally:
        if not existed:
            shutil.rmtree(artifacts, ignore_errors=True)


def _run_example(tmp_path: Path) -> list[dict[str, Any]]:
    out = tmp_path / "rollouts.jsonl"
    env = dict(os.environ)
    paths = binding_paths() + [env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    completed = subprocess.run(
        [sys.executable, str(REPO / "examples" / "gym" / "gym_rollouts.py"), "--episodes", "2",
         "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "rollout-0: 2 invocations, 4 tool calls, 1 sandbox, 2 gaps",
        "rollout-1: 2 invocations, 4 tool calls, 1 sandbox, 2 gaps",
    ], completed.stdout
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_the_example_writes_one_bundle_per_episode(tmp_path: Path) -> None:
    example = (REPO / "examples" / "gym" / "gym_rollouts.py").read_text()
    episode = example[example.index("async def episode"):example.index("async def main")].strip()
    assert episode in (REPO / "docs" / "gym.md").read_text(), "docs/gym.md must show episode() verbatim"
    documents = run_example(tmp_path)
    assert [d["rollout_id"] for d in documents] == ["rollout-0", "rollout-1"]
    for document in documents:
        jsonschema.validate({k: document[k] for k in ("ng_agent_observations", "trajectory")}, SCHEMA)
        bundle = document["ng_agent_observations"]
        tools = [r for r in bundle["records"] if r["kind"] == "tool_call"]
        assert all(t["completed_at"] >= t["started_at"] and t["status"] == "completed" for t in tools)
        invocations = [r for r in bundle["records"] if r["kind"] == "agent_invocation"]
        assert all(len(i["model_calls"]) == 1 for i in invocations)
        assert {g["code"] for g in bundle["gaps"]} == {"conversation_unavailable"}
        sandbox = next(r for r in bundle["records"] if r["kind"] == "sandbox")
        assert sandbox["role"] == "agent" and sandbox["cpu_time_s"] >= 0
        turns = document["trajectory"]["turns"]
        assert [t["step_count"] for t in turns] == [1, 1]


GYM_CHECK = r'''
import json, sys
import nemo_gym
from importlib.metadata import version
from nemo_gym import rollout_observability as ro

documents = json.load(sys.stdin)
# Every class and function of the module's current documentation; the released package may lack some.
documented = ["AgentEpisode", "AgentInvocation", "AgentObservationBundle", "ContextCompactionObservation",
              "ModelCallRef", "ObservationGap", "ObservationModel", "SandboxObservation", "ToolCallObservation",
              "TrajectoryModelCall", "TrajectoryRecord", "TrajectoryResponseMetadata", "TrajectoryTokenStats",
              "TrajectoryToolCall", "TrajectoryTurn", "join_assistant_message_calls",
              "join_model_call_observations", "NG_AGENT_OBSERVATIONS_KEY"]
missing = [name for name in documented if not hasattr(ro, name)]
checked = set()
by_kind = {"agent_invocation": ro.AgentInvocation, "tool_call": ro.ToolCallObservation,
           "context_compaction": ro.ContextCompactionObservation, "sandbox": ro.SandboxObservation}
def check(cls, value):
    cls.model_validate(value)
    checked.add(cls.__name__)
for document in documents:
    bundle, trajectory = document["ng_agent_observations"], document["trajectory"]
    check(ro.AgentObservationBundle, bundle)
    check(ro.TrajectoryRecord, trajectory)
    for record in bundle["records"]:
        check(by_kind[record["kind"]], record)
        for ref in record.get("model_calls", []):
            check(ro.ModelCallRef, ref)
    for gap in bundle["gaps"]:
        check(ro.ObservationGap, gap)
    for turn in trajectory["turns"]:
        check(ro.TrajectoryTurn, turn)
    for call in trajectory["model_calls"]:
        check(ro.TrajectoryModelCall, call)
        check(ro.TrajectoryTokenStats, call["token_stats"])
        check(ro.TrajectoryResponseMetadata, call["response_metadata"])
    for call in trajectory["tool_calls"]:
        check(ro.TrajectoryToolCall, call)
    assert ro.AgentEpisode  # a dataclass of a NeMoGymResponse and a bundle: nothing of ours to check
# A broken identity is refused by Gym as by us.
bad = dict(documents[0]["ng_agent_observations"])
bad["records"] = bad["records"] + [r for r in bad["records"] if r["kind"] == "agent_invocation"][:1]
try:
    ro.AgentObservationBundle.model_validate(bad)
    refused = False
except Exception:
    refused = True
# 0.7.0 has no constant for the key; its rollout collection reads the literal.
import importlib.util
collection = open(importlib.util.find_spec("nemo_gym.rollout_collection").origin).read()
key = getattr(ro, "NG_AGENT_OBSERVATIONS_KEY", None)
print(json.dumps({"version": version("nemo-gym"), "key": key, "key_read": '"ng_agent_observations"' in collection,
                  "missing": missing, "checked": sorted(checked), "duplicate_refused": refused}))
'''


def gym_python() -> str:
    python = os.environ.get("FABRIC_GYM_PYTHON")
    if not python:
        pytest.skip("FABRIC_GYM_PYTHON is not set (an interpreter with nemo-gym 0.7.0: scripts/setup.sh)")
    return python


def test_nemo_gym_models_accept_our_output(tmp_path: Path) -> None:
    python = gym_python()
    documents = [every_kind(), *run_example(tmp_path)]
    completed = subprocess.run([python, "-c", GYM_CHECK], input=json.dumps(documents),
                               capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(completed.stdout)
    assert report["version"] == "0.7.0"
    # What nemo-gym 0.7.0 lacks of the documented module (docs/gym.md says so too): the key
    # constant (its rollout collection reads the literal key) and one join function.
    assert report["missing"] == ["join_assistant_message_calls", "NG_AGENT_OBSERVATIONS_KEY"]
    assert report["key"] is None and report["key_read"]
    assert report["checked"] == sorted([
        "AgentInvocation", "AgentObservationBundle", "ContextCompactionObservation", "ModelCallRef",
        "ObservationGap", "SandboxObservation", "ToolCallObservation", "TrajectoryModelCall",
        "TrajectoryRecord", "TrajectoryResponseMetadata", "TrajectoryTokenStats", "TrajectoryToolCall",
        "TrajectoryTurn",
    ])
    assert report["duplicate_refused"]
