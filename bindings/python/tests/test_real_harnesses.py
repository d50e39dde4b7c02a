"""Upstream's own adapters, unchanged, under our core and under upstream's SDK.

``nemo-fabric-adapters-mini-swe-agent`` and ``nemo-fabric-adapters-deepagents`` 0.5.0 (their
``[full]`` extras install the harnesses) run once through ``nemo_fabric`` and once through
``fabric_core`` — the same program, only the import differs — against a deterministic
OpenAI-compatible stub server started by the test (stdlib ``http.server`` on 127.0.0.1, no
network). Both runs must succeed with the same ``output`` (modulo ids, paths and timings), and
the stub must receive the same sequence of model requests from both.

- mini-swe-agent (litellm, tool calling): the stub answers every request with a ``bash`` tool
  call printing ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` and a final response, which the
  harness submits.
- deepagents (LangChain ``ChatOpenAI``): the stub answers with a plain assistant message.

Each also runs with NeMo Relay enabled (``nemo-relay`` comes with the ``[full]`` extras): the
adapters load the Relay config the core writes and report Relay's ATOF/ATIF files, and both
cores must list the same relay artifacts and telemetry references.

The adapters find their descriptors in the venv's ``share/nemo-fabric/adapters`` (their
installed location); the configs follow the catalog descriptors (``models.default`` with an
``openai`` provider, ``base_url`` at the stub and a dummy ``api_key_env``). Runs happen in a
neutral temporary directory (not a git checkout). Fails when ``FABRIC_TEST_PYTHON`` or the
adapters are missing (``tests/fabric_dependency.py``; ``FABRIC_ALLOW_SKIPS=1`` skips instead).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fcsupport import binding_paths

MINI_SWE_AGENT = "nvidia.fabric.mini-swe-agent"
DEEPAGENTS = "nvidia.fabric.langchain.deepagents"
FINAL_TEXT = "stub harness finished"
API_KEY_ENV = "FABRIC_STUB_API_KEY"

SCRIPT = r'''
import asyncio, json, sys
from MODULE import Fabric, FabricConfig

config = FabricConfig.from_mapping(json.loads(sys.argv[1]))


async def main():
    result = (await Fabric().run(config, input=sys.argv[2])).to_mapping()
    print(json.dumps(result, default=str))


asyncio.run(main())
'''


def _require(condition: bool, message: str) -> None:
    if not condition:
        pytest.skip(message)


# -- the stub model server ----------------------------------------------------------------


def _completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def mini_swe_agent_reply(_request: dict[str, Any]) -> dict[str, Any]:
    """A bash tool call whose output starts with mini-swe-agent's completion marker."""

    command = f"printf 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\\n{FINAL_TEXT}\\n'"
    return _completion(
        {
            "role": "assistant",
            "content": "Submitting.",
            "tool_calls": [
                {
                    "id": "call_stub_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                }
            ],
        },
        "tool_calls",
    )


def plain_reply(_request: dict[str, Any]) -> dict[str, Any]:
    return _completion({"role": "assistant", "content": FINAL_TEXT}, "stop")


def _sse(completion: dict[str, Any]) -> bytes:
    """The same completion as one streamed chunk (for clients that ask to stream)."""

    choice = completion["choices"][0]
    delta = {k: v for k, v in choice["message"].items()}
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(delta["tool_calls"])]
    chunk = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}],
        "usage": completion["usage"],
    }
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


class StubModel:
    """An OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1; records every request."""

    def __init__(self, reply: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                with stub.lock:
                    stub.requests.append(body)
                completion = stub.reply(body)
                if body.get("stream"):
                    payload, kind = _sse(completion), "text/event-stream"
                else:
                    payload, kind = json.dumps(completion).encode(), "application/json"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def take(self) -> list[dict[str, Any]]:
        with self.lock:
            taken, self.requests = self.requests, []
        return taken

    def __enter__(self) -> StubModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


# -- running one SDK ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def python() -> str:
    python = os.environ.get("FABRIC_TEST_PYTHON")
    _require(bool(python), "FABRIC_TEST_PYTHON is not set (a venv with nemo-fabric 0.5.0 and the [full] adapters)")
    return os.path.abspath(python)


def _installed(python: str, adapter_dir: str, module: str) -> None:
    probe = subprocess.run(
        [python, "-c", f"import sysconfig, importlib; importlib.import_module({module!r}); print(sysconfig.get_path('data'))"],
        capture_output=True,
        text=True,
    )
    _require(probe.returncode == 0, f"{module} is not importable by {python}: {probe.stderr.strip()[-300:]}")
    descriptor = Path(probe.stdout.strip().splitlines()[-1]) / "share/nemo-fabric/adapters" / adapter_dir
    _require(descriptor.is_dir(), f"{descriptor} is missing (install nemo-fabric-adapters-{adapter_dir}[full]==0.5.0)")


def config_for(adapter_id: str, base_url: str) -> dict[str, Any]:
    return {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "real-harness"},
        "harness": {"adapter_id": adapter_id},
        "models": {
            "default": {
                "provider": "openai",
                "model": "gpt-4o-mini",
                "base_url": base_url,
                "api_key_env": API_KEY_ENV,
            }
        },
        "runtime": {"timeout_seconds": 60, "max_turns": 4},
    }


def run_sdk(
    python: str,
    module: str,
    config: dict[str, Any],
    task: str,
    workdir: Path,
    script: str = SCRIPT,
    args: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LANGCHAIN_", "LANGSMITH_", "OPENAI_", "FABRIC_", "NEMO_"))
        and key.lower() not in ("http_proxy", "https_proxy", "all_proxy", "virtual_env")
    }
    env.update(
        {
            "ADAPTER_PYTHON": python,
            API_KEY_ENV: "dummy-key",
            "HOME": str(workdir.parent / "home"),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            # litellm: no cost-map download; mini-swe-agent: an unpriced model is fine.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_SILENT_STARTUP": "1",
        }
    )
    if module == "fabric_core":
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (*binding_paths(), os.environ.get("PYTHONPATH")) if p
        )
        if os.environ.get("FABRIC_CORE_LIB"):
            env["FABRIC_CORE_LIB"] = os.environ["FABRIC_CORE_LIB"]
    else:
        env.pop("PYTHONPATH", None)
    env.update(extra_env or {})
    started = time.monotonic()
    result = subprocess.run(
        [python, "-c", script.replace("MODULE", module), json.dumps(config), task, *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr[-4000:]}"
    mapping = json.loads(result.stdout.strip().splitlines()[-1])
    mapping["_seconds"] = time.monotonic() - started
    return mapping


# -- comparison --------------------------------------------------------------------------

_VOLATILE_KEYS = {
    "id", "run_id", "tool_call_id", "thread_id", "runtime_id", "invocation_id", "request_id",
    "session_id", "timestamp", "created", "duration_ms", "elapsed", "cost",
}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RUN_ID = re.compile(r"\b(lc_)?run-[0-9a-zA-Z-]+")
# Fabric ids in paths (upstream `runtime-<millis>-<pid>-<n>`, ours `runtime-<hex>`).
_FABRIC_IDS = re.compile(r"\b(runtime-start|runtime|invocation)-[0-9a-f][0-9a-f-]*")


def normalized(value: Any, workdir: Path) -> Any:
    """``value`` with ids, the working directory and timings replaced by placeholders."""

    if isinstance(value, dict):
        return {
            key: ("<volatile>" if key in _VOLATILE_KEYS and value[key] is not None else normalized(item, workdir))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [normalized(item, workdir) for item in value]
    if isinstance(value, str):
        text = value.replace(str(workdir), "<workdir>")
        text = _UUID.sub("<uuid>", text)
        text = _FABRIC_IDS.sub(lambda m: f"<{m.group(1)}>", text)
        return _RUN_ID.sub("<run-id>", text)
    return value


def model_requests(requests: list[dict[str, Any]], workdir: Path) -> list[dict[str, Any]]:
    return [
        normalized({"messages": request.get("messages"), "tools": request.get("tools"), "model": request.get("model")}, workdir)
        for request in requests
    ]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    return work


def side_by_side(
    python: str,
    adapter_id: str,
    reply: Callable,
    task: str,
    workdir: Path,
    configure: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[dict, dict, list, list]:
    with StubModel(reply) as stub:
        config = config_for(adapter_id, stub.base_url)
        if configure is not None:
            configure(config)
        upstream = run_sdk(python, "nemo_fabric", config, task, workdir)
        upstream_requests = stub.take()
        ours = run_sdk(python, "fabric_core", config, task, workdir)
        our_requests = stub.take()
    return upstream, ours, upstream_requests, our_requests


def assert_same(upstream: dict, ours: dict, upstream_requests: list, our_requests: list, workdir: Path) -> None:
    assert upstream["status"] == "succeeded", upstream
    assert ours["status"] == "succeeded", ours
    assert upstream_requests, "the stub received no model request from upstream"
    assert model_requests(our_requests, workdir) == model_requests(upstream_requests, workdir)
    assert normalized(ours["output"], workdir) == normalized(upstream["output"], workdir)
    for run in (upstream, ours):
        assert run["_seconds"] < 60, run["_seconds"]


def test_mini_swe_agent_runs_the_same_under_both(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    upstream, ours, upstream_requests, our_requests = side_by_side(
        python, MINI_SWE_AGENT, mini_swe_agent_reply, "Say that you are done.", workdir
    )
    assert_same(upstream, ours, upstream_requests, our_requests, workdir)
    assert ours["output"]["output"].strip() == FINAL_TEXT
    assert len(our_requests) == 1


def test_deepagents_runs_the_same_under_both(python: str, workdir: Path) -> None:
    _installed(python, "deepagents", "deepagents")
    upstream, ours, upstream_requests, our_requests = side_by_side(
        python, DEEPAGENTS, plain_reply, "Say hello.", workdir
    )
    assert_same(upstream, ours, upstream_requests, our_requests, workdir)
    assert FINAL_TEXT in json.dumps(ours["output"])


# -- with NeMo Relay enabled ---------------------------------------------------------------
#
# The adapters load the Relay config the core writes (``FABRIC_RELAY_CONFIG_PATH``), run the
# turn inside Relay scopes (``nemo-relay``, from the adapters' ``[full]`` extras) and report
# the ATOF/ATIF files Relay wrote as ``output.relay_artifacts``. Both cores must list the
# same artifacts (``relay_config`` and the reported ``relay_atof``/``relay_atif``) and the
# same telemetry reference.


def enable_relay(workdir: Path) -> Callable[[dict[str, Any]], None]:
    def configure(config: dict[str, Any]) -> None:
        # Deep Agents' Relay middleware is one more LangGraph superstep: 4 is too few
        # (upstream fails with `deepagents_recursion_limit_reached` too).
        config["runtime"]["max_turns"] = 8
        config["environment"] = {"artifacts": str(workdir / "artifacts")}
        config["telemetry"] = {"providers": {"relay": {}}}
        config["relay"] = {
            "project": "real-harness",
            "observability": {"atif": {"enabled": True}, "atof": {"enabled": True, "sinks": [{"type": "file"}]}},
        }

    return configure


def relay_view(run: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The manifest (paths relative to the root; upstream lists absolute paths) and the
    telemetry references, with ids and the working directory replaced."""

    root = run["artifacts"]["root"]
    artifacts = []
    for artifact in run["artifacts"]["artifacts"]:
        path = artifact["path"]
        artifacts.append(
            {
                "name": artifact["name"],
                "kind": artifact["kind"],
                "media_type": artifact.get("media_type"),
                "path": path[len(root) + 1 :] if path.startswith(root + "/") else path,
            }
        )
    telemetry = [
        {key: ref.get(key) for key in ("provider", "kind", "uri", "trace_id", "metadata")}
        for ref in run["telemetry"]
    ]
    return normalized({"artifacts": artifacts, "telemetry": telemetry}, workdir)


def assert_relay_same(upstream: dict, ours: dict, workdir: Path) -> None:
    mine, theirs = relay_view(ours, workdir), relay_view(upstream, workdir)
    assert mine["artifacts"] == theirs["artifacts"]
    assert mine["telemetry"] == theirs["telemetry"]
    names = [a["name"] for a in mine["artifacts"]]
    assert names[0] == "relay_config" and {"relay_atof", "relay_atif"} <= set(names), names
    root = Path(ours["artifacts"]["root"])
    for artifact in ours["artifacts"]["artifacts"]:
        if artifact["kind"] in ("atif", "atof", "telemetry_config"):
            data = (root / artifact["path"]).read_bytes()
            assert data.strip(), artifact
            if artifact["kind"] == "atif":
                assert isinstance(json.loads(data), dict)
    reference = ours["telemetry"][0]
    assert reference["provider"] == "relay" and reference["metadata"]["relay_project"] == "real-harness"
    assert (root / reference["metadata"]["relay_config_path"]).is_file()


def test_mini_swe_agent_with_relay_runs_the_same_under_both(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    _installed(python, "mini-swe-agent", "nemo_relay")
    upstream, ours, upstream_requests, our_requests = side_by_side(
        python, MINI_SWE_AGENT, mini_swe_agent_reply, "Say that you are done.", workdir, enable_relay(workdir)
    )
    assert_same(upstream, ours, upstream_requests, our_requests, workdir)
    assert_relay_same(upstream, ours, workdir)
    assert ours["output"]["telemetry"]["emitter"] == "mini-swe-agent.subclass/nemo_relay"


def test_deepagents_with_relay_runs_the_same_under_both(python: str, workdir: Path) -> None:
    _installed(python, "deepagents", "deepagents")
    _installed(python, "deepagents", "nemo_relay")
    upstream, ours, upstream_requests, our_requests = side_by_side(
        python, DEEPAGENTS, plain_reply, "Say hello.", workdir, enable_relay(workdir)
    )
    assert_same(upstream, ours, upstream_requests, our_requests, workdir)
    assert_relay_same(upstream, ours, workdir)


# -- with an artifact root and no Relay ------------------------------------------------------
#
# Issue 34 item 5: upstream lists a ``log`` artifact for each non-empty log of the invocation
# (``stdout``, and ``stderr`` only when the host wrote to stderr during it) under
# ``.fabric/<runtime>/<invocation>/``; both cores must list the same entries.


def with_artifacts(workdir: Path) -> Callable[[dict[str, Any]], None]:
    def configure(config: dict[str, Any]) -> None:
        config["environment"] = {"artifacts": str(workdir / "artifacts")}

    return configure


def test_mini_swe_agent_logs_are_listed_as_upstream_lists_them(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    upstream, ours, upstream_requests, our_requests = side_by_side(
        python, MINI_SWE_AGENT, mini_swe_agent_reply, "Say that you are done.", workdir, with_artifacts(workdir)
    )
    assert_same(upstream, ours, upstream_requests, our_requests, workdir)
    mine, theirs = relay_view(ours, workdir), relay_view(upstream, workdir)
    assert mine["artifacts"] == theirs["artifacts"]
    # Under this stub mini-swe-agent writes nothing to stderr while it works (under either
    # core), so neither lists a ``stderr`` log; ``test_side_by_side_artifacts`` covers a host
    # that does.
    assert [a["name"] for a in mine["artifacts"]] == ["stdout"], mine
    root = Path(ours["artifacts"]["root"])
    for artifact in ours["artifacts"]["artifacts"]:
        assert (root / artifact["path"]).read_bytes().strip(), artifact
