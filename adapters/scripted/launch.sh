#!/bin/sh
# Runner script for fabric.scripted (descriptor: runner {"command": "sh", "script": "launch.sh"}).
# Finds the cargo-built binary without forking and execs it, so the host process is the
# adapter itself (../lib/find-binary.sh). Order: $FABRIC_ADAPTER_SCRIPTED_BIN;
# fabric-adapter-scripted next to this script (the packaged layout, scripts/package.sh); the
# newer of ${CARGO_TARGET_DIR:-<repo>/target}/{debug,release}/fabric-adapter-scripted;
# `fabric-adapter-scripted` on PATH (e.g. after `cargo install --path adapters/scripted`).
case "$0" in
    */*) here=${0%/*} ;;
    *) here=. ;;
esac
. "$here/../lib/find-binary.sh"
fabric_exec_binary fabric-adapter-scripted FABRIC_ADAPTER_SCRIPTED_BIN "$here" "$here/../.." \
    "$here/../../../.." fabric.scripted "cargo build -p fabric-adapter-scripted" "$@"
