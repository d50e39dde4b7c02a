"""``fabric_core.gym.join_model_call_observations`` (the core's ``fabric_gym_join_model_calls``)
compared with nemo-gym's own ``join_model_call_observations`` on the same inputs: the
shared rollout with every outcome (tests/fixtures/gym-join.json) and 300 generated ones, run by the Gym
interpreter (``FABRIC_GYM_PYTHON``, nemo-gym 0.7.0 from scripts/setup.sh)."""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

import pytest

from fabric_core import FabricConfigError, gym
from fcsupport import REPO
from test_gym import gym_python

FIXTURE = json.loads((REPO / "tests" / "fixtures" / "gym-join.json").read_text())

POLICY = {"type": "responses_api_models", "name": "policy"}
JUDGE = {"type": "responses_api_models", "name": "judge"}

# Reads [[bundle, calls, ours], ...] and prints, per case, nemo-gym's joined bundle and ours
# as Gym's model reads it (None members left out on both sides). The captured calls are
# given to Gym as objects with ModelCallRecord's join members: the module of
# ModelCallRecord imports the Anthropic and OpenAI SDKs, which .venv-gym leaves out
# (scripts/setup.sh), and the join reads only those members.
GYM_JOIN = r'''
import json, sys
from types import SimpleNamespace
from nemo_gym.config_types import ModelServerRef
from nemo_gym.rollout_observability import AgentObservationBundle, join_model_call_observations

def record(call):
    members = {key: call.get(key) for key in ("model_call_id", "response_id", "client_session_id")}
    model_ref = call.get("model_ref")
    return SimpleNamespace(call_index=call["call_index"], **members,
                           model_ref=ModelServerRef.model_validate(model_ref) if model_ref else None)

out = []
for bundle, calls, ours in json.load(sys.stdin):
    joined = join_model_call_observations(AgentObservationBundle.model_validate(bundle),
                                          [record(call) for call in calls])
    ours = AgentObservationBundle.model_validate(ours)
    out.append([joined.model_dump(mode="json", exclude_none=True), ours.model_dump(mode="json", exclude_none=True)])
print(json.dumps(out))
'''


def invocation(invocation_id: str, calls: list[dict[str, Any]], parent: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "agent_invocation", "invocation_id": invocation_id,
                              "status": "completed", "model_calls": calls, "conversation": []}
    if parent:
        record["parent_invocation_id"] = parent
    return record


def every_outcome() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The shared rollout of tests/fixtures/gym-join.json (every outcome of the join; the
    TypeScript and Go tests join it too)."""

    return FIXTURE["bundle"], FIXTURE["calls"]


def generated(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A rollout over small id pools, so references collide, repeat and miss."""

    call_ids = ["mc-0", "mc-1", "mc-2", "mc-3"]
    responses = ["resp-0", "resp-1", "resp-2"]
    servers = [POLICY, JUDGE]

    def maybe(values: list[Any]) -> Any:
        return rng.choice([*values, None])

    def reference() -> dict[str, Any]:
        if rng.random() < 0.6:
            ref: dict[str, Any] = {"model_call_id": rng.choice(call_ids)}
            for key, pool in (("model_ref", servers), ("response_id", responses)):
                if rng.random() < 0.3:
                    ref[key] = rng.choice(pool)
            return ref
        return {"model_ref": rng.choice(servers), "response_id": rng.choice(responses)}

    calls = []
    for index in range(rng.randint(0, 6)):
        call: dict[str, Any] = {"call_index": index}
        for key, value in (("model_call_id", maybe(call_ids)), ("response_id", maybe(responses)),
                           ("model_ref", maybe(servers)), ("client_session_id", maybe(["root", "sub", "other"]))):
            if value is not None:
                call[key] = value
        calls.append(call)
    records: list[dict[str, Any]] = [
        invocation("root", [reference() for _ in range(rng.randint(0, 3))]),
        invocation("sub", [reference() for _ in range(rng.randint(0, 2))], parent="root"),
    ]
    for _ in range(rng.randint(0, 2)):
        compaction: dict[str, Any] = {"kind": "context_compaction", "invocation_id": rng.choice(["root", "sub"]),
                                      "outcome": "completed", "model_calls": [reference() for _ in range(rng.randint(0, 2))]}
        for key in ("before_model_call", "after_model_call"):
            if rng.random() < 0.5:
                compaction[key] = reference()
        records.append(compaction)
    rng.shuffle(records)
    gaps = rng.sample([
        {"code": "model_call_reference_conflict", "invocation_id": "sub", "detail": "mc-0"},
        {"code": "model_call_ownership_unavailable", "detail": "capture:mc-9:call_index=9"},
        {"code": "model_call_ownership_unavailable", "invocation_id": "root", "detail": "model_calls:mc-1"},
        {"code": "tool_calls_unobserved", "invocation_id": "root"},
    ], rng.randint(0, 2))
    return {"source": "nemo-fabric", "records": records, "gaps": gaps}, calls


def test_join_matches_nemo_gym() -> None:
    python = gym_python()
    rng = random.Random(34)
    inputs = [every_outcome(), *(generated(rng) for _ in range(300))]
    cases = [[bundle, calls, gym.join_model_call_observations(bundle, calls)] for bundle, calls in inputs]
    completed = subprocess.run([python, "-c", GYM_JOIN], input=json.dumps(cases),
                               capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr[-4000:]
    compared = json.loads(completed.stdout)
    assert len(compared) == len(cases)
    for index, (theirs, ours) in enumerate(compared):
        assert ours == theirs, f"case {index}: {json.dumps(cases[index][:2])}"
    # The shared fixture's expected bundle is ours, and Gym's join agrees with it.
    assert cases[0][2] == FIXTURE["joined"]
    codes = {gap["code"] for gap in compared[0][1]["gaps"]}
    assert codes >= {"model_call_reference_ambiguous", "model_call_reference_conflict",
                     "model_call_reference_unmatched", "model_call_ownership_unavailable"}


def test_join_accepts_models_with_model_dump_and_refuses_a_bad_bundle() -> None:
    class Record:  # stands in for a pydantic ModelCallRecord
        def model_dump(self, **_: Any) -> dict[str, Any]:
            return {"model_call_id": "mc-1", "client_session_id": "root", "call_index": 0}

    bundle = {"source": "s", "records": [invocation("root", [])]}
    joined = gym.join_model_call_observations(bundle, [Record()])
    assert joined["records"][0]["model_calls"] == [{"model_call_id": "mc-1"}]
    assert joined["gaps"] == []
    assert bundle["records"][0]["model_calls"] == []

    twice = {"source": "s", "records": [invocation("a", []), invocation("a", [])]}
    with pytest.raises(FabricConfigError) as raised:
        gym.join_model_call_observations(twice, [])
    assert raised.value.code == "gym_invocation_id_duplicate"
    assert raised.value.details["path"] == "bundle.records[1].invocation_id"
