#!/usr/bin/env bash
# Coverage-guided fuzzing with cargo-fuzz (libFuzzer, nightly toolchain); docs/fuzzing.md.
#
#   bench/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Installs cargo-fuzz when it is missing, builds every target once (release, debug
# assertions, AddressSanitizer), then runs each target for SECONDS_PER_TARGET (default 60),
# one at a time with one worker, starting from the committed corpus, the hand-written seeds
# (fuzz/seeds/) and the repository's fixtures. Afterwards the corpus is minimized (libFuzzer
# -set_cover_merge=1 over edges) into fuzz/corpus/<target>/, which the stable regression test
# (fabric-fuzz/tests/all/corpus.rs) replays. Crashes are left in fuzz/artifacts/<target>/:
# copy each into fuzz/regressions/<target>/ once it is fixed.
#
# Prints one line per target: seconds, executions, executions/s, corpus files, crashes.
# Exit status: 1 when any target crashed.
#
# Environment: FABRIC_FUZZ_TOOLCHAIN (default nightly), FABRIC_FUZZ_MAX_CORPUS (default
# 800: above it, only the smallest files are kept and the run says so), FABRIC_FUZZ_NO_BUILD
# (set: run the binaries already in fuzz/target, e.g. to continue a session).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(config descriptor lifecycle_response health_wire abi collector_http openai_stream runtime_request)
fi
toolchain=${FABRIC_FUZZ_TOOLCHAIN:-nightly}
max_corpus=${FABRIC_FUZZ_MAX_CORPUS:-800}

if ! cargo "+$toolchain" fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz ($toolchain)" >&2
    cargo "+$toolchain" install cargo-fuzz --locked
fi

# --- seeds -------------------------------------------------------------------------------
add() { # add <dir> <files...>: copy existing files into dir
    local dir=$1
    shift
    local f
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "$dir/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
    done
    return 0
}

abi_seed() { # abi_seed <dir> <name> <entry> <mask> <arg...>: one encoded ABI input
    local dir=$1 name=$2 entry=$3 mask=$4
    shift 4
    {
        printf "\\x$(printf %02x "$entry")\\x$(printf %02x "$mask")"
        local first=1 arg
        for arg in "$@"; do
            [ $first -eq 1 ] || printf '\0'
            first=0
            printf '%s' "$arg"
        done
    } >"$dir/seed-$name"
}

seed() { # seed <target> <dir>
    local target=$1 dir=$2
    shopt -s nullglob
    case $target in
    config)
        add "$dir" tests/fixtures/configs/*.json tests/fixtures/configs-invalid/*.json \
            examples/*/fabric.json examples/*/request*.json
        ;;
    descriptor)
        add "$dir" tests/fixtures/descriptors/*.json tests/fixtures/descriptors/invalid/*.json \
            adapters/*/*.fabric-adapter.json examples/*/*.fabric-adapter.json \
            tests/fixtures/atof-adapter/*.json
        ;;
    abi)
        local config options='{"base_dir": "."}' request='{"input": "hello"}' entry i=0
        for config in tests/fixtures/configs/*.json examples/*/fabric.json; do
            i=$((i + 1))
            for entry in 0 1 3 4 5 6 7 8; do
                abi_seed "$dir" "$entry-$i" "$entry" 0 "$(cat "$config")" "$options" "$options"
            done
            abi_seed "$dir" "2-$i" 2 0 "$(cat "$config")" \
                "$(cat tests/fixtures/descriptors/everything.fabric-adapter.json)" \
                "$(cat tests/fixtures/descriptors/everything-react.fabric-target.json)"
            abi_seed "$dir" "4r-$i" 4 0 "$(cat "$config")" "$request" "$options"
        done
        for entry in 9 10 11 12 13 14 15 16 17; do
            for mask in 0 16 32 48 64; do
                abi_seed "$dir" "h$entry-$mask" "$entry" "$mask" "$request" "$options"
            done
        done
        abi_seed "$dir" check 13 0 '{"scope": "runtime", "runtime_id": "runtime-x", "level": "ready", "timeout_seconds": 0.01}'
        ;;
    esac
    add "$dir" fuzz/seeds/"$target"/*
    shopt -u nullglob
}

# --- build, run, minimize ----------------------------------------------------------------
# Build once, then run the binaries directly: `cargo fuzz run` would rebuild mid-session
# when a source file changes, and every target of a session should test the same code.
if [ -z "${FABRIC_FUZZ_NO_BUILD:-}" ]; then
    cargo "+$toolchain" fuzz build >&2
fi
triple=$(rustc "+$toolchain" -vV | sed -n 's/^host: //p')
bin=$root/fuzz/target/$triple/release

summary=()
crashed=0
for target in "${targets[@]}"; do
    work=fuzz/work/$target
    rm -rf "$work"
    mkdir -p "$work" "fuzz/corpus/$target" "fuzz/artifacts/$target"
    seed "$target" "$work"
    cp fuzz/corpus/"$target"/* "$work"/ 2>/dev/null || true
    cp fuzz/regressions/"$target"/* "$work"/ 2>/dev/null || true
    before=$(find "fuzz/artifacts/$target" -type f | wc -l)
    log=fuzz/work/$target.log
    echo "fuzzing $target for ${seconds}s ($(find "$work" -type f | wc -l) seed inputs)" >&2
    status=0
    (cd fuzz && "$bin/$target" -artifact_prefix="artifacts/$target/" \
        -max_total_time="$seconds" -max_len=65536 -timeout=60 -rss_limit_mb=4096 \
        -print_final_stats=1 "../$work") >"$log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    after=$(find "fuzz/artifacts/$target" -type f | wc -l)
    crashes=$((after - before))
    if [ "$status" -ne 0 ]; then
        crashed=1
        echo "$target: libFuzzer exited $status; see $log and fuzz/artifacts/$target/" >&2
        grep -m3 -E "panicked|ERROR: AddressSanitizer|deadly signal|timeout" "$log" >&2 || true
    fi
    # Minimize into the committed corpus.
    fresh=fuzz/work/$target.min
    rm -rf "$fresh"
    mkdir -p "$fresh"
    # Greedy set cover over edges (hit counts ignored): the smallest corpus that keeps every
    # covered edge, a few hundred files rather than thousands.
    (cd fuzz && "$bin/$target" -set_cover_merge=1 -use_counters=0 -max_len=65536 -timeout=60 \
        "../$fresh" "../$work") \
        >"fuzz/work/$target.merge.log" 2>&1 || {
        echo "$target: merge failed; see fuzz/work/$target.merge.log" >&2
        crashed=1
        continue
    }
    count=$(find "$fresh" -type f | wc -l)
    if [ "$count" -gt "$max_corpus" ]; then
        echo "$target: minimized corpus has $count files; keeping the $max_corpus smallest" >&2
        find "$fresh" -type f -printf '%s %p\n' | sort -n | tail -n +"$((max_corpus + 1))" |
            cut -d' ' -f2- | xargs rm -f
    fi
    rm -rf "fuzz/corpus/$target"
    mv "$fresh" "fuzz/corpus/$target"
    count=$(find "fuzz/corpus/$target" -type f | wc -l)
    rate=0
    if [ -n "$execs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ]; then
        rate=$((execs / secs))
    fi
    summary+=("$(printf '%-20s %6ss %12s execs %8s/s %5s corpus files %3s crashes' \
        "$target" "${secs:-?}" "${execs:-?}" "$rate" "$count" "$crashes")")
done

echo
echo "fuzzing summary ($(date -u +%Y-%m-%dT%H:%MZ), $toolchain, $(cargo "+$toolchain" fuzz --version))"
printf '%s\n' "${summary[@]}"
cd "$root"
exit "$crashed"
