"""The rule for a missing dependency (``tests/fabric_dependency.py``, issue 33 item 10),
proven on a small pytest run: a test whose tool (named by ``FABRIC_DEPENDENCY_PROBE``) does
not exist FAILS naming what to install, a module-level ``importorskip`` fails too, ``CI``
changes nothing, and ``FABRIC_ALLOW_SKIPS=1`` turns both into skips. A ``platform:`` skip
stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fcsupport import REPO

PROBE = '''
import os
import pytest

def test_needs_the_probe_tool():
    tool = os.environ["FABRIC_DEPENDENCY_PROBE"]
    if not os.path.exists(tool):
        pytest.skip(f"{tool} is missing; install it: apt-get install fabric-probe-tool")

@pytest.mark.skipif(True, reason="platform: not on this operating system")
def test_platform_only():
    pass
'''

MODULE_LEVEL = '''
import pytest

pytest.importorskip("no_such_module_fabric_probe", reason="no_such_module_fabric_probe is missing; install it: pip install fabric-probe")

def test_never_runs():
    pass
'''

CONFTEST = f'''
import sys
sys.path.insert(0, {str(REPO / "tests")!r})
from fabric_dependency import pytest_make_collect_report, pytest_runtest_makereport
'''


def run(tmp_path: Path, name: str, text: str, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / name).write_text(text)
    child = {k: v for k, v in os.environ.items() if k not in ("FABRIC_ALLOW_SKIPS", "CI")}
    child.update(FABRIC_DEPENDENCY_PROBE="/nonexistent/fabric-probe-tool", **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", name],
        cwd=tmp_path,
        env=child,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_missing_dependency_fails_naming_what_to_install(tmp_path: Path) -> None:
    for env in ({}, {"CI": "true"}, {"FABRIC_ALLOW_SKIPS": "0"}):
        done = run(tmp_path, "test_probe.py", PROBE, **env)
        out = done.stdout + done.stderr
        assert done.returncode != 0, (env, out)
        assert "apt-get install fabric-probe-tool" in out, (env, out)
        assert "FABRIC_ALLOW_SKIPS=1" in out, (env, out)
        assert "1 failed" in out and "1 skipped" in out, (env, out)
        # A module-level importorskip is a collection error naming the module.
        done = run(tmp_path, "test_module_level.py", MODULE_LEVEL, **env)
        out = done.stdout + done.stderr
        assert done.returncode != 0, (env, out)
        assert "pip install fabric-probe" in out, (env, out)
        assert "1 error" in out, (env, out)


def test_fabric_allow_skips_turns_it_into_a_skip(tmp_path: Path) -> None:
    done = run(tmp_path, "test_probe.py", PROBE, FABRIC_ALLOW_SKIPS="1")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "2 skipped" in out, out
    assert "apt-get install fabric-probe-tool" in out, out
    done = run(tmp_path, "test_module_level.py", MODULE_LEVEL, FABRIC_ALLOW_SKIPS="1")
    out = done.stdout + done.stderr
    assert done.returncode == 5, out  # pytest's "no tests ran": the module was skipped
    assert "1 skipped" in out, out
