//! The one rule for a Rust test whose dependency (a tool, an interpreter, a venv) is
//! missing: it FAILS, naming what to install, unless `FABRIC_ALLOW_SKIPS=1` asks for a
//! partial local run, where it prints one loud `SKIPPED <test>: ...` line and the test
//! returns. Strict is the default so the README's test command (`scripts/test.sh`) cannot
//! pass with tests that never ran; CI needs nothing special. Included by each test crate's
//! `tests/all/support` module (and by `tests/upstream/mod.rs`):
//!
//! ```ignore
//! #[path = "../../../../tests/dependency.rs"]
//! pub mod dependency;
//!
//! if !podman_found() {
//!     return dependency::missing("podman", "apt-get install podman runc");
//! }
//! ```
//!
//! The same rule in the other languages: `conftest.py` (pytest),
//! `bindings/typescript/src/test/dependency.ts` and `adapters/typescript-echo/src/test/dependency.ts`
//! (node --test), `bindings/go/dependency_test.go` (go test), `scripts/lib/dependency.sh`.

#![allow(dead_code)]

use std::io::Write;

/// The variable that turns a missing dependency into a skip.
pub const ALLOW_SKIPS: &str = "FABRIC_ALLOW_SKIPS";

/// Whether `FABRIC_ALLOW_SKIPS=1` is set.
pub fn skips_allowed() -> bool {
    std::env::var(ALLOW_SKIPS).is_ok_and(|value| value.trim() == "1")
}

/// The name of the running test: `<package>/<test target>::<test>`.
pub fn test_name() -> String {
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or("*");
    format!(
        "{}/{}::{test}",
        env!("CARGO_PKG_NAME"),
        env!("CARGO_CRATE_NAME")
    )
}

/// `what` is missing and `install` gets it: panics (the test fails), or with
/// `FABRIC_ALLOW_SKIPS=1` prints `SKIPPED <test>: ...` once per test to the real stderr
/// (the harness captures `eprintln!`) and returns, so the caller returns too.
pub fn missing(what: &str, install: &str) {
    unavailable(&format!("{what} is missing; install it: {install}"));
}

/// [`missing`] with a reason that already says what is missing and how to get it.
pub fn unavailable(reason: &str) {
    let test = test_name();
    if !skips_allowed() {
        panic!("{test}: {reason} (or set {ALLOW_SKIPS}=1 for a partial run that skips this test)");
    }
    static REPORTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if !reported.contains(&test) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED {test}: {reason} ({ALLOW_SKIPS}=1)"
        );
        reported.push(test);
    }
}
