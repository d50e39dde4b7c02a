#!/bin/sh
# Runner script of the `subprocess` environment provider (descriptor: command ["sh",
# "launch.sh"], run with this directory as its working directory). Finds the cargo-built
# binary and execs it, so the provider process is the binary itself. Order:
# $FABRIC_ENV_SUBPROCESS_BIN; fabric-env-subprocess next to this script (the packaged layout,
# scripts/package.sh); the newer of ${CARGO_TARGET_DIR:-<repo>/target}/{debug,release}/;
# PREFIX/bin of an installed prefix (the C SDK's install.sh); `fabric-env-subprocess` on PATH.
if [ -n "${FABRIC_ENV_SUBPROCESS_BIN:-}" ]; then
    exec "$FABRIC_ENV_SUBPROCESS_BIN" "$@"
fi
here=$(pwd)
if [ -x "$here/fabric-env-subprocess" ]; then
    exec "$here/fabric-env-subprocess" "$@"
fi
target=${CARGO_TARGET_DIR:-$here/../../../target}
best=
for candidate in "$target/debug/fabric-env-subprocess" "$target/release/fabric-env-subprocess"; do
    if [ -x "$candidate" ] && { [ -z "$best" ] || [ "$candidate" -nt "$best" ]; }; then
        best=$candidate
    fi
done
if [ -n "$best" ]; then
    exec "$best" "$@"
fi
# An installed prefix: PREFIX/share/nemo-fabric/adapters/environment-providers/subprocess.
installed=$here/../../../../../bin/fabric-env-subprocess
if [ -x "$installed" ]; then
    exec "$installed" "$@"
fi
if command -v fabric-env-subprocess >/dev/null 2>&1; then
    exec fabric-env-subprocess "$@"
fi
echo "subprocess provider: fabric-env-subprocess not found; run 'cargo build -p fabric-cli'," \
    "set FABRIC_ENV_SUBPROCESS_BIN, or put it on PATH" >&2
exit 127
