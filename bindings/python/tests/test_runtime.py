"""Runtime lifecycle: multi-turn, concurrency, cancellation, finalizers, environments."""

from __future__ import annotations

import asyncio
import gc
import os
import time

import pytest

from fabric_core import (
    EnvironmentHandle,
    Fabric,
    FabricStateError,
    RunRequest,
    Runtime,
    RuntimeStatus,
)


def slow(text: str, ms: int) -> RunRequest:
    """A request the scripted adapter answers after ``ms`` milliseconds."""

    return RunRequest(input=text, context={"scripted": {"sleep_ms": ms}})


def process_gone(pid: int, timeout: float = 20.0) -> bool:
    """Whether ``pid`` exits (and is reaped) before the deadline."""

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_multi_turn_keeps_state(config) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(config) as runtime:
            assert isinstance(runtime, Runtime)
            assert runtime.runtime_id.startswith("runtime-")
            assert runtime.status is RuntimeStatus.ACTIVE
            first = await runtime.invoke(input="one")
            second = await runtime.invoke(request=RunRequest(input="two", request_id="request-2"))
            assert first.output.response == "echo: one"
            assert second.output.response == "turn 2: one"
            assert second.request_id == "request-2"
            assert first.runtime_id == second.runtime_id == runtime.runtime_id
            assert first.invocation_id != second.invocation_id
            assert [item["request_id"] for item in runtime.invocations] == [
                first.request_id,
                "request-2",
            ]
            info = await runtime.status_info()
            assert info["state"] == "idle" and info["invocations"] == 2
        assert runtime.status is RuntimeStatus.STOPPED
        assert runtime.native_handle == 0
        assert any(event["kind"] == "runtime_stop" for event in runtime.stop_result["events"])
        await runtime.stop()  # idempotent

    asyncio.run(main())


def test_overlapping_invokes_raise_state_error(config) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(config) as runtime:
            first = asyncio.create_task(runtime.invoke(request=slow("slow", 300)))
            await asyncio.sleep(0)  # let the first call claim the runtime
            with pytest.raises(FabricStateError) as info:
                await runtime.invoke(input="overlap")
            assert info.value.code == "runtime_busy"
            with pytest.raises(FabricStateError):
                await runtime.stop()
            result = await first
            assert result.output.response == "echo: slow"
            after = await runtime.invoke(input="after")
            assert after.status == "succeeded"

    asyncio.run(main())


def test_gather_over_runtimes_runs_concurrently(scripted) -> None:
    config = scripted()  # echo
    delay_ms = 600
    count = 10  # more than the default executor's min(32, cpus + 4) workers on small machines

    async def one(index: int) -> str:
        async with await Fabric().start_runtime(config) as runtime:
            result = await runtime.invoke(request=slow(f"job-{index}", delay_ms))
            return result.output.response

    async def main() -> tuple[list[str], float]:
        started = time.monotonic()
        responses = await asyncio.gather(*(one(i) for i in range(count)))
        return responses, time.monotonic() - started

    responses, elapsed = asyncio.run(main())
    assert responses == [f"job-{i}" for i in range(count)]
    # Serial execution takes count * delay; a worker cap of 6 would take 2 * delay.
    assert elapsed < 2 * delay_ms / 1000, elapsed


def test_gather_over_run_calls(config) -> None:
    async def main() -> list[str]:
        results = await asyncio.gather(
            Fabric().run(config, input="Review patch A"),
            Fabric().run(config, input="Review patch B"),
        )
        return [result.output.response for result in results]

    assert asyncio.run(main()) == ["echo: Review patch A", "echo: Review patch B"]


def test_cancellation_does_not_corrupt_the_runtime(config) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(config) as runtime:
            task = asyncio.create_task(runtime.invoke(request=slow("cancelled", 400)))
            await asyncio.sleep(0)  # let the task reach its native call
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert runtime.status is RuntimeStatus.ACTIVE
            # The next invoke waits for the abandoned native call, then runs normally.
            result = await runtime.invoke(input="next")
            assert result.status == "succeeded"
            assert result.output.response == "turn 2: cancelled"
            info = await runtime.status_info()
            assert info["state"] == "idle" and info["invocations"] == 2

    asyncio.run(main())


def test_cancelled_run_still_stops_its_runtime(config) -> None:
    async def main() -> None:
        task = asyncio.create_task(Fabric().run(config, request=slow("x", 300)))
        await asyncio.sleep(0)  # let the task reach its native call
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_finalizer_stops_an_unclosed_runtime(config) -> None:
    async def start() -> int:
        runtime = await Fabric().start_runtime(config)
        await runtime.invoke(input="hello")
        pid = int(runtime.handle["host_pid"])
        os.kill(pid, 0)  # the host is running
        return pid  # the runtime goes out of scope unclosed

    pid = asyncio.run(start())
    gc.collect()
    assert process_gone(pid), f"host {pid} still running after the runtime was collected"


def test_runtime_overrides_merge_below_request_overrides(config) -> None:
    async def main() -> None:
        runtime = await Fabric().start_runtime(config, overrides={"a": {"x": 1, "y": 1}})
        try:
            from fabric_core._util import request_payload

            payload = request_payload(
                input=None,
                request=RunRequest(input="i", overrides={"a": {"y": 2}}),
                overrides=runtime._overrides,
            )
            assert payload["overrides"] == {"a": {"x": 1, "y": 2}}
        finally:
            await runtime.stop()

    asyncio.run(main())


def test_overrides_reach_the_scripted_adapter_as_extensions(config) -> None:
    from fabric_core import FabricRuntimeError

    async def main() -> None:
        fabric = Fabric()
        runtime = await fabric.start_runtime(config, overrides={"temperature": 0.5})
        try:
            result = await runtime.invoke(input="x")
            assert result.output["metadata"]["temperature"] == 0.5
            result = await runtime.invoke(request=RunRequest(input="x", overrides={"temperature": 1.5}))
            assert result.output["metadata"]["temperature"] == 1.5
            with pytest.raises(FabricRuntimeError) as caught:
                await runtime.invoke(request=RunRequest(input="x", overrides={"temperature": "s3cret"}))
            error = caught.value
            assert (error.code, error.stage) == ("request_extension_invalid", "invoke")
            assert error.details["path"] == "request.extensions.temperature"
            assert "s3cret" not in str(error)
            # Like upstream's SDK, a FabricRuntimeError marks the Runtime object failed.
            with pytest.raises(FabricStateError):
                await runtime.invoke(input="after")
        finally:
            await runtime.stop()
        with pytest.raises(FabricRuntimeError) as caught:
            await fabric.run(config, request=RunRequest(input="x", overrides={"priority": 1}))
        assert caught.value.code == "request_extension_invalid"
        assert caught.value.details["path"] == "request.extensions.priority"

    asyncio.run(main())


def test_adapter_start_failure_keeps_its_cause(monkeypatch) -> None:
    from fcsupport import ECHO_DIR, echo_adapter_importable, echo_config_mapping

    from fabric_core import FabricConfig, FabricRuntimeError

    if not echo_adapter_importable():
        pytest.skip("fabric_python_echo / nemo_fabric_adapters are missing; install them: scripts/setup.sh (pip install -e adapters/python-echo)")
    mapping = echo_config_mapping()
    mapping["harness"]["settings"]["require_env"] = "FABRIC_TEST_UNSET_CREDENTIAL"
    monkeypatch.delenv("FABRIC_TEST_UNSET_CREDENTIAL", raising=False)
    # The host imports this checkout's adapter (an installed copy may be older).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ECHO_DIR / "src"), os.environ.get("PYTHONPATH")])))

    async def main() -> None:
        with pytest.raises(FabricRuntimeError) as caught:
            await Fabric().start_runtime(FabricConfig.from_mapping(mapping))
        error = caught.value
        assert (error.code, error.stage) == ("lifecycle_adapter_start_failed", "start")
        cause = "RuntimeError: the model-provider credential env var 'FABRIC_TEST_UNSET_CREDENTIAL' is not set"
        assert str(error).strip().splitlines()[-1].endswith(cause), str(error)
        assert cause in error.details["stderr_tail"]
        assert isinstance(error.details["host_pid"], int)

    asyncio.run(main())


def test_environment_lifecycle(config) -> None:
    async def main() -> None:
        fabric = Fabric()
        environment = await fabric.prepare_environment(config)
        assert isinstance(environment, EnvironmentHandle)
        assert environment.environment_id.startswith("environment-")
        assert environment.provider == "local"
        first = await fabric.start_runtime_in(config, environment)
        second = await fabric.start_runtime_in(config, environment)
        assert first.environment is environment
        assert first.runtime_id != second.runtime_id
        async with first, second:
            a = await first.invoke(input="a")
            b = await second.invoke(input="b")
            assert (a.output.response, b.output.response) == ("echo: a", "echo: b")
        await fabric.release_environment(environment)
        assert environment.released and environment.native_handle == 0
        await fabric.release_environment(environment)  # idempotent
        with pytest.raises(FabricStateError):
            await fabric.start_runtime_in(config, environment)

    asyncio.run(main())


def test_unreleased_environment_is_freed_by_its_finalizer(config) -> None:
    from fabric_core import _ffi

    async def prepare() -> int:
        environment = await Fabric().prepare_environment(config)
        return environment.native_handle

    handle = asyncio.run(prepare())
    gc.collect()
    library = _ffi.library()
    with pytest.raises(FabricStateError) as info:
        library.fabric_environment_release(handle, _ffi.out_slot())
    assert info.value.code == "stale_handle"


def test_native_handles_are_kind_checked(config) -> None:
    from fabric_core import _ffi

    async def main() -> None:
        runtime = await Fabric().start_runtime(config)
        library = _ffi.library()
        with pytest.raises(FabricStateError) as info:
            library.fabric_environment_release(runtime.native_handle, _ffi.out_slot())
        assert info.value.code == "wrong_handle_kind"
        handle = runtime.native_handle
        await runtime.stop()
        assert library.fabric_runtime_free(handle) == _ffi.STATUS_INVALID_ARGUMENT  # already freed
        assert library.fabric_runtime_free(0) == _ffi.STATUS_OK

    asyncio.run(main())


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="platform: needs /proc (Linux)")
def test_host_is_gone_after_stop(config) -> None:
    async def main() -> int:
        async with await Fabric().start_runtime(config) as runtime:
            return int(runtime.handle["host_pid"])

    pid = asyncio.run(main())
    assert process_gone(pid, timeout=5.0)


def test_remaining_runtime_and_environment_accessors(config, repo) -> None:
    async def main() -> None:
        fabric = Fabric()
        plan = fabric.plan(config, base_dir=repo)
        assert plan.base_dir_path == repo
        runtime = await fabric.start_runtime(config, base_dir=repo)
        assert runtime.messages == []
        assert runtime.environment is None
        assert runtime.handle["adapter_id"] == "fabric.scripted"
        assert "env" not in runtime.handle["environment"]  # values never leave the core
        assert repr(runtime).startswith("Runtime(runtime_id='runtime-")
        await runtime.aclose()
        assert runtime.status is RuntimeStatus.STOPPED
        info = await runtime.status_info()
        assert info == {"runtime_id": runtime.runtime_id, "state": "stopped"}

        environment = await fabric.prepare_environment(config, base_dir=repo)
        assert environment.to_mapping()["environment_id"] == environment.environment_id
        assert environment.info["handle"] == environment.native_handle
        with pytest.raises(TypeError):
            environment.info["x"] = 1  # type: ignore[index]
        await fabric.release_environment(environment)

    asyncio.run(main())


def test_environment_values_never_appear_in_outputs(scripted) -> None:
    import json as _json

    from fabric_core import EnvironmentConfig

    sentinel = "sentinel-secret-5f1c9d"
    config = scripted()
    config.environment = EnvironmentConfig(env={"FABRIC_TEST_SECRET": sentinel})

    async def main() -> list[str]:
        fabric = Fabric()
        outputs = []
        environment = await fabric.prepare_environment(config)
        outputs.append(_json.dumps(environment.to_mapping()))
        async with await fabric.start_runtime_in(config, environment) as runtime:
            outputs.append(_json.dumps(runtime.handle.to_mapping()))
            outputs.append(_json.dumps((await runtime.status_info()).to_mapping()))
            result = await runtime.invoke(input="hi")
            outputs.append(_json.dumps(result.to_mapping()))
        outputs.append(_json.dumps(runtime.stop_result))
        await fabric.release_environment(environment)
        return outputs

    outputs = asyncio.run(main())
    assert "FABRIC_TEST_SECRET" in outputs[0]  # the name is reported ...
    for text in outputs:
        assert sentinel not in text  # ... the value never is


def test_unclean_stop_is_reported_and_the_runtime_still_ends(scripted) -> None:
    from fabric_core import FabricRuntimeError

    config = scripted(ignore_stop=True)

    async def main() -> None:
        runtime = await Fabric().start_runtime(config)
        pid = int(runtime.handle["host_pid"])
        with pytest.raises(FabricRuntimeError) as info:
            await runtime.stop()
        assert info.value.stage == "stop"
        assert info.value.code == "timeout"
        assert runtime.status is RuntimeStatus.STOPPED
        assert runtime.stop_result["error"]["code"] == "timeout"
        assert process_gone(pid, timeout=5.0)
        await runtime.stop()  # no-op now

    asyncio.run(main())


def test_start_timeout_is_an_option_and_is_reported(scripted) -> None:
    """Issue 21 item 8: the start timeout is configurable and the error reports it."""

    from fabric_core import FabricConfigError, FabricRuntimeError

    config = scripted(start_delay_ms=20_000)

    async def main() -> None:
        began = time.monotonic()
        with pytest.raises(FabricRuntimeError) as info:
            await Fabric().start_runtime(config, start_timeout_seconds=0.5)
        assert time.monotonic() - began < 15
        assert (info.value.code, info.value.stage) == ("timeout", "start")
        assert info.value.details["timeout_ms"] == 500
        with pytest.raises(FabricRuntimeError) as info:
            await Fabric().run(config, input="x", start_timeout_seconds=0.5)
        assert info.value.details["timeout_ms"] == 500
        with pytest.raises(FabricConfigError) as info:
            await Fabric().start_runtime(config, start_timeout_seconds=0)
        assert info.value.code == "invalid_timeout_seconds"

    asyncio.run(main())
