"""Native OpenAI streaming through the binding: chunks, the separate result, early close,
consumer cancellation, one active turn, protocol errors, and the same chunks as upstream's
SDK with the python-echo adapter (written against upstream's common lifecycle host)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from fabric_core import Fabric, FabricRuntimeError, FabricStateError, RunRequest, RuntimeStatus
from fcsupport import ECHO_DIR, REPO

REPLY = "The quick brown fox jumps over the lazy dog."


def streaming(scripted, **stream):
    return scripted([REPLY], stream=stream)


def text_of(chunks):
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)


def test_chunks_then_result(scripted) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(streaming(scripted, chunk_chars=5)) as runtime:
            assert runtime.supports_openai_streaming
            stream = runtime.invoke_openai_stream(input="hi")
            chunks = [chunk async for chunk in stream]
            assert all(c["object"] == "chat.completion.chunk" for c in chunks)
            assert text_of(chunks) == REPLY and len(chunks) == 9
            result = await stream.result()
            assert result.status == "succeeded"
            assert result.invocation_id == stream.invocation_id
            assert result.output["response"] == REPLY
            # The runtime takes the next turn.
            assert (await runtime.invoke(input="next")).status == "succeeded"

    asyncio.run(main())


def test_early_close_does_not_cancel_the_turn(scripted) -> None:
    async def main() -> None:
        config = streaming(scripted, chunk_chars=1, delay_ms=5)
        async with await Fabric().start_runtime(config) as runtime:
            async with runtime.invoke_openai_stream(input="hi") as stream:
                first = await stream.__anext__()
                assert first["choices"][0]["delta"]["role"] == "assistant"
            # Closed: no more chunks; the turn still ran to its end.
            assert [c async for c in stream] == []
            assert (await stream.result()).output["response"] == REPLY
            assert runtime.status is RuntimeStatus.ACTIVE
            assert (await runtime.invoke(input="again")).status == "succeeded"

    asyncio.run(main())


def test_consumer_cancellation_closes_without_cancelling(scripted) -> None:
    async def main() -> None:
        config = streaming(scripted, chunk_chars=1, delay_ms=20)
        async with await Fabric().start_runtime(config) as runtime:
            stream = runtime.invoke_openai_stream(input="hi")

            async def consume() -> None:
                async for _chunk in stream:
                    pass

            task = asyncio.create_task(consume())
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The turn completed in the background; its result is intact.
            result = await stream.result()
            assert result.output["response"] == REPLY
            assert (await runtime.invoke(input="after")).status == "succeeded"

    asyncio.run(main())


def test_one_active_turn(scripted) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(streaming(scripted, delay_ms=10)) as runtime:
            stream = runtime.invoke_openai_stream(input="hi")
            with pytest.raises(FabricStateError) as second:
                runtime.invoke_openai_stream(input="again")
            assert second.value.code == "runtime_busy"
            with pytest.raises(FabricStateError):
                await runtime.invoke(input="again")
            with pytest.raises(FabricStateError):
                await runtime.stop()
            await stream.aclose()

    asyncio.run(main())


def test_protocol_error_fails_the_runtime(scripted) -> None:
    async def main() -> None:
        runtime = await Fabric().start_runtime(streaming(scripted, fault="gap", chunk_chars=4))
        stream = runtime.invoke_openai_stream(input="hi")
        with pytest.raises(FabricRuntimeError) as error:
            async for _chunk in stream:
                pass
        assert error.value.code == "openai_stream_protocol_error"
        assert error.value.stage == "invoke"
        assert error.value.details["http_status"] == 400
        assert runtime.status is RuntimeStatus.FAILED
        await runtime.stop()

    asyncio.run(main())


SCRIPT = r'''
import asyncio, json, sys
from MODULE import Fabric, FabricConfig

async def main():
    config = FabricConfig.from_mapping(json.loads(sys.argv[1]))
    runtime = await Fabric().start_runtime(config)
    try:
        assert runtime.supports_openai_streaming
        stream = runtime.invoke_openai_stream(input="a streamed reply of several chunks")
        chunks = [chunk async for chunk in stream]
        result = await stream.result()
        for chunk in chunks:
            chunk.pop("id"), chunk.pop("created")
        print(json.dumps({"chunks": chunks, "status": result.status,
                          "response": result.output["response"]}))
    finally:
        await runtime.stop()

asyncio.run(main())
'''


def run_script(module: str) -> dict:
    config = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    config["discovery"] = {"local_paths": [str(ECHO_DIR)]}
    env = dict(os.environ)
    env["ADAPTER_PYTHON"] = sys.executable
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ECHO_DIR / "src"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("MODULE", module), json.dumps(config)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_same_chunks_as_upstream_with_python_echo(scripted_built) -> None:
    try:
        import nemo_fabric  # noqa: F401
        import nemo_fabric_adapters.common  # noqa: F401
    except ImportError as error:
        pytest.skip(f"upstream packages missing: {error}")
    upstream = run_script("nemo_fabric")
    ours = run_script("fabric_core")
    assert ours["status"] == "succeeded"
    assert ours["response"] == "echo: a streamed reply of several chunks"
    assert len(ours["chunks"]) == 3
    assert ours == upstream


def test_chunks_arrive_through_the_readiness_descriptor_without_worker_waits(scripted, monkeypatch) -> None:
    from fabric_core import _ffi

    waits: list[int] = []
    pull = _ffi.Library.stream_next_batch

    def counted(self, handle: int, timeout_ms: int):
        if timeout_ms != 0:
            waits.append(timeout_ms)
        return pull(self, handle, timeout_ms)

    monkeypatch.setattr(_ffi.Library, "stream_next_batch", counted)

    async def main() -> None:
        config = streaming(scripted, chunk_chars=4, delay_ms=3)
        async with await Fabric().start_runtime(config) as runtime:
            stream = runtime.invoke_openai_stream(input="hi")
            assert stream._ready_fd is not None
            chunks = [chunk async for chunk in stream]
            assert text_of(chunks) == REPLY
            # Every chunk came through the event loop; a worker waited at most once, to
            # finish the stream (the adapter's answer).
            assert len(waits) <= 1, waits
            assert (await stream.result()).status == "succeeded"

    asyncio.run(main())
