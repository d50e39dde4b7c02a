"""attach_environment: caller ownership, detach-only release, reference checks."""

from __future__ import annotations

import asyncio

import pytest

from fabric_core import (
    EnvironmentConfig,
    EnvironmentReference,
    Fabric,
    FabricCapabilityError,
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


def test_a_provider_that_cannot_attach_says_so(scripted, tmp_path) -> None:
    config = scripted(["echo: {input}"])
    config.environment = EnvironmentConfig(provider="no-such-provider")

    async def main() -> None:
        with pytest.raises(FabricCapabilityError) as caught:
            await Fabric().attach_environment(
                config, EnvironmentReference.from_mapping({"provider": "no-such-provider"})
            )
        assert caught.value.code == "environment_provider_unsupported"
        assert caught.value.stage == "prepare"

    asyncio.run(main())
