"""Shared services (issue 17) through ``fabric_core``: ``Fabric.prepare_service`` /
``attach_service``, ``start_runtime(service=)``, ``Service.release`` and service checks,
with the scripted adapter's service mode (a key-value store the service owns); and, side by
side with upstream's SDK (``nemo_fabric`` 0.5.0), the test-only python adapter
``tests/fixtures/service-adapter`` built on ``nemo_fabric_adapters.common``: the same
documents (handles, start payloads, outputs, errors) modulo ids and paths.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fcsupport import REPO, binding_paths, interpreter

KV_DIR = REPO / "tests" / "fixtures" / "service-adapter"


def kv(op: str, key: str, value: Any = None):
    from fabric_core import RunRequest

    spec: dict[str, Any] = {"op": op, "key": key}
    if value is not None:
        spec["value"] = value
    return RunRequest(input="kv", context={"scripted_kv": spec})


def test_two_runtimes_share_one_scripted_service(scripted, tmp_path: Path) -> None:
    from fabric_core import (
        CheckRequest,
        Fabric,
        FabricConfig,
        FabricConfigError,
        FabricRuntimeError,
        Service,
        ServiceInUseError,
        ServiceStatus,
    )

    config = scripted()

    async def main() -> None:
        fabric = Fabric()
        async with await fabric.prepare_service(config, base_dir=tmp_path) as service:
            assert isinstance(service, Service)
            assert service.status is ServiceStatus.ACTIVE
            handle = service.handle
            assert handle["ownership"] == "fabric_owned"
            assert handle["service_type"] == "scripted_kv"
            assert handle["service_binding"].startswith("fabric-service-binding-")
            first = await fabric.start_runtime(config, base_dir=tmp_path, service=service)
            async with await fabric.start_runtime(config, base_dir=tmp_path, service=service) as second:
                assert first.handle["service_id"] == service.service_id
                assert (await first.invoke(request=kv("incr", "n"))).output["response"] == 1
                assert (await second.invoke(request=kv("incr", "n"))).output["response"] == 2
                await second.invoke(request=kv("set", "who", "second"))
            # State outlives a runtime's stop.
            assert (await first.invoke(request=kv("get", "who"))).output["response"] == "second"
            report = await fabric.check(
                service=service,
                request=CheckRequest(scope="service", service_id=service.service_id, level="live"),
            )
            assert report.outcome == "passed", report
            with pytest.raises(ServiceInUseError) as in_use:
                await service.release()
            assert isinstance(in_use.value, FabricRuntimeError)
            assert (in_use.value.stage, in_use.value.code) == ("stop", "service_in_use")
            assert in_use.value.details["fields"] == [first.runtime_id]
            assert service.status is ServiceStatus.ACTIVE
            other = FabricConfig.from_mapping({**config.to_mapping(), "metadata": {"name": "other"}})
            with pytest.raises(FabricConfigError) as mismatch:
                await fabric.start_runtime(other, base_dir=tmp_path, service=service)
            assert mismatch.value.code == "service_binding_mismatch"
            assert mismatch.value.details["fields"] == ["metadata.name"]
            await first.stop()
        assert service.status is ServiceStatus.RELEASED
        await service.release()  # idempotent
        report = await fabric.check(
            request=CheckRequest(scope="service", service_id=service.service_id)
        )
        assert (report.outcome, report.reason) == ("unknown", "service_unavailable")
        with pytest.raises(FabricConfigError, match="service must be active"):
            await fabric.start_runtime(config, base_dir=tmp_path, service=service)
        with pytest.raises(FabricConfigError, match="service must be a Service"):
            await fabric.start_runtime(config, service=dict(handle))  # type: ignore[arg-type]

    asyncio.run(main())


def test_attach_shares_the_callers_store_and_release_detaches(scripted, tmp_path: Path) -> None:
    from fabric_core import Fabric, ServiceReference

    config = scripted()

    async def main() -> None:
        fabric = Fabric()
        async with await fabric.prepare_service(config, base_dir=tmp_path) as owner:
            reference = ServiceReference.from_mapping(
                {
                    "adapter_id": "fabric.scripted",
                    "service_type": "scripted_kv",
                    "connection": dict(owner.handle["connection"]),
                }
            )
            async with await fabric.attach_service(config, reference, base_dir=tmp_path) as attached:
                assert attached.handle["ownership"] == "caller_owned"
                async with await fabric.start_runtime(config, base_dir=tmp_path, service=attached) as rt:
                    await rt.invoke(request=kv("set", "k", 7))
            async with await fabric.start_runtime(config, base_dir=tmp_path, service=owner) as rt:
                assert (await rt.invoke(request=kv("get", "k"))).output["response"] == 7

    asyncio.run(main())


def test_prepare_needs_the_service_capability(tmp_path: Path) -> None:
    from fabric_core import FabricCapabilityError, Fabric, FabricConfig

    config = FabricConfig.from_mapping(
        {
            "metadata": {"name": "plain"},
            "harness": {"adapter_id": "test.fabric.atof"},
            "discovery": {"local_paths": [str(REPO / "tests" / "fixtures" / "atof-adapter")]},
        }
    )
    with pytest.raises(FabricCapabilityError) as error:
        asyncio.run(Fabric().prepare_service(config, base_dir=tmp_path))
    assert error.value.code == "service_unsupported"


# Run under MODULE (nemo_fabric or fabric_core) in a fresh interpreter; prints one JSON line.
SCRIPT = r'''
import asyncio, json, os, sys
from MODULE import Fabric, FabricConfig, RunRequest, ServiceReference

spec = json.loads(sys.argv[1])


def config(**extra):
    return FabricConfig.from_mapping({**spec["config"], **extra})


def error(e):
    return {"class": type(e).__name__, "stage": getattr(e, "stage", None), "message": str(e)}


async def main():
    fabric, out = Fabric(), {}
    service = await fabric.prepare_service(config())
    out["handle"] = dict(service.handle.to_mapping() if hasattr(service.handle, "to_mapping") else service.handle)
    first = await fabric.start_runtime(config(), service=service)
    second = await fabric.start_runtime(config(), service=service)
    out["runtime_service_ids"] = [first.handle["service_id"] == service.service_id,
                                  second.handle["service_id"] == service.service_id]
    outputs = []
    for runtime, text in [(first, "incr:n"), (second, "incr:n"), (second, "set:who=second")]:
        outputs.append((await runtime.invoke(request=RunRequest(input=text))).output["response"])
    await second.stop()
    outputs.append((await first.invoke(request=RunRequest(input="get:who"))).output["response"])
    out["outputs"] = outputs
    try:
        await service.release()
        out["release_in_use"] = None
    except Exception as e:
        out["release_in_use"] = error(e)
    out["status_after_refusal"] = service.status.value
    try:
        await fabric.start_runtime(config(metadata={"name": "other"}), service=service)
        out["mismatch"] = None
    except Exception as e:
        out["mismatch"] = error(e)
    await first.stop()
    reference = ServiceReference.from_mapping({
        "adapter_id": out["handle"]["adapter_id"], "service_type": "kv_store",
        "connection": out["handle"]["connection"]})
    attached = await fabric.attach_service(config(), reference)
    out["attached"] = dict(attached.handle.to_mapping() if hasattr(attached.handle, "to_mapping") else attached.handle)
    await attached.release()
    await service.release()
    out["status_released"] = service.status.value
    try:
        await fabric.start_runtime(config(), service=service)
        out["start_released"] = None
    except Exception as e:
        out["start_released"] = error(e)
    print(json.dumps(out))


asyncio.run(main())
'''


def run(module: str, base: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    python = interpreter()
    trace = base / f"{module}-trace.jsonl"
    env = dict(os.environ)
    env["ADAPTER_PYTHON"] = python
    env["SERVICE_KV_TRACE"] = str(trace)
    paths = [str(KV_DIR), *binding_paths(), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in paths)
    env.pop("VIRTUAL_ENV", None)
    spec = {
        "config": {
            "metadata": {"name": "kv"},
            "harness": {"adapter_id": "test.fabric.service-kv"},
            "discovery": {"local_paths": [str(KV_DIR)]},
            "environment": {"workspace": str(base)},
        }
    }
    result = subprocess.run(
        [python, "-c", SCRIPT.replace("MODULE", module), json.dumps(spec)],
        cwd=base, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    out = json.loads(result.stdout.strip().splitlines()[-1])
    payloads = [json.loads(line) for line in trace.read_text().splitlines()]
    return out, payloads


def normalized_handle(handle: dict[str, Any]) -> dict[str, Any]:
    """The handle without process-local ids, the binding digest and paths."""

    kept = {k: v for k, v in handle.items() if k not in {"service_id", "service_binding", "connection"}}
    kept["connection_keys"] = sorted(handle.get("connection", {}))
    kept["binding_shape"] = handle["service_binding"][: len("fabric-service-binding-")] + str(
        len(handle["service_binding"])
    )
    return kept


def payload_shape(payload: dict[str, Any]) -> dict[str, Any]:
    """A start payload's service member, with ids and paths reduced to their shape."""

    service = dict(payload.get("service") or {})
    if "connection_path" in service:
        service["connection_path"] = Path(service["connection_path"]).name
    if "service_id" in service:
        service["service_id"] = service["service_id"].split("-")[0]
    if "reference" in service:
        service["reference"] = {**service["reference"], "connection": sorted(service["reference"]["connection"])}
    context = payload["runtime_context"]
    return {
        # Ours only: the software evidence control (`provenance`, provenance.md), which
        # upstream-built hosts ignore.
        "keys": sorted(key for key in payload if key != "provenance"),
        "service": service,
        "runtime_id_prefix": context["runtime_id"].split("-")[0],
        "start_id_prefix": "-".join(context["invocation_id"].split("-")[:2]),
    }


def test_service_documents_match_upstream(tmp_path: Path) -> None:
    upstream_dir, ours_dir = tmp_path / "upstream", tmp_path / "ours"
    upstream_dir.mkdir()
    ours_dir.mkdir()
    upstream, upstream_payloads = run("nemo_fabric", upstream_dir)
    ours, our_payloads = run("fabric_core", ours_dir)

    assert normalized_handle(ours["handle"]) == normalized_handle(upstream["handle"])
    assert normalized_handle(ours["attached"]) == normalized_handle(upstream["attached"])
    assert ours["runtime_service_ids"] == upstream["runtime_service_ids"] == [True, True]
    assert ours["outputs"] == upstream["outputs"] == [1, 2, "second", "second"]
    for key in ("status_after_refusal", "status_released"):
        assert ours[key] == upstream[key], key
    # Release with a connected runtime: a runtime error at stage stop in both (ours is the
    # ServiceInUseError subclass), naming the runtime.
    assert upstream["release_in_use"]["class"] == "FabricRuntimeError"
    assert ours["release_in_use"]["class"] == "ServiceInUseError"
    assert ours["release_in_use"]["stage"] == upstream["release_in_use"]["stage"] == "stop"
    assert "active runtimes" in ours["release_in_use"]["message"]
    # Starting on a released service: the same config error and message.
    assert ours["start_released"]["class"] == upstream["start_released"]["class"] == "FabricConfigError"
    assert "service must be active" in ours["start_released"]["message"]
    assert "service must be active" in upstream["start_released"]["message"]
    # A changed name: upstream raises a runtime error comparing two digests; ours is a
    # config error naming what differs.
    assert upstream["mismatch"]["class"] == "FabricRuntimeError"
    assert ours["mismatch"]["class"] == "FabricConfigError"
    assert "metadata.name" in ours["mismatch"]["message"]
    # The start payloads the adapter saw: prepare, connect, connect, attach.
    assert [payload_shape(p) for p in our_payloads] == [payload_shape(p) for p in upstream_payloads]
    assert [p["service"]["operation"] for p in our_payloads] == ["prepare", "connect", "connect", "attach"]
