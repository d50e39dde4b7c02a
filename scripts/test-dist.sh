#!/usr/bin/env bash
# Installs every artifact of dist/ (scripts/package.sh) into fresh directories outside the
# checkout and runs its quickstart (examples/installed/): the Python wheel in a new venv with
# an empty environment, the npm package in a new project (ESM import and CJS require), the C
# SDK through install.sh PREFIX, a C program and a Go module built with its pkg-config file,
# the installed `fabric` CLI and `fabric-agent-ctl` (a bridge session), and `cargo install --path fabric-cli`. Also checks that the README shows each quickstart verbatim.
#
# The main job (`fabric run examples/hello/fabric.json`) runs from every way of getting the CLI
# (the C SDK, the wheel's and the npm package's `fabric` on PATH, `cargo install`), each with
# an empty environment, and each must use the scripted adapter of its own install: the
# `fabric plan` provenance lies inside the install, never in this checkout. The wheel keeps to
# its size budget and its package maps exactly one library, its own `libfabric_ffi.so`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dist=$root/dist
examples=$root/examples/installed
want="Hello! You said: Hello, Fabric"
# The wheel of the dist profile: library, fabric and fabric-agent-ctl, compressed (measured
# 2026-12-06: 16.8 MB, then 21.3 MB once the model-call gateway brought its TLS stack
# (rustls, ring, webpki roots) and batches, the conformance kit and the stub model server
# came in; see dist/sizes.txt and README.md). A stale build/ or an unstripped library
# (the 27.5 MB wheel of issue 38) breaks it.
wheel_budget_mb=${FABRIC_WHEEL_BUDGET_MB:-23}

step() { printf '\n==> %s\n' "$*"; }
fail() { echo "test-dist: $*" >&2; exit 1; }
expect() { # expect <what> <output>: the output must hold the scripted reply and "succeeded"
  case "$2" in
    *succeeded*"$want"* | *"$want"*succeeded*) echo "ok: $1" ;;
    *) fail "$1 printed: $2" ;;
  esac
}
own_adapter() { # own_adapter <what> <install dir> <dir> <command...>: `plan` of <dir>/fabric.json
  # must find fabric.scripted inside <install dir> (not in this checkout)
  local what=$1 install=$2 dir=$3 plan path
  shift 3
  plan=$(cd "$dir" && "$@" plan fabric.json) || fail "$what plan: $plan"
  path=$(printf '%s' "$plan" | python3 -c 'import json, sys; print(json.load(sys.stdin)["adapter_descriptor"]["provenance"][0]["path"])')
  case "$path" in
    "$install"/*) echo "ok: $what runs the scripted adapter of its install ($path)" ;;
    *) fail "$what found fabric.scripted at $path, outside $install" ;;
  esac
}

[ -d "$dist" ] || fail "dist/ missing; run scripts/package.sh first"
profile=$(sed -n '1s/.*(\([a-z]*\) profile.*/\1/p' "$dist/sizes.txt")
# A shipped build has no development fallback: it must not know this checkout's path.
if [ "$profile" = dist ]; then
  for binary in "$dist/fabric" "$dist/fabric-agent-ctl" "$dist"/fabric-sdk-*/lib/libfabric_ffi.so.*.*.*; do
    if grep -qF "$root/adapters" "$binary" || grep -qF "$root/fabric-plan" "$binary"; then
      fail "$binary names this checkout ($root)"
    fi
  done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/fabric-dist-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A clean environment: no FABRIC_*, VIRTUAL_ENV, ADAPTER_PYTHON, CARGO_TARGET_DIR, ...
clean_env=(env -i "PATH=/usr/local/bin:/usr/bin:/bin:$(dirname "$(command -v go)"):$(dirname "$(command -v node)")"
  "HOME=$work/home" "TMPDIR=$work/tmp" "LANG=C.UTF-8")
mkdir -p "$work/home" "$work/tmp"
# Go's and npm's caches stay where they are (they hold no project state).
go_env=("GOCACHE=$(go env GOCACHE)" "GOMODCACHE=$(go env GOMODCACHE)" "GOFLAGS=-mod=mod" "GOTOOLCHAIN=local")
npm_env=("npm_config_cache=$(npm config get cache)" "npm_config_update_notifier=false" "npm_config_loglevel=error")

step "README shows each quickstart verbatim"
for file in quickstart.py quickstart.mjs quickstart.cjs main.go quickstart.c; do
  python3 - "$root/README.md" "$examples/$file" <<'PY' || fail "README.md must contain examples/installed/$file verbatim"
import sys
readme, example = (open(p, encoding="utf-8").read() for p in sys.argv[1:])
sys.exit(0 if example.strip() in readme else 1)
PY
done
echo ok

step "Python wheel in a fresh venv"
wheel=$(ls "$dist"/fabric_core-*.whl)
echo "$wheel"
python3 -m venv "$work/venv"
"${clean_env[@]}" "$work/venv/bin/python" -m pip install -q --no-index "$wheel"
mkdir -p "$work/python" && cp "$examples/quickstart.py" "$work/python/"
expect python "$(cd "$work/python" && "${clean_env[@]}" "$work/venv/bin/python" quickstart.py)"

step "the wheel: one library, within its size budget, the one an installed package maps"
"$work/venv/bin/python" - "$wheel" <<'PY' || fail "the wheel must hold exactly fabric_core/libfabric_ffi.so"
import re, sys, zipfile
names = [n for n in zipfile.ZipFile(sys.argv[1]).namelist() if re.search(r"\.(so|dylib|pyd)(\.|$)", n)]
print("libraries in the wheel:", names)
sys.exit(0 if [n for n in names if n.startswith("fabric_core/")] == ["fabric_core/libfabric_ffi.so"] else 1)
PY
size_mb=$(awk -v b="$(wc -c < "$wheel")" 'BEGIN { printf "%.1f", b / 1e6 }')
if [ "$profile" = dist ]; then
  awk -v s="$size_mb" -v b="$wheel_budget_mb" 'BEGIN { exit !(s <= b) }' \
    || fail "the wheel is $size_mb MB, over its budget of $wheel_budget_mb MB"
  echo "ok: wheel $size_mb MB (budget $wheel_budget_mb MB)"
else
  echo "skipped: the size budget ($profile profile, wheel $size_mb MB)"
fi
mapped=$(cd "$work/python" && "${clean_env[@]}" "$work/venv/bin/python" -c '
import os, fabric_core, fabric_core._ffi as ffi
ffi.library()
print(os.path.realpath(os.path.join(os.path.dirname(fabric_core.__file__), "libfabric_ffi.so")))
for path in sorted({line.split()[-1] for line in open("/proc/self/maps") if "fabric" in line.rsplit("/", 1)[-1]}):
    print(path)
')
library=$(printf '%s\n' "$mapped" | sed -n 1p)
maps=$(printf '%s\n' "$mapped" | sed -n '2,$p')
[ "$maps" = "$library" ] || fail "the installed package maps [$maps], want only $library"
echo "ok: the installed package maps $library"

step "the wheel's fabric and fabric-agent-ctl on PATH"
[ -x "$work/venv/bin/fabric-agent-ctl" ] || fail "the wheel installs no fabric-agent-ctl"
mkdir -p "$work/wheel-cli" && cp "$root/examples/hello/fabric.json" "$work/wheel-cli/"
venv_path=(env -i "PATH=$work/venv/bin:/usr/local/bin:/usr/bin:/bin" "HOME=$work/home" "TMPDIR=$work/tmp" "LANG=C.UTF-8")
expect "the wheel's fabric" "$(cd "$work/wheel-cli" && "${venv_path[@]}" fabric run fabric.json --input "Hello, Fabric")"
own_adapter "the wheel's fabric" "$work/venv" "$work/wheel-cli" "${venv_path[@]}" fabric

step "npm package in a fresh project (ESM and CJS)"
tarball=$(ls "$dist"/fabric-core-*.tgz)
mkdir -p "$work/node"
cp "$examples/quickstart.mjs" "$examples/quickstart.cjs" "$work/node/"
(cd "$work/node" && "${clean_env[@]}" "${npm_env[@]}" npm init -y >/dev/null \
  && "${clean_env[@]}" "${npm_env[@]}" npm install --no-audit --no-fund -q "$tarball" >/dev/null)
expect "node ESM import" "$(cd "$work/node" && "${clean_env[@]}" node quickstart.mjs)"
expect "node CJS require" "$(cd "$work/node" && "${clean_env[@]}" node quickstart.cjs)"
[ -x "$work/node/node_modules/.bin/fabric-agent-ctl" ] || fail "the npm package links no fabric-agent-ctl"
cp "$root/examples/hello/fabric.json" "$work/node/"
expect "npx fabric" "$(cd "$work/node" && "${clean_env[@]}" "${npm_env[@]}" npx --no-install fabric run fabric.json --input "Hello, Fabric")"
own_adapter "npx fabric" "$work/node/node_modules/fabric-core" "$work/node" "${clean_env[@]}" "${npm_env[@]}" npx --no-install fabric

step "C SDK: install.sh PREFIX, then a C program through pkg-config"
sdk=$(ls -d "$dist"/fabric-sdk-*/)
prefix=$work/prefix
"${clean_env[@]}" sh "$sdk/install.sh" "$prefix"
pc=("PKG_CONFIG_PATH=$prefix/lib/pkgconfig")
# Go's build cache does not hash pkg-config's output: a define naming this prefix makes the
# cached cgo build of the binding (linked against an earlier run's prefix) miss.
go_env+=("CGO_CFLAGS=-O2 -g -DFABRIC_SDK_PREFIX=\"$prefix\"")
mkdir -p "$work/c" && cp "$examples/quickstart.c" "$work/c/"
(cd "$work/c" && "${clean_env[@]}" "${pc[@]}" sh -c 'cc quickstart.c $(pkg-config --cflags --libs fabric) -o quickstart')
expect c "$(cd "$work/c" && "${clean_env[@]}" ./quickstart)"

step "Go module outside the repository, cgo through the SDK's fabric.pc"
mkdir -p "$work/go" && cp "$examples/main.go" "$work/go/"
module=$(sed -n 's/^module //p' "$dist/go/go.mod")
cat > "$work/go/go.mod" <<MOD
module hello

go 1.22

require $module v0.0.0

replace $module => $dist/go
MOD
(cd "$work/go" && "${clean_env[@]}" "${go_env[@]}" "${pc[@]}" go vet . \
  && "${clean_env[@]}" "${go_env[@]}" "${pc[@]}" go build -o hello .)
expect go "$(cd "$work/go" && "${clean_env[@]}" ./hello)"

step "fabric CLI from the installed prefix"
mkdir -p "$work/cli" && cp "$root/examples/hello/fabric.json" "$work/cli/"
expect cli "$(cd "$work/cli" && "${clean_env[@]}" "$prefix/bin/fabric" run fabric.json --input "Hello, Fabric")"
own_adapter "the C SDK's fabric" "$prefix" "$work/cli" "${clean_env[@]}" "$prefix/bin/fabric"
cmp -s "$dist/fabric" "$prefix/bin/fabric" || fail "dist/fabric differs from the SDK's bin/fabric"

step "fabric-agent-ctl from the installed prefix: serve, start, invoke, stop (docs/sandbox.md)"
cmp -s "$dist/fabric-agent-ctl" "$prefix/bin/fabric-agent-ctl" || fail "dist/fabric-agent-ctl differs from the SDK's bin/fabric-agent-ctl"
sandbox=$work/sandbox
mkdir -p "$sandbox" && cp "$root/examples/hello/fabric.json" "$sandbox/config.json"
ctl=("${clean_env[@]}" "FABRIC_HOST_SOCKET=$sandbox/fabric.sock" "$prefix/bin/fabric-agent-ctl")
(cd "$sandbox" && exec "${ctl[@]}" serve 2>"$sandbox/serve.log") &
server=$!
for _ in $(seq 100); do "${ctl[@]}" check >/dev/null 2>&1 && break; sleep 0.1; done
started=$("${ctl[@]}" start --agent hello --config "$sandbox/config.json") || fail "bridge start: $started"
id=$(printf '%s' "$started" | sed 's/.*"runtime_id":"\([^"]*\)".*/\1/')
printf '"Hello, Fabric"' > "$sandbox/input.json"
expect "fabric-agent-ctl" "$("${ctl[@]}" invoke --agent hello --runtime-id "$id" --input "$sandbox/input.json")"
"${ctl[@]}" stop --agent hello --runtime-id "$id" >/dev/null || fail "bridge stop"
kill -TERM "$server"
wait "$server" || fail "fabric-agent-ctl serve exited $?: $(cat "$sandbox/serve.log")"

step "a runtime in a subprocess provider environment from the installed prefix (docs/sandbox.md)"
cmp -s "$dist/fabric-env-subprocess" "$prefix/bin/fabric-env-subprocess" || fail "dist/fabric-env-subprocess differs from the SDK's bin/fabric-env-subprocess"
mkdir -p "$work/provider/environments"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["environment"]={"provider": "subprocess", "settings": {"root": sys.argv[2]}}; json.dump(c, open(sys.argv[3], "w"))' \
  "$root/examples/hello/fabric.json" "$work/provider/environments" "$work/provider/fabric.json"
expect "provider cli" "$(cd "$work/provider" && "${clean_env[@]}" "$prefix/bin/fabric" run fabric.json --input "Hello, Fabric")"
[ -z "$(ls -A "$work/provider/environments")" ] || fail "the provider environment was not released"

step "the container provider from the installed prefix: discovered, launched, its settings checked"
cmp -s "$dist/fabric-env-container" "$prefix/bin/fabric-env-container" || fail "dist/fabric-env-container differs from the SDK's bin/fabric-env-container"
# An unpinned image is refused before any podman call: podman is not needed here.
mkdir -p "$work/container"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["environment"]={"provider": "container", "settings": {"image": "localhost/fabric-sandbox:latest"}}; json.dump(c, open(sys.argv[2], "w"))' \
  "$root/examples/hello/fabric.json" "$work/container/fabric.json"
status=0
refused=$(cd "$work/container" && "${clean_env[@]}" "$prefix/bin/fabric" env prepare fabric.json) || status=$?
[ "$status" = 2 ] || fail "container prepare exited $status (want 2): $refused"
case "$refused" in
  *'"sandbox_image_unpinned"'*settings.image*) echo "ok: container provider" ;;
  *) fail "container prepare printed: $refused" ;;
esac

step "cargo install --path fabric-cli (debug, reusing target/): the binary alone"
CARGO_TARGET_DIR=$root/target cargo install -q --locked --debug --path fabric-cli --root "$work/cargo"
expect "cargo-installed cli" "$(cd "$work/cli" && "${clean_env[@]}" "$work/cargo/bin/fabric" run fabric.json --input "Hello, Fabric")"
own_adapter "the cargo-installed fabric" "$work/cargo" "$work/cli" "${clean_env[@]}" "$work/cargo/bin/fabric"

step "every artifact installed and ran its quickstart"
