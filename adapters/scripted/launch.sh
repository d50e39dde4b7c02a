#!/bin/sh
# Runner script for fabric.scripted (descriptor: runner {"command": "sh", "script": "launch.sh"}).
# Finds the cargo-built binary without forking and execs it, so the host process is the
# adapter itself. Order: $FABRIC_ADAPTER_SCRIPTED_BIN; fabric-adapter-scripted next to this
# script (the packaged layout, scripts/package.sh); the newer of
# ${CARGO_TARGET_DIR:-<repo>/target}/{debug,release}/fabric-adapter-scripted;
# `fabric-adapter-scripted` on PATH (e.g. after `cargo install --path adapters/scripted`).
if [ -n "${FABRIC_ADAPTER_SCRIPTED_BIN:-}" ]; then
    exec "$FABRIC_ADAPTER_SCRIPTED_BIN" "$@"
fi
case "$0" in
    */*) here=${0%/*} ;;
    *) here=. ;;
esac
if [ -x "$here/fabric-adapter-scripted" ]; then
    exec "$here/fabric-adapter-scripted" "$@"
fi
target=${CARGO_TARGET_DIR:-$here/../../target}
best=
for candidate in "$target/debug/fabric-adapter-scripted" "$target/release/fabric-adapter-scripted"; do
    if [ -x "$candidate" ] && { [ -z "$best" ] || [ "$candidate" -nt "$best" ]; }; then
        best=$candidate
    fi
done
if [ -n "$best" ]; then
    exec "$best" "$@"
fi
if command -v fabric-adapter-scripted >/dev/null 2>&1; then
    exec fabric-adapter-scripted "$@"
fi
echo "fabric.scripted: adapter binary not found; run 'cargo build -p fabric-adapter-scripted'," \
    "set FABRIC_ADAPTER_SCRIPTED_BIN, or put fabric-adapter-scripted on PATH" >&2
exit 127
