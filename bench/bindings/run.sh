#!/usr/bin/env bash
# Warm invoke on the Rust scripted adapter through each binding (Go, TypeScript, Python):
# median/p90 microseconds per Runtime.invoke, plus a non-blocking native call
# (runtime status) that shows what the binding layer itself costs per call.
# Results: one JSON line per binding and measure in bench/results/bindings.jsonl.
#
# Usage: bash bench/bindings/run.sh [n] [warmup]    (defaults 2000, 200; debug builds)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
n=${1:-2000}
warmup=${2:-200}

cargo build -q -p fabric-ffi -p fabric-adapter-scripted
mkdir -p bench/results
out=bench/results/bindings.jsonl
: > "$out"

(cd bindings/go && PKG_CONFIG_PATH=$(bash dev-pkgconfig.sh) go run ./examples/bench -n "$n" -warmup "$warmup") | tee -a "$out"

if [ ! -f bindings/typescript/dist/index.js ]; then
  (cd bindings/typescript && npm run --silent build)
fi
node bench/bindings/ts_bench.js "$n" "$warmup" | tee -a "$out"

python=${FABRIC_TEST_PYTHON:-$root/.venv/bin/python}
if [ -x "$python" ] && [ -d bindings/python/src/fabric_core ]; then
  PYTHONPATH="$root/bindings/python/src" FABRIC_CORE_LIB="$root/target/debug/libfabric_ffi.so" \
    "$python" bench/bindings/py_bench.py "$n" "$warmup" | tee -a "$out"
else
  . scripts/lib/dependency.sh
  missing_dependency "the Python interpreter $python" "scripts/setup.sh, or set FABRIC_TEST_PYTHON" || true
fi

printf '\n%-12s %-16s %12s %12s\n' binding measure median_us p90_us
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  for (const line of lines) {
    const r = JSON.parse(line);
    console.log(`${r.binding.padEnd(12)} ${r.measure.padEnd(16)} ${r.median_us.toFixed(1).padStart(12)} ${r.p90_us.toFixed(1).padStart(12)}`);
  }' "$out"
