//! A runtime's route through the gateway (token, endpoints, the invocation being recorded,
//! budget counts) and the table of live routes, looked up by token.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use fabric_config::ModelCallRecord;

use crate::budget::{self, BudgetExceeded};
use crate::capture::{CaptureOptions, CaptureSummary, Upstream};
use crate::record::MODEL_CALLS_FILE;

/// How long [`Route::end`] waits for the records of calls already answered (their records
/// are written just after the harness got the answer's last byte).
const RECORDS_WAIT: Duration = Duration::from_secs(5);

/// Every live route, by token.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    by_token: Mutex<HashMap<String, Arc<Route>>>,
}

impl Routes {
    pub(crate) fn insert(&self, route: Arc<Route>) {
        let token = route.token.clone();
        lock(&self.by_token).insert(token, route);
    }

    pub(crate) fn remove(&self, token: &str) {
        lock(&self.by_token).remove(token);
    }

    /// The route of `token`, compared in constant time once found.
    pub(crate) fn find(&self, token: &str) -> Option<Arc<Route>> {
        let routes = lock(&self.by_token);
        let route = routes.get(token)?;
        fabric_reactor::http::constant_time_eq(route.token.as_bytes(), token.as_bytes())
            .then(|| Arc::clone(route))
    }
}

/// One runtime's route.
#[derive(Debug)]
pub(crate) struct Route {
    token: String,
    pub(crate) runtime_id: String,
    upstreams: Vec<Upstream>,
    pub(crate) options: CaptureOptions,
    state: Mutex<Recording>,
    /// Signalled when an answered call's record is written.
    recorded: Condvar,
}

/// Where calls are recorded now and what the invocation used.
#[derive(Debug)]
struct Recording {
    runtime_dir: PathBuf,
    invocation: Option<(String, PathBuf)>,
    calls: u64,
    total_tokens: u64,
    records: u64,
    /// Records appended to the runtime's own file (calls outside an invocation).
    runtime_records: u64,
    exceeded: Vec<BudgetExceeded>,
    /// Calls of the current invocation answered whose records are not written yet.
    unrecorded: u64,
    /// Changes at each begin and end: a record due under an earlier invocation does not
    /// count against the current one.
    generation: u64,
    /// The records file written last, kept open (one `write` per record).
    file: Option<(PathBuf, File)>,
}

/// A record the harness's answer promised: [`Route::append`] writes it.
#[derive(Debug)]
pub(crate) struct Due {
    generation: Option<u64>,
}

/// What a call admitted by the budgets is recorded under.
#[derive(Debug, Clone)]
pub(crate) struct Admitted {
    pub(crate) invocation_id: Option<String>,
}

impl Route {
    pub(crate) fn new(
        token: String,
        runtime_id: &str,
        upstreams: Vec<Upstream>,
        runtime_dir: &Path,
        options: CaptureOptions,
    ) -> Route {
        Route {
            token,
            runtime_id: runtime_id.to_owned(),
            upstreams,
            options,
            state: Mutex::new(Recording {
                runtime_dir: runtime_dir.to_path_buf(),
                invocation: None,
                calls: 0,
                total_tokens: 0,
                records: 0,
                runtime_records: 0,
                exceeded: Vec::new(),
                unrecorded: 0,
                generation: 0,
                file: None,
            }),
            recorded: Condvar::new(),
        }
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    pub(crate) fn upstream(&self, role: &str) -> Option<&Upstream> {
        self.upstreams.iter().find(|u| u.role == role)
    }

    pub(crate) fn begin(&self, invocation_id: &str) {
        let mut state = lock(&self.state);
        let dir = state.runtime_dir.join(invocation_id);
        state.invocation = Some((invocation_id.to_owned(), dir));
        state.generation += 1;
        state.unrecorded = 0;
        state.calls = 0;
        state.total_tokens = 0;
        state.records = 0;
        state.exceeded.clear();
    }

    /// Ends the invocation once the records of its answered calls are written (waiting
    /// at most [`RECORDS_WAIT`]).
    pub(crate) fn end(&self) -> CaptureSummary {
        let mut state = lock(&self.state);
        let until = Instant::now() + RECORDS_WAIT;
        while state.unrecorded > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .recorded
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.generation += 1;
        state.unrecorded = 0;
        state.file = None;
        let dir = state.invocation.take().map(|(_, dir)| dir);
        let summary = CaptureSummary {
            records: state.records,
            path: dir
                .filter(|_| state.records > 0)
                .map(|dir| dir.join(MODEL_CALLS_FILE)),
            budget_exceeded: std::mem::take(&mut state.exceeded),
        };
        state.calls = 0;
        state.total_tokens = 0;
        state.records = 0;
        summary
    }

    /// Counts a new call against the budgets: `Err` with the budget it would exceed.
    pub(crate) fn admit(&self) -> Result<Admitted, BudgetExceeded> {
        let mut state = lock(&self.state);
        let options = &self.options;
        if let Some(over) = budget::exceeded(
            options.max_model_calls,
            options.max_total_tokens,
            state.calls,
            state.total_tokens,
        ) {
            state.exceeded.push(over.clone());
            return Err(over);
        }
        state.calls += 1;
        Ok(Admitted {
            invocation_id: state.invocation.as_ref().map(|(id, _)| id.clone()),
        })
    }

    /// Notes that a call of `invocation_id` is answered and its record is coming: the
    /// invocation's end waits for it.
    pub(crate) fn due(&self, invocation_id: Option<&str>) -> Due {
        let mut state = lock(&self.state);
        let current = state.invocation.as_ref().map(|(id, _)| id.as_str());
        if invocation_id.is_none() || invocation_id != current {
            return Due { generation: None };
        }
        state.unrecorded += 1;
        Due {
            generation: Some(state.generation),
        }
    }

    /// Appends a record to its invocation's file (the runtime's when it belongs to none,
    /// or its invocation already ended), numbered in its file's order (`call_index`), and
    /// counts its tokens; `due` is settled whether or not the write succeeds.
    pub(crate) fn append(&self, record: ModelCallRecord, due: Due) -> std::io::Result<()> {
        let mut state = lock(&self.state);
        let written = Self::write(&mut state, record);
        if due.generation.is_some_and(|g| g == state.generation) {
            state.unrecorded = state.unrecorded.saturating_sub(1);
            self.recorded.notify_all();
        }
        written
    }

    fn write(state: &mut Recording, mut record: ModelCallRecord) -> std::io::Result<()> {
        let current = state
            .invocation
            .as_ref()
            .map(|(id, dir)| (id.clone(), dir.clone()));
        let dir = match (&record.invocation_id, current) {
            (Some(id), Some((now, dir))) if *id == now => {
                record.call_index = state.records;
                state.records += 1;
                state.total_tokens += record.tokens_total.unwrap_or(0);
                dir
            }
            _ => {
                record.call_index = state.runtime_records;
                state.runtime_records += 1;
                state.runtime_dir.clone()
            }
        };
        let mut line = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let file = match &mut state.file {
            Some((open, file)) if *open == dir => file,
            slot => {
                *slot = None;
                // Records hold prompts and answers: private to the owner, as the
                // FABRIC_HOME is.
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&dir)?;
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o600)
                    .open(dir.join(MODEL_CALLS_FILE))?;
                &mut slot.insert((dir, file)).1
            }
        };
        file.write_all(&line)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
