"""EnvironmentHandle.exec / write_file / read_file / list: the verifier step of an
evaluation, on the local and subprocess providers, through the C ABI."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest

from fabric_core import EnvironmentConfig, Fabric, FabricConfigError, FabricError


def subprocess_provider_built() -> None:
    from fcsupport import REPO

    if not (REPO / "target" / "debug" / "fabric-env-subprocess").exists():
        pytest.fail("fabric-env-subprocess is not built; run `cargo build -p fabric-cli`")


def test_a_verifier_runs_in_a_subprocess_environment_while_and_after_a_runtime_ran(scripted) -> None:
    subprocess_provider_built()
    tmp_path = Path(tempfile.mkdtemp(prefix="fc-", dir="/tmp"))
    config = scripted(["echo: {input}"])
    config.environment = EnvironmentConfig(provider="subprocess", settings={"root": str(tmp_path)})

    async def main() -> None:
        fabric = Fabric()
        environment = await fabric.prepare_environment(config)
        await environment.write_file("task/test.sh", b"read answer < answer.txt\n[ \"$answer\" = 42 ]\n", mode=0o755)
        async with await fabric.start_runtime_in(config, environment) as runtime:
            assert (await runtime.invoke(input="go")).output.response == "echo: go"
            # while the runtime runs
            written = await environment.exec(["sh", "-c", "echo 42 > answer.txt"], cwd="task")
            assert written["exit_code"] == 0
        # after it stopped: the verifier step
        verdict = await environment.exec(["sh", "test.sh"], cwd="task", timeout_seconds=10)
        assert (verdict["exit_code"], verdict["timed_out"]) == (0, False)
        assert await environment.read_file("task/answer.txt") == b"42\n"
        listing = await environment.list("task")
        assert [(e["name"], e["kind"]) for e in listing["entries"]] == [("answer.txt", "file"), ("test.sh", "file")]

        # a program that cannot start is an error naming it (as on every provider)
        with pytest.raises(FabricError) as caught:
            await environment.exec(["no-such-program-2a9f"])
        assert caught.value.code == "exec_failed"
        assert "`no-such-program-2a9f`" in str(caught.value)

        failing = await environment.exec(["sh", "-c", "echo no >&2; exit 3"], env={"X": "1"})
        assert (failing["exit_code"], failing["stderr"]) == (3, "no\n")
        echoed = await environment.exec(["sh", "-c", "cat"], stdin=b"in")
        assert echoed["stdout"] == "in"
        cut = await environment.exec(["sh", "-c", "yes | head -c 5000"], output_limit_bytes=10)
        assert (cut["stdout"], cut["stdout_truncated"]) == ("y\ny\ny\ny\ny\n", True)

        # the whole process group dies at the deadline, grandchild included
        slow = await environment.exec(
            ["sh", "-c", "sh -c 'echo $$ > gc.pid; sleep 30' & sleep 30"], timeout_seconds=0.5
        )
        assert slow["timed_out"] is True and slow["exit_code"] is None
        grandchild = (await environment.read_file("gc.pid")).decode().strip()
        assert not _running(grandchild)

        # a link the agent planted that points out of the workspace is refused
        secret = tmp_path / "secret.txt"
        secret.write_text("SECRET")
        await environment.exec(["ln", "-s", str(secret), "loot"])
        with pytest.raises(FabricError) as caught:
            await environment.read_file("loot")
        assert caught.value.code == "path_refused"
        with pytest.raises(FabricError) as caught:
            await environment.write_file("loot", b"overwrite")
        assert caught.value.code == "path_refused"
        assert secret.read_text() == "SECRET"
        with pytest.raises(FabricConfigError) as caught:
            await environment.read_file("../escape")
        assert caught.value.code == "invalid_environment_request"
        assert caught.value.details["path"] == "path"

        await fabric.release_environment(environment)
        assert environment.info["released"] is True  # the released info replaces the prepared one
        with pytest.raises(FabricError) as caught:
            await environment.exec(["true"])
        assert caught.value.code == "environment_released"

    asyncio.run(main())
    for leftover in tmp_path.iterdir():
        leftover.unlink()
    tmp_path.rmdir()


def test_the_local_provider_runs_commands_and_files_in_its_workspace(scripted, tmp_path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = scripted(["echo: {input}"])
    config.environment = EnvironmentConfig(workspace=str(workspace))

    async def main() -> None:
        fabric = Fabric()
        environment = await fabric.prepare_environment(config)
        await environment.write_file("a/b.txt", b"hello")
        assert (workspace / "a" / "b.txt").read_bytes() == b"hello"
        ran = await environment.exec(["sh", "-c", "cat b.txt; pwd"], cwd="a")
        assert ran["stdout"] == f"hello{workspace / 'a'}\n"
        content = await environment.read_file_content("a/b.txt", max_bytes=2)
        assert (content["content_hex"], content["size"], content["truncated"]) == ("6865", 5, True)
        os.symlink("/etc", workspace / "etc")
        with pytest.raises(FabricError) as caught:
            await environment.exec(["true"], cwd="etc")
        assert caught.value.code == "path_refused"
        with pytest.raises(FabricError) as caught:
            await environment.exec(["/no/such/program"])
        assert caught.value.code == "exec_failed"
        await fabric.release_environment(environment)

    asyncio.run(main())


def _running(pid: str) -> bool:
    """Whether ``pid`` runs (no zombie); SIGKILL lands asynchronously, so up to 2 s."""

    import time

    deadline = time.monotonic() + 2
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
        except (FileNotFoundError, IndexError):
            return False
        if state in "ZX" or time.monotonic() >= deadline:
            return state not in "ZX"
        time.sleep(0.02)
