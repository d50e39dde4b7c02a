"""The environment a benchmark runs an SDK in: the way a user runs it.

An activated virtual environment (``VIRTUAL_ENV`` set, its ``bin`` first on ``PATH``), no
variable that changes only one side's behaviour (``ADAPTER_PYTHON``: with it, upstream 0.5.0
starts ``python -c "import json, sysconfig; ..."`` on every plan), and a working directory
that is a new temporary directory, not a git checkout (upstream runs git on every invoke
when its working directory is one; both SDKs resolve defaults against it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def activated(python: str, env: dict[str, str]) -> dict[str, str]:
    """``env`` as an activated virtual environment of ``python`` has it, without
    ``ADAPTER_PYTHON`` (only that is removed when ``python`` is not in a virtual environment)."""

    env = dict(env)
    env.pop("ADAPTER_PYTHON", None)
    if python == sys.executable:
        prefix = sys.prefix if sys.prefix != sys.base_prefix else ""
    else:
        probe = "import sys; print(sys.prefix if sys.prefix != sys.base_prefix else '')"
        prefix = subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True).stdout.strip()
    if prefix:
        env["VIRTUAL_ENV"] = prefix
        env["PATH"] = os.pathsep.join([str(Path(prefix) / "bin"), env.get("PATH", "")]).rstrip(os.pathsep)
    return env


def activate_here() -> Path:
    """Runs this process as a user would (see the module docs): activates this interpreter's
    virtual environment in ``os.environ``, drops ``ADAPTER_PYTHON`` and changes to a new
    temporary directory, which it returns (removed by the caller or left in the system's
    temporary directory)."""

    env = activated(sys.executable, dict(os.environ))
    os.environ.clear()
    os.environ.update(env)
    workdir = Path(tempfile.mkdtemp(prefix="fabric-bench-"))
    os.chdir(workdir)
    return workdir
