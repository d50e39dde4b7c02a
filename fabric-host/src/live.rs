//! The process-wide registry of live runtimes (by runtime id, weak references) that
//! `Fabric::check` routes through, and the stats collector shared by every runtime.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use fabric_config::health::HealthLevel;
use fabric_stats::StatsCollector;

use crate::environment::Environment;

/// What a health check needs to know about a runtime, shared between the runtime and the
/// registry. The runtime updates it at every state change.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) runtime_id: String,
    pub(crate) environment: Arc<Environment>,
    pub(crate) fabric_home: PathBuf,
    /// Levels the descriptor advertises (`capabilities.metadata.health_levels`).
    pub(crate) health_levels: Vec<HealthLevel>,
    /// The agent name a runtime in a provider environment is selected by at its runtime
    /// server (`None` for a local host).
    pub(crate) agent: Option<String>,
    busy: AtomicBool,
    stopped: AtomicBool,
    /// Bumped when a stop begins: a check that saw another generation is stale.
    generation: AtomicU64,
}

impl Live {
    pub(crate) fn new(
        runtime_id: String,
        environment: Arc<Environment>,
        fabric_home: PathBuf,
        health_levels: Vec<HealthLevel>,
    ) -> Live {
        Live {
            runtime_id,
            environment,
            fabric_home,
            health_levels,
            agent: None,
            busy: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            generation: AtomicU64::new(0),
        }
    }

    /// Names the agent of a runtime in a provider environment.
    pub(crate) fn with_agent(mut self, agent: String) -> Live {
        self.agent = Some(agent);
        self
    }

    pub(crate) fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::SeqCst);
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }

    /// Marks the runtime stopping (idempotent) and starts a new generation.
    pub(crate) fn mark_stopping(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

fn registry() -> &'static Mutex<HashMap<String, Weak<Live>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Weak<Live>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

fn lock() -> std::sync::MutexGuard<'static, HashMap<String, Weak<Live>>> {
    registry().lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers a started runtime (dropping entries whose runtime is gone).
pub(crate) fn register(live: &Arc<Live>) {
    let mut map = lock();
    map.retain(|_, weak| weak.strong_count() > 0);
    map.insert(live.runtime_id.clone(), Arc::downgrade(live));
}

/// Removes a runtime (on drop).
pub(crate) fn unregister(runtime_id: &str) {
    lock().remove(runtime_id);
}

/// The live runtime with this id, if it still exists.
pub(crate) fn find(runtime_id: &str) -> Option<Arc<Live>> {
    lock().get(runtime_id).and_then(Weak::upgrade)
}

/// The process-wide stats collector (`/proc`, `/sys/fs/cgroup`).
pub(crate) fn collector() -> &'static StatsCollector {
    static COLLECTOR: OnceLock<StatsCollector> = OnceLock::new();
    COLLECTOR.get_or_init(StatsCollector::default)
}

/// Health levels a descriptor advertises in `capabilities.metadata.health_levels`
/// (unknown spellings ignored; absent or malformed → none).
pub(crate) fn health_levels(
    descriptor: Option<&fabric_config::descriptor::AdapterDescriptor>,
) -> Vec<HealthLevel> {
    descriptor
        .and_then(|d| d.capabilities.metadata.get("health_levels"))
        .and_then(serde_json::Value::as_array)
        .map(|levels| {
            levels
                .iter()
                .filter_map(|v| v.as_str().and_then(HealthLevel::parse))
                .collect()
        })
        .unwrap_or_default()
}
