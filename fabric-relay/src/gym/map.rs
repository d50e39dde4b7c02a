//! The mapping from RunResults and ATOF records to a Gym bundle and trajectory.

use fabric_config::codes;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use super::atof::{Records, Scope, seconds, unix_seconds};
use super::{captured, conversation};
use fabric_config::agent::RunStatus;
use fabric_config::gym::SANDBOX_OBSERVATION_METADATA_KEY;
use fabric_config::gym::{
    AgentInvocation, AgentObservationBundle, AgentObservationRecord, CompactionOutcome,
    ContextCompactionObservation, InvocationStatus, ModelCallRef, ModelServerRef, ObservationGap,
    SandboxObservation, SandboxOutcome, SandboxRole, TimingSource, ToolCallObservation,
    ToolCallStatus,
};
use fabric_config::gym::{
    DEFAULT_SOURCE, GymError, GymJoinModelCallsRequest, GymObservations, GymObservationsRequest,
    ModelCallKeys,
};
use fabric_config::gym::{
    TrajectoryModelCall, TrajectoryRecord, TrajectoryResponseMetadata, TrajectorySchemaVersion,
    TrajectoryToolCall, TrajectoryTurn,
};
use fabric_config::result::RunResult;
use fabric_config::stats::InvocationSystemStats;
use serde::Deserialize;

/// Gap codes the mapping emits (registered as reason codes).
pub const GAP_CODES: &[&str] = &[
    codes::CONVERSATION_UNAVAILABLE,
    codes::TOOL_CALLS_UNOBSERVED,
    codes::MODEL_CALLS_UNOBSERVED,
    codes::MODEL_CALL_IDS_UNREPORTED,
    codes::MODEL_CALL_ID_DUPLICATE,
    codes::TOOL_CALL_TIMING_INVALID,
    codes::STEP_COUNT_UNAVAILABLE,
    codes::TURN_TIMESTAMP_UNAVAILABLE,
    codes::SANDBOX_USAGE_UNAVAILABLE,
    codes::ATOF_RECORDS_UNCORRELATED,
];

/// The RunResult metadata key of the adapter-reported stop reason.
const STOP_REASON: &str = "stop_reason";

/// ATOF scope categories.
const AGENT: &str = "agent";
const TOOL: &str = "tool";
const LLM: &str = "llm";
/// The mark name (or category) of an explicit context compaction.
const COMPACTION: &str = "context_compaction";

const MIB: f64 = 1024.0 * 1024.0;

/// Maps one rollout's results (and ATOF records) to Gym's bundle and trajectory. Fails
/// with a [`GymError`] on blank ids or duplicate invocation ids; the output always passes
/// [`AgentObservationBundle::validate_identity`] and
/// [`TrajectoryRecord::validate_identity`].
pub fn observations(request: &GymObservationsRequest) -> Result<GymObservations, GymError> {
    for (path, value) in [
        ("task_id", &request.task_id),
        ("rollout_id", &request.rollout_id),
    ] {
        if value.trim().is_empty() {
            return Err(GymError::IdBlank { path: path.into() });
        }
    }
    let mut seen = HashSet::new();
    for (index, result) in request.results.iter().enumerate() {
        if !seen.insert(result.invocation_id.as_str()) {
            return Err(GymError::InvocationIdDuplicate {
                path: format!("results[{index}].invocation_id"),
            });
        }
    }
    let mut mapping = Mapping::new(request);
    mapping.run();
    let calls = std::mem::take(&mut mapping.captured);
    let mut out = mapping.finish();
    if !calls.is_empty() {
        // The captured calls join the bundle: each one is added to the invocation that
        // made it (its `client_session_id`), or resolves the references Relay reported.
        let joined = super::join_model_call_observations(&GymJoinModelCallsRequest {
            bundle: out.ng_agent_observations,
            calls,
        })?;
        out.trajectory.invocations = joined
            .records
            .iter()
            .filter_map(|record| match record {
                AgentObservationRecord::AgentInvocation(invocation) => Some(invocation.clone()),
                _ => None,
            })
            .collect();
        out.trajectory.gaps = joined.gaps.clone();
        out.ng_agent_observations = joined;
    }
    out.ng_agent_observations.validate_identity()?;
    out.trajectory.validate_identity()?;
    Ok(out)
}

/// Where a record belongs: the result and the (sub)invocation that owns it.
struct Owner {
    invocation_id: String,
    /// The nearest tool scope between the record and its invocation scope.
    tool_call_id: Option<String>,
}

struct Mapping<'a> {
    request: &'a GymObservationsRequest,
    records: Records,
    /// Root scope uuid → result index.
    roots: HashMap<String, usize>,
    invocations: Vec<AgentInvocation>,
    /// Invocation id → index in `invocations`.
    index: HashMap<String, usize>,
    tools: Vec<(ToolCallObservation, Option<Value>)>,
    compactions: Vec<ContextCompactionObservation>,
    model_calls: Vec<TrajectoryModelCall>,
    /// Observed LLM scopes per invocation.
    steps: HashMap<String, u64>,
    /// The join keys of the calls the results captured (`RunResult.model_calls`).
    captured: Vec<ModelCallKeys>,
    /// Results whose model calls were captured: no `model_calls_unobserved` gap.
    capturing: HashSet<String>,
    /// Results whose records could not be read, and why (the detail of their gap).
    unreadable: HashMap<String, String>,
    gaps: Vec<ObservationGap>,
}

fn gap(code: &str, invocation_id: Option<&str>, detail: Option<String>) -> ObservationGap {
    ObservationGap::new(code, invocation_id, detail)
}

fn invocation_status(status: RunStatus) -> InvocationStatus {
    match status {
        RunStatus::Succeeded => InvocationStatus::Completed,
        RunStatus::Failed => InvocationStatus::Failed,
        RunStatus::Cancelled => InvocationStatus::Incomplete,
    }
}

/// Whether an error code means the invocation ran out of time.
fn is_timeout(code: &str) -> bool {
    code == codes::TIMEOUT || code.ends_with("_timeout") || code.ends_with("_timed_out")
}

/// Milliseconds between the result's `invocation_start` and `invocation_end` events, else
/// the measured exchange time of its system stats.
fn result_duration_ms(result: &RunResult) -> Option<f64> {
    let at = |kind: &str| {
        result
            .events
            .iter()
            .find(|event| event.kind == kind)
            .map(|event| event.timestamp_millis)
    };
    match (at("invocation_start"), at("invocation_end")) {
        (Some(start), Some(end)) if end >= start => Some((end - start) as f64),
        _ => result
            .system_stats
            .as_ref()
            .map(|stats| stats.elapsed_seconds * 1000.0),
    }
}

fn reported_text(scope: &Scope, key: &str) -> Option<String> {
    scope
        .reported(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// The ids an adapter reported on an LLM scope: `model_call_id`, or `model_ref` (a Gym
/// `ModelServerRef` object) with `response_id`. Never derived from payloads.
fn reported_call(scope: &Scope) -> Option<ModelCallRef> {
    let reference = ModelCallRef {
        model_call_id: reported_text(scope, "model_call_id"),
        model_ref: scope
            .reported("model_ref")
            .and_then(|value| serde_json::from_value::<ModelServerRef>(value.clone()).ok()),
        response_id: reported_text(scope, "response_id"),
    };
    reference.has_join_key().then_some(reference)
}

impl<'a> Mapping<'a> {
    fn new(request: &'a GymObservationsRequest) -> Self {
        let records = Records::read(&request.atof);
        let mut roots = HashMap::new();
        for (index, result) in request.results.iter().enumerate() {
            if let Some(root) = records.root_of_request(&result.request_id) {
                roots.insert(root.uuid.clone(), index);
            }
        }
        Mapping {
            request,
            records,
            roots,
            invocations: Vec::new(),
            index: HashMap::new(),
            tools: Vec::new(),
            compactions: Vec::new(),
            model_calls: Vec::new(),
            steps: HashMap::new(),
            captured: Vec::new(),
            capturing: HashSet::new(),
            unreadable: HashMap::new(),
            gaps: Vec::new(),
        }
    }

    /// The owner of a record whose parent is `parent`: the nearest agent scope (a root is
    /// its result's invocation, any other agent scope a subagent), then the root above it.
    fn owner(&self, parent: Option<&str>) -> Option<Owner> {
        let mut invocation_id = None;
        let mut tool_call_id = None;
        for scope in self.records.ancestors(parent) {
            if let Some(&result) = self.roots.get(&scope.uuid) {
                let root_invocation = &self.request.results[result].invocation_id;
                return Some(Owner {
                    invocation_id: invocation_id.unwrap_or_else(|| root_invocation.clone()),
                    tool_call_id,
                });
            }
            if invocation_id.is_none() {
                if scope.is(AGENT) {
                    invocation_id = Some(scope.uuid.clone());
                } else if scope.is(TOOL) && tool_call_id.is_none() {
                    tool_call_id = Some(
                        reported_text(scope, "tool_call_id").unwrap_or_else(|| scope.uuid.clone()),
                    );
                }
            }
        }
        None
    }

    fn push_invocation(&mut self, invocation: AgentInvocation) {
        self.index
            .insert(invocation.invocation_id.clone(), self.invocations.len());
        self.invocations.push(invocation);
    }

    fn run(&mut self) {
        let mut conversations = HashMap::new();
        for result in &self.request.results {
            let records = match captured::records(result) {
                Ok(records) => records,
                Err(detail) => {
                    self.unreadable.insert(result.invocation_id.clone(), detail);
                    Vec::new()
                }
            };
            if !records.is_empty() {
                self.capturing.insert(result.invocation_id.clone());
                self.captured.extend(records.iter().map(captured::keys));
            }
            // Without a Relay trajectory, the conversation the captured calls state.
            let conversation = match conversation::conversation(result) {
                Err(None) if !records.is_empty() => captured::conversation(&records).map_err(Some),
                stated => stated,
            };
            let conversation = match conversation {
                Ok(items) => items,
                Err(detail) => {
                    conversations.insert(result.invocation_id.clone(), detail);
                    Vec::new()
                }
            };
            self.push_invocation(AgentInvocation {
                invocation_id: result.invocation_id.clone(),
                parent_invocation_id: None,
                spawned_by_tool_call_id: None,
                status: invocation_status(result.status),
                duration_ms: result_duration_ms(result),
                error_type: result.error.as_ref().map(|error| error.code.clone()),
                // Only the invocation whose adapter reported it (never its subagents).
                stop_reason: result
                    .metadata
                    .get(STOP_REASON)
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                model_calls: Vec::new(),
                conversation,
            });
        }
        let mut scopes: Vec<Scope> = self.records.scopes.values().cloned().collect();
        scopes.sort_by_key(|scope| scope.position);
        let mut uncorrelated = 0usize;
        // Subagents first, so that tool and model calls find their invocation.
        for scope in &scopes {
            if !scope.is(AGENT) || self.roots.contains_key(&scope.uuid) {
                continue;
            }
            match self.owner(scope.parent_uuid.as_deref()) {
                Some(owner) => self.subagent(scope, owner),
                None => uncorrelated += 1,
            }
        }
        for scope in &scopes {
            if self.roots.contains_key(&scope.uuid) || scope.is(AGENT) {
                continue;
            }
            let owner = self.owner(scope.parent_uuid.as_deref());
            match (owner, scope.category.as_deref()) {
                (None, _) => uncorrelated += 1,
                (Some(owner), Some(TOOL)) => self.tool(scope, owner),
                (Some(owner), Some(LLM)) => self.llm(scope, owner),
                (Some(_), _) => {}
            }
        }
        let marks = std::mem::take(&mut self.records.marks);
        for mark in &marks {
            let is_compaction = mark.name.as_deref() == Some(COMPACTION)
                || mark.category.as_deref() == Some(COMPACTION);
            match self.owner(mark.parent_uuid.as_deref()) {
                None => uncorrelated += 1,
                Some(owner) if is_compaction => {
                    self.compaction(&mark.data, mark.observed_at.map(seconds), owner);
                }
                Some(_) => {}
            }
        }
        if uncorrelated > 0 {
            self.gaps.push(gap(
                codes::ATOF_RECORDS_UNCORRELATED,
                None,
                Some(format!(
                    "{uncorrelated} ATOF scopes or marks belong to no result"
                )),
            ));
        }
        // Subagents (and results without a Relay trajectory) have no conversation.
        for invocation in &self.invocations {
            let detail = match conversations.get(&invocation.invocation_id) {
                Some(detail) => detail.clone(),
                None if invocation.parent_invocation_id.is_none() => continue,
                None => None,
            };
            self.gaps.push(gap(
                codes::CONVERSATION_UNAVAILABLE,
                Some(&invocation.invocation_id),
                detail,
            ));
        }
        for (index, result) in self.request.results.iter().enumerate() {
            if !self.roots.values().any(|&i| i == index) {
                let no_root = || Some("no ATOF root scope names this request".to_owned());
                self.gaps.push(gap(
                    codes::TOOL_CALLS_UNOBSERVED,
                    Some(&result.invocation_id),
                    no_root(),
                ));
                // Captured model calls were observed; records that could not be read say so.
                let unreadable = self.unreadable.remove(&result.invocation_id);
                if !self.capturing.contains(&result.invocation_id) {
                    self.gaps.push(gap(
                        codes::MODEL_CALLS_UNOBSERVED,
                        Some(&result.invocation_id),
                        unreadable.or_else(no_root),
                    ));
                }
            }
        }
    }

    fn subagent(&mut self, scope: &Scope, owner: Owner) {
        let status = match (scope.ended, scope.error) {
            (false, _) => InvocationStatus::Incomplete,
            (true, true) => InvocationStatus::Failed,
            (true, false) => InvocationStatus::Completed,
        };
        self.push_invocation(AgentInvocation {
            invocation_id: scope.uuid.clone(),
            parent_invocation_id: Some(owner.invocation_id),
            spawned_by_tool_call_id: owner.tool_call_id,
            status,
            duration_ms: scope.duration_ms(),
            error_type: None,
            stop_reason: None,
            model_calls: Vec::new(),
            conversation: Vec::new(),
        });
    }

    fn tool(&mut self, scope: &Scope, owner: Owner) {
        let tool_call_id =
            reported_text(scope, "tool_call_id").unwrap_or_else(|| scope.uuid.clone());
        let status = match (scope.ended, scope.error) {
            (false, _) => ToolCallStatus::Incomplete,
            (true, true) => ToolCallStatus::Failed,
            (true, false) => ToolCallStatus::Completed,
        };
        if let (Some(start), Some(end)) = (scope.started_at, scope.completed_at) {
            if end < start {
                self.gaps.push(gap(
                    codes::TOOL_CALL_TIMING_INVALID,
                    Some(&owner.invocation_id),
                    Some(format!("tool call {tool_call_id} ends before it starts")),
                ));
            }
        }
        let call = ToolCallObservation {
            invocation_id: owner.invocation_id,
            tool_call_id,
            sandbox_id: None,
            tool_name: scope.name.clone(),
            started_at: scope.started(),
            completed_at: scope.completed(),
            duration_ms: scope.duration_ms(),
            timing_source: Some(TimingSource::Harness),
            status,
            error_type: None,
        };
        self.tools.push((call, scope.end_data.clone()));
    }

    fn llm(&mut self, scope: &Scope, owner: Owner) {
        *self.steps.entry(owner.invocation_id.clone()).or_default() += 1;
        let reference = reported_call(scope);
        let mut call = TrajectoryModelCall {
            started_at: scope.started(),
            completed_at: scope.completed(),
            duration_ms: scope.duration_ms(),
            response_metadata: TrajectoryResponseMetadata {
                model: reported_text(scope, "model_name"),
                ..TrajectoryResponseMetadata::default()
            },
            ..TrajectoryModelCall::default()
        };
        match reference {
            Some(reference) => {
                let duplicate = reference.model_call_id.as_ref().is_some_and(|id| {
                    self.model_calls
                        .iter()
                        .any(|c| c.model_call_id.as_ref() == Some(id))
                });
                if duplicate {
                    self.gaps.push(gap(
                        codes::MODEL_CALL_ID_DUPLICATE,
                        Some(&owner.invocation_id),
                        reference.model_call_id.clone(),
                    ));
                    return;
                }
                call.model_call_id = reference.model_call_id.clone();
                call.response_metadata.response_id = reference.response_id.clone();
                call.response_metadata.model_ref = reference.model_ref.clone();
                if let Some(&index) = self.index.get(&owner.invocation_id) {
                    self.invocations[index].model_calls.push(reference);
                }
            }
            None => self.gaps.push(gap(
                codes::MODEL_CALL_IDS_UNREPORTED,
                Some(&owner.invocation_id),
                Some(format!("LLM scope {}", scope.uuid)),
            )),
        }
        self.model_calls.push(call);
    }

    fn compaction(&mut self, data: &Value, observed_at: Option<f64>, owner: Owner) {
        let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_owned);
        let count = |key: &str| data.get(key).and_then(Value::as_u64);
        let outcome = match data.get("outcome").and_then(Value::as_str) {
            Some("completed") => CompactionOutcome::Completed,
            Some("failed") => CompactionOutcome::Failed,
            Some("aborted") => CompactionOutcome::Aborted,
            _ => CompactionOutcome::Unknown,
        };
        self.compactions.push(ContextCompactionObservation {
            invocation_id: owner.invocation_id,
            observed_at,
            trigger: text("trigger"),
            tokens_before: count("tokens_before"),
            tokens_after: count("tokens_after"),
            outcome,
            summary: text("summary"),
            first_kept_item_id: text("first_kept_item_id"),
            before_model_call: None,
            model_calls: Vec::new(),
            after_model_call: None,
            source_message_ids: None,
            source_model_ref: None,
        });
    }

    /// One `role: "agent"` sandbox per runtime, from the last of its results with system
    /// stats: cumulative CPU and wall time of the process tree, the cgroup's measured
    /// `memory.peak`.
    fn sandboxes(&self) -> (Vec<SandboxObservation>, Vec<ObservationGap>) {
        let mut last: BTreeMap<&str, (usize, &RunResult, Option<&InvocationSystemStats>)> =
            BTreeMap::new();
        for (order, result) in self.request.results.iter().enumerate() {
            let entry = last
                .entry(result.runtime_id.as_str())
                .or_insert((order, result, None));
            entry.1 = result;
            if let Some(stats) = &result.system_stats {
                entry.2 = Some(stats);
            }
        }
        let mut ordered: Vec<_> = last.into_values().collect();
        ordered.sort_by_key(|(order, ..)| *order);
        let mut sandboxes = Vec::new();
        let mut gaps = Vec::new();
        for (_, result, stats) in ordered {
            let Some(stats) = stats else {
                gaps.push(gap(
                    codes::SANDBOX_USAGE_UNAVAILABLE,
                    Some(&result.invocation_id),
                    Some(format!(
                        "runtime {} reported no system_stats",
                        result.runtime_id
                    )),
                ));
                continue;
            };
            sandboxes.push(sandbox(result, stats));
        }
        // The environments' own observations (their release's cgroup readings): those the
        // results of `run()` carry, unless the caller gave that sandbox's, then the given.
        let given: HashSet<Option<&str>> = self
            .request
            .sandboxes
            .iter()
            .map(|given| given.sandbox_id.as_deref())
            .collect();
        for result in &self.request.results {
            let Some(value) = result.metadata.get(SANDBOX_OBSERVATION_METADATA_KEY) else {
                continue;
            };
            match SandboxObservation::deserialize(value) {
                Ok(carried) if !given.contains(&carried.sandbox_id.as_deref()) => {
                    sandboxes.push(carried);
                }
                Ok(_) => {}
                Err(error) => gaps.push(gap(
                    codes::SANDBOX_USAGE_UNAVAILABLE,
                    Some(&result.invocation_id),
                    Some(format!(
                        "metadata.{SANDBOX_OBSERVATION_METADATA_KEY} is not a sandbox observation: {error}"
                    )),
                )),
            }
        }
        sandboxes.extend(self.request.sandboxes.iter().cloned());
        (sandboxes, gaps)
    }

    fn turns(&mut self) -> Vec<TrajectoryTurn> {
        let mut turns = Vec::new();
        for (index, result) in self.request.results.iter().enumerate() {
            let root = self
                .roots
                .iter()
                .find(|(_, i)| **i == index)
                .and_then(|(uuid, _)| self.records.scopes.get(uuid));
            let event_time = result
                .events
                .iter()
                .find(|event| event.kind == "invocation_start")
                .map(|event| event.timestamp_millis as f64 / 1000.0);
            let timestamp = event_time.or(root.and_then(Scope::started));
            if timestamp.is_none() {
                self.gaps.push(gap(
                    codes::TURN_TIMESTAMP_UNAVAILABLE,
                    Some(&result.invocation_id),
                    None,
                ));
            }
            let step_count = match root {
                Some(_) => self.steps.get(&result.invocation_id).copied().unwrap_or(0),
                None => {
                    self.gaps.push(gap(
                        codes::STEP_COUNT_UNAVAILABLE,
                        Some(&result.invocation_id),
                        None,
                    ));
                    0
                }
            };
            let model_calls = self
                .index
                .get(&result.invocation_id)
                .map(|&i| self.invocations[i].model_calls.clone())
                .unwrap_or_default();
            turns.push(TrajectoryTurn {
                invocation_id: result.invocation_id.clone(),
                task_id: self.request.task_id.clone(),
                rollout_id: self.request.rollout_id.clone(),
                turn_no: 1,
                timestamp: timestamp.unwrap_or(0.0),
                question: None,
                answer: Some(result.output.clone()).filter(|output| !output.is_null()),
                reasoning_content: None,
                resolved: None,
                step_count,
                model_calls,
                source_message_id: None,
                source_model_ref: None,
            });
        }
        turns
    }

    fn finish(mut self) -> GymObservations {
        let (sandboxes, sandbox_gaps) = self.sandboxes();
        self.gaps.extend(sandbox_gaps);
        let turns = self.turns();
        let mut records: Vec<AgentObservationRecord> = self
            .invocations
            .iter()
            .cloned()
            .map(AgentObservationRecord::AgentInvocation)
            .collect();
        records.extend(
            self.tools
                .iter()
                .map(|(call, _)| AgentObservationRecord::ToolCall(call.clone())),
        );
        records.extend(
            self.compactions
                .iter()
                .cloned()
                .map(AgentObservationRecord::ContextCompaction),
        );
        records.extend(sandboxes.into_iter().map(AgentObservationRecord::Sandbox));
        let bundle = AgentObservationBundle {
            source: self
                .request
                .source
                .clone()
                .unwrap_or_else(|| DEFAULT_SOURCE.to_owned()),
            records,
            gaps: self.gaps.clone(),
        };
        let trajectory = TrajectoryRecord {
            schema_version: TrajectorySchemaVersion::V1,
            task_id: self.request.task_id.clone(),
            rollout_id: self.request.rollout_id.clone(),
            invocations: self.invocations,
            turns,
            model_calls: self.model_calls,
            tool_calls: self
                .tools
                .into_iter()
                .map(|(call, output)| TrajectoryToolCall::new(call, output))
                .collect(),
            gaps: self.gaps,
        };
        GymObservations {
            ng_agent_observations: bundle,
            trajectory,
        }
    }
}

/// The agent sandbox of `result`'s runtime from its system stats.
fn sandbox(result: &RunResult, stats: &InvocationSystemStats) -> SandboxObservation {
    let after = stats.after.snapshot.as_ref();
    let cgroup_after = stats
        .cgroup
        .as_ref()
        .and_then(|cgroup| cgroup.after.snapshot.as_ref());
    let peak = cgroup_after.and_then(|snapshot| snapshot.memory_peak_bytes.get().copied());
    let oom = stats
        .cgroup
        .as_ref()
        .and_then(|cgroup| cgroup.deltas.memory_oom_kills.get().copied())
        .is_some_and(|kills| kills > 0);
    let code = result.error.as_ref().map(|error| error.code.clone());
    let outcome = match result.status {
        RunStatus::Succeeded => SandboxOutcome::Completed,
        RunStatus::Cancelled => SandboxOutcome::Cancelled,
        RunStatus::Failed if code.as_deref().is_some_and(is_timeout) => SandboxOutcome::Timeout,
        RunStatus::Failed if oom => SandboxOutcome::Oom,
        RunStatus::Failed => SandboxOutcome::Failed,
    };
    let wall = after.and_then(|snapshot| {
        let start = unix_seconds(&snapshot.started_at)?;
        let end = unix_seconds(&snapshot.observed_at)?;
        (end >= start).then_some(end - start)
    });
    let mut source = Vec::new();
    if after.is_some() {
        source.push("fabric.system_stats.process_tree");
    }
    if peak.is_some() {
        source.push("cgroup.memory.peak");
    }
    SandboxObservation {
        role: SandboxRole::Agent,
        provider: None,
        sandbox_id: Some(result.runtime_id.clone()),
        outcome,
        exit_code: None,
        wall_time_s: wall,
        cpu_time_s: after
            .map(|snapshot| snapshot.cpu_time_seconds)
            .filter(|cpu| *cpu >= 0.0),
        peak_memory_mib: peak.map(|bytes| bytes as f64 / MIB),
        resource_usage_source: (!source.is_empty()).then(|| source.join("+")),
        error_type: code,
    }
}
