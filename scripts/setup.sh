#!/usr/bin/env bash
# Prepares a fresh machine for scripts/test.sh and the benchmarks: valgrind, script and
# pkg-config, a Python venv in .venv with upstream NeMo Fabric 0.5.0 and its adapter catalog (the
# test oracles, see tests/upstream/oracle.py), pytest, the Python echo adapter and our Python
# binding; npm packages of the TypeScript binding. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

# valgrind: the C ABI test runs under it; script (bsdutils): the CLI's terminal tests run
# `fabric` on a pseudo-terminal; pkg-config: the Go binding and the C SDK's quickstart.
missing=()
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
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
if [ -f adapters/python-echo/pyproject.toml ]; then
  .venv/bin/python -m pip install -q -e adapters/python-echo
fi
if [ -f bindings/python/pyproject.toml ]; then
  .venv/bin/python -m pip install -q ./bindings/python
fi
(cd bindings/typescript && npm ci --no-audit --no-fund)
(cd adapters/typescript-echo && npm ci --no-audit --no-fund)
