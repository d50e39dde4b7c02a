"""``fabric adapters check --model-stub``: upstream's harness adapters from PyPI pass the kit
with their model calls answered by the core's stub model server (no model, no network).

- mini-swe-agent (litellm, tool calling): the stub script answers a ``bash`` tool call that
  prints mini-swe-agent's completion marker, so each invocation submits and succeeds.
- deepagents (LangChain ``ChatOpenAI``): the stub's default text reply ends each turn.

Every check must pass or be skipped with a reason; the lifecycle checks must pass (they need
the model), including ``lifecycle.target_failure``: with the stub answering an HTTP 401 the
adapter reports ``failed`` with an error. ``lifecycle.malformed_target_output`` (a body that is
no model answer) passes the same way, or — mini-swe-agent's litellm retries it with backoff
until the kit's 20 s deadline — is skipped saying so. The stop deadline is raised to 10 s: these Python hosts tear down heavy libraries
at exit, over 2 s on a busy 2-core machine (upstream's own SDK's ``stop()`` takes as long).
The adapters and the ``fabric`` command are located as ``test_real_harnesses`` and
``test_atof_stream`` locate them (a missing one fails, naming what to install or build).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from test_atof_stream import fabric_binary
from test_real_harnesses import (  # noqa: F401  (the `python` fixture)
    API_KEY_ENV,
    DEEPAGENTS,
    FINAL_TEXT,
    MINI_SWE_AGENT,
    _installed,
    config_for,
    python,
)

LIFECYCLE = ("lifecycle.start", "lifecycle.invoke", "lifecycle.repeat", "lifecycle.isolation",
             "lifecycle.stop", "lifecycle.eof", "lifecycle.protocol", "lifecycle.leftovers",
             "lifecycle.target_failure")


def check(python: str, adapter_id: str, tmp_path: Path, script: dict[str, Any] | None) -> dict[str, Any]:
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    config = config_for(adapter_id, "http://127.0.0.1:9/unused")
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(config))
    args = [str(fabric_binary()), "adapters", "check", adapter_id, "--config", str(config_path),
            "--model-stub", "--stop-deadline", "10", "--json"]
    if script is not None:
        script_path = tmp_path / "script.json"
        script_path.write_text(json.dumps(script))
        args += ["--model-stub-script", str(script_path)]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LANGCHAIN_", "LANGSMITH_", "OPENAI_", "FABRIC_", "NEMO_"))
        and key.lower() not in ("http_proxy", "https_proxy", "all_proxy", "virtual_env")
    }
    env.update({
        "ADAPTER_PYTHON": python,
        "PATH": os.pathsep.join((str(Path(python).parent), env.get("PATH", ""))),
        API_KEY_ENV: "dummy-key",
        "HOME": str(tmp_path / "home"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "MSWEA_SILENT_STARTUP": "1",
    })
    done = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    failed = [c for c in report["checks"] if c["status"] == "failed"]
    assert done.returncode == 0 and not failed, json.dumps(failed, indent=1)[-4000:]
    status = {c["id"]: c["status"] for c in report["checks"]}
    assert all(status[check_id] == "passed" for check_id in LIFECYCLE), status
    assert all(c["reason"] for c in report["checks"] if c["status"] == "skipped")
    return report


def test_mini_swe_agent_passes_with_the_model_stub(python: str, tmp_path: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    command = f"printf 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\\n{FINAL_TEXT}\\n'"
    script = {"replies": [{"text": "Submitting.",
                           "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}]}
    check(python, MINI_SWE_AGENT, tmp_path, script)


def test_deepagents_passes_with_the_model_stub(python: str, tmp_path: Path) -> None:
    _installed(python, "deepagents", "deepagents")
    check(python, DEEPAGENTS, tmp_path, None)
