//! The `relay` group (when the adapter claims Relay telemetry): one invocation streamed
//! with the embedded collector; its ATOF records must correlate to the invocation (the
//! root scope's `metadata.nemo_fabric_request_id` is the request id).

use std::sync::Arc;
use std::time::Duration;

use fabric_config::result::RunStatus;
use fabric_config::{ErrorInfo, FabricConfig, RunRequest};
use fabric_host::{PullStream, RelayStreaming, StreamNext};
use serde_json::{Value, json};

use crate::Context;
use crate::recorder::{Outcome, Recorder};

/// The longest wait for one record.
const RECORD_WAIT: Duration = Duration::from_secs(30);

pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("relay") {
        return;
    }
    let descriptor = &context.subject.loaded.descriptor;
    if !descriptor.telemetry.providers.contains_key("relay") {
        recorder.push(
            "relay.correlation",
            Outcome::Skipped("Relay telemetry not claimed".to_owned()),
            0,
        );
        return;
    }
    recorder.check("relay.correlation", || correlation(context));
}

/// `config` with Relay telemetry and ATOF output switched on, and an artifact root (where
/// the core writes the runtime's Relay config) at `artifacts` (each kept as it is when the
/// config already sets it).
fn with_relay(config: &FabricConfig, artifacts: &std::path::Path) -> Option<FabricConfig> {
    let mut value = serde_json::to_value(config).ok()?;
    let object = value.as_object_mut()?;
    let environment = object.entry("environment").or_insert_with(|| json!({}));
    environment
        .as_object_mut()?
        .entry("artifacts")
        .or_insert_with(|| json!(artifacts));
    let telemetry = object.entry("telemetry").or_insert_with(|| json!({}));
    let providers = telemetry
        .as_object_mut()?
        .entry("providers")
        .or_insert_with(|| json!({}));
    providers
        .as_object_mut()?
        .entry("relay")
        .or_insert_with(|| json!({}));
    object.entry("relay").or_insert_with(|| {
        // The stream sink the core points at its embedded collector (docs/telemetry.md).
        json!({"observability": {"atof": {"enabled": true, "sinks": [
            {"type": "stream", "name": "nemo-fabric-stream", "url": "http://127.0.0.1:1",
             "transport": "ndjson"}
        ]}}})
    });
    FabricConfig::parse(&value.to_string()).ok()
}

fn correlation(context: &Context) -> Outcome {
    let mut options = context.run.clone();
    options.runtime.relay_streaming = Some(RelayStreaming::default());
    // The kit's own artifact root, removed afterwards.
    let artifacts = std::env::temp_dir().join(format!(
        "fabric-conformance-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let outcome = with_relay(&context.config, &artifacts)
        .map(|config| correlate(context, &config, &options))
        .unwrap_or_else(|| Outcome::Skipped("the config does not encode".to_owned()));
    let _ = std::fs::remove_dir_all(&artifacts);
    outcome
}

fn correlate(
    context: &Context,
    config: &FabricConfig,
    options: &fabric_host::RunOptions,
) -> Outcome {
    let runtime = match context.fabric.start_runtime(config, options) {
        Ok(runtime) => Arc::new(runtime),
        Err(error) => {
            return Outcome::Skipped(format!(
                "a runtime with Relay streaming did not start ({})",
                ErrorInfo::from(error).code
            ));
        }
    };
    let outcome = (|| {
        let stream =
            runtime.invoke_stream(RunRequest::new("conformance relay check".to_owned()))?;
        let mut records: Vec<Value> = Vec::new();
        // A timeout ends the reading too: the records that came are judged.
        while let StreamNext::Item(item) = stream.next(Some(RECORD_WAIT))? {
            records.push(serde_json::from_str(&item).unwrap_or(Value::String(item)));
        }
        stream.close();
        Ok::<_, fabric_host::HostError>((records, stream.result()))
    })();
    let _ = runtime.stop();
    let (records, result) = match outcome {
        Ok(found) => found,
        Err(error) => {
            return Outcome::Failed(
                "the Relay stream failed".to_owned(),
                json!({"error": ErrorInfo::from(error)}),
            );
        }
    };
    let result = match result {
        Ok(result) if result.status == RunStatus::Succeeded => result,
        Ok(result) => {
            return Outcome::Skipped(format!(
                "the streamed invocation did not succeed ({})",
                result.error.map_or_else(String::new, |e| e.code)
            ));
        }
        Err(error) => {
            return Outcome::Failed(
                "the Relay stream's result failed".to_owned(),
                json!({"error": ErrorInfo::from(error)}),
            );
        }
    };
    let ids: Vec<&str> = records
        .iter()
        .filter_map(|r| r.pointer("/metadata/nemo_fabric_request_id")?.as_str())
        .collect();
    let matching = ids.iter().filter(|id| **id == result.request_id).count();
    if matching > 0 && matching == ids.len() {
        Outcome::Passed(format!(
            "{} records; the root scope names request {}",
            records.len(),
            result.request_id
        ))
    } else {
        Outcome::Failed(
            "no ATOF record correlates to the invocation".to_owned(),
            json!({"request_id": result.request_id, "records": records.len(), "request_ids_seen": ids}),
        )
    }
}
