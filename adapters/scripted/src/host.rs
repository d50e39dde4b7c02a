//! The persistent local-host lifecycle loop: one request line in, one response line out.
//!
//! Rules (see CONTRACT-FACTS §a): a missing or non-string `operation` means `start`;
//! host-level failures use the `lifecycle_*` codes; the host exits after answering `stop`,
//! after any failed `start`, and on stdin EOF (stopping an active runtime first, exit 0);
//! malformed lines are answered and do not end the host. An adapter-raised failure during
//! `invoke` latches the runtime: later invokes get `lifecycle_runtime_failed`.

use fabric_config::codes;
use std::io::{BufRead, Write};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::atof;
use crate::contract::{AgentConfig, AgentRunRequest, RuntimeContext};
use crate::health::{self, Health};
use crate::runtime::{ScriptedRuntime, Step};
use crate::settings::ProtocolFault;
use crate::stream;
use crate::wire::{self, LifecycleError};

/// Exit status when a `crash` directive ends the process without answering.
pub const CRASH_EXIT_CODE: i32 = 70;

#[derive(Debug, Default)]
struct Host {
    runtime: Option<ScriptedRuntime>,
    failed: bool,
    health: Health,
    /// Set by `stop` from `exit_delay_ms`: how long to keep running after its answer.
    exit_delay_ms: u64,
}

/// What to do after handling one request line.
enum Reply {
    /// Write this line; then exit with 0 if `exit` is set.
    Line { text: Vec<u8>, exit: bool },
    /// Write nothing and keep serving.
    Nothing,
    /// Write nothing and never answer again (a host that ignores `stop`).
    Hang,
    /// Exit now with this status, without answering.
    Crash,
}

fn line(text: String, exit: bool) -> Reply {
    Reply::Line {
        text: text.into_bytes(),
        exit,
    }
}

/// Serves lifecycle requests until stop, a failed start or EOF; returns the exit status.
/// `health` (possibly without a listener) is stopped before `stop` is answered and dropped,
/// removing its endpoint file, before this returns.
pub fn serve(mut input: impl BufRead, mut output: impl Write, health: Health) -> i32 {
    let mut host = Host {
        health,
        ..Host::default()
    };
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => break,
        }
        match host.handle(&buf) {
            Reply::Line { mut text, exit } => {
                text.push(b'\n');
                if output
                    .write_all(&text)
                    .and_then(|()| output.flush())
                    .is_err()
                {
                    eprintln!("fabric.scripted: stdout closed; stopping");
                    break;
                }
                if exit {
                    if host.exit_delay_ms > 0 {
                        std::thread::sleep(std::time::Duration::from_millis(host.exit_delay_ms));
                    }
                    return 0;
                }
            }
            Reply::Nothing => {}
            Reply::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Reply::Crash => {
                eprintln!("fabric.scripted: crash directive; exiting without an answer");
                std::process::exit(CRASH_EXIT_CODE);
            }
        }
    }
    // EOF (or a closed stdout): stop an active runtime, then exit 0.
    if let Some(mut runtime) = host.runtime.take() {
        runtime.stop();
    }
    0
}

impl Host {
    fn handle(&mut self, raw: &[u8]) -> Reply {
        let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(raw) else {
            return line(
                wire::failed(
                    "start",
                    &LifecycleError::new(
                        codes::LIFECYCLE_INVALID_REQUEST,
                        "request line is not a JSON object",
                    ),
                ),
                false,
            );
        };
        let operation = match message.get("operation") {
            Some(Value::String(op)) => op.clone(),
            _ => "start".to_owned(),
        };
        let ends_host = operation == "start" || operation == "stop";
        let payload = match validate(&operation, message.remove("payload")) {
            Ok(p) => p,
            Err(Rejected::Lifecycle(error)) => {
                return line(wire::failed(&operation, &error), ends_host);
            }
            Err(Rejected::Unexpected(error)) => {
                // Upstream's catch-all path: never ends the host, but latches an active
                // runtime when the operation was an invoke.
                if operation.starts_with("invoke") && self.runtime.is_some() {
                    self.failed = true;
                    self.health.update(|h| h.failed = true);
                }
                return line(wire::failed(&operation, &error), false);
            }
        };
        match operation.as_str() {
            "start" => self.start(payload),
            "stop" => self.stop(&payload),
            _ => self.invoke(&operation, payload),
        }
    }

    fn start(&mut self, (payload, runtime_id): (Map<String, Value>, String)) -> Reply {
        if self.runtime.is_some() {
            return line(
                wire::failed(
                    "start",
                    &LifecycleError::new(
                        "lifecycle_already_started",
                        "this host already owns a runtime",
                    ),
                ),
                true,
            );
        }
        let config = match AgentConfig::decode(payload.get("config").unwrap_or(&Value::Null)) {
            Ok(config) => config,
            Err(detail) => {
                eprintln!("fabric.scripted: start config rejected: {detail}");
                let error = LifecycleError::new(
                    "lifecycle_invalid_config",
                    "config does not match the AgentConfig contract",
                );
                return line(wire::failed("start", &error), true);
            }
        };
        let atof_sink = match relay_stream_sink(&payload) {
            Ok(sink) => sink,
            Err(message) => {
                let error = LifecycleError::new("scripted_relay_config_invalid", message);
                return line(wire::failed("start", &error), true);
            }
        };
        let (service, output) = match crate::service::start(&payload) {
            Ok(started) => started,
            Err(error) => return line(wire::failed("start", &error), true),
        };
        match ScriptedRuntime::start(runtime_id, &config) {
            Ok(mut runtime) => {
                runtime.atof_sink = atof_sink;
                runtime.service = service;
                let levels = &runtime.settings.health;
                let (fail, stall) = (
                    levels.fail.as_deref().and_then(health::level),
                    levels.stall.as_deref().and_then(health::level),
                );
                self.health.update(|h| {
                    h.started = true;
                    h.failed = false;
                    h.fail = fail;
                    h.stall = stall;
                });
                let report = crate::evidence::enabled(&payload)
                    .then(|| crate::evidence::report(&runtime.settings.evidence))
                    .flatten();
                self.runtime = Some(runtime);
                self.failed = false;
                let output = crate::evidence::attach(output, report);
                line(wire::succeeded("start", &output), false)
            }
            Err(error) => line(wire::failed("start", &error), true),
        }
    }

    fn stop(&mut self, (_, runtime_id): &(Map<String, Value>, String)) -> Reply {
        if let Err(error) = active(&mut self.runtime, runtime_id) {
            return line(wire::failed("stop", &error), true);
        }
        let Some(mut runtime) = self.runtime.take() else {
            return Reply::Nothing;
        };
        let ignore = runtime.settings.ignore_stop;
        self.exit_delay_ms = runtime.settings.exit_delay_ms;
        runtime.stop();
        self.failed = false;
        self.health.shutdown();
        if ignore {
            eprintln!("fabric.scripted: ignore_stop is set; not answering stop");
            return Reply::Hang;
        }
        line(wire::succeeded("stop", &Value::Null), true)
    }

    fn invoke(
        &mut self,
        operation: &str,
        (payload, runtime_id): (Map<String, Value>, String),
    ) -> Reply {
        let fail = |error: LifecycleError| line(wire::failed(operation, &error), false);
        let runtime = match active(&mut self.runtime, &runtime_id) {
            Ok(runtime) => runtime,
            Err(error) => return fail(error),
        };
        if self.failed {
            return fail(LifecycleError::new(
                "lifecycle_runtime_failed",
                "an earlier invocation failed inside the adapter; the runtime accepts no more",
            ));
        }
        let streaming = if operation == "invoke_openai_stream" {
            let context = payload
                .get("request")
                .and_then(|r| r.get("context"))
                .and_then(|c| c.get("scripted_stream"));
            let settings = match context {
                None => runtime.settings.stream.clone(),
                Some(value) => match runtime
                    .settings
                    .stream
                    .clone()
                    .merged(value, "request.context.scripted_stream")
                {
                    Ok(settings) => settings,
                    Err(invalid) => {
                        return fail(LifecycleError::new(
                            codes::LIFECYCLE_INVALID_REQUEST,
                            invalid.to_string(),
                        ));
                    }
                },
            };
            if !settings.implemented {
                return fail(LifecycleError::new(
                    codes::LIFECYCLE_OPENAI_STREAM_UNSUPPORTED,
                    "Adapter runtime does not implement OpenAI streaming",
                ));
            }
            match stream::sink(&payload) {
                Ok(sink) => Some((sink, settings)),
                Err(error) => return fail(error),
            }
        } else {
            None
        };
        let typed = (
            payload.get("request").map(AgentRunRequest::deserialize),
            payload
                .get("runtime_context")
                .map(RuntimeContext::deserialize),
        );
        let (Some(Ok(request)), Some(Ok(context))) = typed else {
            return fail(LifecycleError::new(
                codes::LIFECYCLE_INVALID_REQUEST,
                "invocation does not match the typed adapter contract",
            ));
        };
        if let Some(op) = request.context.get("scripted_kv") {
            let Some(service) = &runtime.service else {
                return fail(LifecycleError::new(
                    "scripted_service_invalid",
                    "scripted_kv needs a runtime started on a service",
                ));
            };
            return match service.apply(op) {
                Ok(value) => {
                    let result = serde_json::json!({
                        "status": "succeeded",
                        "output": {"response": value, "runtime_id": context.runtime_id},
                    });
                    line(wire::succeeded(operation, &result), false)
                }
                Err(error) => fail(error),
            };
        }
        let atof_settings = match request.context.get("scripted_atof") {
            None => runtime.settings.atof.clone(),
            Some(value) => match runtime
                .settings
                .atof
                .clone()
                .merged(value, "request.context.scripted_atof")
            {
                Ok(settings) => settings,
                Err(invalid) => {
                    return fail(LifecycleError::new(
                        codes::LIFECYCLE_INVALID_REQUEST,
                        invalid.to_string(),
                    ));
                }
            },
        };
        let emission = match &runtime.atof_sink {
            Some(sink) if atof_settings.enabled => {
                let ids = atof::Ids {
                    runtime_id: &context.runtime_id,
                    invocation_id: &context.invocation_id,
                    request_id: &context.request_id,
                };
                Some(atof::Emission::begin(
                    sink,
                    &atof_settings,
                    ids,
                    &request.input,
                ))
            }
            _ => None,
        };
        let step = runtime.invoke(&request, &context);
        let step = match (step, emission) {
            (Step::Answer(Ok(mut result)), Some(emission)) => {
                let response = result
                    .pointer("/output/response")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let succeeded = result.get("status").and_then(Value::as_str) == Some("succeeded");
                let report = emission.finish(succeeded, &response);
                if let Some(Value::Object(output)) = result.get_mut("output") {
                    output.insert("atof".into(), report);
                }
                Step::Answer(Ok(result))
            }
            (Step::Answer(Err(error)), Some(emission)) => {
                emission.finish(false, "");
                Step::Answer(Err(error))
            }
            (step, _) => step,
        };
        match step {
            Step::Answer(Ok(mut result)) => {
                if let Some((sink, settings)) = streaming {
                    let text = result
                        .pointer("/output/response")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    match stream::stream(&sink, &settings, &text) {
                        Ok(extra) => {
                            if let Some(Value::Object(output)) = result.get_mut("output") {
                                output.extend(extra);
                            }
                        }
                        Err(error) => return fail(error),
                    }
                }
                line(wire::succeeded(operation, &result), false)
            }
            Step::Answer(Err(error)) => {
                self.failed = true;
                self.health.update(|h| h.failed = true);
                fail(error)
            }
            Step::Crash => Reply::Crash,
            Step::Fault(fault, oversized_bytes) => fault_reply(fault, oversized_bytes),
        }
    }
}

/// The Relay config's `nemo-fabric-stream` sink when Relay is enabled: the config file is
/// `runtime_context.telemetry.config_path`, else `FABRIC_RELAY_CONFIG_PATH` (with
/// `FABRIC_RELAY_ENABLED=true`). No config file: no sink.
fn relay_stream_sink(payload: &Map<String, Value>) -> Result<Option<atof::Sink>, String> {
    let telemetry = payload
        .get("runtime_context")
        .and_then(|c| c.get("telemetry"))
        .filter(|t| t.is_object());
    let path = match telemetry {
        Some(telemetry) => {
            if telemetry.get("relay_enabled").and_then(Value::as_bool) != Some(true) {
                return Ok(None);
            }
            match telemetry.get("config_path").and_then(Value::as_str) {
                Some(path) => Some(path.to_owned()),
                None => std::env::var("FABRIC_RELAY_CONFIG_PATH").ok(),
            }
        }
        None if std::env::var("FABRIC_RELAY_ENABLED").as_deref() == Ok("true") => {
            std::env::var("FABRIC_RELAY_CONFIG_PATH").ok()
        }
        None => None,
    };
    match path.filter(|p| !p.is_empty()) {
        Some(path) => atof::sink_from_file(std::path::Path::new(&path)),
        None => Ok(None),
    }
}

/// Why a request was refused before reaching the runtime.
enum Rejected {
    /// A `lifecycle_*` failure (ends the host for `start` and `stop`).
    Lifecycle(LifecycleError),
    /// A request upstream fails through its catch-all path (`lifecycle_invalid_request`).
    Unexpected(LifecycleError),
}

/// Operation name, payload shape and runtime id, in upstream's order.
fn validate(
    operation: &str,
    payload: Option<Value>,
) -> Result<(Map<String, Value>, String), Rejected> {
    if !matches!(
        operation,
        "start" | "invoke" | "invoke_openai_stream" | "stop"
    ) {
        return Err(Rejected::Lifecycle(LifecycleError::new(
            "lifecycle_invalid_operation",
            "unknown lifecycle operation",
        )));
    }
    let Some(Value::Object(payload)) = payload else {
        return Err(Rejected::Lifecycle(LifecycleError::new(
            "lifecycle_invalid_payload",
            "payload must be a JSON object",
        )));
    };
    let id = if operation == "stop" {
        payload.get("runtime_id")
    } else {
        match payload.get("runtime_context") {
            Some(Value::Object(context)) => context.get("runtime_id"),
            // Upstream reads `(payload.get("runtime_context") or {}).get("runtime_id")`: a
            // falsy value means "no id"; any other non-object is an unexpected error.
            Some(other) if truthy(other) => {
                return Err(Rejected::Unexpected(LifecycleError::new(
                    codes::LIFECYCLE_INVALID_REQUEST,
                    "runtime_context must be a JSON object",
                )));
            }
            _ => None,
        }
    };
    match id {
        Some(Value::String(id)) if !id.is_empty() => {
            let id = id.clone();
            Ok((payload, id))
        }
        _ => Err(Rejected::Lifecycle(LifecycleError::new(
            "lifecycle_invalid_runtime",
            "payload has no runtime id",
        ))),
    }
}

/// Python truthiness of a JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The started runtime when `runtime_id` names it.
fn active<'a>(
    runtime: &'a mut Option<ScriptedRuntime>,
    runtime_id: &str,
) -> Result<&'a mut ScriptedRuntime, LifecycleError> {
    match runtime {
        None => Err(LifecycleError::new(
            "lifecycle_not_started",
            "no runtime has been started on this host",
        )),
        Some(rt) if rt.runtime_id != runtime_id => Err(LifecycleError::new(
            "lifecycle_runtime_mismatch",
            "runtime id does not match the runtime this host started",
        )),
        Some(rt) => Ok(rt),
    }
}

fn fault_reply(fault: ProtocolFault, oversized_bytes: u64) -> Reply {
    match fault {
        ProtocolFault::NonJson => line(
            "fabric.scripted protocol fault: this line is not JSON".into(),
            false,
        ),
        ProtocolFault::InvalidUtf8 => Reply::Line {
            text: b"{\"operation\": \"invoke\", \"outcome\": \"\xff\xfe\"}".to_vec(),
            exit: false,
        },
        ProtocolFault::WrongOperation => line(wire::succeeded("stop", &Value::Null), false),
        ProtocolFault::InvalidResult => line(
            wire::succeeded(
                "invoke",
                &serde_json::json!({"status": "bogus", "output": null}),
            ),
            false,
        ),
        ProtocolFault::Oversized => {
            let head = b"{\"operation\": \"invoke\", \"outcome\": {\"output\": {\"output\": \"";
            let tail = b"\", \"status\": \"succeeded\"}, \"status\": \"succeeded\"}}";
            let fill = usize::try_from(oversized_bytes)
                .unwrap_or(usize::MAX)
                .saturating_sub(head.len() + tail.len() + 1);
            let mut text = Vec::with_capacity(head.len() + fill + tail.len());
            text.extend_from_slice(head);
            text.resize(head.len() + fill, b'x');
            text.extend_from_slice(tail);
            Reply::Line { text, exit: false }
        }
        ProtocolFault::Silent => Reply::Nothing,
    }
}
