//! JSON Schemas (draft 2020-12) generated from the Rust types.
//!
//! `schemas/<name>.schema.json` in the repository is the output of [`all`], written by
//! `cargo xtask codegen`; xtask's drift test fails when the committed files are stale.

use schemars::JsonSchema;
use serde_json::Value;

use crate::{
    agent, batch, config, conformance, descriptor, environment_ops, error, gym, handles, health,
    model_call, options, plan, provider, request, result, service, stats, stream,
};

fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// Every generated schema as `(name, schema)`, for example `("sdk/agent", {...})`.
/// Names are stable; the file of `name` is `schemas/<name>.schema.json`.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        ("sdk/agent", schema::<config::FabricConfig>()),
        ("sdk/run-request", schema::<request::RunRequest>()),
        ("sdk/run-plan", schema::<plan::RunPlan>()),
        ("sdk/run-result", schema::<result::RunResult>()),
        ("sdk/fabric-event", schema::<result::FabricEvent>()),
        ("sdk/error-info", schema::<error::ErrorInfo>()),
        ("sdk/artifact-manifest", schema::<agent::ArtifactManifest>()),
        ("sdk/runtime-info", schema::<handles::RuntimeInfo>()),
        ("sdk/runtime-status", schema::<handles::RuntimeStatusInfo>()),
        ("sdk/prewarm-info", schema::<handles::PrewarmInfo>()),
        ("sdk/environment-info", schema::<handles::EnvironmentInfo>()),
        (
            "sdk/environment-reference",
            schema::<handles::EnvironmentReference>(),
        ),
        ("sdk/exec-request", schema::<environment_ops::ExecRequest>()),
        ("sdk/exec-result", schema::<provider::ExecOutput>()),
        (
            "sdk/file-write-request",
            schema::<environment_ops::FileWriteRequest>(),
        ),
        (
            "sdk/file-read-request",
            schema::<environment_ops::FileReadRequest>(),
        ),
        ("sdk/file-content", schema::<environment_ops::FileContent>()),
        (
            "sdk/file-list-request",
            schema::<environment_ops::FileListRequest>(),
        ),
        ("sdk/file-listing", schema::<environment_ops::FileListing>()),
        ("sdk/service-info", schema::<service::ServiceInfo>()),
        (
            "sdk/service-reference",
            schema::<service::ServiceReference>(),
        ),
        ("sdk/doctor-report", schema::<plan::DoctorReport>()),
        (
            "sdk/conformance-report",
            schema::<conformance::ConformanceReport>(),
        ),
        (
            "sdk/conformance-request",
            schema::<conformance::ConformanceRequest>(),
        ),
        (
            "sdk/adapter-capability-profile",
            schema::<plan::AdapterCapabilityProfile>(),
        ),
        (
            "sdk/invocation-handle",
            schema::<result::InvocationHandle>(),
        ),
        (
            "sdk/runtime-stop-result",
            schema::<result::RuntimeStopResult>(),
        ),
        (
            "sdk/runtime-resource-snapshot",
            schema::<stats::RuntimeResourceSnapshot>(),
        ),
        (
            "sdk/invocation-system-stats",
            schema::<stats::InvocationSystemStats>(),
        ),
        ("sdk/check-request", schema::<health::CheckRequest>()),
        ("sdk/check-report", schema::<health::CheckReport>()),
        ("sdk/call-options", schema::<options::CallOptions>()),
        (
            "sdk/model-call-record",
            schema::<model_call::ModelCallRecord>(),
        ),
        ("sdk/batch-settings", schema::<batch::BatchSettings>()),
        ("sdk/batch-line", schema::<batch::BatchLine>()),
        ("sdk/batch-summary", schema::<batch::BatchSummary>()),
        ("sdk/stream-info", schema::<stream::StreamInfo>()),
        ("sdk/openai-chunk", schema::<stream::OpenAiChunk>()),
        (
            "sdk/gym-observations-request",
            schema::<gym::GymObservationsRequest>(),
        ),
        ("sdk/gym-observations", schema::<gym::GymObservations>()),
        (
            "sdk/gym-join-model-calls-request",
            schema::<gym::GymJoinModelCallsRequest>(),
        ),
        (
            "sdk/gym-join-assistant-messages-request",
            schema::<gym::GymJoinAssistantMessagesRequest>(),
        ),
        (
            "sdk/gym-joined-assistant-messages",
            schema::<gym::GymJoinedAssistantMessages>(),
        ),
        (
            "sdk/gym-observation-bundle",
            schema::<gym::AgentObservationBundle>(),
        ),
        (
            "environment-provider/request",
            schema::<provider::ProviderRequest>(),
        ),
        (
            "environment-provider/response",
            schema::<provider::ProviderResponse>(),
        ),
        (
            "environment-provider/descriptor",
            schema::<provider::ProviderDescriptor>(),
        ),
        (
            "environment-provider/environment",
            schema::<provider::ProviderEnvironment>(),
        ),
        (
            "environment-provider/exec-output",
            schema::<provider::ExecOutput>(),
        ),
        (
            "environment-provider/artifacts-output",
            schema::<provider::ArtifactsOutput>(),
        ),
        (
            "adapter-contract/adapter-descriptor",
            schema::<descriptor::AdapterDescriptor>(),
        ),
        (
            "adapter-contract/target-descriptor",
            schema::<descriptor::TargetDescriptor>(),
        ),
        (
            "adapter-contract/agent-config",
            schema::<agent::AgentConfig>(),
        ),
        (
            "adapter-contract/runtime-context",
            schema::<agent::RuntimeContext>(),
        ),
        (
            "adapter-contract/agent-run-request",
            schema::<agent::AgentRunRequest>(),
        ),
        (
            "adapter-contract/agent-run-result",
            schema::<agent::AgentRunResult>(),
        ),
        (
            "adapter-contract/adapter-lifecycle-request",
            schema::<agent::LifecycleRequest>(),
        ),
        (
            "adapter-contract/adapter-lifecycle-response",
            schema::<agent::LifecycleResponse>(),
        ),
        (
            "adapter-contract/lifecycle-start-payload",
            schema::<agent::StartPayload>(),
        ),
        (
            "adapter-contract/lifecycle-invoke-payload",
            schema::<agent::InvokePayload>(),
        ),
        (
            "adapter-contract/lifecycle-stop-payload",
            schema::<agent::StopPayload>(),
        ),
        (
            "adapter-contract/openai-stream-sink",
            schema::<stream::OpenAiStreamSink>(),
        ),
        (
            "adapter-contract/openai-stream-record",
            schema::<stream::OpenAiStreamRecord>(),
        ),
    ]
}

/// The schema called `name`, if any.
pub fn get(name: &str) -> Option<Value> {
    all()
        .into_iter()
        .find(|(candidate, _)| *candidate == name)
        .map(|(_, schema)| schema)
}

/// The pretty JSON text of a schema file (ends with a newline).
pub fn to_file_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}
