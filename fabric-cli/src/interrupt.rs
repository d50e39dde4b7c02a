//! `SIGINT` / `SIGTERM` for commands that start runtimes (`run`, `check`).
//!
//! The first signal stops every runtime of the process (stdin closed, `SIGTERM` to each host
//! group, `SIGKILL` after [`TERM_WAIT`], bounded by [`TERM_WAIT`] + [`KILL_WAIT`]), removes
//! the temporary FABRIC_HOMEs and exits 128 + the signal (130 for `SIGINT`, 143 for
//! `SIGTERM`); a second signal meanwhile `SIGKILL`s every host group at once. One line on
//! stderr says so (`fabric: SIGINT: stopping runtimes ...`). Signals are
//! received on a thread of their own (`signal-hook`'s self-pipe), so the command's thread
//! keeps running until the shutdown ends the process. An error the shutdown caused (a start
//! cut short) is printed as `interrupted` ([`explain`]); the shutdown waits for the command to
//! return (at most [`REPORT_WAIT`]) so that this is said before the process ends.

use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use fabric_config::{ErrorInfo, codes};
use fabric_host::StopPolicy;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Wait after `SIGTERM` before `SIGKILL`.
pub const TERM_WAIT: Duration = Duration::from_secs(2);
/// Wait after `SIGKILL` before giving up on a host.
pub const KILL_WAIT: Duration = Duration::from_secs(1);

/// The first signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Whether the command has returned (and so printed what it reports): the shutdown waits
/// for it, at most [`REPORT_WAIT`], before it ends the process.
static RETURNED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
/// How long the shutdown lets the command report the error the stop caused.
const REPORT_WAIT: Duration = Duration::from_secs(1);

/// Starts handling `SIGINT` and `SIGTERM` (call before anything starts a runtime). When
/// the handler cannot be installed the default actions stay.
pub fn install() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("fabric-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if RECEIVED
                    .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    let _ = std::thread::Builder::new()
                        .name("fabric-shutdown".into())
                        .spawn(move || shut_down(signal));
                } else {
                    fabric_host::kill_all_hosts();
                }
            }
        });
    drop(spawned);
}

fn shut_down(signal: i32) -> ! {
    let name = signal_name(signal);
    eprintln!("fabric: {name}: stopping runtimes (signal again to kill them now)");
    fabric_host::shutdown(StopPolicy {
        grace: Duration::ZERO,
        term_wait: TERM_WAIT,
        kill_wait: KILL_WAIT,
    });
    // The stop cut the command's call short: let it print that (`explain`) before the
    // process ends, or a fast shutdown exits with nothing said.
    let (returned, changed) = &RETURNED;
    let guard = returned
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    drop(changed.wait_timeout_while(guard, REPORT_WAIT, |returned| !*returned));
    std::process::exit(128 + signal)
}

/// `info` as the command should report it: after `SIGINT` or `SIGTERM`, whatever failed
/// because the shutdown stopped the runtimes (a start cut short says `runtime_stopped`) is
/// reported as `interrupted`, at the stage it reached.
pub fn explain(info: &ErrorInfo) -> ErrorInfo {
    let signal = RECEIVED.load(Ordering::SeqCst);
    if signal == 0 {
        return info.clone();
    }
    let name = signal_name(signal);
    ErrorInfo::new(
        info.stage,
        codes::INTERRUPTED,
        format!(
            "interrupted by {name} during {}: the runtime was stopped",
            info.stage.as_str()
        ),
    )
    .with_metadata("signal", name)
}

fn signal_name(signal: i32) -> &'static str {
    if signal == SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    }
}

/// The command's exit code, unless a signal arrived: then the shutdown thread ends the
/// process (with 128 + the signal) and this never returns.
pub fn finish(code: ExitCode) -> ExitCode {
    if RECEIVED.load(Ordering::SeqCst) == 0 {
        return code;
    }
    let (returned, changed) = &RETURNED;
    *returned
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
    changed.notify_all();
    loop {
        std::thread::park();
    }
}
