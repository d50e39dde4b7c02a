//! Runtimes in a provider environment: driven through the runtime server inside it (the
//! provider's `runtime_control` carrying bridge requests: start, invoke, stop by runtime
//! id). Results come back whole (buffered); streams are refused
//! (`environment_stream_unsupported`); nothing is resent after an uncertain outcome
//! (`effects: unknown` makes the runtime terminal). Declared artifacts are copied with
//! `collect_artifacts` into the host's `runtime.artifacts/<runtime_id>/<invocation_id>/`.

use fabric_config::codes;
use std::path::{Component, Path};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use fabric_config::bridge::{self, Effects, Operation, Payload, Request, Status};
use fabric_config::plan::RunPlan;
use fabric_config::result::{FabricEvent, RunResult, RuntimeStopResult};
use fabric_config::{ErrorInfo, RunRequest, Stage};
use serde_json::{Map, Value};

use super::{Backend, Call, Identity, Phase, Runtime, RuntimeOptions, Started, State, StopSummary};
use crate::collect::Collector;
use crate::environment::Environment;
use crate::error::HostError;
use crate::extensions::ExtensionSchemas;
use crate::home::FabricHome;
use crate::ids;
use crate::live::{self, Live};
use crate::result::{event, meta};
use crate::service::ServiceRole;
use crate::telemetry::RuntimeTelemetry;
use fabric_reactor::beneath::Beneath;

/// How much longer than the bridge's own call limit (320 s) the core waits for the
/// provider's `runtime_control` answer.
const CONTROL_GRACE: Duration = Duration::from_secs(10);

/// What a runtime in a provider environment keeps: the agent name the server checks.
#[derive(Debug)]
pub(crate) struct BridgeBackend {
    agent: String,
    started_at: SystemTime,
}

impl BridgeBackend {
    pub(crate) fn started_at(&self) -> SystemTime {
        self.started_at
    }
}

/// The answer of one bridge invoke, sent by the worker thread.
pub(crate) type BridgeAnswer = mpsc::Receiver<Result<Value, HostError>>;

impl Runtime {
    /// Starts a runtime of `plan` through the runtime server of the provider environment.
    pub(super) fn start_bridge(
        plan: &RunPlan,
        environment: Arc<Environment>,
        options: RuntimeOptions,
        role: &ServiceRole,
    ) -> Result<Runtime, HostError> {
        if !matches!(role, ServiceRole::None) {
            return Err(HostError::Capability {
                stage: Stage::Start,
                code: codes::ENVIRONMENT_RUNTIME_UNSUPPORTED,
                message: format!(
                    "shared services cannot start in a `{}` provider environment; start runtimes there",
                    environment.handle().provider
                ),
            });
        }
        if options.capture.is_some() {
            return Err(HostError::Capability {
                stage: Stage::Start,
                code: codes::MODEL_CALL_CAPTURE_UNSUPPORTED,
                message: format!(
                    "capture_model_calls is not available for a runtime in a `{}` provider environment: the model gateway listens on this machine's loopback",
                    environment.handle().provider
                ),
            });
        }
        environment.check_forwarded(Stage::Start)?;
        let agent = plan.agent_name.clone();
        let request = Request {
            operation: Operation::Start,
            agent: Some(agent.clone()),
            runtime_id: None,
            payload: Payload::Config(server_config(plan, &environment)),
        };
        let handle = control(&environment, &request, Stage::Start)?;
        let Some(runtime_id) = handle.get("runtime_id").and_then(Value::as_str) else {
            return Err(uncertain(
                Stage::Start,
                "the start result has no runtime_id",
            ));
        };
        let runtime_id = runtime_id.to_owned();
        let descriptor = plan.adapter_descriptor.as_ref().map(|d| &d.descriptor);
        let home = match FabricHome::create(&runtime_id, environment.artifact_root()) {
            Ok(home) => home,
            Err(error) => {
                stop_request(&environment, &agent, &runtime_id);
                return Err(error);
            }
        };
        let live = Arc::new(
            Live::new(
                runtime_id.clone(),
                Arc::clone(&environment),
                home.path().to_path_buf(),
                live::health_levels(descriptor),
            )
            .with_agent(agent.clone()),
        );
        let runtime = Runtime {
            service_id: None,
            start_output: Value::Null,
            execution: None,
            identity: Identity::of(plan),
            collector: Collector::new(None, environment.workspace()),
            host_command: format!(
                "runtime_control ({} provider runtime server)",
                environment.handle().provider
            ),
            environment,
            owns_environment: false,
            backend: Backend::Bridge(BridgeBackend {
                agent,
                started_at: SystemTime::now(),
            }),
            home,
            timeout: Duration::from_secs(bridge::CALL_SECONDS),
            options,
            started_at_millis: ids::now_millis(),
            telemetry: RuntimeTelemetry::default(),
            extensions: ExtensionSchemas::new(descriptor),
            system_stats: plan.config.system_stats.clone(),
            supports_openai_streaming: false,
            relay: None,
            live,
            state: Mutex::new(State::running()),
            // Refused above: the gateway listens on this machine's loopback.
            capture: None,
            runtime_id,
        };
        let start_event = event(
            "runtime_start",
            format!("started runtime {}", runtime.runtime_id),
            meta([
                ("runtime_id", runtime.runtime_id.clone().into()),
                (
                    "environment_id",
                    runtime.environment.environment_id().to_owned().into(),
                ),
                (
                    "environment_provider",
                    runtime.environment.handle().provider.clone().into(),
                ),
                ("adapter_runner", "runtime_server".into()),
            ]),
        );
        runtime
            .lock()
            .carry
            .push(super::carry::Carried::Event(start_event));
        // Checks find it by id and route through its environment (`crate::env_check`).
        live::register(&runtime.live);
        Ok(runtime)
    }

    /// The agent name of a bridge runtime (`None` for a local host).
    fn bridge(&self) -> Option<&BridgeBackend> {
        match &self.backend {
            Backend::Bridge(bridge) => Some(bridge),
            Backend::Local(_) => None,
        }
    }

    /// Marks the environment as this runtime's own (prepared by `start_runtime` for it):
    /// stopping the runtime releases it.
    pub(crate) fn owning_environment(mut self) -> Runtime {
        self.owns_environment = self.is_remote();
        self
    }

    /// Whether this runtime runs in a provider environment (through its runtime server).
    pub fn is_remote(&self) -> bool {
        self.bridge().is_some()
    }

    /// Refuses a stream on a runtime in a provider environment.
    pub(crate) fn refuse_remote_stream(&self) -> Result<(), HostError> {
        if self.is_remote() {
            return Err(HostError::Capability {
                stage: Stage::Invoke,
                code: codes::ENVIRONMENT_STREAM_UNSUPPORTED,
                message: format!(
                    "runtime {} runs in a `{}` provider environment: its results come back whole through the environment's runtime server, so it cannot stream; use invoke",
                    self.runtime_id,
                    self.environment.handle().provider
                ),
            });
        }
        Ok(())
    }

    /// Sends one invoke to the server on a worker thread; `notify` runs when it answered.
    pub(super) fn begin_bridge(
        &self,
        mut request: RunRequest,
        (_, request_id): (String, String),
        notify: Option<crate::hosts::Notify>,
    ) -> Result<Started, HostError> {
        let Some(bridge) = self.bridge() else {
            return Err(uncertain(
                Stage::Invoke,
                "not a provider-environment runtime",
            ));
        };
        self.environment.check_forwarded(Stage::Invoke)?;
        request.request_id = Some(request_id.clone());
        let object = match serde_json::to_value(&request) {
            Ok(Value::Object(object)) => object,
            _ => {
                return Err(HostError::InvalidRequest {
                    stage: Stage::Invoke,
                    path: "request".into(),
                    reason: "the request is not a JSON object".into(),
                });
            }
        };
        let wire = Request {
            operation: Operation::Invoke,
            agent: Some(bridge.agent.clone()),
            runtime_id: Some(self.runtime_id.clone()),
            payload: Payload::Request(object),
        };
        // Checked here, before anything is sent: an oversized request changes nothing.
        if wire.encode().is_err() {
            return Err(HostError::RequestTooLarge {
                stage: Stage::Invoke,
                request_bytes: wire.to_value().to_string().len() + 1,
                limit_bytes: bridge::REQUEST_LIMIT,
            });
        }
        let environment = Arc::clone(&self.environment);
        let (answer, answered) = mpsc::sync_channel(1);
        let worker = move || {
            let _ = answer.send(control(&environment, &wire, Stage::Invoke));
            if let Some(notify) = notify {
                notify();
            }
        };
        std::thread::Builder::new()
            .name("fabric-bridge-invoke".into())
            .spawn(worker)
            .map_err(|error| HostError::EngineUnavailable {
                stage: Stage::Invoke,
                reason: format!("cannot start the bridge worker: {error}"),
            })?;
        Ok(Started {
            invocation_id: String::new(),
            request_id,
            events: self.carried_events(&self.lock().carry),
            stats: None,
            record: Ok(Default::default()),
            call: Call::Bridge(answered),
        })
    }

    /// Waits for a bridge invoke and completes its RunResult: the host's events first,
    /// declared artifacts copied into the host's artifact root.
    pub(super) fn finish_bridge(
        &self,
        mut events: Vec<FabricEvent>,
        answered: &BridgeAnswer,
    ) -> Result<RunResult, HostError> {
        let value = answered.recv().unwrap_or_else(|_| {
            Err(uncertain(
                Stage::Invoke,
                "the bridge worker ended without an answer",
            ))
        })?;
        let mut result: RunResult = serde_json::from_value(value).map_err(|error| {
            uncertain(
                Stage::Invoke,
                &format!("the runtime server's RunResult is malformed: {error}"),
            )
        })?;
        self.collect_remote_artifacts(&mut result);
        events.append(&mut result.events);
        result.events = events;
        let provider = self.environment.handle().provider.clone();
        result
            .metadata
            .insert("environment_provider".into(), provider.into());
        result
            .metadata
            .insert("adapter_runner".into(), "runtime_server".into());
        Ok(result)
    }

    /// Copies the result's relative artifacts from the environment's artifact root to
    /// `<host root>/<runtime_id>/<invocation_id>/` (the environment's own
    /// `.fabric/<runtime_id>/<invocation_id>/` prefix flattened away, so that directory holds
    /// what a local runtime's does) and points the manifest there. A refused
    /// collection (a limit, a provider failure) keeps the environment paths and adds an
    /// `artifacts_not_collected` event; the result's status is unchanged.
    fn collect_remote_artifacts(&self, result: &mut RunResult) {
        let Some(env_root) = result.artifacts.root.clone() else {
            return;
        };
        let relative: Vec<String> = result
            .artifacts
            .artifacts
            .iter()
            .map(|a| a.path.clone())
            .filter(|p| is_plain_relative(p))
            .collect();
        if relative.is_empty() {
            return;
        }
        let sub = format!("{}/{}", self.runtime_id, result.invocation_id);
        // The environment's core files of this invocation (`.fabric/<runtime_id>/
        // <invocation_id>/stdout.txt`, ...) land directly in `<runtime_id>/<invocation_id>/`,
        // unless an adapter artifact already has that name there.
        let nested = format!(".fabric/{sub}/");
        let host_path = |path: &str| {
            let flat = path
                .strip_prefix(&nested)
                .filter(|rest| !relative.iter().any(|other| other == rest))
                .unwrap_or(path);
            format!("{sub}/{flat}")
        };
        let host_root = self.home.root().to_path_buf();
        let copied = self
            .environment
            .collect_artifacts(&relative)
            .and_then(|collected| {
                let root = Beneath::open(&host_root)
                    .map_err(|e| crate::home::fs_error(Stage::Artifact, &host_root, &e))?;
                for (path, bytes) in &collected.files {
                    let target = host_path(path);
                    root.write(Path::new(&target), bytes, 0o600)
                        .map_err(|refusal| {
                            crate::home::refusal_error(
                                Stage::Artifact,
                                &host_root.join(&target),
                                &refusal,
                            )
                        })?;
                }
                let copied: Vec<String> =
                    collected.files.into_iter().map(|(path, _)| path).collect();
                Ok((copied, collected.refused))
            });
        let ids = || {
            meta([
                ("runtime_id", self.runtime_id.clone().into()),
                ("invocation_id", result.invocation_id.clone().into()),
            ])
        };
        match copied {
            Ok((copied, refused)) => {
                for artifact in &mut result.artifacts.artifacts {
                    if copied.contains(&artifact.path) {
                        artifact.path = host_path(&artifact.path);
                    } else if is_plain_relative(&artifact.path) {
                        let refusal = refused.iter().find(|r| r.path == artifact.path);
                        if let Some(refusal) = refusal {
                            artifact
                                .metadata
                                .insert("refused".into(), refusal.code.clone().into());
                            artifact
                                .metadata
                                .insert("refused_reason".into(), refusal.reason.clone().into());
                        }
                        artifact.path = Path::new(&env_root)
                            .join(&artifact.path)
                            .to_string_lossy()
                            .into_owned();
                        artifact
                            .metadata
                            .insert("location".into(), "environment".into());
                    }
                }
                for refusal in refused {
                    let mut details = ids();
                    details.insert("code".into(), refusal.code.clone().into());
                    details.insert("path".into(), refusal.path.into());
                    details.insert("reason".into(), refusal.reason.into());
                    // The provider's own code is in the details; the kind is always ours.
                    result
                        .events
                        .push(event(codes::PATH_REFUSED, refusal.message, details));
                }
                result.artifacts.root = Some(host_root.to_string_lossy().into_owned());
            }
            Err(error) => {
                let info = ErrorInfo::from(error);
                let mut details = ids();
                details.insert("code".into(), info.code.clone().into());
                details.insert("environment_root".into(), env_root.into());
                result.events.push(event(
                    "artifacts_not_collected",
                    format!("artifacts stay in the environment: {}", info.message),
                    details,
                ));
            }
        }
    }

    /// Stops the runtime in the server (once); a failure is the stop's problem.
    pub(super) fn stop_bridge(&self) -> (StopSummary, fabric_config::config::JsonObject) {
        let Some(bridge) = self.bridge() else {
            return (
                StopSummary {
                    problem: None,
                    timed_out: false,
                },
                fabric_config::config::JsonObject::new(),
            );
        };
        let request = Request {
            operation: Operation::Stop,
            agent: Some(bridge.agent.clone()),
            runtime_id: Some(self.runtime_id.clone()),
            payload: Payload::None,
        };
        let outcome = control(&self.environment, &request, Stage::Stop);
        let mut details = meta([
            ("runtime_id", self.runtime_id.clone().into()),
            ("already_stopped", false.into()),
            ("adapter_runner", "runtime_server".into()),
        ]);
        let summary = match outcome {
            Ok(_) => StopSummary {
                problem: None,
                timed_out: false,
            },
            Err(error) => {
                let timed_out = error.is_terminal();
                details.insert("stop_error".into(), error.code().into());
                StopSummary {
                    problem: Some(ErrorInfo::from(error.at_stage(Stage::Stop))),
                    timed_out,
                }
            }
        };
        (summary, details)
    }

    /// Sends `stop` on a thread (a bridge runtime dropped unstopped).
    pub(super) fn stop_bridge_in_background(&self) {
        if let Some(bridge) = self.bridge() {
            let environment = Arc::clone(&self.environment);
            let agent = bridge.agent.clone();
            let runtime_id = self.runtime_id.clone();
            let owned = self.owns_environment;
            let _ = std::thread::Builder::new()
                .name("fabric-bridge-stop".into())
                .spawn(move || {
                    stop_request(&environment, &agent, &runtime_id);
                    if owned {
                        let _ = environment.release();
                    }
                });
        }
    }
}

impl Identity {
    /// The identity of `plan`'s harness.
    pub(super) fn of(plan: &RunPlan) -> Identity {
        let descriptor = plan.adapter_descriptor.as_ref().map(|d| &d.descriptor);
        Identity {
            agent_name: plan.agent_name.clone(),
            harness: descriptor.map_or_else(
                || {
                    plan.config
                        .harness
                        .as_ref()
                        .map(|h| h.adapter_id.clone())
                        .unwrap_or_default()
                },
                |d| d.adapter_id.clone(),
            ),
            adapter_kind: descriptor.map_or(fabric_config::result::AdapterKind::Process, |d| {
                super::result_kind(d.adapter_kind)
            }),
            adapter_id: descriptor.map(|d| d.adapter_id.clone()),
        }
    }
}

impl State {
    pub(super) fn running() -> State {
        State {
            phase: Phase::Running,
            busy: false,
            streaming: false,
            invocations: 0,
            carry: Vec::new(),
            stop_result: None,
            last_stop: None,
        }
    }
}

/// What a bridge runtime's stop returns.
pub(super) fn stop_result(
    root: Option<String>,
    events: Vec<FabricEvent>,
    summary: &StopSummary,
) -> RuntimeStopResult {
    RuntimeStopResult {
        artifacts: fabric_config::agent::ArtifactManifest {
            root,
            artifacts: Vec::new(),
        },
        error: summary.problem.clone(),
        events,
    }
}

/// The config the server inside starts: the host's config in a local environment whose
/// workspace, artifact root and variables are the provider environment's (forwarded
/// values become literal values), discovery paths anchored at the host's base directory.
fn server_config(plan: &RunPlan, environment: &Environment) -> Value {
    let mut config = serde_json::to_value(&plan.config).unwrap_or(Value::Null);
    let handle = environment.handle();
    let Some(object) = config.as_object_mut() else {
        return config;
    };
    let mut inner = Map::new();
    if let Some(workspace) = &handle.workspace {
        inner.insert("workspace".into(), workspace.clone().into());
    }
    if !handle.env.is_empty() {
        let env = handle
            .env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        inner.insert("env".into(), Value::Object(env));
    }
    object.insert("environment".into(), Value::Object(inner));
    if let Some(runtime) = object.get_mut("runtime").and_then(Value::as_object_mut) {
        match &handle.artifacts {
            Some(artifacts) => {
                runtime.insert("artifacts".into(), artifacts.clone().into());
            }
            None => {
                runtime.remove("artifacts");
            }
        }
    }
    let base = Path::new(&plan.base_dir);
    if let Some(paths) = object
        .get_mut("discovery")
        .and_then(|d| d.get_mut("local_paths"))
        .and_then(Value::as_array_mut)
    {
        for path in paths.iter_mut() {
            if let Some(text) = path.as_str() {
                let anchored = fabric_config::path::resolve_path(base, text);
                let anchored = std::path::absolute(&anchored).unwrap_or(anchored);
                *path = Value::String(anchored.to_string_lossy().into_owned());
            }
        }
    }
    config
}

/// Sends one bridge request through `runtime_control` and returns the succeeded result.
fn control(environment: &Environment, request: &Request, stage: Stage) -> Result<Value, HostError> {
    let timeout = Duration::from_secs(bridge::CALL_SECONDS) + CONTROL_GRACE;
    let response = environment
        .runtime_control(request.to_value(), timeout)
        .map_err(|error| error.at_stage(stage))?;
    let line = serde_json::to_vec(&response).unwrap_or_default();
    let Some(response) = fabric_sandbox::bridge::decode_response(&line, request.operation) else {
        return Err(uncertain(
            stage,
            "the runtime server's response is malformed",
        ));
    };
    if response.status == Status::Succeeded {
        return Ok(response.result);
    }
    let Some(error) = response.error else {
        return Err(uncertain(
            stage,
            "the runtime server's response has no error",
        ));
    };
    let code =
        fabric_config::codes::lookup(&error.code).map_or(codes::INVALID_RESPONSE, |c| c.code);
    let consequence = if error.effects == Effects::Unknown {
        if stage == Stage::Invoke {
            "; the outcome is unknown (effects: unknown): nothing is resent and the runtime is terminal"
        } else {
            "; the outcome is unknown (effects: unknown): nothing is resent"
        }
    } else {
        ""
    };
    Err(HostError::Bridge {
        stage,
        code,
        message: format!(
            "the environment's runtime server answered {}: {}{consequence}",
            error.code, error.message
        ),
        effects: error.effects,
    })
}

/// Best-effort `stop` of a server runtime.
fn stop_request(environment: &Environment, agent: &str, runtime_id: &str) {
    let request = Request {
        operation: Operation::Stop,
        agent: Some(agent.to_owned()),
        runtime_id: Some(runtime_id.to_owned()),
        payload: Payload::None,
    };
    let _ = control(environment, &request, Stage::Stop);
}

fn uncertain(stage: Stage, message: &str) -> HostError {
    HostError::Bridge {
        stage,
        code: codes::INVALID_RESPONSE,
        message: format!("{message}; the outcome is unknown: nothing is resent"),
        effects: Effects::Unknown,
    }
}

/// A path relative to the artifact root with only normal components.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}
