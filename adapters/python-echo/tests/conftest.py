"""Shared by the python-echo tests: the one rule for a missing dependency
(``tests/fabric_dependency.py``: a skip fails unless ``FABRIC_ALLOW_SKIPS=1``) and the
upstream host library every test here speaks through."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from fabric_dependency import pytest_make_collect_report, pytest_runtest_makereport  # noqa: E402,F401


@pytest.fixture(autouse=True)
def upstream_host_library() -> None:
    pytest.importorskip(
        "nemo_fabric_adapters.common.lifecycle",
        reason="nemo_fabric_adapters is missing; install it: scripts/setup.sh "
        "(pip install nemo-fabric-adapters-common==0.5.0)",
    )
