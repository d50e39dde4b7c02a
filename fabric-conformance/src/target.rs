//! The target checks of the `lifecycle` group, caused through the stub model server: with
//! [`crate::CheckOptions::model_stub`], the kit points the config's models at a stub that
//! answers the script, and runs two more runtimes against stubs that answer an HTTP 401
//! (`lifecycle.target_failure`: a status model clients do not retry) and a body that is no
//! model answer (`lifecycle.malformed_target_output`). The adapter must report `failed` with
//! an error (not succeed, crash or break the protocol). Without the stub, when the target
//! never calls the model, or when the harness retries the bad answer until the invocation
//! times out (its retry policy, not the adapter, decides), the check is skipped with that
//! reason: the kit cannot cause the failure.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use fabric_config::result::RunStatus;
use fabric_config::{ErrorInfo, FabricConfig, RunRequest, codes};
use serde_json::json;

use crate::Context;
use crate::error::ConformanceError;
use crate::recorder::{Outcome, Recorder};
use crate::stub_model::{ErrorReply, RequestLog, Script, ScriptReply, StubModel};

/// The message of the scripted target failure.
const FAILURE_MESSAGE: &str = "conformance: the model refuses this request";
/// The invocation deadline of a target check (a harness that retries a bad answer with
/// backoff is cut short).
const TARGET_TIMEOUT: Duration = Duration::from_secs(20);
/// Codes of an invocation the host did not answer as the contract asks (not a reported
/// failure).
const BROKEN: [&str; 4] = [
    codes::PROTOCOL_ERROR,
    codes::HOST_CRASHED,
    codes::HOST_IO,
    codes::TIMEOUT,
];
/// The body of the scripted malformed answer.
const MALFORMED_BODY: &str = "conformance: this is not a model answer";

/// The stub model servers of one check run (closed when dropped).
#[derive(Debug)]
pub(crate) struct Stubs {
    _main: StubModel,
    failing: StubModel,
    malformed: StubModel,
}

fn serve(script: Script) -> Result<StubModel, ConformanceError> {
    let listen = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    StubModel::start(listen, script, RequestLog::Off)
        .map_err(|detail| ConformanceError::ModelStubStart { detail })
}

fn one_reply(reply: ScriptReply) -> Script {
    Script {
        replies: vec![reply],
    }
}

/// Starts the stubs and points every model of `config` at the one answering `script`.
pub(crate) fn prepare(
    script: &Script,
    config: &mut FabricConfig,
) -> Result<Stubs, ConformanceError> {
    if config.models.is_empty() {
        return Err(ConformanceError::ModelStubWithoutModels);
    }
    let stubs = Stubs {
        _main: serve(script.clone())?,
        failing: serve(one_reply(ScriptReply {
            error: Some(ErrorReply {
                status: 401,
                message: FAILURE_MESSAGE.to_owned(),
            }),
            ..ScriptReply::default()
        }))?,
        malformed: serve(one_reply(ScriptReply {
            raw: Some(MALFORMED_BODY.to_owned()),
            ..ScriptReply::default()
        }))?,
    };
    point(config, &stubs._main);
    Ok(stubs)
}

fn point(config: &mut FabricConfig, stub: &StubModel) {
    for model in config.models.values_mut() {
        model.base_url = Some(stub.base_url());
    }
}

/// Runs `lifecycle.target_failure` and `lifecycle.malformed_target_output`.
pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("lifecycle") {
        return;
    }
    let checks = [
        ("lifecycle.target_failure", "an HTTP 401 from the model"),
        (
            "lifecycle.malformed_target_output",
            "a model answer that is not JSON",
        ),
    ];
    for (index, (id, cause)) in checks.into_iter().enumerate() {
        recorder.check(id, || match &context.stubs {
            None => Outcome::Skipped(
                "the kit causes a target failure only through the stub model server \
                 (--model-stub, for a config with models)"
                    .to_owned(),
            ),
            Some(stubs) => {
                let stub = if index == 0 {
                    &stubs.failing
                } else {
                    &stubs.malformed
                };
                failing_target(context, stub, cause)
            }
        });
    }
}

/// One runtime whose model answers badly: its invocation must end `failed` with an error.
fn failing_target(context: &Context, stub: &StubModel, cause: &str) -> Outcome {
    let mut config = context.config.clone();
    point(&mut config, stub);
    let limit = TARGET_TIMEOUT.as_secs_f64();
    config.runtime.timeout_seconds = Some(
        config
            .runtime
            .timeout_seconds
            .map_or(limit, |seconds| seconds.min(limit)),
    );
    let runtime = match context.fabric.start_runtime(&config, &context.run) {
        Ok(runtime) => runtime,
        Err(error) => {
            return Outcome::Failed(
                "a runtime did not start".to_owned(),
                json!({"error": ErrorInfo::from(error)}),
            );
        }
    };
    let before = stub.requests();
    let invoked = runtime.invoke(RunRequest::new("conformance: a target failure".to_owned()));
    let calls = stub.requests() - before;
    let stopped = runtime.stop();
    let timed_out = match &invoked {
        Err(error) => ErrorInfo::from(error.clone()).code == codes::TIMEOUT,
        Ok(result) => result
            .error
            .as_ref()
            .is_some_and(|e| e.code == codes::TIMEOUT),
    };
    let outcome = match invoked {
        _ if timed_out && calls > 1 => Outcome::Skipped(format!(
            "the harness retried {cause} ({calls} model calls) until the invocation timed out \
             after {} s: its retry policy decides, the kit cannot make this target fail",
            TARGET_TIMEOUT.as_secs()
        )),
        Err(error) => {
            let info = ErrorInfo::from(error);
            if BROKEN.contains(&info.code.as_str()) {
                Outcome::Failed(
                    format!(
                        "with {cause}, the host broke ({}) instead of reporting the failure",
                        info.code
                    ),
                    json!({"error": info, "model_calls": calls}),
                )
            } else {
                Outcome::Passed(format!(
                    "with {cause}, the adapter answered the invocation with an error ({})",
                    info.code
                ))
            }
        }
        Ok(_) if calls == 0 => Outcome::Skipped(
            "the target never called the model, so the kit cannot make it fail".to_owned(),
        ),
        Ok(result) if result.status == RunStatus::Failed && result.error.is_some() => {
            Outcome::Passed(format!(
                "with {cause}, the adapter reported `failed` ({})",
                result.error.as_ref().map_or("", |e| e.code.as_str())
            ))
        }
        Ok(result) => Outcome::Failed(
            format!(
                "with {cause}, the adapter reported `{}` {} instead of `failed` with an error",
                serde_json::to_value(result.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                if result.error.is_some() {
                    "with an error"
                } else {
                    "without an error"
                }
            ),
            json!({"status": result.status, "output": result.output, "model_calls": calls}),
        ),
    };
    if let Some(error) = stopped.error
        && matches!(outcome, Outcome::Passed(_))
    {
        return Outcome::Failed(
            "the runtime's stop after the target failure reported a problem".to_owned(),
            json!({"error": error}),
        );
    }
    outcome
}
