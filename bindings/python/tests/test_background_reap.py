"""``Fabric.run`` returns once the adapter host acknowledged ``stop``: a (prewarmed) host that
keeps running after its answer is ended by the core's stop escalation in the background, its
temporary FABRIC_HOME is removed after its exit, and nothing is left behind."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from fabric_core import Fabric
from fcsupport import scripted_config
from test_embedder_death import _alive
from test_prewarm import _eventually


def test_run_returns_at_the_stop_answer_and_the_lingering_host_is_ended_after(scripted_built) -> None:
    # The host answers `stop`, then sleeps a minute: only SIGTERM after the 2 s grace ends it.
    config = scripted_config(["echo: {input}"], exit_delay_ms=60000)
    fabric = Fabric()

    async def main() -> None:
        with fabric.prewarm(config, hosts=1):
            began = time.monotonic()
            result = await fabric.run(config, input="hi")
            took = time.monotonic() - began
            assert result.status == "succeeded", result
            assert took < 1.8, f"run took {took:.3f} s"
            mapping = result.to_mapping()
            assert "stop_error" not in mapping["metadata"]
            (stop,) = [e for e in mapping["events"] if e["kind"] == "runtime_stop"]
            assert stop["metadata"]["host_reaped"] is False
            assert stop["metadata"]["host_exit"] is None
            pid = int(mapping["metadata"]["host_pid"])
            home = Path(mapping["metadata"]["fabric_home"])
            assert _alive(pid), "the host still runs its exit delay"
            assert home.is_dir(), "kept until the host exited"
            _eventually("the lingering host ended by the escalation", lambda: not _alive(pid))
            _eventually("the temporary FABRIC_HOME removed", lambda: not home.exists())

    asyncio.run(main())
