//! Relay ATOF streaming of a runtime (`CallOptions.streaming`): where the adapter's Relay
//! publishes (the embedded collector, or an external one named by the config's
//! `nemo-fabric-stream` sink) and the plan the runtime starts with.
//!
//! Embedded (default): a [`Collector`] on 127.0.0.1 with a fresh token; the plan's config
//! gets `{type: "stream", name: "nemo-fabric-stream", url: "<base>/v1/atof", transport:
//! "ndjson", header_env: {"Authorization": STREAM_AUTH_ENV}}` as its only stream sink (as
//! upstream's `_with_stream_sink`) and the host's environment gets `STREAM_AUTH_ENV =
//! "Bearer <token>"` — the token is never written into relay-config.json, the plan or a
//! record. External (`launch_collector: false`): the sink is checked
//! ([`check_external_collector`]) and its URL becomes `<base>/v1/atof` in the runtime's
//! copy; the core registers and reads over HTTP with the sink's `headers` and `header_env`
//! values.

use fabric_config::codes;
use std::sync::Arc;
use std::time::Duration;

use fabric_config::error::{ConfigError, ConfigFinding, ConfigRule};
use fabric_config::plan::RunPlan;
use fabric_config::relay_collector::{STREAM_SINK_NAME, check_external_collector};
use fabric_config::{FabricConfig, Stage};
use serde_json::{Value, json};

use crate::collector::{Collector, CollectorOptions};
use crate::error::RelayError;
use crate::external::ExternalCollector;

/// The host variable carrying the embedded collector's `Authorization` header value.
pub const STREAM_AUTH_ENV: &str = "FABRIC_RELAY_STREAM_AUTHORIZATION";
/// Default of `completion_wait_timeout`.
pub const COMPLETION_WAIT_DEFAULT: Duration = Duration::from_secs(1);

/// Streaming options of a runtime start (from `CallOptions`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelayStreaming {
    /// Run the embedded collector (default) or use the config's external one.
    pub launch_collector: bool,
    /// `completion_wait_timeout`: upstream's collector waits this long for a late Pi
    /// `agent_settled` marker (its Pi turn-window correlation). The core's collector has no
    /// Pi correlation mode (a Pi registration is refused with 409), so the value is
    /// validated and kept for compatibility only.
    pub completion_wait: Duration,
    /// The embedded collector's memory budget (`CollectorOptions::memory_budget`).
    pub memory_budget: usize,
}

impl Default for RelayStreaming {
    fn default() -> Self {
        RelayStreaming {
            launch_collector: true,
            completion_wait: COMPLETION_WAIT_DEFAULT,
            memory_budget: crate::collector::MEMORY_BUDGET,
        }
    }
}

/// Where a streaming runtime's records go.
#[derive(Debug)]
pub enum StreamCollector {
    /// The embedded collector on the reactor.
    Embedded(Arc<Collector>),
    /// The config's external collector, over HTTP.
    External(ExternalCollector),
}

/// A streaming runtime's collector and what its host needs.
#[derive(Debug)]
pub struct RelayStream {
    /// Where the records go.
    pub collector: StreamCollector,
    /// Variables only the host gets (never the context, the plan or a record).
    pub host_env: Vec<(String, String)>,
    /// Values redacted from the host's stderr log (the token, alone and as a header).
    pub secrets: Vec<String>,
}

fn config_error(rule: ConfigRule, path: &str) -> RelayError {
    RelayError::from(ConfigError::Invalid(ConfigFinding {
        rule,
        path: path.to_owned(),
        detail: None,
    }))
}

/// Prepares streaming for `plan`: the collector, and the plan the runtime starts with.
/// Errors: `streaming_requires_relay` (config, `options.streaming`), the external sink's
/// `relay_stream_*` findings (config), `collector_start_failed`.
pub fn prepare(
    plan: &RunPlan,
    streaming: &RelayStreaming,
) -> Result<(RelayStream, RunPlan), RelayError> {
    let relay = plan
        .telemetry_plan
        .as_ref()
        .is_some_and(|t| t.relay_enabled);
    if !relay {
        return Err(config_error(
            ConfigRule::StreamingWithoutRelay,
            "options.streaming",
        ));
    }
    if streaming.launch_collector {
        let collector = Collector::start(&CollectorOptions {
            memory_budget: streaming.memory_budget,
            ..CollectorOptions::loopback()
        })?;
        let sink = json!({
            "type": "stream",
            "name": STREAM_SINK_NAME,
            "url": format!("{}/v1/atof", collector.base_url()),
            "transport": "ndjson",
            "header_env": {"Authorization": STREAM_AUTH_ENV},
        });
        let patched = with_stream_sink(plan, sink)?;
        let host_env = vec![(
            STREAM_AUTH_ENV.to_owned(),
            format!("Bearer {}", collector.token()),
        )];
        let secrets = vec![host_env[0].1.clone(), collector.token().to_owned()];
        let stream = RelayStream {
            collector: StreamCollector::Embedded(Arc::new(collector)),
            host_env,
            secrets,
        };
        return Ok((stream, patched));
    }
    let findings = check_external_collector(&plan.config, |name| std::env::var(name).ok());
    if let Some(finding) = findings.into_iter().next() {
        return Err(RelayError::from(ConfigError::Invalid(finding)));
    }
    let external = ExternalCollector::from_config(&plan.config)?;
    let mut sink = external.sink.clone();
    sink["url"] = json!(format!("{}/v1/atof", external.base_url));
    let patched = with_stream_sink(plan, sink)?;
    let stream = RelayStream {
        collector: StreamCollector::External(external),
        host_env: Vec::new(),
        secrets: Vec::new(),
    };
    Ok((stream, patched))
}

/// `plan` with `sink` as the config's only `nemo-fabric-stream` sink (ATOF enabled; other
/// sinks kept when ATOF was enabled) and the Relay plugin document rebuilt from it.
fn with_stream_sink(plan: &RunPlan, sink: Value) -> Result<RunPlan, RelayError> {
    let mut config = serde_json::to_value(&plan.config).unwrap_or_else(|_| json!({}));
    let relay = config
        .as_object_mut()
        .map(|c| c.entry("relay").or_insert_with(|| json!({})));
    let Some(relay) = relay.and_then(Value::as_object_mut) else {
        return Err(start_failed("the config's relay block is not an object"));
    };
    let observability = relay
        .entry("observability")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    let Some(observability) = observability else {
        return Err(start_failed("relay.observability is not an object"));
    };
    let atof = observability.entry("atof").or_insert_with(|| json!({}));
    let enabled = atof.get("enabled").and_then(Value::as_bool) == Some(true);
    let mut sinks: Vec<Value> = if enabled {
        atof.get("sinks")
            .and_then(Value::as_array)
            .map(|sinks| {
                sinks
                    .iter()
                    .filter(|s| s.get("name").and_then(Value::as_str) != Some(STREAM_SINK_NAME))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    } else {
        *atof = json!({"enabled": true});
        Vec::new()
    };
    sinks.push(sink);
    atof["sinks"] = Value::Array(sinks);
    let config = FabricConfig::from_json_str(&config.to_string()).map_err(|error| {
        start_failed(&format!("the streaming Relay config is invalid: {error}"))
    })?;
    let mut patched = plan.clone();
    if let Some(telemetry) = patched.telemetry_plan.as_mut() {
        telemetry.relay_config = Some(fabric_plan::relay_config(&config));
    }
    patched.config = config;
    Ok(patched)
}

fn start_failed(message: &str) -> RelayError {
    RelayError::Collector {
        stage: Stage::Start,
        code: codes::COLLECTOR_START_FAILED,
        message: message.to_owned(),
    }
}
