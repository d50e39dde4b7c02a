"""``fabric_core.gym.join_assistant_message_calls`` (the core's
``fabric_gym_join_assistant_messages``) on the shared rollout of
tests/fixtures/gym-join-assistant.json, which has one rule of docs/gym.md per turn or call.
No released nemo-gym has the function (test_gym.py checks 0.7.0 lacks it), so the expected
output is the fixture's, checked rule by rule here and in the C ABI, TypeScript and Go tests."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fabric_core import FabricConfigError, gym
from fcsupport import REPO

FIXTURE = json.loads((REPO / "tests" / "fixtures" / "gym-join-assistant.json").read_text())


class Dumped:
    """An object with pydantic's ``model_dump`` (as Gym's own models are)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def model_dump(self, *, mode: str, exclude_none: bool) -> dict[str, Any]:
        assert (mode, exclude_none) == ("json", True)
        return copy.deepcopy(self.document)


def turn_calls(trajectory: dict[str, Any], invocation: str, turn_no: int) -> list[str]:
    (turn,) = [t for t in trajectory["turns"] if t["invocation_id"] == invocation and t["turn_no"] == turn_no]
    return [reference["model_call_id"] for reference in turn["model_calls"]]


def gap_set(document: dict[str, Any]) -> set[tuple[str, str | None, str | None]]:
    return {(g["code"], g.get("invocation_id"), g.get("detail")) for g in document["gaps"]}


def test_the_shared_rollout_joins_rule_by_rule() -> None:
    bundle, trajectory = gym.join_assistant_message_calls(FIXTURE["bundle"], FIXTURE["trajectory"], FIXTURE["calls"])
    assert {"bundle": bundle, "trajectory": trajectory} == FIXTURE["joined"]
    assert turn_calls(trajectory, "root", 1) == ["mc-retry-1", "mc-retry-2"]
    assert turn_calls(trajectory, "root", 2) == ["mc-one"]
    assert turn_calls(trajectory, "sub", 1) == ["mc-sub"]
    compaction = bundle["records"][2]
    assert [reference["model_call_id"] for reference in compaction["model_calls"]] == ["mc-summary"]
    assert "mc-title" in [reference["model_call_id"] for reference in bundle["records"][1]["model_calls"]]
    assert turn_calls(trajectory, "root", 3) == ["mc-reported"]
    assert {
        ("model_call_reference_ambiguous", "root", "source_message_id:msg-twice"),
        ("message_model_ref_mismatch", "root", "source_message_id:msg-judged:mc-judged"),
        ("model_call_reference_conflict", "root", "source_message_id:msg-sub-owned:mc-x"),
        ("model_call_reference_unmatched", "root", "source_message_id:msg-lost"),
        ("assistant_message_undeclared", "root", "client_assistant_message_id:msg-undeclared"),
    } <= gap_set(bundle)
    assert trajectory["gaps"] == bundle["gaps"]


def test_ownership_is_resolved_first_as_the_model_call_join_does() -> None:
    bundle, _ = gym.join_assistant_message_calls(FIXTURE["bundle"], None, FIXTURE["calls"])
    owned = gym.join_model_call_observations(FIXTURE["bundle"], FIXTURE["calls"])
    invocations = [r for r in bundle["records"] if r["kind"] == "agent_invocation"]
    assert invocations == [r for r in owned["records"] if r["kind"] == "agent_invocation"]
    # Without a trajectory no turn declares a message, so nothing is "undeclared".
    assert all(g["code"] != "assistant_message_undeclared" for g in bundle["gaps"])


def test_models_with_model_dump_are_accepted_and_a_second_join_changes_nothing() -> None:
    first = gym.join_assistant_message_calls(
        Dumped(FIXTURE["bundle"]), Dumped(FIXTURE["trajectory"]), [Dumped(call) for call in FIXTURE["calls"]]
    )
    assert first == (FIXTURE["joined"]["bundle"], FIXTURE["joined"]["trajectory"])
    assert gym.join_assistant_message_calls(*first, FIXTURE["calls"]) == first


def test_a_malformed_trajectory_is_a_config_error_under_trajectory() -> None:
    trajectory = copy.deepcopy(FIXTURE["trajectory"])
    trajectory["turns"][1]["turn_no"] = 1
    with pytest.raises(FabricConfigError) as raised:
        gym.join_assistant_message_calls(FIXTURE["bundle"], trajectory, FIXTURE["calls"])
    assert raised.value.code == "gym_turn_invalid"
    assert raised.value.details["path"].startswith("trajectory.turns[1]")
