"""Fixtures for the fabric_core tests (helpers live in ``fcsupport``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fcsupport import REPO, _scripted_binary_present, scripted_config


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "ray: needs Ray (the fabric-core[ray] extra); starts a local 3-node Ray cluster"
    )


@pytest.fixture(scope="session")
def scripted_built() -> None:
    """The scripted adapter binary exists (fails in CI, skips elsewhere)."""

    if not _scripted_binary_present():
        message = "fabric-adapter-scripted is not built; run `cargo build` first"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def scripted(scripted_built):
    """Factory of scripted-adapter configs (``scripted(replies, **settings)``)."""

    return scripted_config


@pytest.fixture
def config(scripted_built):
    return scripted_config(["echo: {input}", "turn {turn}: {previous_input}"])
