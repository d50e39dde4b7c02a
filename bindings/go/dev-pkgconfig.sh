#!/usr/bin/env bash
# Writes target/debug/pkgconfig/fabric.pc for the in-repository debug build and prints its
# directory, for PKG_CONFIG_PATH: the Go binding's `#cgo pkg-config: fabric` then links
# target/debug/libfabric_ffi.a statically against include/fabric.h. (Installed C SDKs ship
# their own fabric.pc; see docs/go.md.)
#
#   export PKG_CONFIG_PATH=$(bash bindings/go/dev-pkgconfig.sh)          # debug build
#   export PKG_CONFIG_PATH=$(bash bindings/go/dev-pkgconfig.sh release)  # bench/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
profile=${1:-debug}
lib=$root/target/$profile/libfabric_ffi.a
if [ ! -f "$lib" ]; then
  echo "error: $lib missing; run 'cargo build --workspace' first" >&2
  exit 2
fi
case "$(uname -s)" in
  Darwin) system="-framework Security -framework CoreFoundation -liconv -lm" ;;
  *) system="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" ;;
esac
dir=$root/target/$profile/pkgconfig
mkdir -p "$dir"
cat > "$dir/fabric.pc" <<PC
Name: fabric
Description: Fabric core C ABI (in-repository $profile build, linked statically)
Version: $(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
Cflags: -I$root/include
Libs: $lib $system
PC
echo "$dir"
