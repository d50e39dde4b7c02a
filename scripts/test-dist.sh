#!/usr/bin/env bash
# Installs every artifact of dist/ (scripts/package.sh) into fresh directories outside the
# checkout and runs its quickstart (examples/installed/): the Python wheel in a new venv with
# an empty environment, the npm package in a new project (ESM import and CJS require), the C
# SDK through install.sh PREFIX, a C program and a Go module built with its pkg-config file,
# the installed `fabric` CLI and `fabric-agent-ctl` (a bridge session), and `cargo install --path fabric-cli`. Also checks that the README shows each quickstart verbatim.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dist=$root/dist
examples=$root/examples/installed
want="Hello! You said: Hello, Fabric"

step() { printf '\n==> %s\n' "$*"; }
fail() { echo "test-dist: $*" >&2; exit 1; }
expect() { # expect <what> <output>: the output must hold the scripted reply and "succeeded"
  case "$2" in
    *succeeded*"$want"* | *"$want"*succeeded*) echo "ok: $1" ;;
    *) fail "$1 printed: $2" ;;
  esac
}

[ -d "$dist" ] || fail "dist/ missing; run scripts/package.sh first"
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

step "npm package in a fresh project (ESM and CJS)"
tarball=$(ls "$dist"/fabric-core-*.tgz)
mkdir -p "$work/node"
cp "$examples/quickstart.mjs" "$examples/quickstart.cjs" "$work/node/"
(cd "$work/node" && "${clean_env[@]}" "${npm_env[@]}" npm init -y >/dev/null \
  && "${clean_env[@]}" "${npm_env[@]}" npm install --no-audit --no-fund -q "$tarball" >/dev/null)
expect "node ESM import" "$(cd "$work/node" && "${clean_env[@]}" node quickstart.mjs)"
expect "node CJS require" "$(cd "$work/node" && "${clean_env[@]}" node quickstart.cjs)"

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

step "cargo install --path fabric-cli (debug, reusing target/)"
CARGO_TARGET_DIR=$root/target cargo install -q --locked --debug --path fabric-cli --root "$work/cargo"
expect "cargo-installed cli" "$(cd "$work/cli" && "$work/cargo/bin/fabric" run fabric.json --input "Hello, Fabric")"

step "every artifact installed and ran its quickstart"
