"""Adapter hosts inherit no descriptor of the embedding program but stdio (issue 33, item 2).

The embedding Python process opens a file and makes its descriptor inheritable (no
close-on-exec, as a careless program or an old library would); a host that lists its own
``/proc/self/fd`` must not see it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from fabric_core import Fabric, FabricConfig

HOST = r'''
import json, os, sys

for raw in sys.stdin.buffer:
    message = json.loads(raw)
    operation = message["operation"]
    output = None
    if operation == "invoke":
        fds = sorted(int(name) for name in os.listdir("/proc/self/fd"))
        output = {"status": "succeeded", "output": {"response": json.dumps(fds)}}
    line = {"operation": operation, "outcome": {"status": "succeeded", "output": output}}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    if operation == "stop":
        break
'''

LEAKED = 211  # a number neither the host nor its interpreter would pick on its own


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_hosts_do_not_inherit_descriptors_without_cloexec(tmp_path: Path) -> None:
    script = tmp_path / "fds_host.py"
    script.write_text(HOST)
    descriptor = tmp_path / "fds.fabric-adapter.json"
    descriptor.write_text(
        json.dumps(
            {
                "contract_version": "fabric.adapter/v1alpha2",
                "adapter_id": "test.fds",
                "adapter_kind": "process",
                "runner": {"command": sys.executable, "script": str(script)},
            }
        )
    )
    config = FabricConfig.from_mapping(
        {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "fds"},
            "harness": {"adapter_id": "test.fds"},
            "discovery": {"local_paths": [str(descriptor)]},
        }
    )
    opened = os.open(os.devnull, os.O_RDONLY)
    os.dup2(opened, LEAKED, inheritable=True)
    os.close(opened)
    try:
        assert os.get_inheritable(LEAKED)

        async def main() -> list[int]:
            async with await Fabric().start_runtime(config, base_dir=tmp_path) as runtime:
                result = await runtime.invoke(input="fds")
                assert result.status == "succeeded", result.error
                return json.loads(result.output.response)

        fds = asyncio.run(main())
    finally:
        os.close(LEAKED)
    assert {0, 1, 2} <= set(fds), fds
    assert LEAKED not in fds, f"descriptor {LEAKED} of the embedding process reached the host: {fds}"
    # Beyond stdio the host holds only what its own interpreter opened (listdir's directory).
    assert len([fd for fd in fds if fd > 2]) <= 3, fds
