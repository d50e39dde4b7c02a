"""Core-collected artifacts side by side with upstream ``nemo_fabric`` 0.5.0 (issue 15 items 2
and 6): the same script (only the import differs) runs a Python echo adapter that also writes
to stderr, in a git workspace the script edits between invocations, with an artifact root.

The artifact manifests must agree entry by entry: names, kinds, media types and the layout
under the root (``.fabric/<runtime>/<invocation>/<file>``; upstream's paths are absolute,
ours relative to the root), and so must the ``artifact_collect`` events and the contents of
``stdout.txt``, ``stderr.txt``, ``workspace.patch`` and ``workspace-status.txt`` (modulo ids).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fcsupport import ECHO_DIR, REPO, interpreter

NOISY_MODULE = r'''
import sys
from fabric_python_echo import adapter

_invoke = adapter.EchoRuntime.invoke


async def invoke(self, request, context):
    if request.input != "quiet":
        print("noisy stderr for", request.input, file=sys.stderr, flush=True)
    result = await _invoke(self, request, context)
    if request.input != "quiet":
        # A partial line written just before the answer is this invocation's too.
        print("done with", request.input, end="", file=sys.stderr, flush=True)
    return result


adapter.EchoRuntime.invoke = invoke
adapter.main()
'''

SCRIPT = r'''
import asyncio, json, os, re, sys
from MODULE import Fabric, FabricConfig, RunRequest

config_map, workspace, root = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
IDS = re.compile(r"(runtime|invocation)-[0-9a-f-]+")


def rel(path):
    path = path[len(root) + 1:] if path.startswith(root + "/") else path
    return IDS.sub(r"<\1>", path)


def read(path):
    full = path if path.startswith("/") else os.path.join(root, path)
    with open(full, "rb") as handle:
        return IDS.sub(r"<\1>", handle.read().decode("utf-8", "replace"))


def summary(result):
    data = result.to_mapping()
    artifacts = data["artifacts"]
    return {
        "status": data["status"],
        "root": artifacts.get("root") == root,
        "artifacts": [
            {"name": a["name"], "kind": a["kind"], "media_type": a.get("media_type"),
             "path": rel(a["path"]), "content": read(a["path"]),
             "metadata": a.get("metadata") or {}}
            for a in artifacts["artifacts"]
        ],
        "collect_events": [
            {"message": e["message"], "workspace": e["metadata"].get("workspace")}
            for e in data["events"] if e["kind"] == "artifact_collect"
        ],
    }


def edit(name, text=None):
    path = os.path.join(workspace, name)
    if text is None:
        os.remove(path)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(text)


async def main():
    out = []
    config = FabricConfig.from_mapping(config_map)
    async with await Fabric().start_runtime(config) as runtime:
        out.append(summary(await runtime.invoke(input="clean")))
        edit("edit.txt", b"new\n")
        edit("gone.txt")
        edit("added/new.txt", b"fresh\n")
        edit("blob.bin", bytes([0, 1, 2, 255]))
        out.append(summary(await runtime.invoke(input="edited")))
        out.append(summary(await runtime.invoke(input="unchanged")))
        out.append(summary(await runtime.invoke(input="quiet")))
        edit("edit.txt", b"newer\n")
        out.append(summary(await runtime.invoke(request=RunRequest(
            input="bad", context={"scripted": {"fail": {"code": "echo_failure", "message": "no"}}}))))
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
'''


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", "-C", str(cwd), *args], check=True, env=env, capture_output=True)


def run_script(python: str, module: str, base: Path) -> list:
    workspace, root, adapter = base / "ws", base / "artifacts", base / "adapter"
    workspace.mkdir()
    git(workspace, "init", "-q")
    for name, text in (("keep.txt", "keep\n"), ("edit.txt", "old\n"), ("gone.txt", "bye\n")):
        (workspace / name).write_text(text)
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "base")
    adapter.mkdir()
    descriptor = json.loads((ECHO_DIR / "python-echo.fabric-adapter.json").read_text())
    descriptor["adapter_id"] = "fabric.noisy-echo"
    descriptor["runner"] = {"module": "noisy_echo"}
    (adapter / "noisy.fabric-adapter.json").write_text(json.dumps(descriptor))
    (adapter / "noisy_echo.py").write_text(NOISY_MODULE)
    config = json.loads((REPO / "examples" / "python-echo" / "fabric.json").read_text())
    config["harness"]["adapter_id"] = "fabric.noisy-echo"
    config["discovery"] = {"local_paths": [str(adapter)]}
    config["environment"] = {"workspace": str(workspace), "artifacts": str(root)}
    env = dict(os.environ)
    env["ADAPTER_PYTHON"] = python
    inherited = [str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(adapter), *inherited])
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [python, "-c", SCRIPT.replace("MODULE", module), json.dumps(config), str(workspace), str(root)],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stderr}"
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for turn in out:
        for event in turn["collect_events"]:
            assert event["workspace"] == str(workspace)
            event["workspace"] = "<workspace>"
    return out


def test_collected_artifacts_match_upstream(tmp_path: Path) -> None:
    python = interpreter()
    probe = subprocess.run(
        [python, "-c", "import nemo_fabric, fabric_python_echo, fabric_core"],
        capture_output=True, text=True, env=dict(os.environ),
    )
    if probe.returncode != 0:
        message = f"{python} lacks nemo_fabric / fabric_python_echo / fabric_core:\n{probe.stderr}"
        pytest.skip(message)
    (tmp_path / "upstream").mkdir()
    (tmp_path / "ours").mkdir()
    upstream = run_script(python, "nemo_fabric", tmp_path / "upstream")
    ours = run_script(python, "fabric_core", tmp_path / "ours")

    names = [[a["name"] for a in turn["artifacts"]] for turn in ours]
    assert names == [
        ["stdout", "stderr"],
        ["stdout", "stderr", "workspace_patch", "workspace_status"],
        ["stdout", "stderr", "workspace_patch", "workspace_status"],
        ["stdout", "workspace_patch", "workspace_status"],
        ["stdout", "stderr", "workspace_patch", "workspace_status"],
    ]
    # Each invocation's stderr.txt holds its own lines only (the partial line included).
    assert ours[1]["artifacts"][1]["content"] == "noisy stderr for edited\ndone with edited"
    patch = ours[1]["artifacts"][2]["content"]
    assert "GIT binary patch" in patch and "deleted file mode" in patch
    assert "+newer" in ours[4]["artifacts"][2]["content"]
    for index, (mine, theirs) in enumerate(zip(ours, upstream, strict=True)):
        assert mine == theirs, f"invocation {index}"
