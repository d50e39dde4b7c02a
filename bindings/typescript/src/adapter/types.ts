/**
 * Southbound adapter-contract shapes (`fabric.adapter/v1alpha2`), as they cross the
 * persistent local-host lifecycle protocol.
 *
 * These interfaces describe data; they do not validate it. Values that arrive over
 * stdin are checked against the JSON Schemas in `schemas/adapter-contract/` by
 * {@link serve} before an adapter sees them (see `validate.ts`).
 */

import type { JsonObject, JsonValue } from "../generated";

export type { JsonObject, JsonValue };

/** Adapter-owned typed extension fields present on every `Agent*` block. */
export interface Extensible {
  extensions?: JsonObject;
}

export interface AgentHarnessConfig extends Extensible {
  settings?: JsonObject;
}

export interface AgentModelConfig extends Extensible {
  /** Lowercase, trimmed provider id. */
  provider: string;
  model: string;
  api_key_env?: string | null;
  temperature?: number | null;
  top_p?: number | null;
  max_tokens?: number | null;
  base_url?: string | null;
  settings?: JsonObject;
}

export type InstructionMode = "replace" | "append";

export interface AgentInstructionConfig extends Extensible {
  content: string;
  /** Defaults to `replace`. */
  mode?: InstructionMode;
}

export interface AgentInstructionsConfig extends Extensible {
  system?: AgentInstructionConfig | null;
}

export interface AgentRuntimeConfig extends Extensible {
  max_turns?: number | null;
}

export interface AgentSkillConfig extends Extensible {
  paths?: string[];
}

export interface McpAuthenticationConfig {
  type?: string;
  [key: string]: JsonValue | undefined;
}

export interface AgentMcpServerConfig extends Extensible {
  transport: string;
  url: string;
  args?: string[];
  env?: Record<string, string>;
  authentication?: McpAuthenticationConfig | null;
  custom_headers?: Record<string, string>;
  allowed_tools?: string[] | null;
  blocked_tools?: string[];
}

export interface AgentMcpConfig extends Extensible {
  servers?: Record<string, AgentMcpServerConfig>;
}

export interface AgentToolDefinition extends Extensible {
  kind: string;
  ref: string;
  settings?: JsonObject;
}

export interface AgentToolsConfig extends Extensible {
  definitions?: Record<string, AgentToolDefinition>;
  /** `null` keeps the adapter target's default tool set. */
  enabled?: string[] | null;
  blocked?: string[];
}

export interface AgentWorkflowEntrypointConfig extends Extensible {
  kind: string;
  ref: string;
}

export interface AgentWorkflowConfig extends Extensible {
  entrypoint: AgentWorkflowEntrypointConfig;
  settings?: JsonObject;
}

/** The resolved configuration an adapter receives in the `start` payload. */
export interface AgentConfig extends Extensible {
  harness?: AgentHarnessConfig;
  models?: Record<string, AgentModelConfig>;
  instructions?: AgentInstructionsConfig;
  runtime?: AgentRuntimeConfig;
  skills?: AgentSkillConfig;
  mcp?: AgentMcpConfig;
  tools?: AgentToolsConfig;
  workflow?: AgentWorkflowConfig | null;
}

export type ControlLocation = "external_control" | "in_env_control";
export type EnvironmentOwnership = "caller_owned" | "fabric_owned";

export interface EnvironmentHandle {
  environment_id: string;
  provider: string;
  control_location: ControlLocation;
  ownership: EnvironmentOwnership;
  workspace?: string | null;
  artifacts?: string | null;
  env?: Record<string, string>;
  connection?: JsonObject;
  metadata?: JsonObject;
}

export interface ArtifactRef {
  name: string;
  kind: string;
  path: string;
  media_type?: string | null;
  metadata?: JsonObject;
}

export interface ArtifactManifest {
  root?: string | null;
  artifacts?: ArtifactRef[];
}

export interface RuntimeTelemetryContext {
  relay_enabled: boolean;
  config_path?: string | null;
  /** Applied to `process.env` by {@link serve} for the duration of one invoke. */
  env?: Record<string, string>;
  metadata?: JsonObject;
}

/** Identity, environment, artifacts and telemetry of one invocation. */
export interface RuntimeContext {
  runtime_id: string;
  invocation_id: string;
  request_id: string;
  environment: EnvironmentHandle;
  artifacts: ArtifactManifest;
  telemetry?: RuntimeTelemetryContext | null;
  /** Unix milliseconds by which the invocation must finish, when the host set one. */
  deadline_millis?: number | null;
}

/** One invocation's request. */
export interface AgentRunRequest extends Extensible {
  /** Any JSON value; required. */
  input: JsonValue;
  relay_session_root?: string | null;
  context?: JsonObject;
}

export type AgentRunStatus = "succeeded" | "failed" | "cancelled";

export interface AgentRunError extends Extensible {
  code: string;
  message: string;
  retryable?: boolean;
}

/** Per-invocation usage; an absent counter means unknown, not zero. */
export interface AgentUsage extends Extensible {
  input_tokens?: number | null;
  cached_input_tokens?: number | null;
  input_tokens_include_cache?: boolean | null;
  output_tokens?: number | null;
  total_tokens?: number | null;
  cost_usd?: number | null;
}

export interface AgentArtifact extends Extensible {
  name: string;
  kind: string;
  /** Relative to the artifact root; no `..`, no drive or root prefix. */
  path: string;
  media_type?: string | null;
}

/** The terminal result of one invocation. `error` is present iff `status` is `failed`. */
export interface AgentRunResult extends Extensible {
  status: AgentRunStatus;
  output: JsonValue;
  error?: AgentRunError | null;
  usage?: AgentUsage | null;
  artifacts?: AgentArtifact[];
}

/** The `start` payload: the resolved config plus the core's plans. Unknown keys are kept. */
export interface StartPayload {
  agent_name?: string;
  base_dir?: string;
  config: AgentConfig;
  runtime_context: { runtime_id: string; [key: string]: unknown };
  capability_plan?: JsonObject;
  telemetry_plan?: JsonObject;
  /** Software evidence control: `{enabled: true}` asks for the host's report. */
  provenance?: { enabled: boolean };
  [key: string]: unknown;
}
