"""Resource snapshots, invocation system stats and health checks through the C ABI."""

from __future__ import annotations

import asyncio
import time

import pytest

from fcsupport import echo_adapter_importable, echo_config_mapping

from fabric_core import (
    CheckReport,
    CheckRequest,
    Fabric,
    FabricConfig,
    FabricConfigError,
    FabricStateError,
    InvocationSystemStats,
    ResourceObservationUnavailableError,
    RunRequest,
    RuntimeResourceSnapshot,
    SampledStats,
    SystemStatsConfig,
    SystemStatsSamplingConfig,
)

MIB = 1024 * 1024


async def wait_busy(runtime, timeout: float = 10.0) -> None:
    """Poll the core's runtime state until an invocation is in flight."""

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (await runtime.status_info()).get("state") == "busy":
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the invocation never became busy")


# ---- through the native library ---------------------------------------------------


def sampled_config(scripted, interval_ms: int = 10) -> FabricConfig:
    config = scripted()
    config.system_stats = SystemStatsConfig(
        sampling=SystemStatsSamplingConfig(interval_ms=interval_ms, max_samples=10_000)
    )
    return config


def test_resource_snapshot_of_a_live_runtime_and_after_stop(config) -> None:
    async def main() -> None:
        runtime = await Fabric().start_runtime(config)
        try:
            snapshot = await runtime.resource_snapshot()
            assert isinstance(snapshot, RuntimeResourceSnapshot)
            assert snapshot.runtime_id == runtime.runtime_id
            assert snapshot.process_count >= 1
            assert snapshot.resident_memory_bytes > 0
            assert snapshot.cpu_time_seconds >= 0
            assert snapshot.observed_at.endswith("Z") and snapshot.started_at <= snapshot.observed_at
        finally:
            await runtime.stop()
        with pytest.raises(ResourceObservationUnavailableError):
            await runtime.resource_snapshot()

    asyncio.run(main())


def test_resource_snapshot_does_not_wait_for_a_pending_invoke(config) -> None:
    async def main() -> None:
        async with await Fabric().start_runtime(config) as runtime:
            pending = asyncio.ensure_future(
                runtime.invoke(request=RunRequest(input="x", context={"scripted": {"sleep_ms": 2000}}))
            )
            await wait_busy(runtime)
            started = time.monotonic()
            snapshot = await runtime.resource_snapshot()
            assert time.monotonic() - started < 1.5
            assert not pending.done()
            assert snapshot.process_count >= 1
            assert (await pending).succeeded

    asyncio.run(main())


def test_system_stats_present_by_default_and_disabled_by_null(scripted) -> None:
    async def main() -> None:
        config = scripted()
        async with await Fabric().start_runtime(config) as runtime:
            result = await runtime.invoke(input="hi")
        stats = result.system_stats
        assert isinstance(stats, InvocationSystemStats)
        assert stats.elapsed_seconds >= 0
        assert stats.before.status == "available" and stats.after.status == "available"
        assert stats.after.snapshot.runtime_id == result.runtime_id
        assert "process" in stats.collected_groups
        assert stats.sampled is None
        assert isinstance(result.resource_snapshot, RuntimeResourceSnapshot)

        disabled = scripted()
        disabled.system_stats = None
        assert disabled.to_mapping()["system_stats"] is None
        async with await Fabric().start_runtime(disabled) as runtime:
            result = await runtime.invoke(input="hi")
        assert result.system_stats is None

    asyncio.run(main())


def test_sampled_peak_and_cpu_estimate(scripted) -> None:
    async def main() -> None:
        config = sampled_config(scripted)
        async with await Fabric().start_runtime(config) as runtime:
            result = await runtime.invoke(
                request=RunRequest(
                    input="spike",
                    context={"scripted": {"memory_mib": [80, 400, 80], "step_ms": 300, "burn_cpu_ms": 300}},
                )
            )
        assert result.succeeded, result.error
        stats = result.system_stats
        sampled = stats.sampled
        assert isinstance(sampled, SampledStats)
        assert sampled.interval_ms == 10
        rss = sampled.resident_memory_bytes
        assert rss is not None and rss.sampled_peak >= 350 * MIB, rss
        assert rss.time_weighted_mean < rss.sampled_peak
        assert stats.cpu_time_seconds_estimate is not None and stats.cpu_time_seconds_estimate > 0.1

    asyncio.run(main())


def test_check_ready_passes_on_the_scripted_adapter(config) -> None:
    async def main() -> None:
        fabric = Fabric()
        async with await fabric.start_runtime(config) as runtime:
            report = await fabric.check(
                request=CheckRequest(scope="runtime", runtime_id=runtime.runtime_id, level="ready")
            )
            assert isinstance(report, CheckReport)
            assert report.outcome == "passed", report
            assert report.reason is None
            assert [c.level for c in report.checks] == ["live", "active", "ready"]
            assert report.schema_version == "fabric.check/v1alpha1"
            assert report.target["runtime_id"] == runtime.runtime_id
            assert report.activity == "idle"
            live = await fabric.check(request=CheckRequest(runtime_id=runtime.runtime_id))
            assert live.level == "live" and [c.level for c in live.checks] == ["live"]
            runtime_id = runtime.runtime_id
        after = await fabric.check(request=CheckRequest(runtime_id=runtime_id, level="ready"))
        assert (after.outcome, after.reason) == ("unknown", "runtime_unavailable")
        unknown = await fabric.check(request=CheckRequest(runtime_id="runtime-does-not-exist"))
        assert (unknown.outcome, unknown.reason) == ("unknown", "runtime_unavailable")
        server = await fabric.check(request=CheckRequest(scope="server"))
        assert (server.outcome, server.reason) == ("unsupported", "unsupported_scope")
        with pytest.raises(FabricConfigError) as caught:
            await fabric.check(request=CheckRequest(scope="runtime"))
        assert caught.value.code == "invalid_check_request"
        with pytest.raises(FabricConfigError):
            await fabric.check(request={"scope": "runtime", "runtime_id": "r", "bogus": 1})

    asyncio.run(main())


def test_check_in_an_environment_and_during_a_pending_invoke(config) -> None:
    async def main() -> None:
        fabric = Fabric()
        environment = await fabric.prepare_environment(config)
        try:
            runtime = await fabric.start_runtime_in(config, environment)
            try:
                pending = asyncio.ensure_future(
                    runtime.invoke(request=RunRequest(input="x", context={"scripted": {"sleep_ms": 2000}}))
                )
                await wait_busy(runtime)
                report = await fabric.check(
                    environment=environment,
                    request=CheckRequest(runtime_id=runtime.runtime_id, level="ready", timeout_seconds=1.0),
                )
                assert report.outcome == "passed", report
                assert report.activity == "busy"
                assert not pending.done(), "the check finished while the invoke was pending"
                assert (await pending).succeeded
            finally:
                await runtime.stop()
        finally:
            await fabric.release_environment(environment)
        with pytest.raises(FabricStateError) as caught:
            await fabric.check(environment=environment, request=CheckRequest(runtime_id=runtime.runtime_id))
        assert caught.value.code == "environment_released"

    asyncio.run(main())


def test_check_health_failure_and_stall_settings(scripted_built) -> None:
    from fcsupport import scripted_config

    async def main() -> None:
        fabric = Fabric()
        failing = scripted_config(health={"fail": "active"})
        async with await fabric.start_runtime(failing) as runtime:
            report = await fabric.check(request=CheckRequest(runtime_id=runtime.runtime_id, level="ready"))
            assert report.outcome == "failed"
            assert [c.level for c in report.checks] == ["live", "active"]
        stalling = scripted_config(health={"stall": "ready"})
        async with await fabric.start_runtime(stalling) as runtime:
            started = time.monotonic()
            report = await fabric.check(
                request=CheckRequest(runtime_id=runtime.runtime_id, level="ready", timeout_seconds=0.3)
            )
            took = time.monotonic() - started
            assert (report.outcome, report.reason) == ("unknown", "probe_timeout")
            assert took < 0.3 + 0.5

    asyncio.run(main())


def test_check_python_echo_is_unsupported_adapter() -> None:
    if not echo_adapter_importable():
        message = "python-echo adapter not installed (pip install -e adapters/python-echo)"
        pytest.skip(message)

    async def main() -> None:
        fabric = Fabric()
        config = FabricConfig.from_mapping(echo_config_mapping())
        async with await fabric.start_runtime(config) as runtime:
            report = await fabric.check(request=CheckRequest(runtime_id=runtime.runtime_id, level="ready"))
            assert (report.outcome, report.reason) == ("unsupported", "unsupported_adapter")

    asyncio.run(main())
