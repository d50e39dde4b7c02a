//! The Rust facade `Fabric`: what the CLI and the C ABI call.

use std::path::PathBuf;
use std::sync::Arc;

use fabric_config::agent::RunStatus;
use fabric_config::handles::EnvironmentReference;
use fabric_config::plan::{DoctorReport, RunPlan};
use fabric_config::result::RunResult;
use fabric_config::{CallOptions, FabricConfig};

use fabric_config::{RunRequest, Stage};
use fabric_plan::{PlanInputs, PlanOptions};
use fabric_relay::streaming::{RelayStream, RelayStreaming};
use serde_json::Value;

use crate::environment::Environment;
use crate::error::{ErrorClass, HostError};
use crate::live;
use crate::prewarm::{self, Prewarm};
use crate::runtime::{Runtime, RuntimeOptions, ServiceRole, StopSummary};
use crate::service::Service;
use fabric_config::health::{
    Activity, CheckOutcome, CheckReport, CheckRequest, CheckScope, HealthLevel, reason,
};
use fabric_config::service::ServiceReference;
use fabric_health::client::Check;

/// Options of one facade call.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Directory anchoring relative config paths. Default: the current directory.
    pub base_dir: Option<PathBuf>,
    /// Host timeouts, stop escalation and line cap.
    pub runtime: RuntimeOptions,
    /// Discovery overrides and `expected_descriptor_sha256`.
    pub plan: PlanOptions,
}

impl RunOptions {
    /// Options with `base_dir` set.
    pub fn with_base_dir(base_dir: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            base_dir: Some(base_dir.into()),
            ..RunOptions::default()
        }
    }

    /// Options from a C ABI options object: `base_dir`, `expected_descriptor_sha256`, the
    /// calling interpreter's prefix (a discovery source) and executable (the fallback
    /// interpreter of `python` adapters), `start_timeout_seconds` and `stderr_log_bytes`;
    /// other timeouts keep their defaults.
    pub fn from_call_options(options: &CallOptions) -> RunOptions {
        let path = |value: &Option<String>| {
            value
                .as_deref()
                .filter(|text| !text.is_empty())
                .map(PathBuf::from)
        };
        let mut runtime = RuntimeOptions {
            caller_python: path(&options.python_interpreter),
            binding: options.binding.clone(),
            ..RuntimeOptions::default()
        };
        if let Some(timeout) = options.start_timeout() {
            runtime.host_timeout = timeout;
        }
        if let Some(bytes) = options.stderr_log_bytes {
            runtime.stderr_log_bytes = bytes;
        }
        if options.capture_model_calls == Some(true) {
            let mut capture = fabric_gateway::CaptureOptions {
                max_model_calls: options.max_model_calls,
                max_total_tokens: options.max_total_tokens,
                ..fabric_gateway::CaptureOptions::default()
            };
            if let Some(bytes) = options.model_call_body_bytes {
                capture.body_cap = usize::try_from(bytes).unwrap_or(usize::MAX);
            }
            runtime.capture = Some(capture);
        }
        if options.streaming == Some(true) {
            let mut streaming = RelayStreaming::default();
            if let Some(launch) = options.launch_collector {
                streaming.launch_collector = launch;
            }
            if let Some(wait) = options.completion_wait_timeout.and_then(|seconds| {
                fabric_config::seconds::duration(
                    seconds,
                    fabric_config::seconds::MAX_TIMEOUT_SECONDS,
                )
            }) {
                streaming.completion_wait = wait;
            }
            if let Some(bytes) = options.collector_memory_budget_bytes {
                streaming.memory_budget = usize::try_from(bytes).unwrap_or(usize::MAX);
            }
            runtime.relay_streaming = Some(streaming);
        }
        RunOptions {
            base_dir: options.base_dir.as_ref().map(PathBuf::from),
            runtime,
            plan: PlanOptions {
                expected_descriptor_sha256: options.expected_descriptor_sha256.clone(),
                python_prefix: path(&options.python_prefix),
                python_interpreter: path(&options.python_interpreter),
                ..PlanOptions::default()
            },
        }
    }

    /// The absolute base directory.
    pub fn resolved_base_dir(&self) -> Result<PathBuf, HostError> {
        let cwd = || {
            std::env::current_dir().map_err(|e| HostError::InvalidRequest {
                stage: Stage::Config,
                path: "base_dir".into(),
                reason: e.to_string(),
            })
        };
        match &self.base_dir {
            Some(dir) if dir.is_absolute() => Ok(dir.clone()),
            Some(dir) => Ok(cwd()?.join(dir)),
            None => cwd(),
        }
    }
}

/// A lightweight, reusable facade: plans, starts runtimes, runs single invocations.
/// It owns nothing that needs cleanup; runtimes do.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fabric {
    _private: (),
}

impl Fabric {
    /// A facade.
    pub fn new() -> Fabric {
        Fabric { _private: () }
    }

    /// Resolves the adapter and returns the RunPlan (delegates to `fabric_plan::plan`).
    pub fn plan(&self, config: &FabricConfig, options: &RunOptions) -> Result<RunPlan, HostError> {
        let base_dir = options.resolved_base_dir()?;
        Ok(fabric_plan::plan(config, &base_dir, &options.plan)?)
    }

    /// [`Fabric::plan`], also returning what the plan was made from besides the config and
    /// the options ([`fabric_plan::PlanInputs`]).
    pub fn plan_with_inputs(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
    ) -> Result<(RunPlan, PlanInputs), HostError> {
        let base_dir = options.resolved_base_dir()?;
        Ok(fabric_plan::plan_with_inputs(
            config,
            &base_dir,
            &options.plan,
        )?)
    }

    /// What a plan of `config` would be made from now ([`fabric_plan::plan_inputs`]): equal
    /// inputs for the same config and options mean an equal plan.
    pub fn plan_inputs(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
    ) -> Result<PlanInputs, HostError> {
        let base_dir = options.resolved_base_dir()?;
        Ok(fabric_plan::plan_inputs(config, &base_dir, &options.plan)?)
    }

    /// Every preflight finding for `config`, without starting anything.
    pub fn doctor(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
    ) -> Result<DoctorReport, HostError> {
        let base_dir = options.resolved_base_dir()?;
        Ok(fabric_plan::doctor_with(config, &base_dir, &options.plan))
    }

    /// Plans `config`, then `start`, `invoke`, `stop` (see [`Fabric::run_plan`]).
    pub fn run(
        &self,
        config: &FabricConfig,
        request: RunRequest,
        options: &RunOptions,
    ) -> Result<RunResult, HostError> {
        let plan = self.plan(config, options)?;
        self.run_plan(&plan, request, &options.runtime)
    }

    /// Plans `config` and starts a runtime in a new local environment.
    pub fn start_runtime(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
    ) -> Result<Runtime, HostError> {
        let plan = self.plan(config, options)?;
        self.start_runtime_plan(&plan, &options.runtime)
    }

    /// Plans `config` and prepares its local environment without starting an agent.
    pub fn prepare_environment(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
    ) -> Result<Arc<Environment>, HostError> {
        let plan = self.plan(config, options)?;
        self.prepare_environment_plan(&plan)
    }

    /// Plans `config` and attaches to the existing environment `reference` names (caller
    /// owned: release only detaches).
    pub fn attach_environment(
        &self,
        config: &FabricConfig,
        reference: &EnvironmentReference,
        options: &RunOptions,
    ) -> Result<Arc<Environment>, HostError> {
        let plan = self.plan(config, options)?;
        self.attach_environment_plan(&plan, reference)
    }

    /// Plans `config` and starts a runtime in a prepared environment.
    pub fn start_runtime_in(
        &self,
        config: &FabricConfig,
        environment: &Arc<Environment>,
        options: &RunOptions,
    ) -> Result<Runtime, HostError> {
        let plan = self.plan(config, options)?;
        self.start_runtime_in_plan(&plan, environment, &options.runtime)
    }

    /// `start`, `invoke`, `stop` on a plan; returns once the host answered `stop` (its
    /// exit, escalation if it lingers, reap and temporary FABRIC_HOME removal finish in the
    /// background: `runtime_stop` says `host_reaped: false`). A stop that cannot end the host within the
    /// bound turns a succeeded result into a failed one (`error.stage = "stop"`,
    /// `error.code = "timeout"`); any other stop problem (a host that ignored `stop` and
    /// needed signals, an adapter stop failure) keeps the invocation's status and is
    /// reported in `metadata.stop_error` and a `runtime_stop_failed` event.
    pub fn run_plan(
        &self,
        plan: &RunPlan,
        request: RunRequest,
        options: &RuntimeOptions,
    ) -> Result<RunResult, HostError> {
        let runtime = self.start_runtime_plan(plan, options)?;
        match runtime.invoke(request) {
            Ok(mut result) => {
                runtime.stop_into(&mut result);
                Ok(result)
            }
            Err(error) => {
                runtime.stop();
                Err(error)
            }
        }
    }

    /// Plans `config` and launches `hosts` adapter hosts ahead of time (see
    /// [`Fabric::prewarm_plan`]).
    pub fn prewarm(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
        hosts: u32,
    ) -> Result<Prewarm, HostError> {
        let plan = self.plan(config, options)?;
        self.prewarm_plan(&plan, &options.runtime, hosts)
    }

    /// Launches `hosts` adapter hosts of `plan` exactly as [`Fabric::start_runtime_plan`]
    /// would, each waiting for `start`. A later start (or run) of an equal plan with options
    /// that launch the same host claims one instead of launching, and the pool launches a
    /// replacement in the background; closing the pool terminates the unclaimed hosts
    /// (see `prewarm`'s docs for what must match).
    pub fn prewarm_plan(
        &self,
        plan: &RunPlan,
        options: &RuntimeOptions,
        hosts: u32,
    ) -> Result<Prewarm, HostError> {
        Prewarm::open(plan, options, hosts)
    }

    /// Starts a runtime of `plan` in a new local environment, on a prewarmed host when an
    /// open [`Prewarm`] pool holds one whose spawn matches.
    pub fn start_runtime_plan(
        &self,
        plan: &RunPlan,
        options: &RuntimeOptions,
    ) -> Result<Runtime, HostError> {
        let (plan, relay) = streaming_plan(plan, options)?;
        if let Some(warm) = crate::prewarm::claim(&plan, options) {
            let prewarm::Warm {
                environment,
                spawned,
            } = warm;
            return Runtime::start_spawned(
                &plan,
                environment,
                options.clone(),
                relay,
                ServiceRole::None,
                spawned,
            )
            .map(Runtime::owning_environment);
        }
        let environment = Arc::new(Environment::prepare(&plan, Stage::Start)?);
        let started = Runtime::start(
            &plan,
            Arc::clone(&environment),
            options.clone(),
            relay,
            ServiceRole::None,
        );
        match started {
            Ok(runtime) => Ok(runtime.owning_environment()),
            Err(error) => {
                // A provider environment prepared for this start alone is released again.
                if environment.is_remote() {
                    let _ = environment.release();
                }
                Err(error)
            }
        }
    }

    /// Prepares the local environment of `plan` without starting anything.
    pub fn prepare_environment_plan(&self, plan: &RunPlan) -> Result<Arc<Environment>, HostError> {
        Environment::prepare(plan, Stage::Prepare).map(Arc::new)
    }

    /// Attaches to the existing environment `reference` names, with `plan`'s provider.
    pub fn attach_environment_plan(
        &self,
        plan: &RunPlan,
        reference: &EnvironmentReference,
    ) -> Result<Arc<Environment>, HostError> {
        Environment::attach(plan, reference, Stage::Prepare).map(Arc::new)
    }

    /// Starts a runtime of `plan` in a prepared environment (several runtimes may share it).
    pub fn start_runtime_in_plan(
        &self,
        plan: &RunPlan,
        environment: &Arc<Environment>,
        options: &RuntimeOptions,
    ) -> Result<Runtime, HostError> {
        let (plan, relay) = streaming_plan(plan, options)?;
        Runtime::start(
            &plan,
            Arc::clone(environment),
            options.clone(),
            relay,
            ServiceRole::None,
        )
    }

    /// Plans `config` and prepares a Fabric-owned shared service (see docs/services.md).
    pub fn prepare_service(
        &self,
        config: &FabricConfig,
        options: &RunOptions,
    ) -> Result<Service, HostError> {
        let plan = self.plan(config, options)?;
        self.prepare_service_plan(&plan, &options.runtime)
    }

    /// Plans `config` and attaches to the caller-owned service `reference`.
    pub fn attach_service(
        &self,
        config: &FabricConfig,
        reference: ServiceReference,
        options: &RunOptions,
    ) -> Result<Service, HostError> {
        let plan = self.plan(config, options)?;
        self.attach_service_plan(&plan, reference, &options.runtime)
    }

    /// Starts the host of a Fabric-owned service of `plan` (`service: {operation:
    /// "prepare"}`). Errors: `service_unsupported`, `invalid_service_info`, start errors.
    pub fn prepare_service_plan(
        &self,
        plan: &RunPlan,
        options: &RuntimeOptions,
    ) -> Result<Service, HostError> {
        Service::start(plan, options, None)
    }

    /// Starts a host attached to the caller-owned service `reference` (`service:
    /// {operation: "attach", reference}`). Errors: as [`Fabric::prepare_service_plan`],
    /// plus `invalid_service_reference`.
    pub fn attach_service_plan(
        &self,
        plan: &RunPlan,
        reference: ServiceReference,
        options: &RuntimeOptions,
    ) -> Result<Service, HostError> {
        Service::start(plan, options, Some(reference))
    }

    /// Plans `config` and starts a runtime connected to `service`.
    pub fn start_runtime_on(
        &self,
        config: &FabricConfig,
        service: &Service,
        options: &RunOptions,
    ) -> Result<Runtime, HostError> {
        let plan = self.plan(config, options)?;
        self.start_runtime_on_plan(&plan, service, &options.runtime)
    }

    /// Starts a runtime of `plan` connected to `service` in a new local environment
    /// (`service: {operation: "connect"}`). Errors: `service_not_active`,
    /// `service_binding_mismatch`, then every start error.
    pub fn start_runtime_on_plan(
        &self,
        plan: &RunPlan,
        service: &Service,
        options: &RuntimeOptions,
    ) -> Result<Runtime, HostError> {
        let (plan, relay) = streaming_plan(plan, options)?;
        service.start_runtime(&plan, options, relay)
    }

    /// Checks the health of a runtime started in this process (see docs/health.md).
    ///
    /// Routing: `runtime_id` names a live runtime of this process (restricted to
    /// `environment`'s runtimes when given); an unknown, stopped or stopping runtime is
    /// `unknown/runtime_unavailable`; an adapter whose descriptor advertises no
    /// `capabilities.metadata.health_levels` is `unsupported/unsupported_adapter`;
    /// `scope=server` is `unsupported/unsupported_scope` unless `environment` is a provider
    /// environment; `scope=service` routes by
    /// `service_id` to a prepared or attached service of this process (a released or
    /// unknown one is `unknown/service_unavailable`). Otherwise the adapter host (the
    /// service's host for `scope=service`) is asked through its `health.endpoint.json`. In a
    /// provider environment (a runtime started there, or `scope=server` with such an
    /// `environment`) the check goes through the environment's runtime server on an
    /// independent provider worker instead (see `env_check`). One deadline (the
    /// request's `timeout_seconds`, default 3 s) covers routing and everything after it; a
    /// stop or environment release during the probe is `unknown/observation_changed`.
    ///
    /// Every outcome is a report; the only error is an invalid request (class `Config`,
    /// code `invalid_check_request`, `metadata.path`).
    pub fn check(
        &self,
        environment: Option<&Environment>,
        request: &CheckRequest,
    ) -> Result<CheckReport, HostError> {
        request.validate().map_err(|info| HostError::Plan {
            info: Box::new(info),
            class: ErrorClass::Config,
        })?;
        let mut check = Check::new(request);
        let (id, service) = match request.scope {
            CheckScope::Runtime => (request.runtime_id.as_deref(), false),
            CheckScope::Service => (request.service_id.as_deref(), true),
            CheckScope::Server => {
                return Ok(match environment.filter(|e| e.is_remote()) {
                    Some(environment) => {
                        let current = || !environment.is_released();
                        check.still_current(&current);
                        crate::env_check::through_environment(&check, environment, None, request)
                    }
                    None => check.report(CheckOutcome::Unsupported, reason::UNSUPPORTED_SCOPE),
                });
            }
        };
        let target = id
            .and_then(live::find)
            // A service host is registered under its service id (`service-…`).
            .filter(|live| live.runtime_id.starts_with("service-") == service)
            .filter(|live| {
                environment.is_none_or(|e| e.environment_id() == live.environment.environment_id())
            });
        let Some(target) = target else {
            // A runtime this process did not start (another process started it in the
            // attached environment) is selected by the runtime server there.
            if let Some(environment) = environment.filter(|e| e.is_remote() && !service) {
                let current = || !environment.is_released();
                check.still_current(&current);
                return Ok(crate::env_check::through_environment(
                    &check,
                    environment,
                    None,
                    request,
                ));
            }
            return Ok(check.unavailable());
        };
        let generation = target.generation();
        check.activity(if target.is_busy() {
            Activity::Busy
        } else {
            Activity::Idle
        });
        if target.is_stopped() {
            return Ok(check.unavailable());
        }
        if target.health_levels.is_empty() {
            return Ok(check.unsupported_adapter());
        }
        let released = target.environment.is_released();
        let current = || {
            target.generation() == generation
                && !target.is_stopped()
                && target.environment.is_released() == released
        };
        check.still_current(&current);
        if target.environment.is_remote() {
            return Ok(crate::env_check::through_environment(
                &check,
                &target.environment,
                target.agent.as_deref(),
                request,
            ));
        }
        let endpoint = target
            .fabric_home
            .join(fabric_health::wire::ENDPOINT_FILE_NAME);
        Ok(check.run(&endpoint))
    }

    /// `start`, a health check of the new runtime at `level`, then — only when the check
    /// passed — `invoke`; always `stop`. Returns the report and the result (`None` when the
    /// check did not pass). Stop problems are folded into the result as in [`Fabric::run`].
    pub fn run_checked(
        &self,
        config: &FabricConfig,
        request: RunRequest,
        options: &RunOptions,
        level: HealthLevel,
        timeout_seconds: Option<f64>,
    ) -> Result<(CheckReport, Option<RunResult>), HostError> {
        let mut check = CheckRequest::runtime("runtime-pending").with_level(level);
        check.timeout_seconds = timeout_seconds;
        check.validate().map_err(|info| HostError::Plan {
            info: Box::new(info),
            class: ErrorClass::Config,
        })?;
        let plan = self.plan(config, options)?;
        let runtime = self.start_runtime_plan(&plan, &options.runtime)?;
        check.runtime_id = Some(runtime.runtime_id().to_owned());
        let report = match self.check(None, &check) {
            Ok(report) => report,
            Err(error) => {
                runtime.stop();
                return Err(error);
            }
        };
        if !report.passed() {
            runtime.stop();
            return Ok((report, None));
        }
        let outcome = runtime.invoke(request);
        let (stop, summary) = runtime.stop_inner();
        let mut result = outcome?;
        fold_stop(&mut result, stop.events, summary);
        Ok((report, Some(result)))
    }

    /// Releases a prepared environment. Local release keeps caller-owned files; runtimes
    /// already started keep running until stopped; new starts in it fail with the state
    /// error `environment_released`.
    pub fn release_environment(&self, environment: &Environment) -> Result<(), HostError> {
        environment.release()
    }
}

impl Runtime {
    /// Stops the runtime and folds the stop into `result` as [`Fabric::run`] does (its
    /// events are appended; a stop that could not end the host fails a succeeded result,
    /// another stop problem goes to `metadata.stop_error`). For callers that drive one
    /// turn themselves, e.g. a stream, and report it like `run()`.
    /// A provider environment prepared for this runtime alone is released by the stop: its
    /// sandbox observation joins `result.metadata.sandbox_observation` (the Gym export adds
    /// it to the bundle).
    /// Like `run()`, it returns once a local host acknowledged `stop`; the host's exit and
    /// reap and a temporary FABRIC_HOME's removal finish in the background (bounded by the
    /// stop policy's escalation).
    pub fn stop_into(&self, result: &mut RunResult) {
        let (stop, summary) = self.stop_acknowledged();
        fold_stop(result, stop.events, summary);
        self.fold_sandbox_observation(result);
    }
}

/// Adds the stop's events to a `run()` result. A stop that could not end the host within
/// the bound fails a succeeded result (`stop`/`timeout`); any other stop problem keeps the
/// status and is reported in `metadata.stop_error`.
pub(crate) fn fold_stop(
    result: &mut RunResult,
    events: Vec<fabric_config::result::FabricEvent>,
    summary: StopSummary,
) {
    result.events.extend(events);
    if let Some(problem) = summary.problem {
        if summary.timed_out && result.status == RunStatus::Succeeded {
            result.status = RunStatus::Failed;
            result.error = Some(problem);
        } else {
            result.metadata.insert(
                "stop_error".into(),
                serde_json::to_value(&problem).unwrap_or(Value::Null),
            );
        }
    }
}

/// The plan a runtime starts with and its ATOF collector: `plan` itself without
/// `relay_streaming`, else the plan with the streaming sink (see `relay_stream`).
fn streaming_plan<'a>(
    plan: &'a RunPlan,
    options: &RuntimeOptions,
) -> Result<(std::borrow::Cow<'a, RunPlan>, Option<RelayStream>), HostError> {
    match &options.relay_streaming {
        None => Ok((std::borrow::Cow::Borrowed(plan), None)),
        Some(streaming) => {
            let (relay, patched) = fabric_relay::streaming::prepare(plan, streaming)?;
            Ok((std::borrow::Cow::Owned(patched), Some(relay)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabric_config::ErrorInfo;
    use std::time::Duration;

    fn succeeded() -> RunResult {
        serde_json::from_value(serde_json::json!({
            "agent_name": "a", "harness": "h", "adapter_kind": "process",
            "runtime_id": "runtime-1", "invocation_id": "invocation-1", "request_id": "request-1",
            "status": "succeeded", "output": 1
        }))
        .expect("result")
    }

    #[test]
    fn call_options_set_base_dir_and_the_expected_fingerprint() {
        let options = RunOptions::from_call_options(&CallOptions {
            base_dir: Some("examples/hello".into()),
            expected_descriptor_sha256: Some("ab".into()),
            python_prefix: Some("/venv".into()),
            python_interpreter: Some("/venv/bin/python".into()),
            start_timeout_seconds: Some(0.5),
            stderr_log_bytes: Some(4096),
            streaming: Some(true),
            launch_collector: Some(false),
            completion_wait_timeout: Some(2.5),
            collector_memory_budget_bytes: Some(8 * 1024 * 1024),
            capture_model_calls: Some(true),
            max_model_calls: Some(3),
            max_total_tokens: None,
            model_call_body_bytes: Some(64),
            binding: Some(fabric_config::options::BindingIdentity {
                name: "fabric-core".into(),
                version: "0.1.0".into(),
                runtime_name: None,
                runtime_version: None,
            }),
        });
        assert_eq!(
            options.runtime.binding.as_ref().map(|b| b.name.as_str()),
            Some("fabric-core")
        );
        let capture = options.runtime.capture.expect("capture options");
        assert_eq!(capture.max_model_calls, Some(3));
        assert_eq!(capture.max_total_tokens, None);
        assert_eq!(capture.body_cap, 64);
        assert_eq!(
            options.runtime.relay_streaming,
            Some(crate::RelayStreaming {
                launch_collector: false,
                completion_wait: Duration::from_millis(2500),
                memory_budget: 8 * 1024 * 1024,
            })
        );
        assert_eq!(options.runtime.host_timeout, Duration::from_millis(500));
        assert_eq!(options.runtime.stderr_log_bytes, 4096);
        assert_eq!(options.base_dir, Some(PathBuf::from("examples/hello")));
        assert_eq!(options.plan.python_prefix, Some(PathBuf::from("/venv")));
        assert_eq!(
            options.runtime.caller_python,
            Some(PathBuf::from("/venv/bin/python"))
        );
        assert!(options.runtime.python_interpreter.is_none());
        assert_eq!(
            options.plan.expected_descriptor_sha256.as_deref(),
            Some("ab")
        );
        assert!(options.plan.discovery.is_none());
        let defaults = RunOptions::from_call_options(&CallOptions::default());
        assert_eq!(defaults.runtime.host_timeout, Duration::from_secs(90));
        assert!(defaults.base_dir.is_none());
        assert!(defaults.plan.expected_descriptor_sha256.is_none());
        assert!(defaults.plan.python_prefix.is_none());
        assert!(defaults.runtime.caller_python.is_none());
    }

    #[test]
    fn stop_that_cannot_end_the_host_fails_a_succeeded_run() {
        let mut result = succeeded();
        let problem = ErrorInfo::new(Stage::Stop, "timeout", "did not terminate");
        fold_stop(
            &mut result,
            Vec::new(),
            StopSummary {
                problem: Some(problem),
                timed_out: true,
            },
        );
        assert_eq!(result.status, RunStatus::Failed);
        let error = result.error.expect("error");
        assert_eq!((error.stage, error.code.as_str()), (Stage::Stop, "timeout"));
    }

    #[test]
    fn ignored_stop_keeps_the_status_and_reports_separately() {
        let mut result = succeeded();
        let problem = ErrorInfo::new(Stage::Stop, "timeout", "needed SIGKILL");
        fold_stop(
            &mut result,
            Vec::new(),
            StopSummary {
                problem: Some(problem),
                timed_out: false,
            },
        );
        assert_eq!(result.status, RunStatus::Succeeded);
        assert!(result.error.is_none());
        assert_eq!(result.metadata["stop_error"]["code"], "timeout");
    }
}
