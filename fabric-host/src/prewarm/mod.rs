//! Prewarmed hosts: adapter hosts launched ahead of time, exactly as a start would launch
//! them, that wait for the `start` line until a matching start claims one.
//!
//! A [`Prewarm`] owns a pool of `hosts` launched hosts of one plan and its options. Every
//! local start ([`crate::Fabric::start_runtime_plan`], so `run` too) first asks the open
//! pools for a host whose [`SpawnKey`] equals its own; a claimed host is sent `start` by the
//! claiming runtime, and the pool's filler thread launches a replacement in the
//! background. Closing the pool (or dropping it) terminates its unclaimed hosts and removes
//! their temporary FABRIC_HOMEs; claimed hosts belong to their runtimes. Every host is
//! spawned by the reactor's spawner thread with the parent-death signal, so a killed
//! embedding process leaves none behind.

mod key;

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use fabric_config::Stage;
use fabric_config::codes;
use fabric_config::handles::PrewarmInfo;
use fabric_config::plan::RunPlan;

use crate::environment::{self, Environment};
use crate::error::HostError;
use crate::runtime::{RuntimeOptions, ServiceRole, Spawned};

pub(crate) use key::SpawnKey;

/// Most hosts one pool keeps.
pub const MAX_PREWARM_HOSTS: u32 = 64;

/// One launched host waiting for `start`, in its own local environment.
#[derive(Debug)]
pub(crate) struct Warm {
    pub environment: Arc<Environment>,
    pub spawned: Spawned,
}

#[derive(Debug, Default)]
struct State {
    idle: VecDeque<Warm>,
    /// Launches in progress on the filler thread.
    launching: usize,
    claimed: u64,
    /// The last refill failed: the filler waits for the next claim (or close) before it
    /// tries again, so a broken launch never spins.
    refill_failed: bool,
    closed: bool,
}

#[derive(Debug)]
struct Pool {
    key: SpawnKey,
    plan: RunPlan,
    options: RuntimeOptions,
    hosts: usize,
    state: Mutex<State>,
    wake: Condvar,
}

/// The open pools of this process (few: one per prewarmed config).
static POOLS: Mutex<Vec<Arc<Pool>>> = Mutex::new(Vec::new());

fn pools() -> MutexGuard<'static, Vec<Arc<Pool>>> {
    POOLS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A prewarmed host of an open pool whose key matches a start of `plan` with `options`.
pub(crate) fn claim(plan: &RunPlan, options: &RuntimeOptions) -> Option<Warm> {
    let candidates: Vec<Arc<Pool>> = {
        let pools = pools();
        if pools.is_empty() {
            return None;
        }
        pools.clone()
    };
    let key = SpawnKey::of(plan, options)?;
    candidates
        .iter()
        .filter(|pool| pool.key == key)
        .find_map(|pool| pool.take())
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The oldest waiting host that is still running; hosts that died while they waited
    /// are discarded (and replaced by the filler).
    fn take(&self) -> Option<Warm> {
        let mut state = self.lock();
        if state.idle.is_empty() {
            return None;
        }
        let mut dead = Vec::new();
        let found = loop {
            match state.idle.pop_front() {
                Some(warm) if warm.spawned.waiting() => break Some(warm),
                Some(warm) => dead.push(warm),
                None => break None,
            }
        };
        if found.is_some() {
            state.claimed += 1;
        }
        state.refill_failed = false;
        drop(state);
        self.wake.notify_all();
        dead.into_iter().for_each(|warm| warm.spawned.discard());
        found
    }

    fn launch(&self) -> Result<Warm, HostError> {
        let environment = Arc::new(Environment::prepare(&self.plan, Stage::Start)?);
        let spawned = Spawned::launch(
            &self.plan,
            &environment,
            &self.options,
            None,
            &ServiceRole::None,
        )?;
        Ok(Warm {
            environment,
            spawned,
        })
    }

    /// The filler thread: keeps `hosts` hosts idle or launching until the pool closes.
    fn fill(self: Arc<Pool>) {
        let mut state = self.lock();
        loop {
            while !state.closed
                && (state.refill_failed || state.idle.len() + state.launching >= self.hosts)
            {
                state = self
                    .wake
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            if state.closed {
                return;
            }
            state.launching += 1;
            drop(state);
            let launched = self.launch();
            state = self.lock();
            state.launching -= 1;
            match launched {
                Ok(warm) if state.closed => {
                    drop(state);
                    warm.spawned.discard();
                    state = self.lock();
                }
                Ok(warm) => state.idle.push_back(warm),
                Err(_) => state.refill_failed = true,
            }
            self.wake.notify_all();
        }
    }

    fn info(&self) -> PrewarmInfo {
        let state = self.lock();
        PrewarmInfo {
            handle: None,
            hosts: u32::try_from(self.hosts).unwrap_or(u32::MAX),
            ready_pids: state.idle.iter().map(|w| w.spawned.pid()).collect(),
            claimed: state.claimed,
            closed: state.closed,
        }
    }
}

/// A pool of prewarmed hosts (see the module docs). `Send + Sync`; [`Prewarm::close`] is
/// idempotent and dropping an open pool closes it.
#[derive(Debug)]
pub struct Prewarm {
    pool: Arc<Pool>,
    filler: Mutex<Option<JoinHandle<()>>>,
}

impl Prewarm {
    /// Launches `hosts` hosts of `plan` (1 to [`MAX_PREWARM_HOSTS`]) as a start with
    /// `options` would and opens the pool. Returns once they are launched (not once their
    /// interpreters are up). Errors: `invalid_request` (`hosts` out of range),
    /// `prewarm_unsupported` (an environment provider other than `local`, or Relay
    /// streaming), then every launch error of a start.
    pub(crate) fn open(
        plan: &RunPlan,
        options: &RuntimeOptions,
        hosts: u32,
    ) -> Result<Prewarm, HostError> {
        if hosts == 0 || hosts > MAX_PREWARM_HOSTS {
            return Err(HostError::InvalidRequest {
                stage: Stage::Config,
                path: "hosts".into(),
                reason: format!("`hosts` must be 1 to {MAX_PREWARM_HOSTS}"),
            });
        }
        let unsupported = |message: &str| HostError::Capability {
            stage: Stage::Start,
            code: codes::PREWARM_UNSUPPORTED,
            message: message.into(),
        };
        if environment::provider_of(plan) != "local" {
            return Err(unsupported(
                "`environment.provider` must be `local` to prewarm hosts",
            ));
        }
        let Some(key) = SpawnKey::of(plan, options) else {
            return Err(unsupported(
                "a runtime with Relay `streaming` starts its own collector and cannot be prewarmed",
            ));
        };
        let pool = Arc::new(Pool {
            key,
            plan: plan.clone(),
            options: options.clone(),
            hosts: hosts as usize,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let mut idle = VecDeque::new();
        for _ in 0..hosts {
            match pool.launch() {
                Ok(warm) => idle.push_back(warm),
                Err(error) => {
                    idle.into_iter().for_each(|w: Warm| w.spawned.discard());
                    return Err(error);
                }
            }
        }
        pool.lock().idle = idle;
        let filler = {
            let pool = Arc::clone(&pool);
            std::thread::Builder::new()
                .name("fabric-prewarm".into())
                .spawn(move || pool.fill())
                .map_err(|error| HostError::EngineUnavailable {
                    stage: Stage::Start,
                    reason: format!("prewarm filler thread: {error}"),
                })?
        };
        pools().push(Arc::clone(&pool));
        Ok(Prewarm {
            pool,
            filler: Mutex::new(Some(filler)),
        })
    }

    /// The pool's hosts, the pids of those still waiting, how many were claimed.
    pub fn info(&self) -> PrewarmInfo {
        self.pool.info()
    }

    /// Closes the pool: no start claims from it any more, the filler stops, the unclaimed
    /// hosts are terminated (and reaped by the reactor) and their temporary FABRIC_HOMEs
    /// removed. Idempotent; returns the pool's final info (no ready pids).
    pub fn close(&self) -> PrewarmInfo {
        pools().retain(|pool| !Arc::ptr_eq(pool, &self.pool));
        let idle = {
            let mut state = self.pool.lock();
            state.closed = true;
            std::mem::take(&mut state.idle)
        };
        self.pool.wake.notify_all();
        idle.into_iter().for_each(|warm| warm.spawned.discard());
        let filler = self
            .filler
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(filler) = filler {
            let _ = filler.join();
        }
        self.info()
    }
}

impl Drop for Prewarm {
    fn drop(&mut self) {
        self.close();
    }
}
