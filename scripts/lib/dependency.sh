# The one rule for a missing dependency in the repository's scripts (the same rule as the
# Rust, pytest, node and Go test suites: tests/dependency.rs): a step whose tool is missing
# FAILS, naming what to install, unless FABRIC_ALLOW_SKIPS=1 asks for a partial run, where
# it prints one SKIPPED line and the caller skips the step.
#
#   . scripts/lib/dependency.sh
#   if need node "Node.js 20 or later (scripts/setup.sh)"; then ...; fi

# missing_dependency WHAT INSTALL: exits 1 (strict), or returns 1 after a SKIPPED line.
missing_dependency() {
  if [ "${FABRIC_ALLOW_SKIPS:-}" = 1 ]; then
    echo "SKIPPED: $1 is missing; install it: $2 (FABRIC_ALLOW_SKIPS=1)" >&2
    return 1
  fi
  echo "error: $1 is missing; install it: $2 (or set FABRIC_ALLOW_SKIPS=1 for a partial run that skips what needs it)" >&2
  exit 1
}

# need COMMAND INSTALL: 0 when COMMAND is on PATH, else missing_dependency.
need() {
  command -v "$1" >/dev/null 2>&1 || missing_dependency "$1" "$2"
}
