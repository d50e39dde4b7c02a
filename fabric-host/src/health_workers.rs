//! Independent provider workers for health checks in a provider environment.
//!
//! An environment's provider process answers one request at a time, and a bridge `invoke`
//! holds it for the whole invocation. A check must answer while an invocation runs, so it
//! never uses that process: it goes through a *worker*, a second process of the same
//! provider attached to the same environment (`attach` with the environment's reference,
//! which only verifies the resource and its runtime server), carrying the check to the
//! runtime server as `runtime_control`. Workers are started on the first check, kept
//! idle for the next ones (at most [`MAX_IDLE`]; concurrent checks each take their own)
//! and closed when the environment is released. Every step runs within the check's
//! deadline: a worker that misses it is killed (the provider client makes it terminal)
//! and the next check starts a fresh one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use fabric_config::Stage;
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::{ProviderEnvironment, ProviderOperation};
use fabric_sandbox::provider::{FoundProvider, ProviderClient};
use serde_json::Value;

/// Idle workers kept per environment.
const MAX_IDLE: usize = 2;

/// The health workers of one provider environment.
#[derive(Debug)]
pub(crate) struct HealthWorkers {
    /// The agent name of the config the environment was prepared or attached with: it
    /// selects a runtime this process did not start (`metadata.name`).
    agent: String,
    found: FoundProvider,
    reference: EnvironmentReference,
    settings: BTreeMap<String, Value>,
    idle: Mutex<Vec<Worker>>,
    closed: AtomicBool,
}

/// One attached provider process and the id it gave the environment.
#[derive(Debug)]
struct Worker {
    client: ProviderClient,
    environment_id: String,
}

/// Why a worker brought no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkerFailure {
    /// The environment was released (no new worker starts).
    Closed,
    /// The deadline passed first.
    Deadline,
    /// The provider could not attach or answer (crashed, refused, protocol error).
    Unreachable,
}

impl HealthWorkers {
    pub(crate) fn new(
        agent: String,
        found: FoundProvider,
        reference: EnvironmentReference,
        settings: BTreeMap<String, Value>,
    ) -> HealthWorkers {
        HealthWorkers {
            agent,
            found,
            reference,
            settings,
            idle: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// The agent name of the environment's config.
    pub(crate) fn agent(&self) -> &str {
        &self.agent
    }

    /// Sends one bridge request object to the environment's runtime server through a
    /// worker and returns the server's response object, by `deadline`.
    pub(crate) fn control(
        &self,
        request: Value,
        deadline: Instant,
    ) -> Result<Value, WorkerFailure> {
        let worker = match self.take() {
            Some(worker) => worker,
            None => self.start(deadline)?,
        };
        let left = remaining(deadline)?;
        let answer = worker.client.request(
            ProviderOperation::RuntimeControl {
                environment_id: worker.environment_id.clone(),
                request,
            },
            left,
            Stage::Invoke,
        );
        let failed = worker.client.is_failed();
        if !failed {
            self.put_back(worker);
        }
        match answer {
            Ok(mut output) => Ok(output
                .get_mut("response")
                .map(Value::take)
                .unwrap_or(Value::Null)),
            Err(_) if Instant::now() >= deadline => Err(WorkerFailure::Deadline),
            Err(_) => Err(WorkerFailure::Unreachable),
        }
    }

    /// Closes every idle worker; no new one starts.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let workers = std::mem::take(&mut *self.lock());
        drop(workers);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Worker>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self) -> Option<Worker> {
        self.lock().pop()
    }

    fn put_back(&self, worker: Worker) {
        let mut idle = self.lock();
        if !self.closed.load(Ordering::SeqCst) && idle.len() < MAX_IDLE {
            idle.push(worker);
        }
    }

    /// Starts a provider process and attaches it to the environment.
    fn start(&self, deadline: Instant) -> Result<Worker, WorkerFailure> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(WorkerFailure::Closed);
        }
        let client = self
            .found
            .spawn(Stage::Prepare)
            .map_err(|_| WorkerFailure::Unreachable)?;
        let left = remaining(deadline)?;
        let output = client
            .request(
                ProviderOperation::Attach {
                    reference: self.reference.clone(),
                    settings: self.settings.clone(),
                },
                left,
                Stage::Prepare,
            )
            .map_err(|_| {
                if Instant::now() >= deadline {
                    WorkerFailure::Deadline
                } else {
                    WorkerFailure::Unreachable
                }
            })?;
        let environment: ProviderEnvironment =
            serde_json::from_value(output).map_err(|_| WorkerFailure::Unreachable)?;
        Ok(Worker {
            client,
            environment_id: environment.environment_id,
        })
    }
}

fn remaining(deadline: Instant) -> Result<std::time::Duration, WorkerFailure> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(WorkerFailure::Deadline)
    } else {
        Ok(left)
    }
}
