//! The JSON answers of the API (docs/view.md, "API"): the contract with the page. Paths and
//! shapes stay; fields may be added.

use std::collections::BTreeMap;

use fabric_config::ErrorInfo;
use serde::Serialize;
use serde_json::Value;

/// `GET /api/index`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexAnswer {
    /// Bumped whenever the index changed (a new file, new batch lines).
    pub generation: u64,
    /// The paths `fabric view` was given.
    pub roots: Vec<String>,
    pub batches: Vec<BatchEntry>,
    pub runs: Vec<RunEntry>,
    pub trajectories: Vec<TrajectoryEntry>,
    pub gym_exports: Vec<GymExportEntry>,
    /// Files that looked like ours but could not be read, and why.
    pub problems: Vec<Problem>,
    /// How many of each list there are: a list holds at most its first 5,000 (by path).
    pub totals: Totals,
}

/// The full length of each list of the index.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub batches: u64,
    pub runs: u64,
    pub trajectories: u64,
    pub gym_exports: u64,
    pub problems: u64,
}

/// Item counts of a batch by verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    pub succeeded: u64,
    pub failed: u64,
    pub errored: u64,
    pub cancelled: u64,
}

/// A batch output (`RESULTS.jsonl`) in the index.
#[derive(Debug, Clone, Serialize)]
pub struct BatchEntry {
    pub id: String,
    pub path: String,
    pub label: String,
    /// Lines indexed so far.
    pub items: u64,
    pub counts: Counts,
    /// The batch summary found beside it, when any.
    pub summary: Option<Value>,
    /// The file grew in the last seconds and no summary was found: the batch still runs.
    pub running: bool,
}

/// A run in the index: a RunResult file, a `.fabric/<runtime>/<invocation>/` directory or a
/// batch item.
#[derive(Debug, Clone, Serialize)]
pub struct RunEntry {
    pub id: String,
    /// `run_result`, `invocation` or `batch_item`.
    pub kind: &'static str,
    pub label: String,
    pub status: Option<String>,
    pub runtime_id: Option<String>,
    pub invocation_id: Option<String>,
    pub started_at: Option<u64>,
    pub duration_ms: Option<u64>,
    pub path: String,
}

/// A Relay trajectory in the index.
#[derive(Debug, Clone, Serialize)]
pub struct TrajectoryEntry {
    pub id: String,
    /// `atof` or `atif`.
    pub kind: &'static str,
    pub label: String,
    pub path: String,
    /// The file's id (`/api/files/{id}`).
    pub file_id: String,
    /// The run that lists this trajectory, when one does.
    pub run_id: Option<String>,
}

/// A NeMo Gym observation export in the index.
#[derive(Debug, Clone, Serialize)]
pub struct GymExportEntry {
    pub id: String,
    pub label: String,
    pub path: String,
    pub file_id: String,
    /// Records of the bundle (`ng_agent_observations.records`), when counted.
    pub records: Option<u64>,
}

/// A file skipped with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// One row of a batch's item table.
#[derive(Debug, Clone, Serialize)]
pub struct ItemRow {
    /// 0-based line number among the batch's lines.
    pub row: u64,
    pub id: String,
    /// `succeeded`, `failed`, `cancelled` or `errored`.
    pub status: &'static str,
    pub attempts: u32,
    pub duration_ms: u64,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
    pub error_code: Option<String>,
    /// `/api/runs/{run_id}`.
    pub run_id: String,
}

/// `GET /api/batches/{id}/items`.
#[derive(Debug, Clone, Serialize)]
pub struct ItemsAnswer {
    /// Rows matching the filters.
    pub total: u64,
    pub offset: u64,
    pub items: Vec<ItemRow>,
}

/// Latency percentiles of a batch's items.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
}

/// One bucket of the latency histogram: items with `duration_ms <= le_ms` (and above the
/// previous bucket); the last bucket's `le_ms` is `null` (everything above).
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    pub le_ms: Option<u64>,
    pub count: u64,
}

/// Token usage summed over a batch's items.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UsageSum {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
}

/// `GET /api/batches/{id}/stats`.
#[derive(Debug, Clone, Serialize)]
pub struct StatsAnswer {
    pub counts: Counts,
    pub items_per_second: Option<f64>,
    pub wall_seconds: Option<f64>,
    pub latency_ms: Percentiles,
    pub latency_histogram: Vec<Bucket>,
    pub usage: UsageSum,
    pub error_codes: BTreeMap<String, u64>,
    pub summary: Option<Value>,
}

/// A tool call of an assistant message.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// The model call behind an assistant message.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCall {
    pub latency_ms: Option<u64>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub model: Option<String>,
}

/// One message of a run's conversation.
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: &'static str,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// The call a `tool` message answers.
    pub tool_call_id: Option<String>,
    pub model_call: Option<ModelCall>,
    pub subagent: Option<String>,
    pub children: Vec<Message>,
}

/// One sample of an invocation's sampled system stats.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Milliseconds since the first sample.
    pub t_ms: u64,
    pub cpu_percent: Option<f64>,
    pub rss_bytes: Option<u64>,
}

/// An invocation's sampled system stats.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SystemStats {
    pub samples: Vec<Sample>,
    pub summary: Option<Value>,
}

/// An artifact of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Artifact {
    pub name: String,
    pub kind: Option<String>,
    pub size: Option<u64>,
    /// `/api/files/{file_id}`; `None` when the file is not there.
    pub file_id: Option<String>,
    /// Whether the first bytes look like text (a preview makes sense).
    pub text: bool,
}

/// A file of a run served by id.
#[derive(Debug, Clone, Serialize)]
pub struct FileRef {
    pub file_id: String,
    pub size: u64,
}

/// The captured model calls of a run.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCalls {
    pub count: u64,
    pub file_id: Option<String>,
}

/// `GET /api/runs/{id}`.
#[derive(Debug, Clone, Serialize)]
pub struct RunAnswer {
    pub id: String,
    pub kind: &'static str,
    pub label: String,
    pub status: Option<String>,
    pub input: Value,
    pub output: Value,
    pub error: Option<ErrorInfo>,
    pub events: Vec<Value>,
    pub usage: Option<Value>,
    pub result: Option<Value>,
    pub invocation: Option<Value>,
    pub conversation: Vec<Message>,
    /// Where the conversation came from: `atif`, `model_calls`, `output` or `null`.
    pub conversation_source: Option<&'static str>,
    pub system_stats: SystemStats,
    pub artifacts: Vec<Artifact>,
    pub patch: Option<FileRef>,
    pub stdout: Option<FileRef>,
    pub model_calls: Option<ModelCalls>,
    pub health: Vec<Value>,
    /// What could not be read (a file named, the reason).
    pub problems: Vec<Problem>,
}

/// One side of a compared row.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub status: String,
    pub total_tokens: Option<u64>,
    pub duration_ms: Option<u64>,
    pub run_id: String,
}

/// A row of a comparison, joined by item id.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub id: String,
    pub a: Option<Side>,
    pub b: Option<Side>,
}

/// `GET /api/compare?a=ID&b=ID`.
#[derive(Debug, Clone, Serialize)]
pub struct CompareAnswer {
    /// `batches` or `runs`.
    pub kind: &'static str,
    pub a: String,
    pub b: String,
    pub rows: Vec<CompareRow>,
}
