"""Repeated ``Fabric.plan`` calls reuse what did not change (the core's parsed descriptors,
directory searches and plans; the binding's serialized options and decoded plan) and see
every change: a descriptor edited between two plans (same size, modification time put
back), adapter directories added and removed, and an edited config."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabric_core import Fabric, FabricCapabilityError, FabricConfig, FabricConfigError


def descriptor(adapter_id: str, command: str, accepts: list[str] | None = None) -> str:
    return json.dumps(
        {
            "contract_version": "fabric.adapter/v1alpha2",
            "adapter_id": adapter_id,
            "adapter_kind": "process",
            "runner": {"command": command},
            "config": {"accepts": accepts if accepts is not None else ["models"]},
        }
    )


def config(adapter_id: str, local_path: Path) -> FabricConfig:
    return FabricConfig.from_mapping(
        {
            "metadata": {"name": "plan-cache"},
            "harness": {"adapter_id": adapter_id},
            "models": {"default": {"provider": "openai", "model": "gpt-5"}},
            "discovery": {"local_paths": [str(local_path)]},
        }
    )


def command(plan) -> str:
    return plan.adapter_descriptor.descriptor["runner"]["command"]


def test_a_descriptor_rewritten_with_the_same_size_and_mtime_is_seen(tmp_path: Path) -> None:
    file = tmp_path / "echo.fabric-adapter.json"
    file.write_text(descriptor("cache.echo", "echo-adapter"))
    old = file.stat().st_mtime_ns - 60 * 1_000_000_000
    os.utime(file, ns=(old, old))
    fabric = Fabric()
    cfg = config("cache.echo", tmp_path)
    first = fabric.plan(cfg)
    assert command(first) == "echo-adapter"
    assert fabric.plan(cfg) is first  # unchanged: the decoded plan is reused

    file.write_text(descriptor("cache.echo", "echo-adaptor"))  # same length
    os.utime(file, ns=(old, old))
    assert file.stat().st_mtime_ns == old
    second = fabric.plan(cfg)
    assert command(second) == "echo-adaptor"
    assert second.descriptor_sha256 != first.descriptor_sha256
    # A change that makes the config incompatible is seen as well.
    file.write_text(descriptor("cache.echo", "echo-adaptor", accepts=[]))
    with pytest.raises(FabricCapabilityError):
        fabric.plan(cfg)


def test_adapter_directories_added_and_removed_between_plans_are_seen(tmp_path: Path) -> None:
    fabric = Fabric()
    nested = tmp_path / "team" / "agents"
    nested.mkdir(parents=True)
    cfg = config("cache.two", tmp_path)
    with pytest.raises(FabricConfigError) as missing:
        fabric.plan(cfg)
    assert missing.value.code == "adapter_not_found"

    added = nested / "two"
    added.mkdir()
    (added / "two.fabric-adapter.json").write_text(descriptor("cache.two", "two"))
    assert command(fabric.plan(cfg)) == "two"

    for path in added.iterdir():
        path.unlink()
    added.rmdir()
    with pytest.raises(FabricConfigError) as missing:
        fabric.plan(cfg)
    assert missing.value.code == "adapter_not_found"


def test_an_edited_config_is_planned_again(tmp_path: Path) -> None:
    (tmp_path / "echo.fabric-adapter.json").write_text(descriptor("cache.echo", "echo"))
    fabric = Fabric()
    cfg = config("cache.echo", tmp_path)
    assert fabric.plan(cfg).agent_name == "plan-cache"
    cfg.metadata.name = "renamed"
    assert fabric.plan(cfg).agent_name == "renamed"
    cfg.models["default"].model = "gpt-6"
    assert fabric.plan(cfg).agent_config["models"]["default"]["model"] == "gpt-6"
