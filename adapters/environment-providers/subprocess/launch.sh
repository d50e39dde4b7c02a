#!/bin/sh
# Runner script of the `subprocess` environment provider (descriptor: command ["sh",
# "launch.sh"], run with this directory as its working directory). Finds the cargo-built
# binary and execs it, so the provider process is the binary itself
# (../../lib/find-binary.sh). Order: $FABRIC_ENV_SUBPROCESS_BIN; fabric-env-subprocess next to this
# script (a packaged layout); the newer of ${CARGO_TARGET_DIR:-<repo>/target}/{debug,release}/;
# PREFIX/bin of an installed prefix (PREFIX/share/nemo-fabric/adapters/environment-providers/subprocess,
# the C SDK's install.sh); `fabric-env-subprocess` on PATH.
here=$(pwd)
. "$here/../../lib/find-binary.sh"
fabric_exec_binary fabric-env-subprocess FABRIC_ENV_SUBPROCESS_BIN "$here" "$here/../../.." \
    "$here/../../../../.." "subprocess provider" "cargo build -p fabric-cli" "$@"
