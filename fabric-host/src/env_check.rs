//! Health checks routed through a provider environment (docs/health.md, "Checks in
//! provider environments").
//!
//! A server check stops at the environment's runtime server (`fabric-agent-ctl check`
//! without a target); a runtime check selects the owned runtime there by agent and runtime
//! id, and the server answers it with its local health path (the adapter host's
//! authenticated listener inside the environment). Both travel as a bridge `check` inside
//! `runtime_control` on an independent provider worker ([`crate::health_workers`]), so
//! they answer while an invocation holds the environment's own provider process. One
//! deadline, started before routing, bounds the worker, the server's check (it is sent the
//! budget left) and decoding; the server's report is validated and re-issued under the
//! caller's clock ([`Check::relayed`]).

use std::time::Instant;

use fabric_config::bridge::{Operation, Payload, Request, Response, Status};
use fabric_config::health::{CheckReport, CheckRequest, CheckScope, reason};
use fabric_health::client::Check;
use serde_json::{Map, Value};

use crate::environment::Environment;
use crate::health_workers::WorkerFailure;

/// Asks the runtime server of the provider environment `environment` for the report of
/// `request`. A runtime is selected there by its id and `agent` (default: the agent name
/// of the config the environment was prepared or attached with, for a runtime this process
/// did not start).
pub(crate) fn through_environment(
    check: &Check<'_>,
    environment: &Environment,
    agent: Option<&str>,
    request: &CheckRequest,
) -> CheckReport {
    let Some(workers) = environment.health_workers() else {
        return check.unavailable();
    };
    let deadline = Instant::now() + check.remaining();
    let agent = match request.scope {
        CheckScope::Server => None,
        _ => Some(agent.unwrap_or(workers.agent())),
    };
    let mut options = Map::new();
    if request.scope != CheckScope::Server {
        options.insert("level".into(), request.level.as_str().into());
    }
    // The server's check gets what is left of the one deadline.
    options.insert(
        "timeout_seconds".into(),
        check.remaining().as_secs_f64().max(0.001).into(),
    );
    let bridge = Request {
        operation: Operation::Check,
        agent: agent.map(str::to_owned),
        runtime_id: request.runtime_id.clone(),
        payload: Payload::Request(options),
    };
    let answer = match workers.control(bridge.to_value(), deadline) {
        Ok(response) => decode(response),
        Err(WorkerFailure::Deadline) => Err(reason::PROBE_TIMEOUT),
        Err(WorkerFailure::Closed | WorkerFailure::Unreachable) => Err(reason::RUNTIME_UNAVAILABLE),
    };
    check.relayed(answer)
}

/// The report in a bridge `check` response; a failed response (unknown runtime, wrong
/// agent, a server shutting down) is `runtime_unavailable`, anything malformed
/// `invalid_response`.
fn decode(response: Value) -> Result<CheckReport, &'static str> {
    let response: Response =
        serde_json::from_value(response).map_err(|_| reason::INVALID_RESPONSE)?;
    if response.operation != Operation::Check.as_str() {
        return Err(reason::INVALID_RESPONSE);
    }
    match response.status {
        Status::Succeeded => {
            serde_json::from_value(response.result).map_err(|_| reason::INVALID_RESPONSE)
        }
        _ => Err(reason::RUNTIME_UNAVAILABLE),
    }
}
