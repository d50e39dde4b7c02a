"""attach_environment: caller ownership, detach-only release, reference checks."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from fabric_core import (
    EnvironmentConfig,
    EnvironmentReference,
    Fabric,
    FabricConfigError,
)


def with_workspace(scripted, workspace) -> object:
    config = scripted(["echo: {input}", "turn {turn}: {previous_input}"])
    config.environment = EnvironmentConfig(workspace=str(workspace))
    return config


def test_prepared_reference_attaches_and_release_only_detaches(scripted, tmp_path) -> None:
    workspace = tmp_path / "task"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("caller data")
    config = with_workspace(scripted, workspace)

    async def main() -> None:
        fabric = Fabric()
        prepared = await fabric.prepare_environment(config)
        reference = prepared.info["reference"]
        assert reference.to_mapping() == {
            "provider": "local",
            "resource": {"workspace": str(workspace)},
        }
        assert prepared.info["attached"] is False

        attached = await fabric.attach_environment(config, reference)
        assert attached.provider == "local"
        assert attached.info["attached"] is True
        assert attached.info["ownership"] == "caller_owned"
        assert attached.info["workspace"] == str(workspace)
        assert attached.environment_id != prepared.environment_id
        async with await fabric.start_runtime_in(config, attached) as runtime:
            first = await runtime.invoke(input="one")
            second = await runtime.invoke(input="two")
            assert (first.output.response, second.output.response) == ("echo: one", "turn 2: one")
        await fabric.release_environment(attached)
        assert attached.released
        assert (workspace / "keep.txt").read_text() == "caller data"  # detached, not deleted
        await fabric.release_environment(prepared)

    asyncio.run(main())


def test_attach_takes_a_plain_mapping_and_anchors_local_paths(scripted, tmp_path) -> None:
    (tmp_path / "rel").mkdir()
    config = with_workspace(scripted, tmp_path / "rel")

    async def main() -> None:
        fabric = Fabric()
        environment = await fabric.attach_environment(
            config,
            {"provider": "local", "resource": {"workspace": "rel"}},
            base_dir=tmp_path,
        )
        assert environment.info["workspace"] == str(tmp_path / "rel")
        await fabric.release_environment(environment)

    asyncio.run(main())


@pytest.mark.parametrize(
    ("reference", "code", "path"),
    [
        ({"provider": "local", "resource": {"workspace": "missing"}}, "environment_not_found", "resource.workspace"),
        ({"provider": "local", "resource": {}}, "invalid_environment_reference", "resource.workspace"),
        ({"provider": "local", "resource": {"workspace": 7}}, "invalid_environment_reference", "resource.workspace"),
        ({"provider": "local", "resource": {"workspace": ".", "x": 1}}, "invalid_environment_reference", "resource.x"),
        ({"provider": "docker", "resource": {}}, "invalid_environment_reference", "provider"),
    ],
)
def test_bad_references_name_the_field(scripted, tmp_path, reference, code, path) -> None:
    config = with_workspace(scripted, tmp_path)

    async def main() -> None:
        with pytest.raises(FabricConfigError) as caught:
            await Fabric().attach_environment(config, reference, base_dir=tmp_path)
        assert caught.value.code == code
        assert caught.value.details["path"] == path
        assert caught.value.stage in ("config", "prepare")

    asyncio.run(main())


def test_unknown_reference_members_are_rejected(scripted, tmp_path) -> None:
    config = with_workspace(scripted, tmp_path)

    async def main() -> None:
        with pytest.raises(FabricConfigError) as caught:
            await Fabric().attach_environment(config, {"provider": "local", "workspace": "."})
        assert caught.value.code == "invalid_environment_reference"
        with pytest.raises(FabricConfigError) as caught:
            await Fabric().attach_environment(config, ["local"])  # type: ignore[arg-type]
        assert caught.value.code == "invalid_environment_reference"

    asyncio.run(main())


def test_an_unknown_provider_is_named(scripted, tmp_path) -> None:
    config = scripted(["echo: {input}"])
    config.environment = EnvironmentConfig(provider="no-such-provider")

    async def main() -> None:
        with pytest.raises(FabricConfigError) as caught:
            await Fabric().attach_environment(
                config, EnvironmentReference.from_mapping({"provider": "no-such-provider"})
            )
        assert caught.value.code == "environment_provider_not_found"
        assert caught.value.details["path"] == "environment.provider"

    asyncio.run(main())


def subprocess_provider_built() -> None:
    from fcsupport import REPO

    if not (REPO / "target" / "debug" / "fabric-env-subprocess").exists():
        message = "fabric-env-subprocess is not built; run `cargo build -p fabric-cli`"
        pytest.skip(message)


def test_the_subprocess_provider_prepares_attaches_and_releases(scripted) -> None:
    subprocess_provider_built()
    # unix socket paths are short (108 bytes): pytest's tmp_path is too deep
    tmp_path = Path(tempfile.mkdtemp(prefix="fc-", dir="/tmp"))
    config = scripted(["echo: {input}"])
    config.environment = EnvironmentConfig(
        provider="subprocess", workspace="relative", settings={"root": str(tmp_path)}
    )

    async def main() -> None:
        fabric = Fabric()
        prepared = await fabric.prepare_environment(config)
        assert prepared.provider == "subprocess"
        assert prepared.info["ownership"] == "fabric_owned"
        reference = prepared.info["reference"]
        directory = Path(reference["resource"]["directory"])
        assert directory.parent == tmp_path
        assert (directory.stat().st_mode & 0o777) == 0o700
        assert prepared.info["workspace"] == str(directory / "workspace")  # the provider's path

        attached = await fabric.attach_environment(config, reference)
        assert attached.info["attached"] is True
        assert attached.info["ownership"] == "caller_owned"
        await fabric.release_environment(attached)
        assert directory.is_dir()  # detached, not deleted

        await fabric.release_environment(prepared)
        assert not directory.exists()  # Fabric prepared it: release deletes it

    asyncio.run(main())
    tmp_path.rmdir()


def test_a_two_turn_conversation_runs_through_the_server_inside_a_provider_environment(
    scripted,
) -> None:
    subprocess_provider_built()
    tmp_path = Path(tempfile.mkdtemp(prefix="fc-", dir="/tmp"))
    config = scripted(["Hello! You said: {input}", 'Turn {turn}. Just before this you said: "{previous_input}"'])
    config.environment = EnvironmentConfig(provider="subprocess", settings={"root": str(tmp_path)})

    async def main() -> None:
        fabric = Fabric()
        environment = await fabric.prepare_environment(config)
        directory = Path(environment.info["reference"]["resource"]["directory"])
        async with await fabric.start_runtime_in(config, environment) as runtime:
            first = await runtime.invoke(input="Hi, I am Ada.")
            assert first.output.response == "Hello! You said: Hi, I am Ada."
            assert first.metadata["environment_provider"] == "subprocess"
            second = await runtime.invoke(input="What did I say?")
            assert second.output.response == 'Turn 2. Just before this you said: "Hi, I am Ada."'
            assert second.runtime_id == first.runtime_id
        await fabric.release_environment(environment)
        assert not directory.exists()

    asyncio.run(main())
    tmp_path.rmdir()


def test_a_root_too_deep_for_a_socket_is_refused(scripted, tmp_path) -> None:
    subprocess_provider_built()
    config = scripted(["echo: {input}"])
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    config.environment = EnvironmentConfig(provider="subprocess", settings={"root": str(deep)})

    async def main() -> None:
        # the provider's code is the error's own (a config error: pick a shorter root)
        with pytest.raises(FabricConfigError) as caught:
            await Fabric().prepare_environment(config)
        assert caught.value.code == "socket_path_too_long"
        assert caught.value.details["provider_code"] == "socket_path_too_long"
        assert "settings.root" in str(caught.value)
        assert list(deep.iterdir()) == []

    asyncio.run(main())
