#!/usr/bin/env bash
# The one benchmark command: builds what it measures, then prints README's performance
# table from a single run (bench/runner.py: same caller on both sides of every ratio, rounds
# alternated in fresh processes from a neutral directory, medians and p90, CPU per call,
# machine load and cores). bench/README.md explains every row.
#
#   bash bench/run.sh            # optimized library, 5 rounds (for README; a quiet machine)
#   bash bench/run.sh --quick    # debug library, 1 round, few samples (CI: only that it works)
#
# Needs: cargo, go, node, and a Python with nemo-fabric==0.5.0 and the python-echo adapter
# (FABRIC_TEST_PYTHON, else .venv/bin/python). Extra arguments go to bench/runner.py.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${FABRIC_TEST_PYTHON:-$root/.venv/bin/python}
quick=0
for arg in "$@"; do [ "$arg" = --quick ] && quick=1; done
if [ "$quick" = 1 ]; then
  profile=debug
  cargo build -q -p fabric-ffi -p fabric-adapter-scripted
else
  profile=release
  cargo build -q --release -p fabric-ffi -p fabric-adapter-scripted
fi
(cd bindings/typescript && { [ -d node_modules ] || npm install --no-audit --no-fund -s; } && npm run --silent build >/dev/null 2>&1)
PKG_CONFIG_PATH_GO=$(bash bindings/go/dev-pkgconfig.sh "$profile")
export PKG_CONFIG_PATH_GO
exec "$python" bench/runner.py --profile "$profile" --python "$python" "$@"
