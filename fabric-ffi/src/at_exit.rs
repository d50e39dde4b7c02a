//! The library settles its background stops when the embedding process exits normally.
//!
//! `run()` returns at the host's answer to `stop`; the host's exit, its reap and the removal
//! of its temporary FABRIC_HOME finish on the reactor afterwards. A program that exits right
//! after `run()` (a Python script, a Node program calling `process.exit`, a C program
//! returning from `main`) would cut that short: `PR_SET_PDEATHSIG` kills the still-exiting
//! host and the home is left to the next core's sweeper. So at load the library registers an
//! `atexit` handler (tied to this library: it also runs if the library is unloaded) that
//! waits, bounded, for the stops already begun — never for live hosts. A process ended
//! without `exit` (a signal, `_exit`, Go's `os.Exit`) skips it; nothing is left behind
//! then either, only ended harder (see `fabric_host::settle`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The default stop policy's whole escalation (grace, `SIGTERM` wait, `SIGKILL` wait), as
/// `fabric run` waits at its exit.
const SETTLE: Duration = Duration::from_secs(4);

/// The process that registered the handler. A child forked from it (without `exec`)
/// inherits the handler but not the reactor thread, which would never answer: the child
/// skips the wait.
static REGISTERED_BY: AtomicU32 = AtomicU32::new(0);

extern "C" fn settle_at_exit() {
    if REGISTERED_BY.load(Ordering::SeqCst) != std::process::id() {
        return;
    }
    // No unwinding out of an atexit handler.
    let _ = std::panic::catch_unwind(|| fabric_host::settle(SETTLE));
}

extern "C" fn register() {
    REGISTERED_BY.store(std::process::id(), Ordering::SeqCst);
    // SAFETY: `atexit` with a handler that never unwinds; glibc ties a shared library's
    // handlers to that library, so the handler never outlives its code.
    unsafe {
        libc::atexit(settle_at_exit);
    }
}

/// Run by the loader when the library (or a program linking it) starts.
#[used]
#[unsafe(link_section = ".init_array")]
static REGISTER: extern "C" fn() = register;

/// Waits until every stop begun in this process has ended (the host's exit, its reap, its
/// temporary FABRIC_HOME's removal), or `timeout_ms` has passed; returns how many stops are
/// still going (0 when all ended). Live hosts are not waited for. For a program that exits
/// without running C `atexit` handlers (Go: `os.Exit` and a returning `main` skip them),
/// called right before the exit; other programs get the same wait at `exit()` on their own.
///
/// Blocking: up to `timeout_ms`. Thread-safe. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn fabric_settle(timeout_ms: u32) -> u32 {
    let bound = Duration::from_millis(u64::from(timeout_ms));
    std::panic::catch_unwind(|| fabric_host::settle(bound))
        .map_or(0, |left| u32::try_from(left).unwrap_or(u32::MAX))
}
