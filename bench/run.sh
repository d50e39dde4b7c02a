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
# (FABRIC_TEST_PYTHON, else .venv/bin/python; its virtual environment is activated for both
# sides, ADAPTER_PYTHON is removed). The per-row task counts need `unshare` (util-linux) and
# PID namespaces (root, or unprivileged user namespaces); without them the column reads n/a.
# The environment exec rows need podman (the image of scripts/container-image.sh; --skip-env
# leaves them out). Extra arguments go to bench/runner.py.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${FABRIC_TEST_PYTHON:-$root/.venv/bin/python}
quick=0
for arg in "$@"; do [ "$arg" = --quick ] && quick=1; done
if [ "$quick" = 1 ]; then
  profile=debug
  cargo build -q -p fabric-ffi -p fabric-adapter-scripted -p fabric-cli
else
  profile=release
  cargo build -q --release -p fabric-ffi -p fabric-adapter-scripted -p fabric-cli
fi
(cd bindings/typescript && { [ -d node_modules ] || npm install --no-audit --no-fund -s; } && npm run --silent build >/dev/null 2>&1)
# adapters/scripted/launch.sh otherwise runs the newer of the debug and release binaries,
# which after a debug build is the debug one.
export FABRIC_ADAPTER_SCRIPTED_BIN=$root/target/$profile/fabric-adapter-scripted
PKG_CONFIG_PATH_GO=$(bash bindings/go/dev-pkgconfig.sh "$profile")
export PKG_CONFIG_PATH_GO
# Go's build cache keys a cgo package by its compile flags, not by the library it links:
# without the library's hash in CGO_CFLAGS, `go run` reuses a package built against the
# other profile's libfabric_ffi.a (bindings/go/test.sh does the same).
hash=$(sha256sum "target/$profile/libfabric_ffi.a" | cut -c1-16)
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DFABRIC_LIBRARY_SHA256_PREFIX=$hash"
exec "$python" bench/runner.py --profile "$profile" --python "$python" "$@"
