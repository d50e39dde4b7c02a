"""``capture_model_calls`` for a runtime in a provider environment: the gateway listens on
this machine's loopback, so the start is refused with ``model_call_capture_unsupported``
(before, the runtime started and silently captured nothing)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest

from fabric_core import EnvironmentConfig, Fabric, FabricError
from test_environment_ops import subprocess_provider_built


def test_capture_in_a_provider_environment_is_refused(scripted) -> None:
    subprocess_provider_built()
    tmp_path = Path(tempfile.mkdtemp(prefix="fc-", dir="/tmp"))
    config = scripted(["echo: {input}"])
    config.environment = EnvironmentConfig(provider="subprocess", settings={"root": str(tmp_path)})

    async def main() -> None:
        fabric = Fabric()
        with pytest.raises(FabricError) as refused:
            await fabric.start_runtime(config, capture_model_calls=True)
        assert refused.value.code == "model_call_capture_unsupported", refused.value
        assert refused.value.stage == "start"
        assert "subprocess" in refused.value.message
        # Without capture the same config starts a runtime there.
        async with await fabric.start_runtime(config) as runtime:
            result = await runtime.invoke(input="hi")
            assert result.status == "succeeded"

    try:
        asyncio.run(main())
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
