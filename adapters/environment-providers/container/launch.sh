#!/bin/sh
# Runner script of the `container` environment provider (descriptor: command ["sh",
# "launch.sh"], run with this directory as its working directory). Finds the cargo-built
# binary and execs it, so the provider process is the binary itself. Order:
# $FABRIC_ENV_CONTAINER_BIN; fabric-env-container next to this script (a packaged
# layout); the newer of ${CARGO_TARGET_DIR:-<repo>/target}/{debug,release}/;
# `fabric-env-container` on PATH.
if [ -n "${FABRIC_ENV_CONTAINER_BIN:-}" ]; then
    exec "$FABRIC_ENV_CONTAINER_BIN" "$@"
fi
here=$(pwd)
if [ -x "$here/fabric-env-container" ]; then
    exec "$here/fabric-env-container" "$@"
fi
target=${CARGO_TARGET_DIR:-$here/../../../target}
best=
for candidate in "$target/debug/fabric-env-container" "$target/release/fabric-env-container"; do
    if [ -x "$candidate" ] && { [ -z "$best" ] || [ "$candidate" -nt "$best" ]; }; then
        best=$candidate
    fi
done
if [ -n "$best" ]; then
    exec "$best" "$@"
fi
if command -v fabric-env-container >/dev/null 2>&1; then
    exec fabric-env-container "$@"
fi
echo "container provider: fabric-env-container not found; run 'cargo build -p fabric-cli'," \
    "set FABRIC_ENV_CONTAINER_BIN, or put it on PATH" >&2
exit 127
