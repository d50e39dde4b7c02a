#!/usr/bin/env bash
# Vet and test the Go binding with the race detector, against the debug build (the binding's
# `#cgo pkg-config: fabric` finds the fabric.pc that dev-pkgconfig.sh writes for it).
#
# Go's build cache does not notice a rebuilt C library (cgo LDFLAGS name a file, not its
# contents), so a cached test binary could keep an old libfabric_ffi.a. The library's
# hash goes into CGO_CFLAGS, which Go does hash: a new library means a fresh link.
set -euo pipefail
cd "$(dirname "$0")"
lib=../../target/debug/libfabric_ffi.a
if [ ! -f "$lib" ]; then
  echo "error: $lib missing; run 'cargo build --workspace' first" >&2
  exit 2
fi
PKG_CONFIG_PATH=$(bash dev-pkgconfig.sh)${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
hash=$(sha256sum "$lib" | cut -c1-16)
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DFABRIC_LIBRARY_SHA256_PREFIX=$hash"
go vet ./...
go test -race -count=1 ./...
