#!/bin/sh
# Runner script for fabric.scripted (descriptor: runner {"command": "sh", "script": "launch.sh"}).
# Finds the adapter's binary without forking and execs it, so the host process is the
# adapter itself (../lib/find-binary.sh). Order: $FABRIC_ADAPTER_SCRIPTED_BIN;
# fabric-adapter-scripted next to this script (the sandbox image, scripts/container-image.sh);
# the newer of ${CARGO_TARGET_DIR:-<repo>/target}/{debug,release}/fabric-adapter-scripted;
# <prefix>/bin/fabric-adapter-scripted; the `fabric` CLI, which carries the adapter
# (`fabric __adapter scripted`), in <prefix>/bin (the C SDK, the wheel) or the npm package's
# bin/ (scripts/package.sh); `fabric-adapter-scripted` on PATH.
case "$0" in
    */*) here=${0%/*} ;;
    *) here=. ;;
esac
. "$here/../lib/find-binary.sh"
fabric_builtin=scripted
fabric_exec_binary fabric-adapter-scripted FABRIC_ADAPTER_SCRIPTED_BIN "$here" "$here/../.." \
    "$here/../../../.." fabric.scripted "cargo build -p fabric-adapter-scripted" "$@"
