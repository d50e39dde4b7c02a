"""Fixtures for the fabric_core tests (helpers live in ``fcsupport``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fcsupport import REPO, _scripted_binary_present, scripted_config

# The one rule for a missing dependency: a skip fails unless FABRIC_ALLOW_SKIPS=1.
sys.path.insert(0, str(REPO / "tests"))
from fabric_dependency import pytest_make_collect_report, pytest_runtest_makereport  # noqa: E402,F401


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "ray: needs Ray (the fabric-core[ray] extra); starts a local 3-node Ray cluster"
    )


@pytest.fixture(scope="session")
def scripted_built() -> None:
    """The scripted adapter binary exists (a missing one fails the test: tests/fabric_dependency.py)."""

    if not _scripted_binary_present():
        pytest.skip("fabric-adapter-scripted is missing; build it: cargo build -p fabric-adapter-scripted")


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
