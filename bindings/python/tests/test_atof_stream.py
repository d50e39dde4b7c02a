"""Relay ATOF streaming through the binding (``start_runtime(streaming=True)`` and
``Runtime.invoke_stream``) with a test adapter that publishes ATOF records to the
``nemo-fabric-stream`` sink of its Relay config (tests/fixtures/atof-adapter): the embedded
collector, an external ``fabric collector serve`` (``launch_collector=False``), and the
configuration and capability errors."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric_core import (
    Fabric,
    FabricCapabilityError,
    FabricConfig,
    FabricConfigError,
    FabricRuntimeError,
)
from fcsupport import REPO

FIXTURE = REPO / "tests" / "fixtures" / "atof-adapter"
TOKEN = "atof-binding-test-token-" + "0123456789abcdef" * 2


def atof_config(tmp: Path, *, relay: bool = True, sink_url: str = "http://example.invalid:1",
                header_env: dict[str, str] | None = None) -> FabricConfig:
    path = FIXTURE / "atof.fabric-adapter.json"
    mapping: dict[str, Any] = {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "atof-binding"},
        "harness": {"adapter_id": "test.fabric.atof"},
        "discovery": {"local_paths": [str(path)]},
        "environment": {"artifacts": str(tmp / "artifacts")},
        "runtime": {"timeout_seconds": 60},
    }
    if relay:
        sink: dict[str, Any] = {"type": "stream", "name": "nemo-fabric-stream", "url": sink_url,
                                "transport": "ndjson"}
        if header_env:
            sink["header_env"] = header_env
        mapping["telemetry"] = {"providers": {"relay": {}}}
        mapping["relay"] = {"observability": {"atof": {"enabled": True, "sinks": [sink]}}}
    return FabricConfig.from_mapping(mapping)


async def one_turn(runtime: Any, text: str) -> tuple[list[dict[str, Any]], Any]:
    stream = runtime.invoke_stream(input=text)
    records = [record async for record in stream]
    return records, await stream.result()


def check_turn(records: list[dict[str, Any]], result: Any, marks: int) -> None:
    assert result.status == "succeeded"
    assert result.output["response"] == f"posted {marks + 2}"
    assert len(records) == marks + 2
    assert records[0]["metadata"]["nemo_fabric_request_id"] == result.request_id
    assert [r["name"] for r in records[1:-1]] == [f"step-{i}" for i in range(marks)]
    assert records[-1]["scope_category"] == "end"


def test_embedded_collector_streams_each_turns_records(tmp_path: Path) -> None:
    async def main() -> None:
        config = atof_config(tmp_path)
        async with await Fabric().start_runtime(config, streaming=True) as runtime:
            assert runtime.supports_streaming
            assert not runtime.supports_openai_streaming
            records, result = await one_turn(runtime, "records:4")
            check_turn(records, result, 4)
            # The next turn gets only its own records.
            records, result = await one_turn(runtime, "records:2")
            check_turn(records, result, 2)
            # An early close keeps the turn: its result is still the authority.
            async with runtime.invoke_stream(input="records:50") as stream:
                first = await stream.__anext__()
                assert first["scope_category"] == "start"
            assert [r async for r in stream] == []
            assert (await stream.result()).output["response"] == "posted 52"
            assert (await runtime.invoke(input="records:1")).status == "succeeded"

    asyncio.run(main())


def test_result_first_keeps_unread_records_until_stop(tmp_path: Path) -> None:
    """``result()`` frees the runtime but does not finalize the stream (upstream's rule):
    the records stay readable, another turn can run meanwhile, and only ``stop()``
    discards what was not read."""

    async def main() -> None:
        runtime = await Fabric().start_runtime(atof_config(tmp_path), streaming=True)
        try:
            first = runtime.invoke_stream(input="records:3")
            first_result = await first.result()
            assert first_result.status == "succeeded"
            # The runtime takes another turn while the first turn's records wait.
            records, result = await one_turn(runtime, "records:1")
            check_turn(records, result, 1)
            check_turn([record async for record in first], first_result, 3)
            # Result first again, then stop: the unread records are discarded.
            last = runtime.invoke_stream(input="records:3")
            assert (await last.result()).status == "succeeded"
        finally:
            await runtime.stop()
        assert [record async for record in last] == []

    asyncio.run(main())


def test_configuration_and_capability_errors(tmp_path: Path) -> None:
    async def main() -> None:
        with pytest.raises(FabricConfigError) as error:
            await Fabric().start_runtime(atof_config(tmp_path, relay=False), streaming=True)
        assert error.value.code == "streaming_requires_relay"
        with pytest.raises(FabricConfigError) as error:
            await Fabric().start_runtime(atof_config(tmp_path), launch_collector=True)
        assert error.value.code == "launch_collector_requires_streaming"
        with pytest.raises(FabricConfigError) as error:
            await Fabric().start_runtime(atof_config(tmp_path), streaming=True, completion_wait_timeout=0)
        assert error.value.code == "invalid_timeout_seconds"
        with pytest.raises(FabricConfigError) as error:
            await Fabric().start_runtime(atof_config(tmp_path), streaming=True, collector_memory_budget_bytes=1024)
        assert error.value.code == "invalid_value"
        assert error.value.details["path"] == "options.collector_memory_budget_bytes"
        budget = 2 * 1024 * 1024
        async with await Fabric().start_runtime(
            atof_config(tmp_path), streaming=True, collector_memory_budget_bytes=budget
        ) as runtime:
            stream = runtime.invoke_stream(input="records:2")
            assert len([record async for record in stream]) == 4
        # External collector: the sink's header_env variable must be set.
        config = atof_config(tmp_path, header_env={"Authorization": "FABRIC_TEST_UNSET_VARIABLE"})
        with pytest.raises(FabricConfigError) as error:
            await Fabric().start_runtime(config, streaming=True, launch_collector=False)
        assert error.value.code == "relay_stream_header_env_unset"
        async with await Fabric().start_runtime(atof_config(tmp_path)) as runtime:
            assert not runtime.supports_streaming
            with pytest.raises(FabricCapabilityError) as capability:
                runtime.invoke_stream(input="x")
            assert capability.value.code == "streaming_unavailable"

    asyncio.run(main())


def fabric_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("debug", "release"):
        if (target / profile / "fabric").exists():
            return target / profile / "fabric"
    pytest.skip("the fabric CLI is missing; build it: cargo build -p fabric-cli")


def test_external_collector_serves_the_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = subprocess.Popen(
        [str(fabric_binary()), "collector", "serve", "--listen", "127.0.0.1:0"],
        env=dict(os.environ, FABRIC_COLLECTOR_TOKEN=TOKEN),
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        base = json.loads(server.stdout.readline())["base_url"]
        monkeypatch.setenv("ATOF_TEST_COLLECTOR_AUTH", f"Bearer {TOKEN}")
        config = atof_config(tmp_path, sink_url=base,
                             header_env={"Authorization": "ATOF_TEST_COLLECTOR_AUTH"})

        async def main() -> None:
            runtime = await Fabric().start_runtime(config, streaming=True, launch_collector=False)
            async with runtime:
                assert runtime.supports_streaming
                records, result = await one_turn(runtime, "records:3")
                check_turn(records, result, 3)
                records, result = await one_turn(runtime, "records:1")
                check_turn(records, result, 1)

        asyncio.run(main())
        # A wrong credential: the collector refuses the registration.
        monkeypatch.setenv("ATOF_TEST_COLLECTOR_AUTH", "Bearer wrong")

        async def refused() -> None:
            async with await Fabric().start_runtime(config, streaming=True, launch_collector=False) as runtime:
                with pytest.raises(FabricRuntimeError) as error:
                    runtime.invoke_stream(input="x")
                assert error.value.code == "collector_request_failed"
                assert "HTTP 401" in str(error.value)
                assert TOKEN not in str(error.value)

        asyncio.run(refused())
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=10)
