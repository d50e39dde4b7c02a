"""The one rule for a pytest test whose dependency is missing (issue 33 item 10).

A skip -- ``pytest.skip``, ``pytest.importorskip`` (also at module level), a ``skipif``
mark, ``unittest``'s ``skipTest`` -- means a dependency is missing, so it FAILS the test,
with the skip's reason (which names what to install), unless ``FABRIC_ALLOW_SKIPS=1`` asks
for a partial local run. Strict is the default, so the README's test command
(``scripts/test.sh``) cannot pass with tests that never ran, and CI needs nothing special.
The one exception is a skip whose reason starts with ``platform:`` (a test that cannot
apply on this operating system at all).

Each test directory's ``conftest.py`` imports the hooks::

    from fabric_dependency import pytest_make_collect_report, pytest_runtest_makereport

so write a plain ``pytest.skip("<what> is missing; install it: <how>")``: this module
decides. The same rule in Rust is ``tests/dependency.rs``.
"""

from __future__ import annotations

import os

import pytest

ALLOW_SKIPS = "FABRIC_ALLOW_SKIPS"
PLATFORM = "platform:"


def skips_allowed() -> bool:
    """Whether ``FABRIC_ALLOW_SKIPS=1`` is set."""

    return os.environ.get(ALLOW_SKIPS, "").strip() == "1"


def _reason(longrepr) -> str:
    # A skip's longrepr is (file, line, "Skipped: reason").
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _strict(report) -> None:
    if not report.skipped or skips_allowed() or hasattr(report, "wasxfail"):
        return
    reason = _reason(report.longrepr)
    if reason.startswith(PLATFORM):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"a dependency is missing: {reason} "
        f"(install it, or set {ALLOW_SKIPS}=1 for a partial run that skips this test)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    _strict(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    report = yield
    _strict(report)
    return report
