#!/usr/bin/env bash
# Prepares a fresh machine for scripts/test.sh and the benchmarks: valgrind, script,
# pkg-config, podman and runc, a Python venv in .venv with upstream NeMo Fabric 0.5.0 and its
# adapter catalog (the test oracles, see tests/upstream/oracle.py), pytest and the Python echo
# adapter; nemo-gym 0.7.0 in .venv-gym (Python 3.13); npm packages of the TypeScript binding.
# Our Python binding is not installed here: scripts/test.sh runs it from bindings/python/src
# over the workspace's debug library (one build), and scripts/test-dist.sh installs the wheel.
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

# valgrind: the C ABI test runs under it; script (bsdutils): the CLI's terminal tests run
# `fabric` on a pseudo-terminal; pkg-config: the Go binding and the C SDK's quickstart;
# podman and runc: the container environment provider's tests (docs/sandbox.md; runc, since
# crun refuses cgroups in hybrid mode on some hosts); chromium: the browser tests of
# `fabric view` (fabric-view/web/test/, headless, driven by playwright-core).
missing=()
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
[ -x /usr/bin/chromium ] || missing+=(chromium)
containers=()
command -v podman >/dev/null 2>&1 || containers+=(podman)
command -v runc >/dev/null 2>&1 || containers+=(runc)
if [ ${#missing[@]} -gt 0 ] || [ ${#containers[@]} -gt 0 ]; then
  apt-get update
fi
if [ ${#missing[@]} -gt 0 ]; then
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
# podman with its recommended packages (catatonit, netavark, fuse-overlayfs, ...): the set
# the container provider was tested with.
if [ ${#containers[@]} -gt 0 ]; then
  apt-get install -y "${containers[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q pytest "nemo-fabric[streaming]==0.5.0" \
  "nemo-fabric-adapter-catalog==0.5.0" "nemo-fabric-adapters-common==0.5.0"
# Upstream's own harness adapters, for running real harnesses under both cores (about 1.5 min;
# their descriptors land in .venv/share/nemo-fabric/adapters, which upstream always searches).
.venv/bin/python -m pip install -q "nemo-fabric-adapters-mini-swe-agent[full]==0.5.0" \
  "nemo-fabric-adapters-deepagents[full]==0.5.0"
# The test CA of the model-call capture's HTTPS test (bindings/python/tests/test_model_capture.py).
.venv/bin/python -m pip install -q "cryptography>=42"
# Ray for the scale-out tests and bench (fabric_core.ray; the `ray` extra of bindings/python
# pins the same version). A 79 MB manylinux wheel, about 240 MB installed.
.venv/bin/python -m pip install -q "ray==2.60.0"
if [ -f adapters/python-echo/pyproject.toml ]; then
  .venv/bin/python -m pip install -q -e adapters/python-echo
fi
# NeMo Gym 0.7.0, the oracle of the Gym observation tests (bindings/python/tests/test_gym.py):
# its own venv in .venv-gym, since it declares Requires-Python >=3.13.14 while .venv is the
# system Python. It is installed with the newest Python 3.13 found (python3.13 on PATH, else
# pyenv's) and --ignore-requires-python when that one is older than 3.13.14; only the
# packages that `nemo_gym.rollout_observability` imports are installed (its full dependency
# set pulls Ray's dashboard, MLflow, W&B, datasets, vLLM extras: gigabytes the tests do not use).
gym_python=
for candidate in "$(command -v python3.13 || true)" \
  $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13 2>/dev/null | sort -rV || true); do
  # A pyenv shim exists without a selected 3.13 version: run each candidate to be sure.
  if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
    gym_python=$candidate
    break
  fi
done
if [ -n "$gym_python" ]; then
  if [ ! -x .venv-gym/bin/python ]; then
    "$gym_python" -m venv .venv-gym
  fi
  .venv-gym/bin/python -m pip install -q --upgrade pip
  .venv-gym/bin/python -m pip install -q --no-deps --ignore-requires-python "nemo-gym==0.7.0"
  # --no-warn-conflicts: nemo-gym's other declared dependencies are left out on purpose
  # (above); pip would list each as a conflict.
  # anthropic: nemo_gym.base_responses_api_model (its ModelCallRecord validates our capture
  # records in bindings/python/tests/test_model_capture.py) imports the Anthropic SDK.
  .venv-gym/bin/python -m pip install -q --no-warn-conflicts "openai==2.44.0" "anthropic==2.17.0" pydantic rich \
    omegaconf orjson requests uvicorn aiohttp fastapi itsdangerous httptools hydra-core ray yappi pydot
else
  echo "warning: no Python 3.13 found: .venv-gym (nemo-gym) not created" >&2
fi
(cd bindings/typescript && npm ci --no-audit --no-fund)
(cd adapters/typescript-echo && npm ci --no-audit --no-fund)
# The page of `fabric view`: esbuild, uPlot, TypeScript and playwright-core (which drives
# Debian's chromium above; it downloads no browser).
(cd fabric-view/web && npm ci --no-audit --no-fund)
