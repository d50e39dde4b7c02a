//! One test of a crate's shared integration-test binary (`tests/all`) run alone, in a fresh
//! process of that binary: for tests of process-wide state (the environment, this process's
//! descriptors or threads, a process-wide counter) that tests on the binary's other threads
//! would change. Included by the `support` module of each binary that needs it:
//!
//! ```ignore
//! #[path = "../../../../tests/alone.rs"]
//! pub mod alone;
//! ```
//!
//! and called first by each such test, with its full name:
//!
//! ```ignore
//! #[test]
//! fn counts_this_process_descriptors() {
//!     if !support::alone::in_own_process("free_fds::counts_this_process_descriptors") {
//!         return; // it ran, and passed, in its own process
//!     }
//!     // ...
//! }
//! ```

use std::process::Command;

/// Set in the test's own process, to the test's name.
const VAR: &str = "FABRIC_TEST_ALONE";

/// `true` in the own process of `test` (its full name, `module::test`): the caller runs the
/// test's body. Elsewhere runs this binary again with only `test` selected, on one test
/// thread, and returns `false` once it passed there; fails with that run's output unless
/// exactly that one test passed.
pub fn in_own_process(test: &str) -> bool {
    if std::env::var_os(VAR).is_some_and(|selected| selected == test) {
        return true;
    }
    let binary = std::env::current_exe().expect("the test binary");
    let output = Command::new(&binary)
        .args([test, "--exact", "--test-threads=1"])
        .env(VAR, test)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Captured by the test harness: shown when this test fails or with --nocapture.
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed;"),
        "{test} in its own process ({}): {}",
        binary.display(),
        output.status
    );
    false
}
