# Sourced (not run) by the runner scripts of the bundled adapters and environment providers
# (adapters/scripted/launch.sh, adapters/environment-providers/*/launch.sh). Packaged
# layouts keep this directory beside theirs: share/nemo-fabric/adapters/lib/ in the C SDK
# and the wheel, adapters/lib/ in the npm package, /opt/fabric/adapters/lib/ in the sandbox
# image (scripts/package.sh, scripts/container-image.sh).
#
# fabric_exec_binary NAME VAR HERE REPO PREFIX LABEL BUILD [ARGS...]
# Execs the binary NAME with ARGS, so the process is the binary itself. Order: the value of
# the variable VAR; HERE/NAME (a packaged layout keeps the binary beside its runner script);
# the newer of ${CARGO_TARGET_DIR:-REPO/target}/{debug,release}/NAME; PREFIX/bin/NAME (an
# installed prefix); when the caller set fabric_builtin (an adapter compiled into the
# `fabric` CLI, e.g. `scripted`), `fabric __adapter $fabric_builtin ARGS` from PREFIX/bin
# (the C SDK, the wheel's venv) or REPO/bin (the npm package); NAME on PATH. Else prints on
# stderr, as LABEL, how to build it (BUILD, the cargo command) and exits 127.
fabric_exec_binary() {
    fabric_name=$1 fabric_var=$2 fabric_here=$3 fabric_repo=$4 fabric_prefix=$5
    fabric_label=$6 fabric_build=$7
    shift 7
    eval "fabric_override=\${$fabric_var:-}"
    if [ -n "$fabric_override" ]; then
        exec "$fabric_override" "$@"
    fi
    if [ -x "$fabric_here/$fabric_name" ]; then
        exec "$fabric_here/$fabric_name" "$@"
    fi
    fabric_target=${CARGO_TARGET_DIR:-$fabric_repo/target}
    fabric_best=
    for fabric_candidate in "$fabric_target/debug/$fabric_name" "$fabric_target/release/$fabric_name"; do
        if [ -x "$fabric_candidate" ] && { [ -z "$fabric_best" ] || [ "$fabric_candidate" -nt "$fabric_best" ]; }; then
            fabric_best=$fabric_candidate
        fi
    done
    if [ -n "$fabric_best" ]; then
        exec "$fabric_best" "$@"
    fi
    if [ -x "$fabric_prefix/bin/$fabric_name" ]; then
        exec "$fabric_prefix/bin/$fabric_name" "$@"
    fi
    if [ -n "${fabric_builtin:-}" ]; then
        for fabric_cli in "$fabric_prefix/bin/fabric" "$fabric_repo/bin/fabric"; do
            if [ -x "$fabric_cli" ]; then
                exec "$fabric_cli" __adapter "$fabric_builtin" "$@"
            fi
        done
    fi
    if command -v "$fabric_name" >/dev/null 2>&1; then
        exec "$fabric_name" "$@"
    fi
    echo "$fabric_label: $fabric_name not found${fabric_builtin:+ (nor a fabric CLI beside this package)};" \
        "run '$fabric_build', set $fabric_var, or put $fabric_name on PATH" >&2
    exit 127
}
