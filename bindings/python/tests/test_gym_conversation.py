"""``AgentInvocation.conversation`` from the Relay trajectory: a real mini-swe-agent run with
Relay ATIF export (the stub model of test_real_harnesses.py) exported to Gym has the
invocation's conversation (validated item by item with nemo-gym's own
``NeMoGymResponseInputItem``) instead of a ``conversation_unavailable`` gap."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fabric_core import gym
from test_gym import gym_python
from test_real_harnesses import (  # noqa: F401  (pytest fixtures: python, workdir)
    MINI_SWE_AGENT,
    StubModel,
    _installed,
    config_for,
    enable_relay,
    mini_swe_agent_reply,
    python,
    run_sdk,
    workdir,
)

GYM_ITEMS = r'''
import json, sys
from pydantic import TypeAdapter
from nemo_gym.openai_utils import NeMoGymResponseInputItem
items = TypeAdapter(list[NeMoGymResponseInputItem]).validate_python(json.load(sys.stdin))
print(json.dumps([type(item).__name__ for item in items]))
'''


def test_a_relay_run_exports_its_conversation(python: str, workdir: Path) -> None:  # noqa: F811
    _installed(python, "mini-swe-agent", "minisweagent")
    _installed(python, "mini-swe-agent", "nemo_relay")
    with StubModel(mini_swe_agent_reply) as stub:
        config = config_for(MINI_SWE_AGENT, stub.base_url)
        enable_relay(workdir)(config)
        result = run_sdk(python, "fabric_core", config, "Say that you are done.", workdir)
    assert [a["kind"] for a in result["artifacts"]["artifacts"]].count("atif") == 1

    out = gym.observations([result], task_id="task", rollout_id="rollout")
    invocation = out["ng_agent_observations"]["records"][0]
    conversation = invocation["conversation"]
    assert conversation[0]["role"] == "user" and "Say that you are done." in conversation[0]["content"]
    calls = [item for item in conversation if item["type"] == "function_call"]
    assert calls and calls[0]["name"] == "bash" and json.loads(calls[0]["arguments"])["command"]
    assert {"type": "message", "role": "assistant", "content": "Submitting."} in conversation
    gaps = [gap for gap in out["ng_agent_observations"]["gaps"] if gap["code"] == "conversation_unavailable"]
    assert gaps == []
    assert out["trajectory"]["invocations"][0]["conversation"] == conversation

    completed = subprocess.run([gym_python(), "-c", GYM_ITEMS], input=json.dumps(conversation),
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert "NeMoGymResponseFunctionToolCall" in json.loads(completed.stdout)
