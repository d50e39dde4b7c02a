/**
 * Adapter-side host for the persistent local-host lifecycle protocol.
 *
 * One JSON request per stdin line; exactly one response line per request on stdout,
 * `{"operation": ..., "outcome": ...}` with sorted keys in Python's `json.dumps` form.
 * One runtime per host process: `start` once, any number of ordered `invoke`s, one
 * `stop`. The host exits after answering `stop`, after a failed `start`, and on stdin
 * EOF (stopping an active runtime first, exit status 0). Malformed lines are answered
 * and do not end the host. Process stdout is reserved for protocol lines: anything the
 * adapter prints (console.log, process.stdout.write) goes to stderr.
 */
import { DEFAULT_TARGETS, attachEvidence, collectEvidence, evidenceRequested } from "./evidence";
import * as readline from "node:readline";
import type { Readable, Writable } from "node:stream";
import { JsonEncodeError, pythonJsonDumps, toPlainJson } from "./pyjson";
import type { AgentRunRequest, AgentRunResult, JsonObject, JsonValue, RuntimeContext, StartPayload } from "./types";
import { contractValidator, type ContractValidator } from "./validate";
import { LifecycleError } from "./errors";
import { Code } from "../generated";
import { OpenAIStreamWriter, validatedSink, type OpenAIChunkEmitter } from "./openai-stream";
import { HealthListener, runtimeProbe, type HealthCheckOptions, type HealthCheckResult, type HealthLevel } from "./health";

export { LifecycleError };

/** One adapter-owned runtime living for the whole host process. */
export interface AdapterRuntime {
  /** Build target state. The return value (JSON or nothing) is the `start` output. */
  start(payload: StartPayload): unknown | Promise<unknown>;
  /** Run one invocation; return its terminal result (a failed outcome is a result, not a throw). */
  invoke(request: AgentRunRequest, context: RuntimeContext): AgentRunResult | Promise<AgentRunResult>;
  /** Release everything; called once, also after a failed start or invoke. */
  stop(): void | Promise<void>;
  /**
   * Optional native OpenAI streaming (declare `capabilities.streaming` in the descriptor):
   * run the target once, `await emit(chunk)` for each `chat.completion.chunk`, and return
   * the terminal result. Without this method `invoke_openai_stream` is answered with
   * `lifecycle_openai_stream_unsupported`.
   */
  invokeOpenAIStream?(
    request: AgentRunRequest,
    context: RuntimeContext,
    emit: OpenAIChunkEmitter,
  ): AgentRunResult | Promise<AgentRunResult>;
  /**
   * Optional health probe for one level (`live`, `active`, `ready`; declare the levels in
   * the descriptor's `capabilities.metadata.health_levels`). Called by the health listener
   * on its own connection, also while an invocation is pending; `options.timeoutMs` is the
   * budget left and `options.signal` aborts when it runs out. Without this method every
   * check answers `unsupported/unsupported_adapter`.
   */
  check?(level: HealthLevel, options: HealthCheckOptions): HealthCheckResult | Promise<HealthCheckResult>;
}

export type RuntimeFactory = () => AdapterRuntime;

/** A failure that happened inside an adapter method (these latch a failed invoke). */
class AdapterCallError extends LifecycleError {}

export interface ServeOptions {
  /** Request stream; default `process.stdin`. */
  input?: Readable;
  /** Protocol stream; default the real `process.stdout` (captured before redirection). */
  output?: Writable;
  /** Diagnostics (tracebacks); default `process.stderr`. */
  diagnostics?: Writable;
  /**
   * Check `config`, `request`, `runtime_context` and the adapter's result against the
   * adapter-contract JSON Schemas. Default true; only tests of malformed adapters turn it off.
   */
  validate?: boolean;
  /** Call `process.exit` with the final status when serving ends. Default true. */
  exit?: boolean;
  /**
   * Directory for `health.endpoint.json`; default `process.env.FABRIC_HOME`. Without one
   * (or with `health: false`) no health listener runs.
   */
  fabricHome?: string;
  /** Run the health listener from a successful `start()` to `stop()`. Default true. */
  health?: boolean;
  /**
   * Software evidence: package names added to the selection (default: `fabric-core`), or
   * `false` to never report. A report is collected only when the core asks for it.
   */
  evidenceTargets?: readonly string[] | false;
  /** Directory the package lookup starts from; default the main module's directory. */
  evidenceFromDir?: string;
}

const OPERATIONS = new Set(["start", "invoke", "invoke_openai_stream", "stop"]);

interface HostState {
  runtime: AdapterRuntime | null;
  runtimeId: string | null;
  failed: boolean;
}

type Outcome =
  | { status: "succeeded"; output: unknown }
  | { status: "failed"; error: { stage: string; code: string; message: string; retryable: boolean; metadata?: JsonObject } };

interface Response {
  operation: string;
  outcome: Outcome;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stageOf(operation: string): string {
  return operation === "invoke_openai_stream" ? "invoke" : operation;
}

function failure(operation: string, error: LifecycleError): Response {
  const body: { stage: string; code: string; message: string; retryable: boolean; metadata?: JsonObject } = {
    stage: stageOf(operation),
    code: error.code,
    message: error.message,
    retryable: error.retryable,
  };
  if (Object.keys(error.metadata).length > 0) body.metadata = error.metadata;
  return { operation, outcome: { status: "failed", error: body } };
}

function success(operation: string, output: unknown): Response {
  return { operation, outcome: { status: "succeeded", output: output === undefined ? null : output } };
}

/** Internal: a malformed request that is answered with `lifecycle_invalid_request` and never exits. */
class MalformedRequest extends Error {}

function runtimeIdOf(operation: string, payload: Record<string, unknown>): string | null {
  let value: unknown;
  if (operation === "stop") {
    value = payload.runtime_id;
  } else {
    const context = payload.runtime_context;
    // Python's `payload.get("runtime_context") or {}`: every falsy JSON value counts as absent.
    const falsy =
      context === undefined ||
      context === null ||
      context === false ||
      context === 0 ||
      context === "" ||
      (Array.isArray(context) && context.length === 0) ||
      (isObject(context) && Object.keys(context).length === 0);
    if (falsy) {
      value = undefined;
    } else if (!isObject(context)) {
      throw new MalformedRequest("runtime_context is not an object");
    } else {
      value = context.runtime_id;
    }
  }
  return typeof value === "string" && value.length > 0 ? value : null;
}

class Host {
  private readonly state: HostState = { runtime: null, runtimeId: null, failed: false };
  private validatorInstance: ContractValidator | undefined;
  private health: HealthListener | null = null;

  constructor(
    private readonly factory: RuntimeFactory,
    private readonly validate: boolean,
    private readonly diagnostics: Writable,
    private readonly fabricHome: string | null = null,
    private readonly evidence: { targets: readonly string[]; fromDir?: string } | null = null,
  ) {}

  /** Starts the health listener for a started runtime; a failure is logged, not fatal. */
  private async startHealth(runtime: AdapterRuntime): Promise<void> {
    if (this.fabricHome === null) return;
    const listener = new HealthListener(runtimeProbe(runtime), this.fabricHome);
    try {
      await listener.start();
      this.health = listener;
    } catch (error) {
      // Health is optional: the core reports runtime_unavailable.
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      this.diagnostics.write(`fabric health listener not started: ${code}\n`);
    }
  }

  /** Stops the health listener (removing its endpoint file) before the runtime stops. */
  private async stopHealth(): Promise<void> {
    const listener = this.health;
    this.health = null;
    if (listener !== null) await listener.stop();
  }

  private get validator(): ContractValidator {
    this.validatorInstance ??= contractValidator();
    return this.validatorInstance;
  }

  private logError(error: unknown): void {
    const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    this.diagnostics.write(`${text}\n`);
  }

  /** Runs one adapter method with stdout diverted; maps exceptions to lifecycle errors. */
  private async adapterCall<T>(operation: string, call: () => T | Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof LifecycleError) {
        throw new AdapterCallError(error.code, error.message, { retryable: error.retryable, metadata: error.metadata });
      }
      this.logError(error);
      throw new AdapterCallError(`lifecycle_adapter_${operation}_failed`, `Adapter failed during lifecycle ${operation}`);
    }
  }

  /** Handles one line; returns the response and whether the host must exit afterwards. */
  async handle(line: string): Promise<{ response: Response; exit: boolean }> {
    let operation = "start";
    try {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        throw new MalformedRequest("line is not JSON");
      }
      if (!isObject(message)) throw new MalformedRequest("lifecycle request must be an object");
      operation = typeof message.operation === "string" ? message.operation : "start";
      if (!OPERATIONS.has(operation)) {
        throw new LifecycleError("lifecycle_invalid_operation", "Unknown lifecycle operation");
      }
      const payload = message.payload;
      if (!isObject(payload)) {
        throw new LifecycleError("lifecycle_invalid_payload", "Lifecycle payload must be a mapping");
      }
      const runtimeId = runtimeIdOf(operation, payload);
      if (runtimeId === null) {
        throw new LifecycleError("lifecycle_invalid_runtime", "Lifecycle payload is missing a runtime ID");
      }
      const response = await this.dispatch(operation, payload, runtimeId);
      return { response, exit: operation === "stop" };
    } catch (error) {
      const invokeOperation = operation === "invoke" || operation === "invoke_openai_stream";
      if (error instanceof LifecycleError) {
        if (invokeOperation && this.state.runtime !== null && error instanceof AdapterCallError) {
          this.state.failed = true;
        }
        return { response: failure(operation, error), exit: operation === "start" || operation === "stop" };
      }
      if (!(error instanceof MalformedRequest)) this.logError(error);
      if (invokeOperation && this.state.runtime !== null && !(error instanceof MalformedRequest)) {
        this.state.failed = true;
      }
      return {
        response: failure(operation, new LifecycleError(Code.LIFECYCLE_INVALID_REQUEST, "Invalid lifecycle request")),
        exit: false,
      };
    }
  }

  private async dispatch(operation: string, payload: Record<string, unknown>, runtimeId: string): Promise<Response> {
    if (operation === "start") return this.handleStart(payload, runtimeId);
    const runtime = this.activeRuntime(runtimeId);
    if (operation === "invoke") return this.handleInvoke(runtime, payload);
    if (operation === "invoke_openai_stream") return this.handleInvokeStream(runtime, payload);
    return this.handleStop(runtime);
  }

  private activeRuntime(runtimeId: string): AdapterRuntime {
    if (this.state.runtime === null || this.state.runtimeId === null) {
      throw new LifecycleError("lifecycle_not_started", "Lifecycle host has not started a runtime");
    }
    if (runtimeId !== this.state.runtimeId) {
      throw new LifecycleError("lifecycle_runtime_mismatch", "Lifecycle payload does not match the active runtime");
    }
    return this.state.runtime;
  }

  private async handleStart(payload: Record<string, unknown>, runtimeId: string): Promise<Response> {
    if (this.state.runtime !== null) {
      throw new LifecycleError("lifecycle_already_started", "Lifecycle host already owns a runtime");
    }
    if (this.validate) {
      const issue = this.validator.check("agentConfig", payload.config);
      if (issue) {
        throw new LifecycleError(
          "lifecycle_invalid_config",
          `Adapter config does not match its typed contract at config${issue.path === "/" ? "" : issue.path}: ${issue.rule}`,
        );
      }
    }
    const candidate = this.factory();
    let output: unknown;
    try {
      output = await this.adapterCall("start", () => candidate.start(payload as unknown as StartPayload));
    } catch (error) {
      await this.stopQuietly(candidate);
      throw error;
    }
    this.state.runtime = candidate;
    this.state.runtimeId = runtimeId;
    this.state.failed = false;
    await this.startHealth(candidate);
    if (this.evidence !== null && evidenceRequested(payload)) {
      const report = await collectEvidence(this.evidence.targets, { fromDir: this.evidence.fromDir });
      output = attachEvidence(output, report);
    }
    return success("start", output === undefined ? null : output);
  }

  private async handleInvoke(runtime: AdapterRuntime, payload: Record<string, unknown>): Promise<Response> {
    if (this.state.failed) {
      throw new LifecycleError("lifecycle_runtime_failed", "Lifecycle runtime cannot accept another invocation");
    }
    const { request, context } = this.typedInvocation(payload);
    const result = await withTelemetryEnv(context, () => this.adapterCall("invoke", () => runtime.invoke(request, context)));
    return success("invoke", this.typedResult(result));
  }

  /** Checks `request` and `runtime_context` of an invocation payload. */
  private typedInvocation(payload: Record<string, unknown>): { request: AgentRunRequest; context: RuntimeContext } {
    const request = payload.request;
    const context = payload.runtime_context;
    if (this.validate) {
      const issue =
        prefixed("request", this.validator.check("agentRunRequest", request)) ??
        prefixed("runtime_context", this.validator.check("runtimeContext", context));
      if (issue) {
        throw new LifecycleError(
          Code.LIFECYCLE_INVALID_REQUEST,
          `Invocation does not match the typed adapter contract at ${issue.path}: ${issue.rule}`,
        );
      }
    } else if (!isObject(request) || !isObject(context)) {
      throw new LifecycleError(Code.LIFECYCLE_INVALID_REQUEST, "Invocation does not match the typed adapter contract");
    }
    return { request: request as unknown as AgentRunRequest, context: context as unknown as RuntimeContext };
  }

  private async handleInvokeStream(runtime: AdapterRuntime, payload: Record<string, unknown>): Promise<Response> {
    if (this.state.failed) {
      throw new LifecycleError("lifecycle_runtime_failed", "Lifecycle runtime cannot accept another invocation");
    }
    const invoke = runtime.invokeOpenAIStream;
    if (typeof invoke !== "function") {
      throw new LifecycleError(Code.LIFECYCLE_OPENAI_STREAM_UNSUPPORTED, "Adapter runtime does not implement OpenAI streaming");
    }
    const { sink, adapterPayload } = validatedSink(payload);
    const writer = await OpenAIStreamWriter.connect(sink);
    let typed: { request: AgentRunRequest; context: RuntimeContext };
    try {
      typed = this.typedInvocation(adapterPayload);
    } catch (error) {
      writer.abort();
      throw error;
    }
    let adapterError: unknown = null;
    let output: unknown;
    try {
      output = await withTelemetryEnv(typed.context, () =>
        this.adapterCall("invoke_openai_stream", () => invoke.call(runtime, typed.request, typed.context, writer.emit)),
      );
    } catch (error) {
      adapterError = error;
    }
    // The end record is sent even when the adapter failed.
    try {
      await writer.finish();
    } catch (finishError) {
      if (adapterError !== null) {
        this.logError(finishError);
        throw adapterError;
      }
      throw finishError;
    }
    if (adapterError !== null) throw adapterError;
    return success("invoke_openai_stream", this.typedResult(output));
  }

  private typedResult(result: unknown): unknown {
    if (!isObject(result)) {
      throw new LifecycleError("lifecycle_invalid_response", "Adapter must return AgentRunResult");
    }
    let plain: unknown;
    try {
      plain = toPlainJson(result);
    } catch (error) {
      if (!(error instanceof JsonEncodeError)) throw error;
      // Not encodable: like upstream, this latches the runtime as failed.
      this.logError(error);
      this.state.failed = true;
      throw new LifecycleError("lifecycle_invalid_response", "Adapter returned a non-JSON lifecycle response");
    }
    if (this.validate) {
      const issue = this.validator.check("agentRunResult", plain);
      if (issue) {
        throw new LifecycleError(
          "lifecycle_invalid_response",
          `Adapter returned an invalid AgentRunResult at ${issue.path}: ${issue.rule}`,
        );
      }
    }
    const record = plain as Record<string, unknown>;
    const hasError = record.error !== undefined && record.error !== null;
    if ((record.status === "failed") !== hasError) {
      throw new LifecycleError(
        "lifecycle_invalid_response",
        "Adapter returned an invalid AgentRunResult: error must be present exactly when status is failed",
      );
    }
    return plain;
  }

  private async handleStop(runtime: AdapterRuntime): Promise<Response> {
    await this.stopHealth();
    try {
      await this.adapterCall("stop", () => runtime.stop());
    } finally {
      this.state.runtime = null;
      this.state.runtimeId = null;
      this.state.failed = false;
    }
    return success("stop", null);
  }

  private async stopQuietly(runtime: AdapterRuntime): Promise<void> {
    try {
      await this.adapterCall("stop", () => runtime.stop());
    } catch (error) {
      this.logError(error);
    }
  }

  /** On EOF or a signal: stop an active runtime, logging (not raising) its failure. */
  async shutdown(): Promise<void> {
    const runtime = this.state.runtime;
    this.state.runtime = null;
    this.state.runtimeId = null;
    await this.stopHealth();
    if (runtime !== null) await this.stopQuietly(runtime);
  }

  /** Encodes a response, degrading to `lifecycle_invalid_response` when the output is not JSON. */
  encode(response: Response): string {
    try {
      return pythonJsonDumps(toPlainJson(response));
    } catch (error) {
      this.logError(error);
      const invokeOperation = response.operation === "invoke" || response.operation === "invoke_openai_stream";
      if (invokeOperation && this.state.runtime !== null) this.state.failed = true;
      return pythonJsonDumps(
        failure(
          response.operation,
          new LifecycleError("lifecycle_invalid_response", "Adapter returned a non-JSON lifecycle response"),
        ),
      );
    }
  }
}

function prefixed(
  root: string,
  issue: { path: string; rule: string } | null,
): { path: string; rule: string } | null {
  if (issue === null) return null;
  return { path: issue.path === "/" ? root : `${root}${issue.path}`, rule: issue.rule };
}

/** Applies `runtime_context.telemetry.env` (all string values, else nothing) around `call`. */
async function withTelemetryEnv<T>(context: RuntimeContext, call: () => Promise<T>): Promise<T> {
  const telemetry = isObject(context) ? (context as unknown as Record<string, unknown>).telemetry : undefined;
  const overlay = isObject(telemetry) ? telemetry.env : undefined;
  const entries =
    isObject(overlay) && Object.values(overlay).every((value) => typeof value === "string")
      ? (Object.entries(overlay) as [string, string][])
      : [];
  const previous = entries.map(([key]) => [key, process.env[key]] as const);
  for (const [key, value] of entries) process.env[key] = value;
  try {
    return await call();
  } finally {
    for (const [key, value] of previous) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

function writeLine(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(`${text}\n`, (error) => (error ? reject(error) : resolve()));
  });
}

let serving = false;

/**
 * Serve lifecycle requests for exactly one runtime made by `factory`.
 *
 * Resolves with the exit status (0 normally) once serving ends; unless
 * `options.exit === false` the process then exits with it.
 *
 * ```ts
 * import { serve } from "fabric-core/adapter";
 * serve(() => new MyRuntime());
 * ```
 */
export async function serve(factory: RuntimeFactory, options: ServeOptions = {}): Promise<number> {
  if (serving) throw new Error("serve() is already running in this process");
  serving = true;
  const input = options.input ?? process.stdin;
  const diagnostics = options.diagnostics ?? process.stderr;
  const usesProcessStdout = options.output === undefined;
  const protocolWrite = process.stdout.write;
  let output: Writable = options.output ?? process.stdout;
  if (usesProcessStdout) {
    // Reserve the real stdout for protocol lines; everything else printed goes to stderr.
    const realStdout = process.stdout;
    output = {
      write: (chunk: string, callback: (error?: Error | null) => void) =>
        (protocolWrite as (this: unknown, chunk: string, callback: (error?: Error | null) => void) => boolean).call(
          realStdout,
          chunk,
          callback,
        ),
    } as unknown as Writable;
    process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  }

  const validate = options.validate ?? true;
  if (validate) {
    // Fail fast (exit 1, reason on stderr) rather than answer every request with an
    // error when the schemas cannot be loaded.
    try {
      contractValidator();
    } catch (error) {
      diagnostics.write(`fabric-core serve: ${(error as Error).message}\n`);
      if (usesProcessStdout) process.stdout.write = protocolWrite;
      serving = false;
      if (options.exit !== false) process.exit(1);
      return 1;
    }
  }
  const home = options.fabricHome ?? process.env.FABRIC_HOME;
  const healthHome = options.health === false || home === undefined || home === "" ? null : home;
  const evidence =
    options.evidenceTargets === false
      ? null
      : { targets: [...(options.evidenceTargets ?? []), ...DEFAULT_TARGETS], fromDir: options.evidenceFromDir };
  const host = new Host(factory, validate, diagnostics, healthHome, evidence);
  let status = 0;
  const onSigint = () => {
    void host.shutdown().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSigint);
  const lines = readline.createInterface({ input, crlfDelay: Infinity, terminal: false });
  try {
    for await (const line of lines) {
      const { response, exit } = await host.handle(line);
      await writeLine(output, host.encode(response));
      if (exit) break;
    }
  } catch (error) {
    diagnostics.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    status = 1;
  } finally {
    lines.close();
    process.removeListener("SIGINT", onSigint);
    await host.shutdown();
    if (usesProcessStdout) process.stdout.write = protocolWrite;
    serving = false;
  }
  if (options.exit !== false) process.exit(status);
  return status;
}

/** Milliseconds left before `context.deadline_millis`, or `Infinity` when no deadline was set. */
export function remainingMillis(context: RuntimeContext, now: number = Date.now()): number {
  const deadline = context.deadline_millis;
  if (deadline === undefined || deadline === null) return Infinity;
  return Math.max(0, deadline - now);
}

export type { JsonValue };
