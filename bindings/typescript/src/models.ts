/**
 * Consumer-facing shapes (the `sdk/` JSON Schemas). Config input is strict in the core;
 * result types tolerate fields this version does not know (index signatures).
 */
import type { JsonObject, JsonValue } from "./adapter/types";
import type { ErrorInfo } from "./errors";

export type { JsonObject, JsonValue, ErrorInfo };

export interface ModelConfig {
  provider: string;
  model: string;
  api_key_env?: string;
  base_url?: string;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  settings?: JsonObject;
  [key: string]: JsonValue | undefined;
}

/** A FabricConfig (`fabric.agent/v1alpha1`). The core validates it; see `schemas/sdk/`. */
export interface FabricConfig {
  schema_version?: string;
  metadata: { name: string; description?: string; [key: string]: JsonValue | undefined };
  harness?: { adapter_id?: string; settings?: JsonObject; [key: string]: JsonValue | undefined };
  workflow?: JsonObject;
  discovery?: { local_paths?: string[]; [key: string]: JsonValue | undefined };
  runtime?: { timeout_seconds?: number; max_turns?: number; [key: string]: JsonValue | undefined };
  environment?: JsonObject;
  models?: Record<string, ModelConfig>;
  instructions?: JsonObject;
  mcp?: JsonObject;
  skills?: JsonObject;
  telemetry?: JsonObject;
  relay?: JsonObject;
  tools?: JsonObject;
  system_stats?: JsonObject | null;
  provenance?: JsonObject;
}

/** One invocation's request. */
export interface RunRequest {
  input?: JsonValue;
  request_id?: string;
  context?: JsonObject;
  relay_session_root?: string;
  overrides?: JsonObject;
  extensions?: JsonObject;
}

export type RunStatus = "succeeded" | "failed" | "cancelled";

export interface FabricEvent {
  event_id: string;
  timestamp_millis: number;
  kind: string;
  message: string;
  metadata?: JsonObject;
  [key: string]: unknown;
}

export interface RunUsage {
  input_tokens?: number;
  cached_input_tokens?: number;
  input_tokens_include_cache?: boolean;
  output_tokens?: number;
  total_tokens?: number;
  cost_usd?: number;
  metadata?: JsonObject;
  [key: string]: unknown;
}

export interface ArtifactManifest {
  root?: string;
  artifacts?: { name: string; kind: string; path: string; media_type?: string; metadata?: JsonObject }[];
  [key: string]: unknown;
}

/** The result of one invocation. A harness failure is `status: "failed"`, not an exception. */
export interface RunResult {
  agent_name: string;
  harness: string;
  adapter_kind: string;
  adapter_id?: string;
  runtime_id: string;
  invocation_id: string;
  request_id: string;
  status: RunStatus;
  output?: JsonValue;
  error?: ErrorInfo;
  usage?: RunUsage;
  artifacts?: ArtifactManifest;
  events?: FabricEvent[];
  telemetry?: JsonObject;
  metadata?: JsonObject;
  /** Absent or null when disabled (`system_stats: null` in the config). */
  system_stats?: InvocationSystemStats | null;
  resource_snapshot?: RuntimeResourceSnapshot | null;
  [key: string]: unknown;
}

/** What `fabric_runtime_start` reports about a started runtime. */
export interface RuntimeInfo {
  runtime_id: string;
  agent_name: string;
  harness?: string;
  adapter_id?: string;
  adapter_kind?: string;
  environment?: JsonObject;
  host_pid?: number;
  fabric_home?: string;
  handle?: number;
  [key: string]: unknown;
}

export interface RuntimeStopResult {
  artifacts?: ArtifactManifest;
  error?: ErrorInfo;
  events?: FabricEvent[];
  [key: string]: unknown;
}

/** The core's view of a runtime. */
export interface RuntimeStatusInfo {
  runtime_id: string;
  state: "idle" | "busy" | "failed" | "stopping" | "stopped" | string;
  invocations?: number;
  host_pid?: number;
  started_at_millis?: number;
  fabric_home?: string;
  failure?: string | null;
  [key: string]: unknown;
}

export interface RunPlan {
  agent_name: string;
  base_dir: string;
  config: FabricConfig;
  agent_config: JsonObject;
  capabilities: JsonObject;
  adapter_descriptor?: { descriptor: JsonObject; provenance?: JsonObject[]; [key: string]: unknown };
  [key: string]: unknown;
}

/** One doctor finding. */
export interface DoctorCheck {
  name: string;
  status: "pass" | "warn" | "fail" | string;
  code: string;
  message: string;
  /** Config path the finding is about (`harness.adapter_id`). */
  path?: string;
  metadata?: JsonObject;
  [key: string]: unknown;
}

/** Every preflight finding; `status` is the worst of the checks. */
export interface DoctorReport {
  agent_name: string;
  status: "pass" | "warn" | "fail" | string;
  checks: DoctorCheck[];
  [key: string]: unknown;
}

/** A prepared environment as the core reports it (variable names only, never values). */
export interface EnvironmentInfo {
  environment_id: string;
  provider: string;
  control_location?: string;
  ownership?: string;
  workspace?: string | null;
  artifacts?: string | null;
  env_names?: string[];
  released?: boolean;
  handle?: number;
  [key: string]: unknown;
}

/** One reading of a runtime's process tree: the local adapter host and its descendants. */
export interface RuntimeResourceSnapshot {
  runtime_id: string;
  /** When the adapter host was started (RFC 3339 UTC). */
  started_at: string;
  /** When the values were read (RFC 3339 UTC). */
  observed_at: string;
  /** Sum of the resident set sizes of the live processes. */
  resident_memory_bytes: number;
  /** Live processes, the adapter host included. */
  process_count: number;
  /** CPU time since the host started, exited descendants included. */
  cpu_time_seconds: number;
  [key: string]: unknown;
}

/** `available` (snapshot set), `unavailable`/`unsupported` (reason set) or `not_collected`. */
export type ObservationStatus = "available" | "unavailable" | "unsupported" | "not_collected";

/** An endpoint observation of invocation stats. Missing values are never zeros. */
export interface ResourceObservation {
  status: ObservationStatus | string;
  snapshot?: RuntimeResourceSnapshot | null;
  reason?: string | null;
  [key: string]: unknown;
}

/** Sampled reductions of one gauge. */
export interface GaugeSummary {
  observations?: number;
  final?: number | null;
  sampled_peak?: number | null;
  min?: number | null;
  max?: number | null;
  /** Hold-last time-weighted mean, excluding gaps over twice the cadence. */
  time_weighted_mean?: number | null;
  covered_seconds?: number;
  covered_fraction?: number;
  [key: string]: unknown;
}

export interface StatsDiagnostic {
  code: string;
  message: string;
  count?: number | null;
  [key: string]: unknown;
}

/** Periodic sampling during one invocation (`system_stats.sampled`). */
export interface SampledStats {
  interval_ms: number;
  max_samples: number;
  retained_samples: number;
  dropped_samples: number;
  truncated: boolean;
  collection_seconds?: number;
  largest_gap_seconds?: number;
  span_seconds?: number;
  resident_memory_bytes?: GaugeSummary | null;
  process_count?: GaugeSummary | null;
  cgroup_memory_current_bytes?: GaugeSummary | null;
  cpu_time_seconds?: JsonObject | null;
  diagnostics?: StatsDiagnostic[];
  /** `system-stats.jsonl` artifact. */
  samples?: { name: string; kind?: string; path: string; media_type?: string; metadata?: JsonObject } | null;
  /** `system-stats-summary.json` artifact. */
  summary?: { name: string; kind?: string; path: string; media_type?: string; metadata?: JsonObject } | null;
  [key: string]: unknown;
}

/** Process and cgroup measurements around one invocation (`RunResult.system_stats`). */
export interface InvocationSystemStats {
  /** Monotonic seconds of the adapter exchange only. */
  elapsed_seconds: number;
  before: ResourceObservation;
  after: ResourceObservation;
  /** Absent or null when either reading is missing, identities differ or the counter decreased. */
  cpu_time_seconds_estimate?: number | null;
  collected_groups?: string[];
  /** before/after/deltas of the adapter host's cgroup (Linux cgroup v2). */
  cgroup?: JsonObject | null;
  sampled?: SampledStats | null;
  [key: string]: unknown;
}

export type HealthLevel = "live" | "active" | "ready";
export type CheckOutcome = "passed" | "failed" | "unknown" | "unsupported";

/** A health-check request for {@link Fabric.check}. */
export interface CheckRequest {
  /** `runtime` needs `runtime_id`; `service` needs `service_id`; `server` takes neither. */
  scope: "runtime" | "service" | "server";
  runtime_id?: string | null;
  service_id?: string | null;
  /** Default `live`; earlier levels are evaluated first. */
  level?: HealthLevel;
  /** The whole check's budget; default 3, positive and finite. */
  timeout_seconds?: number | null;
}

/** One observation that ran, in evaluation order. */
export interface CheckObservation {
  level: HealthLevel;
  outcome: CheckOutcome;
  reason?: string | null;
  /** Fixed evidence-source id, e.g. `scripted:process`, or `fabric:*` from the core. */
  source_id: string;
  observed_at: string;
  [key: string]: unknown;
}

/** An immutable health report (`fabric.check/v1alpha1`); every outcome is a report. */
export interface CheckReport {
  schema_version: string;
  scope: "runtime" | "service" | "server";
  target: { runtime_id?: string | null; service_id?: string | null; [key: string]: unknown };
  level: HealthLevel | null;
  outcome: CheckOutcome;
  reason: string | null;
  checks: readonly CheckObservation[];
  started_at: string;
  finished_at: string;
  elapsed_ms: number;
  /** `idle`/`busy`: whether a Fabric invocation is pending; null when unknown. */
  activity: "idle" | "busy" | null;
  [key: string]: unknown;
}
