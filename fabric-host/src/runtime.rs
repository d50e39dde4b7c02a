//! Runtimes: one started adapter host, ordered invocations, stop.

use fabric_config::codes;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use fabric_config::agent::{ArtifactManifest, RuntimeContext, StartPayload, StopPayload};
use fabric_config::config::{JsonObject, SystemStatsSetting};
use fabric_config::handles::{RuntimeInfo, RuntimeState, RuntimeStatusInfo};
use fabric_config::plan::RunPlan;
use fabric_config::result::{AdapterKind, FabricEvent, RunResult, RuntimeStopResult};
use fabric_config::{ErrorInfo, RunRequest, Stage};
use serde_json::{Value, json};

use crate::collect::Collector;
use crate::environment::Environment;
use crate::error::HostError;
use crate::extensions::ExtensionSchemas;
use crate::home::FabricHome;
use crate::host::{DEFAULT_MAX_LINE_BYTES, Host};
use crate::hosts::StopPolicy;
use crate::ids;
use crate::live::{self, Live};
use crate::result::{event, meta};
use crate::telemetry::RuntimeTelemetry;
use carry::Carried;

mod bridge;
mod capture;
mod carry;
mod invocation;
mod pending;
mod snapshot;
mod spawned;
mod stop;
mod streams;

pub(crate) use crate::service::ServiceRole;

pub use pending::PendingInvoke;
pub(crate) use spawned::Spawned;

pub(crate) use invocation::{Call, Started};
use stop::summarize_stop;

/// Default invocation timeout when `runtime.timeout_seconds` is not set.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 3600.0;
/// How much earlier than the core's deadline the adapter's `deadline_millis` falls.
const DEADLINE_HEADROOM_MILLIS: u64 = 10_000;

/// Options of runtime start, invoke and stop.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// How long the host may take to answer `start`. Default 90 s (upstream `host_timeout`).
    pub host_timeout: Duration,
    /// Added to `runtime.timeout_seconds` for the invoke response deadline. Default 0: the
    /// invocation fails with `timeout` when `timeout_seconds` have passed (the adapter's
    /// own `deadline_millis` falls 10 s earlier, so a well-behaved adapter answers first).
    pub invoke_margin: Duration,
    /// Stop escalation. Default: 2 s grace, 1 s after SIGTERM, 1 s after SIGKILL.
    pub stop_policy: StopPolicy,
    /// Longest accepted protocol line. Default 16 MiB.
    pub max_line_bytes: usize,
    /// Size of one `host.stderr.log` segment in FABRIC_HOME; two are kept (`.1` is the
    /// older), so the log holds at most twice this, newest output first. Default 1 MiB.
    pub stderr_log_bytes: u64,
    /// Interpreter for `python` adapters. Default (`None`): `$ADAPTER_PYTHON`, else
    /// [`caller_python`](Self::caller_python), else `$VIRTUAL_ENV/bin/python`, else `python3`
    /// on `PATH`.
    pub python_interpreter: Option<PathBuf>,
    /// The calling Python interpreter (`CallOptions.python_interpreter`, sent by the Python
    /// binding): used for `python` adapters when neither `python_interpreter` nor
    /// `$ADAPTER_PYTHON` is set. Default `None`.
    pub caller_python: Option<PathBuf>,
    /// Relay ATOF streaming (`CallOptions.streaming`): `None` (default) leaves the Relay
    /// configuration as it is and `invoke_stream` unavailable.
    pub relay_streaming: Option<fabric_relay::streaming::RelayStreaming>,
    /// The calling binding (`CallOptions.binding`), reported in the core's software evidence
    /// inventory. Default `None` (the core's own version only).
    pub binding: Option<fabric_config::options::BindingIdentity>,
    /// Model-call capture (`CallOptions.capture_model_calls` and its budgets). Default
    /// `None`: the adapter gets the configured `base_url`s.
    pub capture: Option<fabric_gateway::CaptureOptions>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            host_timeout: Duration::from_secs(90),
            invoke_margin: Duration::ZERO,
            stop_policy: StopPolicy::default(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            stderr_log_bytes: fabric_reactor::stderr::DEFAULT_STDERR_LOG_BYTES,
            python_interpreter: None,
            caller_python: None,
            relay_streaming: None,
            binding: None,
            capture: None,
        }
    }
}

#[derive(Debug)]
enum Phase {
    Running,
    Failed(String),
    Stopping,
    Stopped,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    busy: bool,
    /// The busy invocation belongs to a stream (until the stream is finished).
    streaming: bool,
    invocations: u64,
    /// Events that belong to the next result (runtime_start before the first invocation).
    carry: Vec<Carried>,
    stop_result: Option<RuntimeStopResult>,
    last_stop: Option<StopSummary>,
}

/// What a stop did, for `run()` to fold into its result.
#[derive(Debug, Clone)]
pub(crate) struct StopSummary {
    /// A problem that leaves the invocation's outcome intact.
    pub problem: Option<ErrorInfo>,
    /// Set when the host could not be ended within the bound: `run()` then fails.
    pub timed_out: bool,
}

/// Identity fields copied into every result.
#[derive(Debug, Clone)]
struct Identity {
    agent_name: String,
    harness: String,
    adapter_kind: AdapterKind,
    adapter_id: Option<String>,
}

/// Where a runtime's adapter host runs.
#[derive(Debug)]
enum Backend {
    /// A host process of this core.
    Local(Host),
    /// A runtime of the runtime server inside a provider environment (see `bridge`).
    Bridge(bridge::BridgeBackend),
}

impl Backend {
    /// The local host's pid; 0 for a runtime in a provider environment.
    fn pid(&self) -> u32 {
        match self {
            Backend::Local(host) => host.pid(),
            Backend::Bridge(_) => 0,
        }
    }

    fn started_at(&self) -> std::time::SystemTime {
        match self {
            Backend::Local(host) => host.started_at(),
            Backend::Bridge(bridge) => bridge.started_at(),
        }
    }
}

/// One started runtime: an adapter host process plus its ordered invocations. In a
/// provider environment the host runs inside the environment, driven through its runtime
/// server (results buffered; no streams).
///
/// `Send + Sync`. One invocation at a time: an overlapping [`Runtime::invoke`] fails with
/// the state error `runtime_busy`; invoking after [`Runtime::stop`] fails with
/// `runtime_stopped`. Dropping a runtime that was not stopped terminates its host in the
/// background.
#[derive(Debug)]
pub struct Runtime {
    runtime_id: String,
    /// The service this runtime is connected to.
    service_id: Option<String>,
    /// What a service host's `start` answered (`Null` for runtimes).
    start_output: Value,
    /// Software evidence composed at start (`None` when disabled).
    execution: Option<Arc<fabric_config::evidence::ExecutionEvidence>>,
    identity: Identity,
    environment: Arc<Environment>,
    /// The environment was prepared for this runtime alone (a provider environment of
    /// `start_runtime`): the stop releases it.
    owns_environment: bool,
    backend: Backend,
    home: FabricHome,
    host_command: String,
    timeout: Duration,
    options: RuntimeOptions,
    started_at_millis: u64,
    telemetry: RuntimeTelemetry,
    extensions: ExtensionSchemas,
    system_stats: SystemStatsSetting,
    /// The plan's capability and the descriptor both claim native OpenAI streaming.
    supports_openai_streaming: bool,
    /// The ATOF collector of a runtime started with `streaming`.
    relay: Option<fabric_relay::streaming::RelayStream>,
    live: Arc<Live>,
    /// Core-collected artifacts (logs, workspace patch).
    collector: Collector,
    state: Mutex<State>,
    /// The runtime's model-call capture (started with `capture_model_calls`).
    capture: Option<fabric_gateway::Capture>,
}

impl Runtime {
    /// Starts a runtime of `plan` in `environment` (launch, then the `start` operation).
    pub(crate) fn start(
        plan: &RunPlan,
        environment: Arc<Environment>,
        options: RuntimeOptions,
        relay: Option<fabric_relay::streaming::RelayStream>,
        role: ServiceRole,
    ) -> Result<Runtime, HostError> {
        if environment.is_released() {
            return Err(HostError::EnvironmentReleased {
                stage: Stage::Start,
            });
        }
        if environment.is_remote() {
            return Runtime::start_bridge(plan, environment, options, &role);
        }
        let spawned = Spawned::launch(plan, &environment, &options, relay.as_ref(), &role)?;
        Runtime::start_spawned(plan, environment, options, relay, role, spawned)
    }

    /// The second half of a start: the runtime around a launched host, then the `start`
    /// operation. The host may have been launched by a prewarm pool long before.
    pub(crate) fn start_spawned(
        plan: &RunPlan,
        environment: Arc<Environment>,
        options: RuntimeOptions,
        relay: Option<fabric_relay::streaming::RelayStream>,
        role: ServiceRole,
        spawned: Spawned,
    ) -> Result<Runtime, HostError> {
        let mut agent_config = plan.agent_config.clone();
        let capture = match options.capture {
            Some(capture) => {
                let registered = capture::records_dir(
                    &spawned.runtime_id,
                    spawned.home.path(),
                    environment.artifact_root(),
                )
                .and_then(|dir| {
                    capture::register(&mut agent_config, &spawned.runtime_id, &dir, capture)
                });
                match registered {
                    Ok(capture) => capture,
                    Err(error) => {
                        spawned.discard();
                        return Err(error);
                    }
                }
            }
            None => None,
        };
        let Spawned {
            command,
            runtime_id,
            start_id,
            home,
            service,
            telemetry,
            host,
        } = spawned;
        let evidence = crate::evidence::EvidencePlan::new(plan, &command, options.binding.as_ref());
        let descriptor = plan.adapter_descriptor.as_ref().map(|d| &d.descriptor);
        let identity = Identity::of(plan);
        let timeout_seconds = plan
            .config
            .runtime
            .timeout_seconds
            .filter(|t| t.is_finite() && *t > 0.0)
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        let live = Arc::new(Live::new(
            runtime_id.clone(),
            Arc::clone(&environment),
            home.path().to_path_buf(),
            live::health_levels(descriptor),
        ));
        let collector = Collector::new(environment.artifact_root(), environment.workspace());
        let runtime = Runtime {
            service_id: role.connected_service_id(),
            start_output: Value::Null,
            execution: None,
            collector,
            runtime_id,
            identity,
            environment,
            owns_environment: false,
            backend: Backend::Local(host),
            home,
            host_command: command.display(),
            timeout: Duration::from_secs_f64(timeout_seconds.min(1.0e9)),
            options,
            started_at_millis: ids::now_millis(),
            telemetry,
            extensions: ExtensionSchemas::new(descriptor),
            system_stats: plan.config.system_stats.clone(),
            supports_openai_streaming: plan.capabilities.streaming
                && descriptor.is_some_and(|d| d.capabilities.streaming),
            relay,
            live,
            state: Mutex::new(State::running()),
            capture,
        };
        let payload = StartPayload {
            agent_name: plan.agent_name.clone(),
            base_dir: plan.base_dir.clone(),
            config: agent_config,
            runtime_context: runtime.context(start_id, ids::new_id("runtime-start-request"), None),
            capability_plan: serde_json::to_value(&plan.capability_plan).ok(),
            telemetry_plan: plan
                .telemetry_plan
                .as_ref()
                .and_then(|t| serde_json::to_value(t).ok()),
            service,
            provenance: Some(crate::evidence::EvidencePlan::start_control(
                evidence.as_ref(),
            )),
        };
        let payload = serde_json::to_value(&payload).map_err(|e| HostError::InvalidRequest {
            stage: Stage::Start,
            path: "start".into(),
            reason: e.to_string(),
        })?;
        let mut runtime = runtime;
        let Backend::Local(host) = &runtime.backend else {
            return Err(HostError::EngineUnavailable {
                stage: Stage::Start,
                reason: "a local runtime without a host".into(),
            });
        };
        let answer = host.call(
            "start",
            &payload,
            Stage::Start,
            runtime.options.host_timeout,
        );
        match answer {
            Ok(output) => {
                runtime.execution =
                    evidence.map(|e| crate::evidence::shared(e.compose(plan, &output)));
                if role.is_service_host() {
                    runtime.start_output = output;
                }
            }
            Err(error) => {
                // Always end the host (and its group) after a failed start; what it left
                // alive (and the core then killed) is reported with the error.
                let mut error = error.at_stage(Stage::Start);
                let (stopped, _) = runtime.stop_inner();
                let left: Vec<Value> = stopped
                    .events
                    .iter()
                    .filter_map(|e| e.metadata.get("left_behind").and_then(Value::as_array))
                    .flatten()
                    .cloned()
                    .collect();
                if let Some(diagnostics) = error.diagnostics_mut() {
                    diagnostics.left_behind =
                        (!left.is_empty()).then(|| Box::new(Value::Array(left)));
                }
                return Err(error);
            }
        }
        runtime.lock().carry.push(Carried::local_start());
        live::register(&runtime.live);
        Ok(runtime)
    }

    /// Whether the selected adapter implements native OpenAI streaming (the plan's
    /// `capabilities.streaming` and the descriptor's claim): what
    /// [`Runtime::invoke_openai_stream`] needs.
    pub fn supports_openai_streaming(&self) -> bool {
        self.supports_openai_streaming
    }

    /// Whether `invoke_stream` (Relay ATOF records) is available: started with
    /// `streaming` and Relay telemetry.
    pub fn supports_streaming(&self) -> bool {
        self.relay.is_some()
    }

    pub(crate) fn relay_stream(&self) -> Option<&fabric_relay::streaming::RelayStream> {
        self.relay.as_ref()
    }

    /// What a service host's `start` answered (`Null` for runtimes).
    pub(crate) fn start_output(&self) -> &Value {
        &self.start_output
    }

    /// The health/liveness record shared with the registry.
    pub(crate) fn live(&self) -> &Arc<Live> {
        &self.live
    }

    /// The runtime id (`runtime-…`).
    pub fn runtime_id(&self) -> &str {
        &self.runtime_id
    }

    /// The environment this runtime runs in.
    pub fn environment(&self) -> &Arc<Environment> {
        &self.environment
    }

    /// The host process id (also its process-group id): the root for resource snapshots.
    /// 0 for a runtime in a provider environment (its host runs inside the environment).
    pub fn host_pid(&self) -> u32 {
        self.backend.pid()
    }

    /// The runtime's FABRIC_HOME (health endpoint files live here).
    pub fn fabric_home(&self) -> &std::path::Path {
        self.home.path()
    }

    /// The runtime's identity (what `fabric_runtime_start` returns, without the ABI
    /// handle).
    pub fn info(&self) -> RuntimeInfo {
        RuntimeInfo {
            runtime_id: self.runtime_id.clone(),
            agent_name: self.identity.agent_name.clone(),
            harness: self.identity.harness.clone(),
            adapter_kind: self.identity.adapter_kind,
            adapter_id: self.identity.adapter_id.clone(),
            service_id: self.service_id.clone(),
            environment: self.environment.info(),
            host_pid: self.backend.pid(),
            fabric_home: self.home.path().to_string_lossy().into_owned(),
            supports_openai_streaming: self.supports_openai_streaming,
            supports_streaming: self.relay.is_some(),
            handle: None,
        }
    }

    /// A snapshot of the runtime's state.
    pub fn status(&self) -> RuntimeStatusInfo {
        let state = self.lock();
        let (runtime_state, failure) = match &state.phase {
            Phase::Running if state.busy => (RuntimeState::Busy, None),
            Phase::Running => (RuntimeState::Idle, None),
            Phase::Failed(code) => (RuntimeState::Failed, Some(code.clone())),
            Phase::Stopping => (RuntimeState::Stopping, None),
            Phase::Stopped => (RuntimeState::Stopped, None),
        };
        RuntimeStatusInfo {
            runtime_id: self.runtime_id.clone(),
            state: runtime_state,
            invocations: state.invocations,
            host_pid: self.backend.pid(),
            started_at_millis: self.started_at_millis,
            fabric_home: self.home.path().to_string_lossy().into_owned(),
            failure,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn context(
        &self,
        invocation_id: String,
        request_id: String,
        deadline_millis: Option<u64>,
    ) -> RuntimeContext {
        RuntimeContext {
            runtime_id: self.runtime_id.clone(),
            invocation_id,
            request_id,
            environment: self.environment.handle().clone(),
            artifacts: ArtifactManifest {
                root: self
                    .environment
                    .artifact_root()
                    .map(|r| r.to_string_lossy().into_owned()),
                artifacts: self.telemetry.context_artifacts(),
            },
            telemetry: self.telemetry.context().cloned(),
            deadline_millis,
        }
    }

    /// Runs one invocation and returns its normalized result.
    ///
    /// Errors: `runtime_busy` / `runtime_stopped` / `runtime_failed` (state errors);
    /// `env_name_changed`; `request_extensions_unsupported` / `request_extension_invalid`
    /// (overrides the adapter does not declare or that violate its schema); host failures (`host_crashed`,
    /// `protocol_error`, `timeout`, ... — the runtime is then terminal); an adapter's
    /// lifecycle failure keeps the adapter's code; `invalid_agent_run_result`.
    pub fn invoke(&self, request: RunRequest) -> Result<RunResult, HostError> {
        self.claim(Stage::Invoke, false)?;
        let outcome = self.invoke_inner(request);
        self.settle(&outcome, None);
        outcome
    }

    /// Marks the runtime busy for one invocation (`streaming`: a stream owns it until the
    /// stream is finished), or reports why it cannot invoke.
    pub(crate) fn claim(&self, stage: Stage, streaming: bool) -> Result<(), HostError> {
        let mut state = self.lock();
        match &state.phase {
            Phase::Running => {}
            Phase::Failed(cause) => {
                return Err(HostError::RuntimeFailed {
                    stage,
                    cause: cause.clone(),
                });
            }
            Phase::Stopping | Phase::Stopped => {
                return Err(HostError::RuntimeStopped { stage });
            }
        }
        if state.busy {
            return Err(if state.streaming {
                HostError::StreamActive { stage }
            } else {
                HostError::RuntimeBusy { stage }
            });
        }
        state.busy = true;
        state.streaming = streaming;
        state.invocations += 1;
        self.live.set_busy(true);
        Ok(())
    }

    /// Ends the invocation [`Runtime::claim`] began: a terminal host error (or `failure`,
    /// the code of a stream failure) makes the runtime terminal.
    pub(crate) fn settle(&self, outcome: &Result<RunResult, HostError>, failure: Option<&str>) {
        let mut state = self.lock();
        state.busy = false;
        state.streaming = false;
        self.live.set_busy(false);
        match outcome {
            Err(error) if error.is_terminal() => {
                if matches!(state.phase, Phase::Running) {
                    state.phase = Phase::Failed(error.code().to_owned());
                }
            }
            Ok(_) => state.carry.clear(),
            Err(_) => {}
        }
        if let Some(code) = failure
            && matches!(state.phase, Phase::Running)
        {
            state.phase = Phase::Failed(code.to_owned());
        }
    }

    fn invoke_inner(&self, request: RunRequest) -> Result<RunResult, HostError> {
        let ids = Self::invocation_ids(&request);
        let started = self.begin_invocation(request, ids, None, None)?;
        self.finish_invocation(started)
    }

    /// Stops the runtime: `stop` request, grace, then SIGTERM/SIGKILL to the host's whole
    /// process group; always reaps; removes a temporary FABRIC_HOME. Idempotent. A stop
    /// problem (no answer, escalation, adapter stop failure) is reported in the result's
    /// `error`, not raised.
    /// Whether [`Runtime::stop`] began (or finished).
    pub(crate) fn stopping_or_stopped(&self) -> bool {
        matches!(self.lock().phase, Phase::Stopping | Phase::Stopped)
    }

    pub fn stop(&self) -> RuntimeStopResult {
        self.stop_inner().0
    }

    /// Stops the runtime by closing the host's stdin without a `stop` request (an EOF
    /// stop: the host should exit on its own within the stop policy's grace), then as
    /// [`Runtime::stop`]. A runtime in a provider environment stops as [`Runtime::stop`].
    pub fn stop_on_eof(&self) -> RuntimeStopResult {
        self.stop_with(StopWay::Eof).0
    }

    pub(crate) fn stop_inner(&self) -> (RuntimeStopResult, StopSummary) {
        self.stop_with(StopWay::Request)
    }

    /// [`Runtime::stop`] that returns once a local host acknowledged `stop` (for
    /// [`Fabric::run`](crate::Fabric::run)): the host's exit, any escalation after the
    /// answer, the reap and the removal of a temporary FABRIC_HOME happen in the reactor
    /// afterwards (`hosts/ack.rs`); `runtime_stop` then says `host_reaped: false`.
    pub(crate) fn stop_acknowledged(&self) -> (RuntimeStopResult, StopSummary) {
        self.stop_with(StopWay::UntilAck)
    }

    fn stop_with(&self, way: StopWay) -> (RuntimeStopResult, StopSummary) {
        {
            let mut state = self.lock();
            if let (Some(done), Some(summary)) = (&state.stop_result, &state.last_stop) {
                let mut again = done.clone();
                again.events = vec![event(
                    "runtime_stop",
                    format!("runtime {} was already stopped", self.runtime_id),
                    meta([
                        ("runtime_id", self.runtime_id.clone().into()),
                        ("already_stopped", true.into()),
                    ]),
                )];
                return (again, summary.clone());
            }
            state.phase = Phase::Stopping;
            self.live.mark_stopping();
        }
        let host = match &self.backend {
            Backend::Local(host) => host,
            Backend::Bridge(_) => return self.finish_bridge_stop(),
        };
        let payload = serde_json::to_value(StopPayload {
            runtime_id: self.runtime_id.clone(),
        })
        .unwrap_or_else(|_| json!({ "runtime_id": self.runtime_id }));
        let terminal = host.terminal_error().is_some();
        let policy = self.options.stop_policy;
        // Relay runs inside the host and writes its final batch of spans when the host shuts
        // down ("read the files after the runtime stops"): then the stop waits for the exit.
        let relay_in_host = self.telemetry.context().is_some_and(|c| c.relay_enabled);
        let report = match way {
            StopWay::Eof => host.stop_on_eof(policy),
            StopWay::UntilAck if !relay_in_host => {
                host.stop_until_ack(&payload, policy, self.home.removal_after_exit())
            }
            StopWay::Request | StopWay::UntilAck => host.stop(Some(&payload), policy),
        };
        // The host is reaped (or exiting): close the stats readers' cached descriptors of it.
        live::collector().release(&self.stats_target());
        self.home.remove_if_temporary();
        let summary = summarize_stop(&report, terminal);
        let crashed = report.exited_before;
        let mut details = meta([
            ("runtime_id", self.runtime_id.clone().into()),
            ("already_stopped", false.into()),
            (codes::HOST_CRASHED, crashed.into()),
            ("escalation", report.escalation.as_str().into()),
            (
                "host_exit",
                report.exit.clone().map_or(Value::Null, Value::String),
            ),
            ("host_reaped", report.exit.is_some().into()),
        ]);
        if way != StopWay::Eof
            && report.graceful
            && !report.exited_before
            && report.response.is_none()
        {
            // The host was asked to stop but never answered (it may still have exited on EOF).
            details.insert("stop_answered".into(), false.into());
        }
        if !report.left_behind.is_empty() {
            // Processes of the adapter alive when its host exited (the core killed them).
            let left: Vec<Value> = report
                .left_behind
                .iter()
                .map(|stat| json!({"pid": stat.pid, "ppid": stat.ppid, "pgrp": stat.pgrp, "session": stat.session}))
                .collect();
            details.insert("left_behind".into(), Value::Array(left));
        }
        self.record_stop(self.stop_events(details, &summary), summary)
    }

    /// `runtime_stop` with `details`, then `runtime_stop_failed` when the stop had a problem.
    fn stop_events(&self, details: JsonObject, summary: &StopSummary) -> Vec<FabricEvent> {
        let mut events = vec![event(
            "runtime_stop",
            format!("stopped runtime {}", self.runtime_id),
            details,
        )];
        if let Some(problem) = &summary.problem {
            events.push(event(
                "runtime_stop_failed",
                problem.message.clone(),
                meta([
                    ("runtime_id", self.runtime_id.clone().into()),
                    ("code", problem.code.clone().into()),
                    ("stage", "stop".into()),
                ]),
            ));
        }
        events
    }

    /// Records the stop's result (later stops repeat it).
    fn record_stop(
        &self,
        events: Vec<FabricEvent>,
        summary: StopSummary,
    ) -> (RuntimeStopResult, StopSummary) {
        let root = self
            .environment
            .artifact_root()
            .map(|r| r.to_string_lossy().into_owned());
        let result = bridge::stop_result(root, events, &summary);
        let mut state = self.lock();
        state.phase = Phase::Stopped;
        state.stop_result = Some(result.clone());
        state.last_stop = Some(summary.clone());
        (result, summary)
    }

    /// Adds the sandbox observation of the environment this runtime owned (a provider
    /// environment prepared for it alone, released by its stop) to `result.metadata`
    /// (`sandbox_observation`), where the Gym mapping finds it.
    pub(crate) fn fold_sandbox_observation(&self, result: &mut fabric_config::RunResult) {
        if !self.owns_environment {
            return;
        }
        let observation = self.environment.info().sandbox_observation;
        if let Some(value) = observation.and_then(|o| serde_json::to_value(o).ok()) {
            result.metadata.insert(
                fabric_config::gym::SANDBOX_OBSERVATION_METADATA_KEY.to_owned(),
                value,
            );
        }
    }

    /// The stop of a runtime in a provider environment: `stop` through the server.
    fn finish_bridge_stop(&self) -> (RuntimeStopResult, StopSummary) {
        let (mut summary, details) = self.stop_bridge();
        if self.owns_environment
            && let Err(error) = self.environment.release()
            && summary.problem.is_none()
        {
            summary = StopSummary {
                problem: Some(ErrorInfo::from(error.at_stage(Stage::Stop))),
                timed_out: false,
            };
        }
        self.home.remove_if_temporary();
        self.record_stop(self.stop_events(details, &summary), summary)
    }
}

fn result_kind(kind: fabric_config::descriptor::AdapterKind) -> AdapterKind {
    use fabric_config::descriptor::AdapterKind as Descriptor;
    match kind {
        Descriptor::Process => AdapterKind::Process,
        Descriptor::Http => AdapterKind::Http,
        Descriptor::Python => AdapterKind::Python,
        Descriptor::NativePlugin => AdapterKind::NativePlugin,
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // Not stopped: ask the host to stop in the background (then SIGTERM/SIGKILL as
        // usual); never blocks. The host is reaped by the reactor.
        live::unregister(&self.runtime_id);
        self.live.mark_stopping();
        let stopped = matches!(self.lock().phase, Phase::Stopped);
        if !stopped {
            match &self.backend {
                Backend::Local(host) => {
                    host.stop_in_background(&json!({ "runtime_id": self.runtime_id }));
                }
                Backend::Bridge(_) => self.stop_bridge_in_background(),
            }
        }
        // Nothing reads this runtime's stats any more: close the cached descriptors now
        // (not when the cache budget would evict them).
        live::collector().release(&self.stats_target());
        self.home.remove_if_temporary();
    }
}

/// How [`Runtime::stop_with`] ends the host.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StopWay {
    /// A `stop` request, waiting for the host's exit.
    Request,
    /// A `stop` request, answering at the host's acknowledgement (`hosts/ack.rs`).
    UntilAck,
    /// Stdin closed without a request (the conformance kit's EOF check).
    Eof,
}
