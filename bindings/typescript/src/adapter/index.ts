/**
 * Adapter-side library: write a Fabric adapter in TypeScript.
 *
 * ```ts
 * import { serve, type AdapterRuntime } from "fabric-core/adapter";
 * ```
 */
export * from "./types";
export { serve, LifecycleError, remainingMillis } from "./serve";
export type { AdapterRuntime, RuntimeFactory, ServeOptions } from "./serve";
export { pythonJsonDumps } from "./pyjson";
export { StopObserver, STOP_REASON_EXTENSION, MAX_ITERATIONS } from "./observer";
export {
  collectEvidence,
  lookupManifest,
  evidenceRequested,
  attachEvidence,
  DEADLINE_MS as EVIDENCE_DEADLINE_MS,
  MAX_LEVELS as EVIDENCE_MAX_LEVELS,
  MAX_MANIFEST_BYTES as EVIDENCE_MAX_MANIFEST_BYTES,
  MAX_TARGETS as EVIDENCE_MAX_TARGETS,
} from "./evidence";
export type { CollectOptions, ExecutionEvidenceReport, LookupResult } from "./evidence";
export {
  HealthListener,
  serveHealth,
  runtimeProbe,
  canonicalJson,
  sealMessage,
  openMessage,
  transportFromEnv,
  ENDPOINT_FILE_NAME,
  HEALTH_LEVELS,
  LISTENER_SOURCE_ID,
  MAX_CONNECTIONS,
  MAX_PENDING,
  REQUEST_READ_TIMEOUT_MS,
  TRANSPORT_ENV,
} from "./health";
export type {
  HealthCheckable,
  HealthCheckOptions,
  HealthCheckResult,
  HealthLevel,
  HealthObservation,
  HealthOutcome,
  HealthProbe,
  HealthTransport,
} from "./health";
export { OPENAI_STREAM_PROFILE, OPENAI_STREAM_PROTOCOL } from "./openai-stream";
export type { OpenAIChatCompletionChunk, OpenAIChunkEmitter } from "./openai-stream";
export { ContractValidator, CONTRACT_SHAPES, SchemaUnavailableError, schemaDirectories } from "./validate";
export type { ContractShape, ValidationIssue } from "./validate";
