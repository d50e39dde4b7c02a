"""Relay telemetry side by side with upstream ``nemo_fabric`` 0.5.0 (issue 14 items 1 and 7).

A recording adapter (written by the test, served by upstream's ``lifecycle.serve``) saves its
start payload, the ``FABRIC_RELAY_*`` variables it was launched with, the Relay config file
those name and every invoke context, and returns the ``relay_artifacts`` a request asks
for. The same script (only the import differs) runs it with Relay enabled, once with an
artifact root and once without. Everything the adapter saw and every result's artifact
manifest and telemetry references must agree (modulo ids and the paths under the root;
upstream lists absolute paths, ours are relative to the root), and the Relay config must
be private (0600 in a 0700 directory) under our core.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fcsupport import interpreter

RECORDER = r'''
import json, os, stat
from nemo_fabric_adapter_contract.models import AgentRunResult
from nemo_fabric_adapters.common import lifecycle

OUT = os.environ["RECORD_DIR"]
RELAY_VARS = ("FABRIC_RELAY_ENABLED", "FABRIC_RELAY_CONFIG_PATH")


def save(name, value):
    with open(os.path.join(OUT, name), "w") as handle:
        json.dump(value, handle, sort_keys=True, default=str)


class Recorder:
    async def start(self, payload):
        mapped = {k: (v.to_mapping() if hasattr(v, "to_mapping") else v) for k, v in payload.items()}
        save("start.json", mapped)
        save("start-env.json", {k: os.environ[k] for k in RELAY_VARS if k in os.environ})
        path = os.environ.get("FABRIC_RELAY_CONFIG_PATH")
        if path:
            with open(path, "rb") as handle:
                text = handle.read().decode()
            save("relay-config.json", {
                "text": text,
                "file_mode": stat.S_IMODE(os.stat(path).st_mode),
                "dir_mode": stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode),
            })

    async def invoke(self, request, context):
        save("invoke-%s.json" % request.input, context.to_mapping())
        output = {"echo": request.input}
        if "relay_artifacts" in request.context:
            output["relay_artifacts"] = request.context["relay_artifacts"]
        return AgentRunResult.from_mapping({"status": "succeeded", "output": output})

    async def stop(self):
        return None


lifecycle.serve(Recorder)
'''

DESCRIPTOR = {
    "contract_version": "fabric.adapter/v1alpha2",
    "adapter_id": "fabric.relay-recorder",
    "adapter_kind": "python",
    "runner": {"module": "relay_recorder"},
    "config": {"accepts": ["models"]},
    "telemetry": {"providers": {"relay": {"outputs": ["atif", "atof"], "integration_modes": ["hooks"]}}},
}

SCRIPT = r'''
import asyncio, json, sys
from MODULE import Fabric, FabricConfig, RunRequest

config = FabricConfig.from_mapping(json.loads(sys.argv[1]))
requests = json.loads(sys.argv[2])


async def main():
    out = []
    async with await Fabric().start_runtime(config) as runtime:
        for name, context in requests:
            result = await runtime.invoke(request=RunRequest(input=name, context=context))
            data = result.to_mapping()
            out.append({
                "status": data["status"],
                "artifacts": data["artifacts"],
                "telemetry": [ref.to_mapping() if hasattr(ref, "to_mapping") else dict(vars(ref)) for ref in result.telemetry],
            })
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
'''

IDS = re.compile(r"\b(runtime-start-request|runtime-start|runtime|invocation|request|environment)-[0-9a-f][0-9a-f-]*")


def normalize(value: Any, base: Path) -> Any:
    """Ids become ``<kind>``; paths under ``base`` become ``<base>/…``; manifest paths are
    compared relative to their root."""

    if isinstance(value, dict):
        return {key: normalize(item, base) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize(item, base) for item in value]
    if isinstance(value, str):
        return IDS.sub(lambda m: f"<{m.group(1)}>", value.replace(str(base), "<base>"))
    return value


def relative_manifest(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    root = manifest.get("root")
    entries = []
    for artifact in manifest["artifacts"]:
        entry = dict(artifact)
        if root and entry["path"].startswith(root + "/"):
            entry["path"] = entry["path"][len(root) + 1 :]
        entries.append(entry)
    return entries


def telemetry_ref(ref: dict[str, Any]) -> dict[str, Any]:
    ref = json.loads(json.dumps(ref))
    # TelemetryRef.to_mapping may omit nulls in one SDK: compare the documented fields.
    return {key: ref.get(key) for key in ("provider", "kind", "uri", "trace_id", "metadata")}


def run_side(python: str, module: str, base: Path, *, artifact_root: bool) -> dict[str, Any]:
    adapter, record, workspace = base / "adapter", base / "record", base / "ws"
    for directory in (adapter, record, workspace, base / "relay"):
        directory.mkdir(parents=True)
    (adapter / "recorder.fabric-adapter.json").write_text(json.dumps(DESCRIPTOR))
    (adapter / "relay_recorder.py").write_text(RECORDER)
    # Two files the adapter reports as Relay output, plus entries the core must skip.
    atif, atof = base / "relay" / "trajectory-s1.atif.json", base / "relay" / "events.atof.jsonl"
    atif.write_text("{}")
    atof.write_text("{}\n")
    environment: dict[str, Any] = {"workspace": str(workspace)}
    if artifact_root:
        environment["artifacts"] = str(base / "artifacts")
    config = {
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "relay-side"},
        "harness": {"adapter_id": "fabric.relay-recorder"},
        "discovery": {"local_paths": [str(adapter)]},
        "models": {"default": {"provider": "openai", "model": "m-1"}},
        "environment": environment,
        "telemetry": {"providers": {"relay": {}}},
        "relay": {
            "project": "side",
            "output_dir": str(base / "relay"),
            "observability": {
                "atif": {"enabled": True, "output_directory": str(base / "relay")},
                "atof": {
                    "enabled": True,
                    "sinks": [
                        {"type": "file", "output_directory": str(base / "relay")},
                        {"type": "stream", "name": "nemo-fabric-stream", "url": "http://127.0.0.1:9/atof",
                         "header_env": {"Authorization": "RELAY_SIDE_TOKEN"}},
                    ],
                },
            },
        },
    }
    requests = [
        ["plain", {}],
        ["reported", {"relay_artifacts": [
            {"kind": "atif", "path": str(atif)},
            {"kind": "atof", "path": str(atof)},
            {"kind": "atif", "path": str(atif)},
            {"kind": "otlp", "path": str(atof)},
            {"kind": "atif", "path": str(base / "relay" / "missing.json")},
            {"kind": "atof", "path": "relay/events.atof.jsonl"},
        ]}],
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_RELAY_")}
    env.update({"ADAPTER_PYTHON": python, "RECORD_DIR": str(record), "RELAY_SIDE_TOKEN": "sentinel-secret-4411"})
    inherited = [str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(adapter), *inherited])
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [python, "-c", SCRIPT.replace("MODULE", module), json.dumps(config), json.dumps(requests)],
        cwd=base, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    results = json.loads(result.stdout.strip().splitlines()[-1])
    seen = {path.name: json.loads(path.read_text()) for path in sorted(record.iterdir())}
    return {"results": results, "seen": seen}


def context_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    # Without a root upstream sends an empty context manifest as `{}`, ours as
    # `{"artifacts": [], "root": null}` (the same document to the adapter contract).
    return manifest if manifest.get("root") or manifest.get("artifacts") else {}


def compare_view(side: dict[str, Any], base: Path) -> dict[str, Any]:
    seen = side["seen"]
    start = seen["start.json"]
    view: dict[str, Any] = {
        "start_telemetry": start["runtime_context"].get("telemetry"),
        "start_artifacts": context_manifest(start["runtime_context"]["artifacts"]),
        "telemetry_plan": start.get("telemetry_plan"),
        "start_env": seen["start-env.json"],
        "invoke_telemetry": [seen[f"invoke-{n}.json"].get("telemetry") for n in ("plain", "reported")],
        "invoke_artifacts": [context_manifest(seen[f"invoke-{n}.json"]["artifacts"]) for n in ("plain", "reported")],
        "results": [
            {
                "status": r["status"],
                "root": r["artifacts"].get("root"),
                "artifacts": relative_manifest(r["artifacts"]),
                "telemetry": [telemetry_ref(t) for t in r["telemetry"]],
            }
            for r in side["results"]
        ],
    }
    if "relay-config.json" in seen:
        view["relay_config"] = json.loads(seen["relay-config.json"]["text"])
    return normalize(view, base)


def _require_sdks(python: str) -> None:
    probe = subprocess.run(
        [python, "-c", "import nemo_fabric, nemo_fabric_adapters.common, fabric_core"],
        capture_output=True, text=True, env=dict(os.environ),
    )
    if probe.returncode != 0:
        message = f"{python} lacks nemo_fabric / nemo_fabric_adapters / fabric_core:\n{probe.stderr}"
        pytest.skip(message)


@pytest.mark.parametrize("artifact_root", [True, False], ids=["artifact-root", "no-artifact-root"])
def test_relay_telemetry_matches_upstream(tmp_path: Path, artifact_root: bool) -> None:
    python = interpreter()
    _require_sdks(python)
    up_base, our_base = tmp_path / "up", tmp_path / "ours"
    upstream = run_side(python, "nemo_fabric", up_base, artifact_root=artifact_root)
    ours = run_side(python, "fabric_core", our_base, artifact_root=artifact_root)
    mine, theirs = compare_view(ours, our_base), compare_view(upstream, up_base)
    for key in theirs:
        assert mine.get(key) == theirs[key], key
    assert mine.keys() == theirs.keys()

    telemetry = mine["start_telemetry"]
    assert telemetry["relay_enabled"] is True
    assert telemetry["metadata"]["relay_project"] == "side"
    names = [[a["name"] for a in r["artifacts"]] for r in mine["results"]]
    if artifact_root:
        config_path = "<base>/artifacts/.fabric/<runtime>/<runtime-start>/relay-config.json"
        assert telemetry["config_path"] == config_path
        assert mine["start_env"] == {"FABRIC_RELAY_CONFIG_PATH": config_path, "FABRIC_RELAY_ENABLED": "true"}
        assert mine["relay_config"]["schema_version"] == "fabric.relay/v1alpha1"
        assert names == [["relay_config", "stdout"], ["relay_config", "stdout", "relay_atif", "relay_atof"]]
        mode = ours["seen"]["relay-config.json"]
        assert (mode["file_mode"], mode["dir_mode"]) == (0o600, 0o700)
        assert mine["results"][1]["telemetry"][0]["metadata"]["relay_config_path"] == config_path
    else:
        assert "config_path" not in telemetry and not telemetry.get("env")
        assert mine["start_env"] == {} and "relay_config" not in mine
        # Without a root a relative path is taken against the caller's working directory
        # (the script runs in `base`, where `relay/events.atof.jsonl` exists), as upstream.
        assert names == [[], ["relay_atif", "relay_atof", "relay_atof_2"]]
    # The header variable's value is never written (only its name travels).
    for path in (our_base / "artifacts").rglob("*") if artifact_root else ():
        if path.is_file():
            assert b"sentinel-secret-4411" not in path.read_bytes(), path
