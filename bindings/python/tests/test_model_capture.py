"""Model-call capture (``capture_model_calls=True``) with upstream's real adapters.

mini-swe-agent and deepagents (the PyPI adapters of ``test_real_harnesses.py``) run under
``fabric_core`` against the same local OpenAI-compatible ``StubModel``, with the core's
gateway between them: the records in ``model-calls.jsonl`` must equal the requests the stub
received and the responses it sent; with capture off the stub sees the same requests;
``logprobs``/token ids the stub returns are recorded; ``max_model_calls=1`` refuses the second
call with 429 and the result carries ``budget_exceeded``; an HTTPS endpoint with a test CA
(generated here with ``cryptography``, trusted through ``SSL_CERT_FILE``) is captured too.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import shutil
import ssl
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabric_core import gym

from test_real_harnesses import (  # noqa: F401 - the `python` and `workdir` fixtures
    DEEPAGENTS,
    FINAL_TEXT,
    MINI_SWE_AGENT,
    StubModel,
    _installed,
    config_for,
    mini_swe_agent_reply,
    model_requests,
    plain_reply,
    python,
    run_sdk,
    workdir,
)
from test_gym import gym_python

CAPTURE_SCRIPT = r'''
import asyncio, json, sys
from fabric_core import Fabric, FabricConfig, FabricError

config = FabricConfig.from_mapping(json.loads(sys.argv[1]))


async def main():
    try:
        result = await Fabric().run(config, input=sys.argv[2], **json.loads(sys.argv[3]))
    except FabricError as error:
        print(json.dumps({"_error": str(error), "_code": error.code, "_details": error.details}))
        return
    mapping = result.to_mapping()
    mapping["_records"] = [record.to_mapping() for record in result.model_call_records()]
    print(json.dumps(mapping, default=str))


asyncio.run(main())
'''

LOGPROBS = {"content": [{"token": "stub", "logprob": -0.25, "bytes": [115], "top_logprobs": []}]}


def recording(reply: Callable[[dict[str, Any]], dict[str, Any]], sent: list[dict[str, Any]]):
    """``reply`` that also keeps each completion it answered with."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        completion = reply(request)
        sent.append(completion)
        return completion

    return answer


def with_logprobs(reply: Callable[[dict[str, Any]], dict[str, Any]]):
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        completion = reply(request)
        completion["choices"][0]["logprobs"] = LOGPROBS
        completion["choices"][0]["token_ids"] = [101, 102]
        completion["prompt_token_ids"] = [1, 2, 3]
        return completion

    return answer


def captured(python: str, adapter: str, stub: StubModel, task: str, workdir: Path, **options: Any) -> dict:
    config = config_for(adapter, stub.base_url)
    options.setdefault("capture_model_calls", True)
    return run_sdk(
        python, "fabric_core", config, task, workdir, script=CAPTURE_SCRIPT, args=(json.dumps(options),),
        extra_env={"MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1"},
    )


# Validates each record (a JSON list on stdin) with nemo-gym's own ModelCallRecord and prints
# them as Gym's model reads them.
GYM_VALIDATE = r'''
import json, sys
from nemo_gym.base_responses_api_model import ModelCallRecord

print(json.dumps([ModelCallRecord.model_validate(record).model_dump(mode="json") for record in json.load(sys.stdin)]))
'''


def as_gym_reads_them(records: list[dict]) -> list[dict]:
    """The records through nemo-gym's ``ModelCallRecord.model_validate`` (fails when one does
    not validate)."""

    completed = subprocess.run([gym_python(), "-c", GYM_VALIDATE], input=json.dumps(records),
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout)


def assert_records_match(run: dict, requests: list[dict], sent: list[dict]) -> None:
    records = run["_records"]
    assert run["model_calls"]["count"] == len(records) == len(requests) >= 1
    assert Path(run["model_calls"]["path"]).name == "model-calls.jsonl"
    for index, (record, request, completion) in enumerate(zip(records, requests, sent)):
        assert record["call_index"] == index
        assert record["request"] == request
        assert record["status_code"] == 200
        assert record["invocation_id"] == record["client_session_id"] == run["invocation_id"]
        assert record["model_role"] == "default"
        assert record["dialect"] == "chat"
        if record["streamed"]:
            events = record["response_events"]
            assert events[0]["id"] == completion["id"]
            assert events[0]["usage"] == completion["usage"]
        else:
            assert record["response"] == completion
        assert record["response_id"] == completion["id"]
        assert record["tokens_total"] == completion["usage"]["total_tokens"]
        assert record["started_at"] <= record["completed_at"]
        assert "dummy-key" not in json.dumps(record), "credentials are never recorded"
    # nemo-gym's ModelCallRecord validates every record, and reads Gym's members as ours.
    for ours, gyms in zip(records, as_gym_reads_them(records), strict=True):
        for member in ("model_call_id", "call_index", "client_session_id", "response_id", "model_ref",
                       "model", "dialect", "status_code", "started_at", "completed_at", "tokens_in",
                       "tokens_out", "tokens_total", "request", "response", "latency_total_ms",
                       "latency_ttft_ms"):
            assert gyms[member] == ours.get(member), member


def test_mini_swe_agent_calls_are_recorded_as_the_stub_saw_them(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    sent: list[dict] = []
    with StubModel(recording(mini_swe_agent_reply, sent)) as stub:
        run = captured(python, MINI_SWE_AGENT, stub, "Say that you are done.", workdir)
        requests = stub.take()
    assert run["status"] == "succeeded", run.get("error")
    assert run["output"]["output"].strip() == FINAL_TEXT
    assert_records_match(run, requests, sent)


def test_capture_off_sends_the_same_requests(python: str, workdir: Path) -> None:
    _installed(python, "deepagents", "deepagents")
    with StubModel(plain_reply) as stub:
        on = captured(python, DEEPAGENTS, stub, "Say hello.", workdir)
        with_capture = stub.take()
        off = captured(python, DEEPAGENTS, stub, "Say hello.", workdir, capture_model_calls=False)
        without = stub.take()
    assert on["status"] == off["status"] == "succeeded"
    assert model_requests(with_capture, workdir) == model_requests(without, workdir)
    assert "model_calls" not in off and off["_records"] == []


def test_deepagents_logprobs_and_token_ids_are_recorded(python: str, workdir: Path) -> None:
    _installed(python, "deepagents", "deepagents")
    sent: list[dict] = []
    with StubModel(recording(with_logprobs(plain_reply), sent)) as stub:
        run = captured(python, DEEPAGENTS, stub, "Say hello.", workdir)
        requests = stub.take()
    assert run["status"] == "succeeded", run.get("error")
    assert_records_match(run, requests, sent)
    record = run["_records"][0]
    assert record["logprobs"] == LOGPROBS["content"]
    assert record["token_ids"] == [101, 102]
    assert record["prompt_token_ids"] == [1, 2, 3]


def test_max_model_calls_refuses_the_second_call_with_429(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    first = True

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        # First a command that does not submit, so the harness asks again.
        nonlocal first
        if first:
            first = False
            completion = mini_swe_agent_reply(request)
            call = completion["choices"][0]["message"]["tool_calls"][0]
            call["function"]["arguments"] = json.dumps({"command": "echo working"})
            return completion
        return mini_swe_agent_reply(request)

    with StubModel(reply) as stub:
        run = captured(python, MINI_SWE_AGENT, stub, "Say that you are done.", workdir, max_model_calls=1)
        requests = stub.take()
    assert len(requests) == 1, "the call over budget never reached the endpoint"
    # mini-swe-agent (one attempt: MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT=1) turns the 429 into
    # a failed invocation: the harness saw the gateway's OpenAI-shaped budget error.
    # a failed invocation (no RunResult), whose error still names the budget and the counts.
    if "_error" in run:
        assert "RateLimitError" in run["_error"], run["_error"]
        assert "max_model_calls of 1 reached (calls 1" in run["_error"], run["_error"]
        # One entry per refused call (the harness's client may retry).
        refused = run["_details"]["budget_exceeded"]
        assert refused, run["_details"]
        for entry in refused:
            assert entry["budget"] == "max_model_calls" and entry["limit"] == 1 and entry["calls"] == 1
            assert entry["total_tokens"] > 0
        assert run["_details"]["model_calls"]["count"] == 1
        assert Path(run["_details"]["model_calls"]["path"]).is_file()
        return
    assert run["model_calls"]["count"] == 1
    exceeded = [e for e in run["events"] if e["kind"] == "budget_exceeded"]
    assert exceeded, run["events"]
    details = exceeded[0]["metadata"]
    assert details["budget"] == "max_model_calls" and details["limit"] == 1 and details["calls"] == 1


def _test_ca(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for 127.0.0.1 it signed: (ca.pem, cert.pem, key.pem)."""

    pytest.importorskip("cryptography", reason="install cryptography (scripts/setup.sh does)")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fabric test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    paths = (directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


def test_an_https_endpoint_with_a_test_ca_is_captured(python: str, workdir: Path, tmp_path: Path) -> None:
    _installed(python, "deepagents", "deepagents")
    ca, cert, key = _test_ca(tmp_path)
    sent: list[dict] = []
    with StubModel(recording(plain_reply, sent)) as stub:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        stub.server.socket = context.wrap_socket(stub.server.socket, server_side=True)
        config = config_for(DEEPAGENTS, stub.base_url.replace("http://", "https://"))
        run = run_sdk(
            python, "fabric_core", config, "Say hello.", workdir, script=CAPTURE_SCRIPT,
            args=(json.dumps({"capture_model_calls": True}),), extra_env={"SSL_CERT_FILE": str(ca)},
        )
        requests = stub.take()
    assert run["status"] == "succeeded", run.get("error")
    assert_records_match(run, requests, sent)
    assert run["_records"][0]["base_url"].startswith("https://127.0.0.1:")


def test_records_without_an_artifact_root_go_to_a_private_per_user_directory(
    python: str, workdir: Path, tmp_path: Path
) -> None:
    """No artifact root: the records go to ``<temp>/fabric-model-calls-<uid>/<runtime>``,
    created 0700; a link or a directory others can enter in its place is refused."""

    _installed(python, "deepagents", "deepagents")
    temp = tmp_path / "temp"
    temp.mkdir()
    mine = temp / f"fabric-model-calls-{os.geteuid()}"

    def run_with_temp() -> dict:
        with StubModel(plain_reply) as stub:
            return run_sdk(
                python, "fabric_core", config_for(DEEPAGENTS, stub.base_url), "Say hello.", workdir,
                script=CAPTURE_SCRIPT, args=(json.dumps({"capture_model_calls": True}),),
                extra_env={"TMPDIR": str(temp)},
            )

    run = run_with_temp()
    assert run["status"] == "succeeded", run.get("_error") or run.get("error")
    path = Path(run["model_calls"]["path"])
    assert path.parents[2] == mine, path
    assert stat.S_IMODE(mine.lstat().st_mode) == 0o700
    assert len(run["_records"]) == run["model_calls"]["count"] >= 1

    shutil.rmtree(mine)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    mine.symlink_to(elsewhere)
    run = run_with_temp()
    assert run.get("_code") == "path_refused", run
    assert run["_details"]["reason"] == "symlink", run["_details"]
    assert list(elsewhere.iterdir()) == [], "nothing was written through the link"

    mine.unlink()
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    run = run_with_temp()
    assert run.get("_code") == "path_refused", run
    assert run["_details"]["reason"] == "not_private", run["_details"]


def test_gym_export_joins_the_captured_calls_and_states_the_conversation(python: str, workdir: Path) -> None:
    """A capturing run without Relay: the Gym export joins its records (no
    ``model_calls_unobserved`` gap; each call owned by the invocation, by id) and takes the
    conversation from the last call (no ``conversation_unavailable`` gap)."""

    _installed(python, "mini-swe-agent", "minisweagent")
    sent: list[dict] = []
    with StubModel(recording(mini_swe_agent_reply, sent)) as stub:
        run = captured(python, MINI_SWE_AGENT, stub, "Say that you are done.", workdir)
        requests = stub.take()
    assert run["status"] == "succeeded", run.get("error")
    result = {key: value for key, value in run.items() if not key.startswith("_")}
    out = gym.observations([result], task_id="task-1", rollout_id="rollout-1")
    bundle = out["ng_agent_observations"]
    codes = {gap["code"] for gap in bundle["gaps"]}
    assert "model_calls_unobserved" not in codes and "conversation_unavailable" not in codes, bundle["gaps"]
    assert "model_call_ownership_unavailable" not in codes, bundle["gaps"]
    [invocation] = [r for r in bundle["records"] if r["kind"] == "agent_invocation"]
    assert [ref["model_call_id"] for ref in invocation["model_calls"]] == [
        record["model_call_id"] for record in run["_records"]
    ]
    assert invocation["model_calls"][0]["model_ref"] == {"type": "responses_api_models", "name": "default"}
    # The last call's messages, then its answer.
    conversation = invocation["conversation"]
    first = requests[-1]["messages"][0]
    assert conversation[0]["type"] == "message" and conversation[0]["role"] == first["role"]
    if isinstance(first["content"], str):
        assert conversation[0]["content"] == first["content"]
    final = sent[-1]["choices"][0]["message"]
    assert conversation[-2] == {"type": "message", "role": "assistant", "content": final["content"]}
    assert conversation[-1]["type"] == "function_call"
    assert conversation[-1]["call_id"] == final["tool_calls"][0]["id"]
    assert conversation[-1]["arguments"] == final["tool_calls"][0]["function"]["arguments"]
    assert out["trajectory"]["invocations"][0]["model_calls"] == invocation["model_calls"]
