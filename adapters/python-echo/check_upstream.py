"""Run fabric.python-echo under UPSTREAM nemo-fabric 0.5.0 and check the results.

Usage (in an environment with nemo-fabric==0.5.0 and this package installed):

    python adapters/python-echo/check_upstream.py [--json]

Runs `Fabric().run(config, input=...)` (one cold lifecycle) and a warm two-turn runtime,
checks echo, turn state and a failed result, and prints one JSON summary line. Exits 0
when every check passes, 1 otherwise. The side-by-side tests reuse `upstream_config()`
and the summary shape.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def upstream_config(**settings: Any):
    """An upstream FabricConfig selecting fabric.python-echo.

    `discovery.local_paths` points at this directory so the check also works when the
    descriptor was not installed under share/nemo-fabric (e.g. an editable install).
    """
    from nemo_fabric import FabricConfig

    return FabricConfig.model_validate(
        {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "python-echo-upstream-check"},
            "harness": {"adapter_id": "fabric.python-echo", "settings": settings},
            "discovery": {"local_paths": [str(HERE)]},
            "instructions": {"system": {"content": "Echo politely.", "mode": "append"}},
            "runtime": {"timeout_seconds": 60},
        }
    )


def _mapping(result: Any) -> dict[str, Any]:
    for name in ("to_mapping", "to_dict"):
        method = getattr(result, name, None)
        if callable(method):
            return method()
    return dict(result)


async def _check() -> dict[str, Any]:
    from nemo_fabric import Fabric, RunRequest

    fabric = Fabric()
    checks: dict[str, bool] = {}
    config = upstream_config(prefix="echo: ")

    cold = _mapping(await fabric.run(config, input="hello upstream"))
    checks["run_succeeded"] = cold.get("status") == "succeeded"
    checks["run_echo"] = (cold.get("output") or {}).get("response") == "echo: hello upstream"
    checks["run_system_instruction"] = (cold.get("output") or {}).get("metadata", {}).get(
        "system_instruction"
    ) == {"content": "Echo politely.", "mode": "append"}

    runtime = await fabric.start_runtime(config)
    try:
        first = _mapping(await runtime.invoke(input="one"))
        second = _mapping(await runtime.invoke(input={"text": "two"}))
        failed = _mapping(
            await runtime.invoke(
                request=RunRequest(
                    input="three",
                    context={"scripted": {"fail": {"code": "echo_refused", "message": "asked to fail"}}},
                )
            )
        )
    finally:
        await runtime.stop()
    checks["warm_turn_1"] = first["output"]["turn"] == 1 and first["output"]["previous_input"] is None
    checks["warm_turn_2"] = second["output"]["turn"] == 2 and second["output"]["previous_input"] == "one"
    checks["failed_result"] = failed.get("status") == "failed" and (failed.get("error") or {}).get(
        "code"
    ) == "echo_refused"
    return {
        "ok": all(checks.values()),
        "checks": checks,
        "adapter_id": cold.get("adapter_id"),
        "adapter_kind": cold.get("adapter_kind"),
        "output": cold.get("output"),
    }


def main() -> int:
    # Upstream launches `$ADAPTER_PYTHON -m fabric_python_echo` (else $VIRTUAL_ENV/bin/python,
    # else python3 on PATH); run the adapter with this interpreter unless told otherwise.
    if not os.environ.get("ADAPTER_PYTHON") and not os.environ.get("VIRTUAL_ENV"):
        os.environ["ADAPTER_PYTHON"] = sys.executable
    try:
        import nemo_fabric  # noqa: F401
    except ImportError:
        print(json.dumps({"ok": False, "error": "nemo_fabric (upstream) is not importable"}))
        return 1
    summary = asyncio.run(_check())
    print(json.dumps(summary, sort_keys=True))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
