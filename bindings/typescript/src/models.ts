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
  system_stats?: JsonObject;
  resource_snapshot?: JsonObject;
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
