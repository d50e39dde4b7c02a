"""Non-blocking native calls: ``Runtime.invoke`` and ``Fabric.run`` complete without a worker
thread (the loop watches the operation's readiness descriptor), concurrently, and survive
cancellation; the descriptor is closed exactly once, by the core."""

from __future__ import annotations

import asyncio
import ctypes
import os
import stat

import pytest

from fabric_core import Fabric, RunRequest, _ffi, _util


def slow(text: str, ms: int) -> RunRequest:
    return RunRequest(input=text, context={"scripted": {"sleep_ms": ms}})


@pytest.fixture
def no_worker_threads(monkeypatch):
    """Any use of the binding's worker pool fails the test."""

    import fabric_core.runtime as runtime_module

    monkeypatch.setattr(_util, "to_thread", _refuse)
    monkeypatch.setattr(runtime_module, "to_thread", _refuse)


def test_many_runtimes_start_invoke_and_stop_without_worker_threads(scripted, no_worker_threads) -> None:
    config = scripted()  # echo
    runtimes_count, rounds = 16, 5

    async def main() -> list[list[str]]:
        runtimes = await asyncio.gather(*(Fabric().start_runtime(config) for _ in range(runtimes_count)))
        try:
            out = []
            for round_index in range(rounds):
                results = await asyncio.gather(
                    *(
                        runtime.invoke(request=slow(f"{round_index}-{index}", 5))
                        for index, runtime in enumerate(runtimes)
                    )
                )
                out.append([result.output.response for result in results])
            return out
        finally:
            await asyncio.gather(*(runtime.stop() for runtime in runtimes))

    responses = asyncio.run(main())
    assert responses == [[f"{r}-{i}" for i in range(runtimes_count)] for r in range(rounds)]


def _child_pids() -> set[int]:
    """Pids of this process's live children (adapter hosts are forked by the core)."""

    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(name))
    return found


def test_cancelled_start_ends_the_runtime_it_started(scripted) -> None:
    """A start cancelled while its host is starting still finishes (native work is not
    interrupted); the runtime it produced is stopped and freed, not leaked."""

    config = scripted(start_delay_ms=300)
    before = _child_pids()

    async def main() -> None:
        task = asyncio.create_task(Fabric().start_runtime(config))
        await asyncio.sleep(0.1)  # the host is starting
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert _child_pids() - before == set()


def _refuse(_function):
    raise AssertionError("a worker thread was used")


def test_run_without_worker_threads(config, no_worker_threads) -> None:
    async def main() -> list[str]:
        results = await asyncio.gather(*(Fabric().run(config, input=f"run {i}") for i in range(4)))
        return [result.output.response for result in results]

    assert asyncio.run(main()) == [f"echo: run {i}" for i in range(4)]


def test_run_errors_arrive_through_the_operation(no_worker_threads) -> None:
    from fabric_core import FabricConfig, FabricError

    config = FabricConfig.from_mapping(
        {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "no-such-adapter"},
            "harness": {"adapter_id": "fabric.no-such-adapter"},
        }
    )

    async def main() -> None:
        with pytest.raises(FabricError) as caught:
            await Fabric().run(config, input="x")
        assert caught.value.code

    asyncio.run(main())


def _open_sockets() -> set[tuple[int, int]]:
    """(fd, inode) of every socket this process has open."""

    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            info = os.stat(int(name))
        except OSError:
            continue
        if stat.S_ISSOCK(info.st_mode):
            found.add((int(name), info.st_ino))
    return found


def test_cancelled_invoke_finishes_and_no_descriptor_is_spent_per_call(config) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(config) as runtime:
            await runtime.invoke(input="warm")  # the loop's completion queue exists now
            before = _open_sockets()
            task = asyncio.create_task(runtime.invoke(request=slow("cancelled", 300)))
            await asyncio.sleep(0.05)  # the operation is in flight
            assert _open_sockets() == before, "no socket per call: the loop's queue reports it"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The next invoke waits for the abandoned operation, then runs normally.
            result = await runtime.invoke(input="next")
            assert result.status == "succeeded"
            for index in range(20):
                await runtime.invoke(input=f"more {index}")
            assert _open_sockets() == before
            info = await runtime.status_info()
            assert info["state"] == "idle" and info["invocations"] == 23

    asyncio.run(main())


def test_operation_freed_before_completion_is_safe(config) -> None:
    """Through the raw ABI: begin, free at once, the runtime becomes idle again and the
    descriptor is closed; a second free is refused, never a crash."""

    library = _ffi.library()

    async def main() -> None:
        async with await Fabric().start_runtime(config) as runtime:
            handle = runtime._handle
            request = b'{"input": "freed", "context": {"scripted": {"sleep_ms": 200}}}'
            slot = ctypes.c_uint64(0)
            library.fabric_runtime_invoke_begin(
                handle, request, 0, ctypes.byref(slot), _ffi.out_slot()
            )
            fd = library.operation_ready_fd(slot.value)
            inode = os.fstat(fd).st_ino
            assert library.fabric_operation_free(slot.value) == _ffi.STATUS_OK
            assert library.fabric_operation_free(slot.value) == _ffi.STATUS_INVALID_ARGUMENT
            for _ in range(500):
                info = await runtime.status_info()
                if info["state"] == "idle":
                    break
                await asyncio.sleep(0.01)
            assert info["state"] == "idle"
            for _ in range(500):
                try:
                    if os.fstat(fd).st_ino != inode:
                        break
                except OSError:
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError("the operation's descriptor was never closed")
            result = await runtime.invoke(input="after")
            assert result.status == "succeeded"

    asyncio.run(main())
