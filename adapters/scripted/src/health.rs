//! Health support: the `fabric-health` listener with a probe over this host's state.
//!
//! When `FABRIC_HOME` names an existing directory, the host starts the listener at launch
//! (it writes `health.endpoint.json` there, 0600) and stops it (removing the file) before
//! answering `stop`. Levels, all three supported:
//! - `live`: the host process answers (`scripted:process`);
//! - `active`: a runtime is started (`scripted:runtime`, else `runtime_not_started`);
//! - `ready`: the runtime is started and not latched failed (`runtime_failed`).
//!
//! Checks pass while an invocation is running. `harness.settings.health.fail` makes one
//! level fail (`scripted_failure`); `health.stall` makes its probe outlast the budget.

use fabric_config::codes;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use fabric_health::HealthLevel;
use fabric_health::listener::{self, ListenerHandle, ProbeOutcome};

/// Longest a stalled probe sleeps, whatever the budget.
const MAX_STALL: Duration = Duration::from_secs(600);
/// How far past the budget a stalled probe sleeps.
const STALL_MARGIN: Duration = Duration::from_millis(250);

/// What the probe reads; the lifecycle loop writes it.
#[derive(Debug, Default, Clone)]
pub struct HealthState {
    pub started: bool,
    pub failed: bool,
    pub fail: Option<HealthLevel>,
    pub stall: Option<HealthLevel>,
}

/// The listener (if any) and the state its probe reads.
#[derive(Debug, Default)]
pub struct Health {
    state: Arc<Mutex<HealthState>>,
    listener: Option<ListenerHandle>,
}

impl Health {
    /// Starts the listener under `$FABRIC_HOME` when it is set; without it, health is off.
    pub fn from_env() -> Health {
        let mut health = Health::default();
        if let Some(home) = std::env::var_os("FABRIC_HOME").filter(|h| !h.is_empty()) {
            health.listen(Path::new(&home));
        }
        health
    }

    fn listen(&mut self, fabric_home: &Path) {
        let state = Arc::clone(&self.state);
        match listener::spawn(fabric_home, move |level, budget| {
            probe(&state, level, budget)
        }) {
            Ok(handle) => self.listener = Some(handle),
            Err(error) => eprintln!("fabric.scripted: health listener not started: {error}"),
        }
    }

    /// Updates the state the probe reads.
    pub fn update(&self, change: impl FnOnce(&mut HealthState)) {
        change(&mut lock(&self.state));
    }

    /// Stops the listener and removes the endpoint file (before `stop` is answered).
    pub fn shutdown(&mut self) {
        self.update(|s| s.started = false);
        if let Some(handle) = self.listener.take() {
            handle.stop();
        }
    }
}

fn lock(state: &Mutex<HealthState>) -> MutexGuard<'_, HealthState> {
    // The state is plain data; a panic elsewhere cannot leave it half-written.
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Parses a level name from settings (already validated).
pub fn level(name: &str) -> Option<HealthLevel> {
    HealthLevel::parse(name)
}

fn probe(state: &Mutex<HealthState>, level: HealthLevel, budget: Duration) -> ProbeOutcome {
    let now = lock(state).clone();
    if now.stall == Some(level) {
        std::thread::sleep((budget + STALL_MARGIN).min(MAX_STALL));
        return ProbeOutcome::unknown("scripted:settings", "scripted_stall");
    }
    if now.fail == Some(level) {
        return ProbeOutcome::failed("scripted:settings", "scripted_failure");
    }
    match level {
        HealthLevel::Live => ProbeOutcome::passed("scripted:process"),
        _ if !now.started => ProbeOutcome::failed("scripted:runtime", "runtime_not_started"),
        HealthLevel::Ready if now.failed => {
            ProbeOutcome::failed("scripted:runtime", codes::RUNTIME_FAILED)
        }
        _ => ProbeOutcome::passed("scripted:runtime"),
    }
}
