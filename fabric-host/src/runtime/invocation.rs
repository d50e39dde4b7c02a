//! One invocation's send and collect: the payload (`invoke`, or `invoke_openai_stream` with
//! a stream's sink), the invocation record, stats, and the normalized RunResult. Shared by
//! [`Runtime::invoke`] and the pull streams (`crate::stream`).

use fabric_config::codes;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fabric_config::agent::{
    AgentRunRequest, ArtifactManifest, ArtifactRef, InvokePayload, RunStatus,
};
use fabric_config::config::{Extensions, JsonObject};
use fabric_config::result::{FabricEvent, RunResult};
use fabric_config::stream::OpenAiStreamSink;
use fabric_config::{ErrorInfo, RunRequest, Stage};
use fabric_stats::{ArtifactLocation, InvocationIds};

use super::{DEADLINE_HEADROOM_MILLIS, Runtime};
use crate::collect::{self, InvocationDir};
use crate::error::HostError;
use crate::extensions::ExtensionSchemas;
use crate::host::DetachedCall;
use crate::hosts::Notify;
use crate::ids;
use crate::live;
use crate::result::{self, event, meta};
use crate::telemetry;

impl Runtime {
    /// Fresh ids of an invocation of `request`: `(invocation_id, request_id)` (the
    /// request's own non-empty `request_id` is kept).
    pub(crate) fn invocation_ids(request: &RunRequest) -> (String, String) {
        let request_id = request
            .request_id
            .clone()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| ids::new_id("request"));
        (ids::new_id("invocation"), request_id)
    }

    /// Checks and sends one invocation (`invoke`, or `invoke_openai_stream` with the
    /// stream's sink); the answer is collected by [`Runtime::finish_invocation`]. `notify`
    /// (plain `invoke` only; a stream brings its own) runs when the answer arrived.
    pub(crate) fn begin_invocation(
        &self,
        request: RunRequest,
        (invocation_id, request_id): (String, String),
        stream: Option<StreamSend<'_>>,
        notify: Option<Notify>,
    ) -> Result<Started, HostError> {
        let host = match &self.backend {
            super::Backend::Local(host) => host,
            super::Backend::Bridge(_) => {
                if stream.is_some() {
                    self.refuse_remote_stream()?;
                }
                return self.begin_bridge(request, (invocation_id, request_id), notify);
            }
        };
        // Upstream 0.5.0: `overrides` become the adapter's `request.extensions`, checked
        // against the descriptor's `run_request` schema first.
        let extensions: Extensions = request.overrides.unwrap_or_default();
        self.extensions.check_request(&extensions)?;
        self.environment.check_forwarded(Stage::Invoke)?;
        let started_millis = ids::now_millis();
        let timeout_millis = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let deadline = started_millis
            .saturating_add(timeout_millis)
            .saturating_sub(DEADLINE_HEADROOM_MILLIS);
        let mut payload = InvokePayload {
            runtime_context: self.context(
                invocation_id.clone(),
                request_id.clone(),
                Some(deadline),
            ),
            request: AgentRunRequest {
                input: request.input,
                relay_session_root: request.relay_session_root,
                context: request.context,
                extensions,
            },
        };
        let ids_meta = || -> JsonObject {
            meta([
                ("runtime_id", self.runtime_id.clone().into()),
                ("invocation_id", invocation_id.clone().into()),
                ("request_id", request_id.clone().into()),
            ])
        };
        let mut events: Vec<FabricEvent> = self.carried_events(&self.lock().carry);
        if let Some(capture) = &self.capture {
            capture.begin(&invocation_id);
        }
        events.push(event(
            "invocation_start",
            format!("invoking adapter host for {}", self.identity.harness),
            ids_meta(),
        ));
        // Invocation stats: before-observation right before sending, after-observation
        // right after the reply, on every path (samples survive a protocol failure).
        let stats = live::collector().begin(
            &self.system_stats,
            &self.stats_target(),
            &InvocationIds {
                invocation_id: invocation_id.clone(),
                request_id: request_id.clone(),
            },
            Some(self.stats_location(&invocation_id)),
        );
        if self.collector.enabled() {
            host.begin_stderr_capture(collect::LOG_CAP);
        }
        let timeout = self.timeout.saturating_add(self.options.invoke_margin);
        let call = match &stream {
            None => host.begin_notify("invoke", &payload, Stage::Invoke, timeout, notify),
            Some(send) => host.begin_notify(
                "invoke_openai_stream",
                &StreamPayload {
                    base: &payload,
                    stream: send.sink,
                },
                Stage::Invoke,
                timeout,
                Some(Arc::clone(&send.notify)),
            ),
        };
        let call = match call {
            Ok(call) => call,
            Err(error) => {
                drop(stats.map(fabric_stats::InvocationStats::finish));
                drop(host.take_stderr_capture());
                return Err(error);
            }
        };
        // While the host works: save the invocation record with environment values redacted.
        result::redact_context(&mut payload.runtime_context);
        // The stream token is a secret: the record names the sink without it.
        let redacted = stream.as_ref().map(|send| OpenAiStreamSink {
            token: "***".into(),
            ..send.sink.clone()
        });
        let bytes = match &redacted {
            None => serde_json::to_vec_pretty(&payload),
            Some(sink) => serde_json::to_vec_pretty(&StreamPayload {
                base: &payload,
                stream: sink,
            }),
        }
        .unwrap_or_default();
        let record = self
            .home
            .invocation_record(&invocation_id, "adapter-invocation.json", &bytes);
        Ok(Started {
            invocation_id,
            request_id,
            events,
            stats,
            record,
            call: Call::Host(call.detach()),
        })
    }

    /// As [`Runtime::begin_invocation`] for a plain `invoke` whose answer runs `answered`
    /// on the reactor thread.
    pub(crate) fn begin_invocation_notify(
        &self,
        request: RunRequest,
        ids: (String, String),
        answered: Notify,
    ) -> Result<Started, HostError> {
        self.begin_invocation(request, ids, None, Some(answered))
    }

    /// Waits for the answer of an invocation [`Runtime::begin_invocation`] sent and turns
    /// it into the RunResult.
    pub(crate) fn finish_invocation(&self, started: Started) -> Result<RunResult, HostError> {
        let Started {
            invocation_id,
            request_id,
            mut events,
            stats,
            record,
            call,
        } = started;
        let (host, call) = match (&self.backend, call) {
            (super::Backend::Local(host), Call::Host(call)) => (host, call),
            (_, Call::Bridge(answered)) => return self.finish_bridge(events, &answered),
            (super::Backend::Bridge(_), Call::Host(_)) => {
                return Err(HostError::EngineUnavailable {
                    stage: fabric_config::Stage::Invoke,
                    reason: "a host call on a provider-environment runtime".into(),
                });
            }
        };
        let ids_meta = || -> JsonObject {
            meta([
                ("runtime_id", self.runtime_id.clone().into()),
                ("invocation_id", invocation_id.clone().into()),
                ("request_id", request_id.clone().into()),
            ])
        };
        let output = host.finish(call);
        let finished = stats.map(fabric_stats::InvocationStats::finish);
        // Ended on every path, so a failed invocation leaves no capture running.
        let stderr_capture = host.take_stderr_capture();
        let output = output.map_err(|error| match &self.capture {
            Some(capture) => super::capture::failed(capture, error),
            None => error,
        })?;
        // A record that could not be written fails the invocation after the host answered
        // (the runtime stays usable).
        let (invocation_dir, record_path) = record?;
        let mut agent = result::decode_agent_result(output)?;
        let stop_reason = ExtensionSchemas::take_stop_reason(&mut agent)?;
        self.extensions.check_result(&agent)?;
        let at = InvocationDir {
            root: self.home.root(),
            dir: &invocation_dir,
            reference: format!(".fabric/{}/{invocation_id}", self.runtime_id),
            ids: ids_meta(),
        };
        let logs = self
            .collector
            .logs(&at, &agent.output, stderr_capture, &mut events);
        let mut status = agent.status;
        let mut error = agent.error.map(result::adapter_error);
        let usage = result::normalize_usage(agent.usage);
        let root = self.environment.artifact_root();
        // As upstream: the Relay config, logs, the adapter's artifacts, its Relay artifacts.
        let logs: Vec<ArtifactRef> = self
            .telemetry
            .manifest_artifacts()
            .into_iter()
            .chain(logs)
            .collect();
        let mut artifacts = match result::artifact_refs(agent.artifacts, root) {
            Ok(refs) => logs.into_iter().chain(refs).collect(),
            Err(rejection) => {
                let info = ErrorInfo::new(
                    Stage::Artifact,
                    codes::ARTIFACT_REJECTED,
                    format!(
                        "artifact `{}` rejected: {}",
                        rejection.name, rejection.reason
                    ),
                )
                .with_metadata("artifact", rejection.name.clone());
                let mut details = ids_meta();
                details.insert("code".into(), codes::ARTIFACT_REJECTED.into());
                details.insert("artifact".into(), rejection.name.into());
                events.push(event(
                    codes::ARTIFACT_REJECTED,
                    info.message.clone(),
                    details,
                ));
                if error.is_none() {
                    status = RunStatus::Failed;
                    error = Some(info);
                }
                logs
            }
        };
        let relay = telemetry::relay_artifacts(&agent.output, root, self.home.root(), &artifacts);
        // Relay entries are the adapter's files: they never make a temporary home the root.
        let relay_entries = artifacts.len()..artifacts.len() + relay.len();
        artifacts.extend(relay);
        // resource_snapshot: the after-observation when the process group was read, else
        // one independent reading now.
        let (system_stats, resource_snapshot) = match finished {
            Some(finished) => {
                artifacts.extend(finished.artifacts);
                let reused = finished
                    .stats
                    .collected_groups
                    .contains(&fabric_config::config::SystemStatsGroup::Process)
                    .then(|| finished.stats.after.snapshot.clone());
                let snapshot = match reused {
                    Some(snapshot) => snapshot,
                    None => self.resource_snapshot().ok(),
                };
                (Some(finished.stats), snapshot)
            }
            None => (None, self.resource_snapshot().ok()),
        };
        let manifest_root = root.map(Path::to_path_buf).or_else(|| {
            // Core files in a temporary home are listed relative to it.
            let core_files = artifacts.len() > relay_entries.len();
            core_files.then(|| self.home.root().to_path_buf())
        });
        let model_calls = self
            .capture
            .as_ref()
            .map(|capture| super::capture::finish(capture, &ids_meta(), &mut events));
        let mut end_meta = ids_meta();
        end_meta.insert("status".into(), status.as_str().into());
        events.push(event(
            "invocation_end",
            format!("adapter host completed with status {}", status.as_str()),
            end_meta,
        ));
        // After invocation_end, as upstream: git runs here, in the caller's thread.
        artifacts.extend(self.collector.workspace(&at, &mut events));
        if let Some(error) = &error {
            let mut details = ids_meta();
            details.insert("code".into(), error.code.clone().into());
            details.insert("stage".into(), error.stage.as_str().into());
            events.push(event(
                "invocation_failed",
                format!("invocation failed with {}", error.code),
                details,
            ));
        }
        let mut metadata = meta([
            ("adapter_runner", "persistent_local_host".into()),
            ("environment_provider", "local".into()),
            (
                "fabric_home",
                invocation_dir.to_string_lossy().into_owned().into(),
            ),
            (
                "fabric_invocation",
                record_path.to_string_lossy().into_owned().into(),
            ),
            ("host_command", self.host_command.clone().into()),
            ("host_pid", host.pid().into()),
        ]);
        if let Some(reason) = stop_reason {
            metadata.insert("stop_reason".into(), reason.into());
        }
        Ok(RunResult {
            agent_name: self.identity.agent_name.clone(),
            harness: self.identity.harness.clone(),
            adapter_kind: self.identity.adapter_kind,
            adapter_id: self.identity.adapter_id.clone(),
            runtime_id: self.runtime_id.clone(),
            invocation_id,
            request_id,
            status,
            output: agent.output,
            error,
            usage,
            artifacts: ArtifactManifest {
                root: manifest_root.map(|r| r.to_string_lossy().into_owned()),
                artifacts,
            },
            events,
            telemetry: self.telemetry.references(),
            metadata,
            system_stats,
            resource_snapshot,
            execution: self.execution.as_deref().cloned(),
            model_calls,
        })
    }

    /// Where the stats files of an invocation go: next to `adapter-invocation.json`.
    fn stats_location(&self, invocation_id: &str) -> ArtifactLocation {
        ArtifactLocation {
            root: self.home.root().to_path_buf(),
            dir: self.home.path().join(invocation_id),
            reference_dir: format!(".fabric/{}/{invocation_id}", self.runtime_id),
        }
    }
}

/// An invocation that was sent and whose answer is not collected yet.
#[derive(Debug)]
pub(crate) struct Started {
    pub(super) invocation_id: String,
    pub(super) request_id: String,
    pub(super) events: Vec<FabricEvent>,
    pub(super) stats: Option<fabric_stats::InvocationStats>,
    pub(super) record: Result<(PathBuf, PathBuf), HostError>,
    pub(super) call: Call,
}

/// How the answer of a started invocation arrives.
#[derive(Debug)]
pub(crate) enum Call {
    /// From the local host.
    Host(DetachedCall),
    /// From the bridge worker (a runtime in a provider environment).
    Bridge(super::bridge::BridgeAnswer),
}

/// What a streaming invocation adds to the request: the sink and the hook the reactor calls
/// when the host answered.
pub(crate) struct StreamSend<'a> {
    pub sink: &'a OpenAiStreamSink,
    pub notify: Notify,
}

impl std::fmt::Debug for StreamSend<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamSend").finish_non_exhaustive()
    }
}

/// The `invoke_openai_stream` payload: the invoke payload plus `stream`.
#[derive(serde::Serialize)]
struct StreamPayload<'a> {
    #[serde(flatten)]
    base: &'a InvokePayload,
    stream: &'a OpenAiStreamSink,
}
