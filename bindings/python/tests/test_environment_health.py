"""Health checks routed through a provider environment (docs/health.md, "Checks in provider
environments"): the subprocess provider's runtime server answers server checks and selects
the owned runtime for runtime checks, on an independent provider worker."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import pytest

from fcsupport import REPO
from fabric_core import CheckRequest, EnvironmentConfig, Fabric, FabricRuntimeError, RunRequest


@pytest.fixture
def probed(scripted):
    """A factory of prepared subprocess environments for the probes: ``probed(**settings)``
    gives ``(fabric, environment, config)`` for a scripted config with those settings. What
    a test did not release is released at its end, and each root is removed."""

    if not (REPO / "target" / "debug" / "fabric-env-subprocess").exists():
        pytest.fail("fabric-env-subprocess is missing; build it: cargo build -p fabric-cli")
    made = []

    def prepare(**settings):
        # unix socket paths are short (108 bytes): pytest's tmp_path is too deep
        root = Path(tempfile.mkdtemp(prefix="fc-", dir="/tmp"))
        config = scripted(["echo: {input}"], **settings)
        config.environment = EnvironmentConfig(provider="subprocess", settings={"root": str(root)})
        fabric = Fabric()
        environment = asyncio.run(fabric.prepare_environment(config))
        made.append((fabric, environment, root))
        return fabric, environment, config

    yield prepare
    for fabric, environment, root in made:
        if not environment.info.get("released"):
            asyncio.run(fabric.release_environment(environment))
        root.rmdir()


async def wait_busy(runtime, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (await runtime.status_info()).get("state") == "busy":
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the invocation never became busy")


def test_server_and_runtime_checks_pass_inside_the_environment_also_during_an_invoke(probed) -> None:
    fabric, environment, config = probed()

    async def main() -> None:
        server = await fabric.check(environment=environment, request=CheckRequest(scope="server"))
        assert (server.outcome, server.level) == ("passed", None), server
        assert [c.source_id for c in server.checks] == ["fabric:runtime_server"]
        # without a provider environment a server check stays unsupported
        local = await fabric.check(request=CheckRequest(scope="server"))
        assert (local.outcome, local.reason) == ("unsupported", "unsupported_scope")

        runtime = await fabric.start_runtime_in(config, environment)
        try:
            request = CheckRequest(runtime_id=runtime.runtime_id, level="ready")
            report = await fabric.check(environment=environment, request=request)
            assert report.outcome == "passed", report
            assert [c.level for c in report.checks] == ["live", "active", "ready"]
            assert report.target.runtime_id == runtime.runtime_id
            assert report.activity == "idle"
            # the environment is found from the runtime id alone as well
            assert (await fabric.check(request=request)).outcome == "passed"

            pending = asyncio.ensure_future(
                runtime.invoke(request=RunRequest(input="x", context={"scripted": {"sleep_ms": 5000}}))
            )
            await wait_busy(runtime)
            # the core's runtime is busy once the request is sent; the runtime server inside
            # the environment sees it a moment later (on a loaded machine): ask again until then
            deadline = time.monotonic() + 2.5
            while True:
                busy = await fabric.check(
                    environment=environment,
                    request=CheckRequest(runtime_id=runtime.runtime_id, level="ready", timeout_seconds=1.5),
                )
                assert busy.outcome == "passed", busy
                assert busy.elapsed_ms < 1500
                if busy.activity == "busy" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.02)
            assert busy.activity == "busy", busy
            assert not pending.done(), "the check waited for the invocation"
            assert (await pending).succeeded
        finally:
            await runtime.stop()
        stopped = await fabric.check(
            environment=environment, request=CheckRequest(runtime_id=runtime.runtime_id, level="ready")
        )
        assert (stopped.outcome, stopped.reason, stopped.checks) == ("unknown", "runtime_unavailable", ())

    asyncio.run(main())


def test_a_failing_level_and_a_stalled_probe_inside_the_environment(probed) -> None:
    fabric, environment, config = probed(health={"fail": "active"})

    async def main() -> None:
        async with await fabric.start_runtime_in(config, environment) as runtime:
            report = await fabric.check(
                environment=environment, request=CheckRequest(runtime_id=runtime.runtime_id, level="ready")
            )
            assert (report.outcome, report.reason) == ("failed", "scripted_failure"), report
            assert [(c.level, c.outcome) for c in report.checks] == [("live", "passed"), ("active", "failed")]

        stalling = config
        stalling.harness.settings["health"] = {"stall": "ready"}
        async with await fabric.start_runtime_in(stalling, environment) as runtime:
            started = time.monotonic()
            report = await fabric.check(
                environment=environment,
                request=CheckRequest(runtime_id=runtime.runtime_id, level="ready", timeout_seconds=0.5),
            )
            took = time.monotonic() - started
            assert (report.outcome, report.reason) == ("unknown", "probe_timeout"), report
            assert took < 0.5 + 0.5, took
            # the runtime is healthy up to `active`, and the environment still answers
            report = await fabric.check(
                environment=environment, request=CheckRequest(runtime_id=runtime.runtime_id, level="active")
            )
            assert report.outcome == "passed", report

    asyncio.run(main())


async def stalled_check(fabric, environment, runtime):
    """A `ready` check of a runtime whose probe stalls for the whole 5 s budget, running:
    what the test does meanwhile lands during the probe."""

    check = asyncio.ensure_future(
        fabric.check(
            environment=environment,
            request=CheckRequest(runtime_id=runtime.runtime_id, level="ready", timeout_seconds=5),
        )
    )
    await asyncio.sleep(0.5)
    assert not check.done()
    return check


def test_releasing_the_environment_during_a_probe_is_observation_changed(probed) -> None:
    fabric, environment, config = probed(health={"stall": "ready"})

    async def main() -> None:
        runtime = await fabric.start_runtime_in(config, environment)
        check = await stalled_check(fabric, environment, runtime)
        await fabric.release_environment(environment)
        report = await check
        assert (report.outcome, report.reason, report.checks) == ("unknown", "observation_changed", ())
        with pytest.raises(FabricRuntimeError):
            await runtime.stop()  # its server went with the environment

    asyncio.run(main())


def test_stopping_the_runtime_during_a_probe_is_observation_changed(probed) -> None:
    fabric, environment, config = probed(health={"stall": "ready"})

    async def main() -> None:
        runtime = await fabric.start_runtime_in(config, environment)
        check = await stalled_check(fabric, environment, runtime)
        await runtime.stop()
        report = await check
        assert (report.outcome, report.reason, report.checks) == ("unknown", "observation_changed", ())
        assert report.elapsed_ms < 5000

    asyncio.run(main())
