//! The core behind the runtime server's socket ([`RuntimeServer`], the
//! `fabric_sandbox::bridge::Handler` of `fabric-agent-ctl serve`): several runtimes by id,
//! each with its own serialized invoke / stop, plus server and runtime health checks, and a
//! caller's `exec` in the sandbox (`served/exec.rs`).
//! Transport-free: one request line in, one [`Response`] out (the socket is
//! `fabric_sandbox::bridge::Server`).

use fabric_config::codes;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use fabric_config::bridge::{
    self, BridgeStage, Effects, Failure, Operation, Payload, Request, Response,
};
use fabric_config::health::{CheckOutcome, CheckRequest, HealthLevel};
use fabric_config::{ErrorInfo, FabricConfig, RunRequest};
use serde_json::{Value, json};

use fabric_sandbox::bridge::{Handler, ShutdownOutcome};

use crate::error::ErrorClass;
use crate::fabric::{Fabric, RunOptions};
use crate::runtime::Runtime;

mod exec;

/// Evidence source of server-scope check observations.
pub const SERVER_SOURCE_ID: &str = "fabric:runtime_server";

/// One runtime the server started.
#[derive(Debug)]
struct Owned {
    runtime: Runtime,
    agent: String,
    binding: String,
    /// Serializes invoke and stop of this runtime (stop waits for an active invoke).
    calls: Mutex<()>,
    stopped: AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    runtimes: HashMap<String, Arc<Owned>>,
    shutting_down: bool,
    /// A runtime was started (or a start's outcome is unknown): the sandbox is in use.
    used: bool,
    /// A start's outcome is unknown: no further starts.
    blocked: bool,
    /// Starts in progress (a shutdown meanwhile cannot confirm cleanup).
    starting: usize,
}

/// The runtime server's state: a [`Fabric`], its base directory and the runtimes by id.
#[derive(Debug)]
pub struct RuntimeServer {
    fabric: Fabric,
    options: RunOptions,
    state: Mutex<State>,
}

impl RuntimeServer {
    /// A server whose configs resolve relative paths against `base_dir` (the socket's
    /// directory) with otherwise default options.
    pub fn new(base_dir: impl Into<PathBuf>) -> RuntimeServer {
        RuntimeServer::with_options(RunOptions::with_base_dir(base_dir))
    }

    /// A server with explicit run options (`base_dir` should be set).
    pub fn with_options(options: RunOptions) -> RuntimeServer {
        RuntimeServer {
            fabric: Fabric::new(),
            options,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any runtime was started or a start's outcome is unknown.
    pub fn used(&self) -> bool {
        self.lock().used
    }

    /// Serves one request line.
    pub fn handle_line(&self, line: &[u8]) -> Response {
        let value = match bridge::decode_strict(line) {
            Ok(value) => value,
            Err(error) => return Response::failed("unknown", &Failure::invalid(error.field)),
        };
        let operation = bridge::operation_name(&value);
        match bridge::validate_request(&value).and_then(|request| self.dispatch(&request)) {
            Ok(response) => response,
            Err(failure) => Response::failed(operation, &failure),
        }
    }

    /// Serves one validated request.
    pub fn dispatch(&self, request: &Request) -> Result<Response, Failure> {
        if request.operation != Operation::Check && self.lock().shutting_down {
            return Err(Failure::new(codes::HOST_STOPPING, BridgeStage::Request));
        }
        match request.operation {
            Operation::Start => self.start(request),
            Operation::Invoke => self.invoke(request),
            Operation::Stop => self.stop(request),
            Operation::Check => self.check(request),
            Operation::Exec => exec::exec(self.options.base_dir.as_ref(), request),
            Operation::Serve => Err(Failure::invalid("operation")),
        }
    }

    fn start(&self, request: &Request) -> Result<Response, Failure> {
        let Payload::Config(value) = &request.payload else {
            return Err(Failure::invalid("config"));
        };
        if self.lock().blocked {
            return Err(Failure::new(codes::CLEANUP_UNCONFIRMED, BridgeStage::Start));
        }
        let config = FabricConfig::from_value(value.clone())
            .and_then(|config| config.validate().map(|()| config))
            .map_err(|error| {
                let info = ErrorInfo::from(error);
                validation_failure(&info, "config")
            })?;
        let plan = self.fabric.plan(&config, &self.options).map_err(|error| {
            let info = ErrorInfo::from(error);
            validation_failure(&info, "config")
        })?;
        {
            let mut state = self.lock();
            if state.shutting_down {
                return Err(Failure::new(codes::HOST_STOPPING, BridgeStage::Request));
            }
            state.used = true;
            state.starting += 1;
        }
        let started = self.fabric.start_runtime_plan(&plan, &self.options.runtime);
        self.lock().starting -= 1;
        let runtime = match started {
            Ok(runtime) => runtime,
            Err(error) if matches!(error.class(), ErrorClass::Config | ErrorClass::Capability) => {
                let info = ErrorInfo::from(error);
                return Err(validation_failure(&info, "config"));
            }
            Err(_) => {
                self.lock().blocked = true;
                return Err(Failure::new(codes::START_FAILED, BridgeStage::Start)
                    .with_effects(None, Effects::Unknown));
            }
        };
        let info = runtime.info();
        let mut environment = serde_json::to_value(&info.environment).unwrap_or(Value::Null);
        if let Some(object) = environment.as_object_mut() {
            object.remove("handle");
        }
        let handle = json!({
            "runtime_id": info.runtime_id,
            "runtime_binding": format!("fabric-runtime-binding-{}", &uuid::Uuid::new_v4().simple().to_string()[..16]),
            "agent_name": info.agent_name,
            "harness": info.harness,
            "adapter_kind": info.adapter_kind,
            "adapter_id": info.adapter_id,
            "service_id": null,
            "environment": environment,
        });
        let owned = Arc::new(Owned {
            binding: handle["runtime_binding"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            runtime,
            agent: request.agent.clone().unwrap_or_default(),
            calls: Mutex::new(()),
            stopped: AtomicBool::new(false),
        });
        self.lock()
            .runtimes
            .insert(info.runtime_id.clone(), Arc::clone(&owned));
        Ok(Response::succeeded("start", Some(true), handle))
    }

    /// The runtime `request` names, checked against its agent.
    fn owned(&self, request: &Request) -> Result<Option<Arc<Owned>>, Failure> {
        let id = request.runtime_id.as_deref().unwrap_or_default();
        let owned = self.lock().runtimes.get(id).cloned();
        match owned {
            Some(owned) if Some(owned.agent.as_str()) != request.agent.as_deref() => {
                Err(Failure::new(codes::WRONG_AGENT, BridgeStage::Request).with_field("agent"))
            }
            other => Ok(other),
        }
    }

    fn invoke(&self, request: &Request) -> Result<Response, Failure> {
        let owned = self
            .owned(request)?
            .ok_or_else(|| Failure::new(codes::RUNTIME_UNAVAILABLE, BridgeStage::Request))?;
        let run_request = match &request.payload {
            Payload::Input(Value::Null) => RunRequest::new(""),
            Payload::Input(input) => RunRequest::new(input.clone()),
            Payload::Request(object) => RunRequest::from_value(Value::Object(object.clone()))
                .and_then(|r| r.validate().map(|()| r))
                .map_err(|error| {
                    let info = ErrorInfo::from(error);
                    validation_failure(&info, "request")
                })?,
            _ => return Err(Failure::invalid("input")),
        };
        let _serial = owned.calls.lock().unwrap_or_else(|p| p.into_inner());
        if self.lock().shutting_down {
            return Err(Failure::new(codes::HOST_STOPPING, BridgeStage::Request));
        }
        if owned.stopped.load(Ordering::Acquire) {
            return Err(Failure::new(
                codes::RUNTIME_UNAVAILABLE,
                BridgeStage::Invoke,
            ));
        }
        match owned.runtime.invoke(run_request) {
            Ok(result) => Ok(Response::succeeded(
                "invoke",
                None,
                serde_json::to_value(&result).unwrap_or(Value::Null),
            )),
            Err(error) => Err(match error.class() {
                ErrorClass::Config | ErrorClass::Capability => {
                    validation_failure(&ErrorInfo::from(error), "request")
                }
                ErrorClass::State if error.code() == codes::RUNTIME_STOPPED => {
                    Failure::new(codes::RUNTIME_UNAVAILABLE, BridgeStage::Invoke)
                }
                _ => Failure::new(codes::INVOKE_FAILED, BridgeStage::Invoke)
                    .with_effects(None, Effects::Unknown),
            }),
        }
    }

    fn stop(&self, request: &Request) -> Result<Response, Failure> {
        let owned = self
            .owned(request)?
            .ok_or_else(|| Failure::new(codes::RUNTIME_UNAVAILABLE, BridgeStage::Request))?;
        let _serial = owned.calls.lock().unwrap_or_else(|p| p.into_inner());
        if owned.stopped.load(Ordering::Acquire) {
            return Ok(Response::succeeded("stop", Some(false), Value::Null));
        }
        let (_, summary) = owned.runtime.stop_inner();
        owned.stopped.store(true, Ordering::Release);
        if summary.timed_out {
            return Err(Failure::new(codes::STOP_FAILED, BridgeStage::Stop)
                .with_effects(None, Effects::Unknown));
        }
        Ok(Response::succeeded("stop", Some(true), Value::Null))
    }

    fn check(&self, request: &Request) -> Result<Response, Failure> {
        let (level, timeout) = bridge::check_options(&request.payload)?;
        let mut check = match &request.runtime_id {
            None if level.is_some() => return Err(Failure::invalid("request.level")),
            None => CheckRequest::server(),
            Some(id) => {
                CheckRequest::runtime(id.clone()).with_level(level.unwrap_or(HealthLevel::Live))
            }
        };
        check.timeout_seconds = timeout;
        if let Err(info) = check.validate() {
            let field = info.path().unwrap_or("request").to_owned();
            return Err(Failure::invalid(format!("request.{field}")));
        }
        let report = match &request.runtime_id {
            None => {
                let probe = fabric_health::client::Check::new(&check);
                if self.lock().shutting_down {
                    probe.observed(
                        CheckOutcome::Failed,
                        Some(codes::HOST_STOPPING),
                        SERVER_SOURCE_ID,
                    )
                } else {
                    probe.observed(CheckOutcome::Passed, None, SERVER_SOURCE_ID)
                }
            }
            Some(_) => match self.owned(request)? {
                Some(owned) if !owned.stopped.load(Ordering::Acquire) => self
                    .fabric
                    .check(None, &check)
                    .map_err(|_| Failure::invalid("request"))?,
                _ => fabric_health::client::Check::new(&check).unavailable(),
            },
        };
        Ok(Response::succeeded(
            "check",
            Some(false),
            serde_json::to_value(&report).unwrap_or(Value::Null),
        ))
    }

    /// Rejects new work, then stops every idle runtime. A busy runtime (an invoke or stop
    /// in progress) makes the outcome [`ShutdownOutcome::Unconfirmed`] without waiting.
    pub fn shutdown(&self) -> ShutdownOutcome {
        let (runtimes, used) = {
            let mut state = self.lock();
            state.shutting_down = true;
            (
                state.runtimes.values().cloned().collect::<Vec<_>>(),
                state.used,
            )
        };
        let mut confirmed = {
            let state = self.lock();
            !state.blocked && state.starting == 0
        };
        for owned in runtimes {
            let Ok(_serial) = owned.calls.try_lock() else {
                confirmed = false;
                continue;
            };
            if !owned.stopped.swap(true, Ordering::AcqRel) {
                let (_, summary) = owned.runtime.stop_inner();
                confirmed &= !summary.timed_out;
            }
        }
        if confirmed {
            ShutdownOutcome::Clean { used }
        } else {
            ShutdownOutcome::Unconfirmed
        }
    }

    /// The opaque binding returned with a runtime's handle (tests and diagnostics).
    pub fn binding(&self, runtime_id: &str) -> Option<String> {
        self.lock()
            .runtimes
            .get(runtime_id)
            .map(|owned| owned.binding.clone())
    }
}

/// `validation_failed` (or `validation_unavailable` for unverified adapter capabilities),
/// naming the field the core reported, else `fallback`.
fn validation_failure(info: &ErrorInfo, fallback: &str) -> Failure {
    let code = if info.code == "adapter_capability_unverified" {
        codes::VALIDATION_UNAVAILABLE
    } else {
        codes::VALIDATION_FAILED
    };
    let field = match info.path() {
        Some(path) => format!("{fallback}.{path}"),
        None => fallback.to_owned(),
    };
    Failure::new(code, BridgeStage::Validation).with_field(field)
}

impl Handler for RuntimeServer {
    fn handle_line(&self, line: &[u8]) -> Response {
        RuntimeServer::handle_line(self, line)
    }

    fn shutdown(&self) -> ShutdownOutcome {
        RuntimeServer::shutdown(self)
    }
}
