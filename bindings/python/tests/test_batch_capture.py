"""``Fabric.batch(..., capture_model_calls=True)``: upstream's mini-swe-agent (as in
``test_model_capture.py``) runs each item of a batch with the core's gateway between it and a
local OpenAI-compatible ``StubModel``; each item's RunResult carries its ``model_calls``, whose
records are exactly the requests the stub received for that item, and the summary totals
them. Capture off changes nothing and records nothing; a budget applies per item."""

from __future__ import annotations

import json
from pathlib import Path

from test_model_capture import recording
from test_real_harnesses import (  # noqa: F401 - the `python` and `workdir` fixtures
    MINI_SWE_AGENT,
    StubModel,
    _installed,
    config_for,
    mini_swe_agent_reply,
    python,
    run_sdk,
    workdir,
)

ITEMS = 2

BATCH_SCRIPT = r'''
import asyncio, json, sys
from fabric_core import Fabric, FabricConfig

config = FabricConfig.from_mapping(json.loads(sys.argv[1]))


def records(line):
    calls = (line.get("result") or {}).get("model_calls") or {}
    if not calls.get("path"):
        return []
    with open(calls["path"], encoding="utf-8") as lines:
        return [json.loads(text) for text in lines]


async def main():
    items = [{"id": "item-%d" % n, "input": sys.argv[2]} for n in range(int(sys.argv[3]))]
    batch = Fabric().batch(config, items, concurrency=2, **json.loads(sys.argv[4]))
    lines = []
    async for done in batch:
        line = json.loads(json.dumps(done, default=dict))
        line["_records"] = records(line)
        lines.append(line)
    print(json.dumps({"lines": lines, "summary": json.loads(json.dumps(batch.summary, default=dict))}))


asyncio.run(main())
'''


def batched(python: str, stub: StubModel, workdir: Path, **options: object) -> dict:
    config = config_for(MINI_SWE_AGENT, stub.base_url)
    return run_sdk(
        python, "fabric_core", config, "Say that you are done.", workdir, script=BATCH_SCRIPT,
        args=(str(ITEMS), json.dumps(options)), extra_env={"MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1"},
    )


def test_each_item_carries_the_calls_the_stub_received(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    sent: list[dict] = []
    with StubModel(recording(mini_swe_agent_reply, sent)) as stub:
        run = batched(python, stub, workdir, capture_model_calls=True)
        requests = stub.take()
    lines = run["lines"]
    assert len(lines) == ITEMS and run["summary"]["succeeded"] == ITEMS, run["summary"]
    records = [record for line in lines for record in line["_records"]]
    # Every request the stub received is recorded once, under the item whose harness sent it.
    assert sorted(json.dumps(r["request"], sort_keys=True) for r in records) == sorted(
        json.dumps(r, sort_keys=True) for r in requests
    )
    assert sorted(json.dumps(r["response"], sort_keys=True) for r in records) == sorted(
        json.dumps(c, sort_keys=True) for c in sent
    )
    for line in lines:
        result = line["result"]
        assert result["model_calls"]["count"] == len(line["_records"]) >= 1
        assert [r["call_index"] for r in line["_records"]] == list(range(len(line["_records"])))
        assert {r["invocation_id"] for r in line["_records"]} == {result["invocation_id"]}
        assert "dummy-key" not in json.dumps(line["_records"]), "credentials are never recorded"
    assert run["summary"]["model_calls"] == {"invocations": ITEMS, "calls": len(requests)}


def test_capture_off_records_nothing(python: str, workdir: Path) -> None:
    _installed(python, "mini-swe-agent", "minisweagent")
    with StubModel(mini_swe_agent_reply) as stub:
        run = batched(python, stub, workdir)
    assert run["summary"]["succeeded"] == ITEMS, run["summary"]
    assert "model_calls" not in run["summary"]
    for line in run["lines"]:
        assert "model_calls" not in line["result"] and line["_records"] == []
