/**
 * The Promise-based API over the C ABI: {@link Fabric} and {@link Runtime}.
 *
 * ```ts
 * const fabric = new Fabric();
 * await using runtime = await fabric.startRuntime(config);
 * const first = await runtime.invoke({ input: "hello" });
 * ```
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FabricCapabilityError, FabricConfigError, FabricRuntimeError, FabricStateError, ResourceObservationUnavailableError } from "./errors";
import type {
  AdapterCapabilityProfile,
  AgentObservationBundle,
  CheckReport,
  CheckRequest,
  ConformanceReport,
  ConformanceRequest,
  DoctorReport,
  EnvironmentInfo,
  GymObservations,
  GymObservationsRequest,
  GymJoinedAssistantMessages,
  ModelCallKeys,
  TrajectoryRecord,
  FabricConfig,
  RunPlan,
  RunRequest,
  RunResult,
  RuntimeInfo,
  RuntimeResourceSnapshot,
  RuntimeStatusInfo,
  PrewarmInfo,
  RuntimeStopResult,
  JsonValue,
  StreamInfo,
  ExecResult,
  FileContent,
  FileListing,
} from "./models";

/** Options of {@link Environment.exec}. */
export interface ExecOptions {
  /** Working directory relative to the workspace. */
  cwd?: string;
  /** Variables added to the command's environment. */
  env?: Record<string, string>;
  /** The command's stdin. */
  stdin?: Uint8Array | string;
  /** Deadline in seconds (default 60): the process group is killed when it passes. */
  timeoutSeconds?: number;
  /** Bytes kept of each of stdout and stderr (default and at most 1 MiB). */
  outputLimitBytes?: number;
}

/** The root a file path of an environment is relative to. */
export interface FileOptions {
  /** `workspace` (default) or `artifacts`. */
  root?: "workspace" | "artifacts";
}
import { Code, type CallOptions as NativeCallOptions } from "./generated";
import { cString, nativeLibrary, type NativeLibrary, type NativeSymbol } from "./native";
import { Batch, type BatchOptions } from "./batch";
import { abortable, parse } from "./util";
import { InvokeStream, OpenAIInvokeStream, type StreamOwner } from "./stream";
import { Service } from "./service";
import { Prewarm } from "./prewarm";
import type { EnvironmentReference, ServiceInfo, ServiceReference } from "./models";

export interface CallOptions {
  /** Anchors relative paths of the config; default the current directory. */
  baseDir?: string;
  /**
   * Pins the adapter: planning rejects with FabricConfigError (`descriptor_mismatch`,
   * stage `plan`) unless the plan's `descriptor_sha256` equals this value; nothing starts.
   */
  expectedDescriptorSha256?: string;
  /**
   * Runtime start: enable NeMo Relay ATOF streaming ({@link Runtime.invokeStream}); the
   * config needs Relay telemetry (FabricConfigError `streaming_requires_relay`).
   */
  streaming?: boolean;
  /**
   * Runtime start with `streaming`: run the embedded collector (default true) or use the
   * external one named by the config's `nemo-fabric-stream` sink (false).
   */
  launchCollector?: boolean;
  /** Runtime start with `streaming`: upstream's Pi completion wait, seconds (default 1). */
  completionWaitTimeout?: number;
  /**
   * Runtime start with `streaming`: the embedded collector's memory budget in bytes (at
   * least 1048576, default 64 MiB; smaller is FabricConfigError `invalid_value`).
   */
  collectorMemoryBudgetBytes?: number;
  /**
   * Run and runtime start: put the core's model-call gateway between the harness and its
   * models; every call is recorded in the invocation's `model-calls.jsonl`
   * (`RunResult.model_calls`; docs/model-calls.md).
   */
  captureModelCalls?: boolean;
  /** With `captureModelCalls`: forwarded model calls per invocation (later ones get 429). */
  maxModelCalls?: number;
  /** With `captureModelCalls`: reported tokens per invocation (then calls get 429). */
  maxTotalTokens?: number;
  /**
   * Stops waiting: the promise rejects with `signal.reason` as soon as the signal aborts.
   * The native call itself runs to completion in the background (the C ABI has no cancel
   * call yet); see {@link Runtime.invoke} for what that means for a runtime.
   */
  signal?: AbortSignal;
}

export interface InvokeOptions {
  /** Input of the invocation (mutually exclusive with `request`). */
  input?: JsonValue;
  /** A full RunRequest (mutually exclusive with `input`). */
  request?: RunRequest;
  /** Stops waiting for the invocation; see {@link Runtime.invoke}. */
  signal?: AbortSignal;
}

export type RunOptions = CallOptions & InvokeOptions;

/** @internal */
export function configText(config: FabricConfig | string): string {
  return cString(typeof config === "string" ? config : JSON.stringify(config), "config");
}

/** The `options_json` argument (schema `sdk/call-options`); the core enforces every option. */
/** @internal */
export function optionsText(options: CallOptions): string {
  const native: NativeCallOptions = {};
  if (options.baseDir !== undefined) native.base_dir = cString(options.baseDir, "baseDir");
  if (options.expectedDescriptorSha256 !== undefined) native.expected_descriptor_sha256 = options.expectedDescriptorSha256;
  if (options.streaming !== undefined) native.streaming = options.streaming;
  if (options.launchCollector !== undefined) native.launch_collector = options.launchCollector;
  if (options.completionWaitTimeout !== undefined) native.completion_wait_timeout = options.completionWaitTimeout;
  if (options.collectorMemoryBudgetBytes !== undefined) native.collector_memory_budget_bytes = options.collectorMemoryBudgetBytes;
  if (options.captureModelCalls !== undefined) native.capture_model_calls = options.captureModelCalls;
  if (options.maxModelCalls !== undefined) native.max_model_calls = options.maxModelCalls;
  if (options.maxTotalTokens !== undefined) native.max_total_tokens = options.maxTotalTokens;
  native.binding = bindingIdentity();
  return JSON.stringify(native);
}

let identity: NativeCallOptions["binding"] | undefined;

/** This package and the Node runtime, reported in `RunResult.execution` by the core. */
function bindingIdentity(): NativeCallOptions["binding"] {
  if (identity === undefined) {
    let version = "unknown";
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as { version?: unknown };
      if (typeof manifest.version === "string" && manifest.version.trim() !== "") version = manifest.version;
    } catch {
      // Not packaged next to its manifest: the version stays "unknown".
    }
    identity = { name: "fabric-core", version, runtime_name: "node", runtime_version: process.versions.node };
  }
  return identity;
}

/** A descriptor argument of `fabric_inspect`: `null` passes NULL, a string is sent as is. */
function descriptorText(descriptor: Record<string, unknown> | string | null, what: string): string | null {
  if (descriptor === null) return null;
  return cString(typeof descriptor === "string" ? descriptor : JSON.stringify(descriptor), what);
}

function requestText(options: InvokeOptions): string {
  if (options.input !== undefined && options.request !== undefined) {
    throw new FabricConfigError("input and request are mutually exclusive", { stage: "config", code: Code.INVALID_REQUEST });
  }
  const request: RunRequest = options.request ?? { input: options.input === undefined ? null : options.input };
  return cString(JSON.stringify(request), "request");
}

/** Entry point: plan, doctor, run and start runtimes. Cheap to create. */
export class Fabric {
  private readonly library: NativeLibrary;

  /** Loads the native library (once per process); throws FabricNativeUnavailableError. */
  constructor() {
    this.library = nativeLibrary();
  }

  /** The library version, e.g. `"0.1.0"`. */
  get version(): string {
    return this.library.version;
  }

  /** Validates a config and returns its canonical form. */
  async validate(config: FabricConfig | string, options: CallOptions = {}): Promise<FabricConfig> {
    options.signal?.throwIfAborted();
    return parse(await abortable(this.library.call("fabric_validate", [configText(config), optionsText(options)]), options.signal));
  }

  /** Resolves the adapter and checks compatibility; throws FabricConfigError/FabricCapabilityError. */
  async plan(config: FabricConfig | string, options: CallOptions = {}): Promise<RunPlan> {
    options.signal?.throwIfAborted();
    return parse(await abortable(this.library.call("fabric_plan", [configText(config), optionsText(options)]), options.signal));
  }

  /**
   * Inspects declared adapter support for a config from descriptor metadata alone (no
   * discovery, no harness import, no task-local paths): an AdapterCapabilityProfile
   * (`adapter_id`, `descriptor_sha256`, `skills`, `mcp`, `atif`).
   *
   * `descriptor` is the adapter's canonical descriptor (for example from the adapter
   * catalog); `null` permits basic execution with false capability claims but rejects
   * requested skills, MCP or telemetry. `targetDescriptor` is required for a config that
   * selects a registered workflow. Rejects with FabricConfigError (invalid config or
   * descriptor) or FabricCapabilityError (`config_incompatible`, `details.path` naming the
   * field the adapter cannot implement), as the Python `inspect_adapter`.
   */
  async inspectAdapter(
    config: FabricConfig | string,
    descriptor: Record<string, unknown> | string | null,
    targetDescriptor: Record<string, unknown> | string | null = null,
  ): Promise<AdapterCapabilityProfile> {
    const args = [configText(config), descriptorText(descriptor, "descriptor"), descriptorText(targetDescriptor, "targetDescriptor")];
    return parse(await this.library.call("fabric_inspect", args));
  }

  /**
   * Maps one rollout's RunResults (and the raw ATOF records of their invocations) to NeMo
   * Gym's observation contract: `{ng_agent_observations, trajectory}` (docs/gym.md). Throws
   * FabricConfigError for blank ids (`gym_id_blank`) or duplicate invocation ids.
   */
  async gymObservations(request: GymObservationsRequest): Promise<GymObservations> {
    return parse(await this.library.call("fabric_gym_observations", [JSON.stringify(request)]));
  }

  /**
   * Resolves the model-call references of a Gym bundle against the calls a model server
   * captured for the same rollout (Gym's `join_model_call_observations`, docs/gym.md):
   * ownership is never guessed, and what cannot be joined exactly is a gap. Throws
   * FabricConfigError for a bundle that breaks Gym's identity rules (`path` under `bundle`).
   */
  async joinModelCallObservations(bundle: AgentObservationBundle, calls: readonly ModelCallKeys[]): Promise<AgentObservationBundle> {
    return parse(await this.library.call("fabric_gym_join_model_calls", [JSON.stringify({ bundle, calls })]));
  }

  /**
   * Joins the assistant messages a Gym trajectory's turns (`source_message_id`) and a
   * bundle's compactions (`source_message_ids`) declare to the captured calls of the same
   * rollout, by session, message and model-server ids, after resolving ownership as
   * {@link joinModelCallObservations} does (Gym's `join_assistant_message_calls`,
   * docs/gym.md). Resolves with `{bundle, trajectory}` (`trajectory` absent when `null` was
   * given); what cannot be joined exactly is a gap. Throws FabricConfigError for a bundle
   * or trajectory that breaks Gym's identity rules (`path` under `bundle` or `trajectory`).
   */
  async joinAssistantMessageCalls(
    bundle: AgentObservationBundle,
    trajectory: TrajectoryRecord | null,
    calls: readonly ModelCallKeys[],
  ): Promise<GymJoinedAssistantMessages> {
    const request = trajectory === null ? { bundle, calls } : { bundle, trajectory, calls };
    return parse(await this.library.call("fabric_gym_join_assistant_messages", [JSON.stringify(request)]));
  }

  /**
   * Runs the adapter conformance checks (docs/checking-adapters.md), as `fabric adapters
   * check` does: the adapter by `adapter_id` or `descriptor` file, optionally an accepted
   * `config` and the groups to run (`only`); `model_stub` (a reply script, `{}` for the
   * default) serves the config's models from the core's stub model servers so the target
   * checks run, `stop_deadline_seconds` is how long the adapter has to exit after stop or
   * EOF (default 2). A failing check is in the report (`summary.failed`), not a rejection;
   * bad input rejects with FabricConfigError.
   */
  async checkAdapter(request: ConformanceRequest): Promise<ConformanceReport> {
    return parse(await this.library.call("fabric_adapter_check", [JSON.stringify(request)]));
  }

  /** Collects every finding instead of stopping at the first. */
  async doctor(config: FabricConfig | string, options: CallOptions = {}): Promise<DoctorReport> {
    options.signal?.throwIfAborted();
    return parse(await abortable(this.library.call("fabric_doctor", [configText(config), optionsText(options)]), options.signal));
  }

  /**
   * Runs a data set of items through `config` on the core's batch engine: `for await
   * (const done of fabric.batch(config, items, { concurrency: 8 }))` yields a BatchLine per
   * finished item (`id`, `attempts`, `result` or `error`) in completion order; the returned
   * batch holds the `summary` afterwards (see `batch.ts`, docs/batches.md).
   */
  batch(config: FabricConfig | string, items: Iterable<unknown> | AsyncIterable<unknown>, options: BatchOptions = {}): Batch {
    return new Batch(this.library, configText(config), items, options);
  }

  /** Start, invoke once, stop. A harness failure resolves with `status: "failed"`. */
  async run(config: FabricConfig | string, options: RunOptions = {}): Promise<RunResult> {
    const request = requestText(options);
    options.signal?.throwIfAborted();
    const work = this.library.operate("fabric_run_begin", [configText(config), request, optionsText(options)], "fabric_run");
    return parse(await abortable(work, options.signal));
  }

  /**
   * Launches `options.hosts` (default 1, at most 64) adapter hosts of `config` ahead of
   * time; later `run`/`startRuntime` calls with the same config and options take one (see
   * {@link Prewarm}). Results, evidence and stats are those of a cold start. Rejects with
   * FabricConfigError (`hosts` out of range: `details.path === "hosts"`) or
   * FabricCapabilityError (`prewarm_unsupported`: a non-local environment provider, `streaming`).
   */
  async prewarm(config: FabricConfig | string, options: CallOptions & { hosts?: number } = {}): Promise<Prewarm> {
    const hosts = options.hosts ?? 1;
    if (!Number.isInteger(hosts) || hosts < 0 || hosts > 0xffffffff) {
      throw new FabricConfigError("hosts must be an integer from 1 to 64", { stage: "config", code: Code.INVALID_ARGUMENT });
    }
    options.signal?.throwIfAborted();
    const library = this.library;
    const work = library.callWithHandle("fabric_prewarm_start", [configText(config), optionsText(options), hosts]);
    const { handle, text } = await abortable(work, options.signal, (late) => {
      library.callStatus("fabric_prewarm_free", late.handle).catch(() => undefined);
    });
    return new Prewarm(library, handle, parse<PrewarmInfo>(text));
  }

  /** Prepares the config's environment without starting an agent. */
  async prepareEnvironment(config: FabricConfig | string, options: CallOptions = {}): Promise<Environment> {
    options.signal?.throwIfAborted();
    const library = this.library;
    const work = library.callWithHandle("fabric_environment_prepare", [configText(config), optionsText(options)]);
    const { handle, text } = await abortable(work, options.signal, (late) => {
      library.call("fabric_environment_release", [late.handle]).then(
        () => library.environmentFree(late.handle),
        () => library.environmentFree(late.handle),
      );
    });
    return new Environment(library, handle, parse<EnvironmentInfo>(text));
  }

  /**
   * Attaches to the existing environment `reference` names (`provider` = the config's
   * `environment.provider`; the local provider takes `resource.workspace`, an existing
   * directory). The environment stays the caller's: `release()` only detaches. Any
   * environment's `info.reference` is a reference this accepts.
   */
  async attachEnvironment(config: FabricConfig | string, reference: EnvironmentReference, options: CallOptions = {}): Promise<Environment> {
    options.signal?.throwIfAborted();
    const library = this.library;
    const referenceText = cString(JSON.stringify(reference), "reference");
    const work = library.callWithHandle("fabric_environment_attach", [configText(config), referenceText, optionsText(options)]);
    const { handle, text } = await abortable(work, options.signal, (late) => {
      library.call("fabric_environment_release", [late.handle]).then(
        () => library.environmentFree(late.handle),
        () => library.environmentFree(late.handle),
      );
    });
    return new Environment(library, handle, parse<EnvironmentInfo>(text));
  }

  /** Python-SDK spelling of `environment.startRuntime(config)`. */
  startRuntimeIn(environment: Environment, config: FabricConfig | string, options: CallOptions = {}): Promise<Runtime> {
    return environment.startRuntime(config, options);
  }

  /** Python-SDK spelling of `environment.release()`. */
  releaseEnvironment(environment: Environment): Promise<EnvironmentInfo> {
    return environment.release();
  }

  /**
   * Checks a runtime's health and resolves with a frozen {@link CheckReport}. Every outcome
   * (`passed`, `failed`, `unknown`, `unsupported`) is a report; only an invalid request
   * rejects (FabricConfigError, code `invalid_check_request`, the field in
   * `details.path`). Checks use their own connection to the adapter host, so they complete
   * while an invocation is pending. One deadline (`timeout_seconds`, default 3) covers the
   * whole check. In a provider environment (`environment.provider` other than `local`) a
   * runtime check is answered by the environment's runtime server, which selects the runtime
   * there, and `scope: "server"` checks that server (docs/health.md).
   */
  async check(options: CheckOptions): Promise<CheckReport> {
    const environment = options.environment ?? null;
    // A released environment rejects with FabricStateError (`environment_released`).
    const handle = environment === null ? 0 : environment.nativeHandle();
    const request = cString(JSON.stringify(options.request), "check request");
    return deepFreeze(parse<CheckReport>(await this.library.call("fabric_check", [handle, request])));
  }

  /**
   * Starts a Fabric-owned shared service of the configured adapter (its descriptor must
   * claim `capabilities.service`, else FabricCapabilityError `service_unsupported`).
   */
  async prepareService(config: FabricConfig | string, options: CallOptions = {}): Promise<Service> {
    options.signal?.throwIfAborted();
    const library = this.library;
    const work = library.callWithHandle("fabric_service_prepare", [configText(config), optionsText(options)]);
    const { handle, text } = await abortable(work, options.signal, (late) => releaseLate(library, late.handle));
    return new Service(library, handle, parse<ServiceInfo>(text));
  }

  /** Attaches to a caller-owned service; `release()` then detaches without stopping it. */
  async attachService(config: FabricConfig | string, reference: ServiceReference, options: CallOptions = {}): Promise<Service> {
    options.signal?.throwIfAborted();
    const library = this.library;
    const referenceText = cString(JSON.stringify(reference), "reference");
    const work = library.callWithHandle("fabric_service_attach", [configText(config), referenceText, optionsText(options)]);
    const { handle, text } = await abortable(work, options.signal, (late) => releaseLate(library, late.handle));
    return new Service(library, handle, parse<ServiceInfo>(text));
  }

  /**
   * Starts a runtime for ordered invocations; close it with `stop()` or `await using`.
   * `options.service` connects it to a shared service ({@link Service.startRuntime}).
   */
  async startRuntime(config: FabricConfig | string, options: CallOptions & { service?: Service } = {}): Promise<Runtime> {
    if (options.service !== undefined) {
      if (!(options.service instanceof Service)) {
        throw new FabricConfigError("service must be a Service", { stage: "start", code: Code.INVALID_ARGUMENT });
      }
      return options.service.startRuntime(config, options);
    }
    options.signal?.throwIfAborted();
    const library = this.library;
    const work = library.startRuntime(configText(config), optionsText(options));
    // A runtime that starts after its caller gave up is stopped and freed at once.
    const { handle, text } = await abortable(work, options.signal, (late) => {
      library.call("fabric_runtime_stop", [late.handle]).then(
        () => library.runtimeFree(late.handle),
        () => library.runtimeFree(late.handle),
      );
    });
    return new Runtime(library, handle, parse<RuntimeInfo>(text));
  }
}

/** Releases and frees a service whose caller gave up before it started. */
function releaseLate(library: NativeLibrary, handle: number): void {
  library.call("fabric_service_release", [handle]).then(
    () => library.serviceFree(handle),
    () => library.serviceFree(handle),
  );
}

export interface CheckOptions {
  /** The health-check request (`scope`, `runtime_id`, `level`, `timeout_seconds`). */
  request: CheckRequest;
  /**
   * The environment the runtime was started in ({@link Environment.startRuntime}); omit it
   * for runtimes from {@link Fabric.startRuntime}. A provider environment is required for
   * `scope: "server"` (its runtime server); elsewhere that scope is
   * `unsupported/unsupported_scope`.
   */
  environment?: Environment | null;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value as object)) deepFreeze(item);
  }
  return value;
}

/** GC backstop: frees handles of environments dropped without `close()`. */
const environmentBackstop = new FinalizationRegistry<{ library: NativeLibrary; handle: number }>(({ library, handle }) => {
  library.environmentFree(handle);
});

/**
 * A prepared environment (workspace, artifacts, forwarded variables) that several runtimes
 * can share. Release it with `release()` (runtimes already started keep running), then
 * `close()`; `await using` does both.
 */
export class Environment implements AsyncDisposable {
  /** What the core reported: `environment_id`, `provider`, `workspace`, `artifacts`, `env_names`. */
  readonly info: EnvironmentInfo;
  private readonly library: NativeLibrary;
  private handle: number;
  private readonly token = {};
  private releasing: Promise<EnvironmentInfo> | null = null;

  /** @internal Created by {@link Fabric.prepareEnvironment} / {@link Fabric.attachEnvironment}. */
  constructor(library: NativeLibrary, handle: number, info: EnvironmentInfo) {
    this.library = library;
    this.handle = handle;
    this.info = info;
    environmentBackstop.register(this, { library, handle }, this.token);
  }

  get environmentId(): string {
    return this.info.environment_id;
  }

  private live(): number {
    if (this.handle === 0) {
      throw new FabricStateError("the environment was closed", { stage: "start", code: Code.ENVIRONMENT_RELEASED });
    }
    return this.handle;
  }

  /** @internal The C ABI handle for {@link Fabric.check}; throws once closed. */
  nativeHandle(): number {
    if (this.handle === 0 || this.releasing !== null) {
      throw new FabricStateError("the environment was released", { stage: "config", code: Code.ENVIRONMENT_RELEASED });
    }
    return this.handle;
  }

  /** Starts a runtime inside this environment; rejects with FabricStateError once released. */
  async startRuntime(config: FabricConfig | string, options: CallOptions = {}): Promise<Runtime> {
    const handle = this.live();
    options.signal?.throwIfAborted();
    const library = this.library;
    const work = library.callWithHandle("fabric_environment_start_runtime", [handle, configText(config), optionsText(options)]);
    const started = await abortable(work, options.signal, (late) => {
      library.call("fabric_runtime_stop", [late.handle]).then(
        () => library.runtimeFree(late.handle),
        () => library.runtimeFree(late.handle),
      );
    });
    return new Runtime(library, started.handle, parse<RuntimeInfo>(started.text));
  }

  /**
   * Runs `argv` in the environment (never through a shell unless `argv` names one), in
   * `cwd` relative to the workspace, with `env` added and `stdin` as its input. Its whole
   * process group is killed at the deadline (`timed_out`); each output stream keeps
   * `output_limit_bytes` (`stdout_truncated`, `stderr_truncated`). Works until release.
   */
  async exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const request: Record<string, unknown> = {
      argv,
      timeout_seconds: options.timeoutSeconds ?? 60,
      output_limit_bytes: options.outputLimitBytes ?? 1024 * 1024,
    };
    if (options.cwd !== undefined) request.cwd = options.cwd;
    if (options.env !== undefined) request.env = options.env;
    if (options.stdin !== undefined) request.stdin_hex = Buffer.from(options.stdin).toString("hex");
    return this.operate<ExecResult>("fabric_environment_exec", request);
  }

  /** Writes `data` (at most 16 MiB) beneath the workspace (or `root: "artifacts"`); links are never followed (`path_refused`). */
  async writeFile(filePath: string, data: Uint8Array | string, options: FileOptions & { mode?: number } = {}): Promise<void> {
    const request: Record<string, unknown> = { path: filePath, content_hex: Buffer.from(data).toString("hex"), root: options.root ?? "workspace" };
    if (options.mode !== undefined) request.mode = options.mode;
    await this.operate("fabric_environment_write_file", request);
  }

  /** The bytes of a regular file beneath the workspace (or artifact root), at most `maxBytes`. */
  async readFile(filePath: string, options: FileOptions & { maxBytes?: number } = {}): Promise<Buffer> {
    return Buffer.from((await this.readFileContent(filePath, options)).content_hex, "hex");
  }

  /** `readFile`'s FileContent: `content_hex`, `size` and `truncated`. */
  readFileContent(filePath: string, options: FileOptions & { maxBytes?: number } = {}): Promise<FileContent> {
    const request = { path: filePath, max_bytes: options.maxBytes ?? 4 * 1024 * 1024, root: options.root ?? "workspace" };
    return this.operate<FileContent>("fabric_environment_read_file", request);
  }

  /** The entries of a directory beneath the workspace (or artifact root); links are listed, never followed. */
  list(dirPath = "", options: FileOptions = {}): Promise<FileListing> {
    return this.operate<FileListing>("fabric_environment_list", { path: dirPath, root: options.root ?? "workspace" });
  }

  private async operate<T>(symbol: NativeSymbol, request: Record<string, unknown>): Promise<T> {
    const handle = this.nativeHandle();
    return parse<T>(await this.library.call(symbol, [handle, cString(JSON.stringify(request), "request")]));
  }

  /** Releases the environment once (idempotent); new starts in it then fail. */
  release(): Promise<EnvironmentInfo> {
    if (this.releasing === null) {
      this.releasing = this.library.call("fabric_environment_release", [this.live()]).then((text) => parse<EnvironmentInfo>(text));
      this.releasing.catch(() => undefined);
    }
    return this.releasing;
  }

  /** Frees the handle (after `release()`); idempotent. */
  close(): void {
    if (this.handle !== 0) {
      const handle = this.handle;
      this.handle = 0;
      environmentBackstop.unregister(this.token);
      this.library.environmentFree(handle);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      if (this.handle !== 0) await this.release();
    } finally {
      this.close();
    }
  }
}

/** GC backstop: frees handles of runtimes that were dropped without `stop()`. */
const backstop = new FinalizationRegistry<{ library: NativeLibrary; handle: number }>(({ library, handle }) => {
  library.runtimeFree(handle);
});

export type RuntimeState = "active" | "stopped" | "failed";

/** One started runtime: ordered invocations, then `stop()`. */
export class Runtime implements AsyncDisposable {
  /** What the core reported at start (ids, adapter, environment, host pid). */
  readonly info: RuntimeInfo;
  private readonly library: NativeLibrary;
  private handle: number;
  private readonly token = {};
  private stateValue: RuntimeState = "active";
  private stopping: Promise<RuntimeStopResult> | null = null;
  private stopResult: RuntimeStopResult | null = null;
  /** The core's last view of this runtime, read after a successful stop (before the handle is freed). */
  private finalStatus: RuntimeStatusInfo | null = null;
  /** An invocation whose caller stopped waiting (AbortSignal) and that is still running. */
  private orphan: Promise<void> | null = null;
  /** Streams whose handles are not freed yet. */
  private readonly streams = new Set<OpenAIInvokeStream<unknown>>();
  private readonly streamOwner: StreamOwner = {
    streamFailed: () => {
      this.stateValue = "failed";
    },
    streamClosing: (closing) => {
      const settled = closing.catch(() => undefined);
      this.orphan = settled;
      void settled.then(() => {
        if (this.orphan === settled) this.orphan = null;
      });
    },
    streamFreed: (stream) => {
      this.streams.delete(stream);
    },
  };

  /** @internal Created by {@link Fabric.startRuntime}. */
  constructor(library: NativeLibrary, handle: number, info: RuntimeInfo) {
    this.library = library;
    this.handle = handle;
    this.info = info;
    backstop.register(this, { library, handle }, this.token);
  }

  get runtimeId(): string {
    return this.info.runtime_id;
  }

  /** `active` until stopped; `failed` after a runtime error made the runtime terminal. */
  get state(): RuntimeState {
    return this.stateValue;
  }

  /** The stop result once `stop()` finished. */
  get stopped(): RuntimeStopResult | null {
    return this.stopResult;
  }

  private live(stage: string): number {
    if (this.handle === 0 || this.stopping !== null) {
      throw new FabricStateError(`cannot ${stage} a stopped runtime`, { stage, code: Code.RUNTIME_STOPPED });
    }
    return this.handle;
  }

  /**
   * Runs one invocation. Rejects with FabricStateError if another invocation of this
   * runtime is in flight or the runtime is stopped, FabricConfigError for an invalid
   * request, FabricRuntimeError when the core produced no result (the runtime is then
   * `failed`). A failed harness turn resolves with `status: "failed"`.
   *
   * With `signal`, an abort rejects at once with `signal.reason`; the invocation finishes
   * in the background and the next `invoke` waits for it, so the runtime stays usable.
   */
  async invoke(options: InvokeOptions = {}): Promise<RunResult> {
    this.live("invoke");
    const request = requestText(options);
    options.signal?.throwIfAborted();
    const orphan = this.orphan;
    if (orphan) await abortable(orphan, options.signal);
    const handle = this.live("invoke");
    const work = this.library.operate("fabric_runtime_invoke_begin", [handle, request], "fabric_runtime_invoke").catch((error: unknown) => {
      if (!(error instanceof FabricStateError || error instanceof FabricConfigError)) this.stateValue = "failed";
      throw error;
    });
    if (options.signal) {
      // If the caller stops waiting, the next invoke waits for this one to finish first.
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      options.signal.addEventListener(
        "abort",
        () => {
          this.orphan = settled;
          void settled.then(() => {
            if (this.orphan === settled) this.orphan = null;
          });
        },
        { once: true },
      );
    }
    return parse(await abortable(work, options.signal));
  }

  /**
   * Whether the selected adapter implements native OpenAI streaming (the plan's
   * `capabilities.streaming` and the descriptor's claim): what
   * {@link Runtime.invokeOpenAIStream} needs.
   */
  get supportsOpenAIStreaming(): boolean {
    return this.info.supports_openai_streaming === true;
  }

  /**
   * Starts one turn that streams native OpenAI `chat.completion.chunk` objects; see
   * {@link OpenAIInvokeStream}. Resolves once the invocation was sent to the adapter.
   *
   * Rejects with FabricCapabilityError (`openai_streaming_unavailable`) when the adapter
   * does not claim streaming, FabricStateError (`runtime_busy`) while another turn or
   * stream is active, FabricConfigError for an invalid request. With `signal`, an abort
   * before the stream exists rejects at once; afterwards it closes the stream (its
   * iteration rejects with `signal.reason`) without cancelling the turn.
   */
  async invokeOpenAIStream(options: InvokeOptions = {}): Promise<OpenAIInvokeStream> {
    return this.startStream("fabric_runtime_invoke_openai_stream", options, () => false, (handle, info) => {
      return new OpenAIInvokeStream(this.library, this.streamOwner, handle, info, options.signal);
    });
  }

  /**
   * Whether {@link Runtime.invokeStream} (raw NeMo Relay ATOF records) is available: the
   * runtime was started with `streaming: true` and Relay telemetry.
   */
  get supportsStreaming(): boolean {
    return this.info.supports_streaming === true;
  }

  /**
   * Starts one turn that streams the raw NeMo Relay ATOF records it publishes; see
   * {@link InvokeStream}. Resolves once the invocation was sent to the adapter.
   *
   * Rejects with FabricCapabilityError (`streaming_unavailable`) when the runtime was not
   * started with `streaming`, FabricStateError (`runtime_busy`) while another turn or
   * stream is active, FabricConfigError for an invalid request, FabricRuntimeError
   * (`collector_request_failed`) when the collector refused the request id. `signal` as
   * for {@link Runtime.invokeOpenAIStream}.
   */
  async invokeStream(options: InvokeOptions = {}): Promise<InvokeStream> {
    const collectorRefused = (error: unknown) => error instanceof FabricRuntimeError && error.code === Code.COLLECTOR_REQUEST_FAILED;
    return this.startStream("fabric_runtime_invoke_stream", options, collectorRefused, (handle, info) => {
      return new InvokeStream(this.library, this.streamOwner, handle, info, options.signal);
    });
  }

  /**
   * Starts a streaming turn with `symbol` and opens its stream. A failure fails the runtime
   * unless it is a refusal: a state, config or capability error, or one `refused` names. A
   * stream that starts after its caller gave up is closed and freed (the turn runs on).
   */
  private async startStream<S extends OpenAIInvokeStream<unknown>>(
    symbol: string,
    options: InvokeOptions,
    refused: (error: unknown) => boolean,
    open: (handle: number, info: StreamInfo) => S,
  ): Promise<S> {
    this.live("invoke");
    const request = requestText(options);
    options.signal?.throwIfAborted();
    const orphan = this.orphan;
    if (orphan) await abortable(orphan, options.signal);
    const handle = this.live("invoke");
    const library = this.library;
    const work = library.callWithHandle(symbol, [handle, request]).catch((error: unknown) => {
      if (!(error instanceof FabricStateError || error instanceof FabricConfigError || error instanceof FabricCapabilityError)) {
        if (!refused(error)) this.stateValue = "failed";
      }
      throw error;
    });
    const started = await abortable(work, options.signal, (late) => {
      library.callStatus("fabric_stream_free", late.handle).catch(() => undefined);
    });
    const stream = open(started.handle, parse<StreamInfo>(started.text));
    this.streams.add(stream);
    return stream;
  }

  /** The core's view of this runtime (state, invocations, host pid). */
  async status(): Promise<RuntimeStatusInfo> {
    if (this.handle === 0) {
      if (this.finalStatus !== null) return this.finalStatus;
      throw new FabricStateError("the runtime was stopped and its status could not be read", {
        stage: "invoke",
        code: Code.RUNTIME_STOPPED,
      });
    }
    return parse(await this.library.call("fabric_runtime_status", [this.handle]));
  }

  /**
   * Reads this runtime's process tree now (memory, process count, CPU time). Does not
   * wait for a pending invocation. Rejects with ResourceObservationUnavailableError when
   * the runtime is stopped or stopping, its host exited or the tree could not be read
   * consistently, and ResourceObservationUnsupportedError where no reader exists.
   */
  async resourceSnapshot(): Promise<RuntimeResourceSnapshot> {
    if (this.handle === 0 || this.stopping !== null) {
      throw new ResourceObservationUnavailableError("the runtime is stopped or stopping; its process tree is gone", {
        stage: "invoke",
        code: Code.RESOURCE_OBSERVATION_UNAVAILABLE,
      });
    }
    return parse(await this.library.call("fabric_runtime_resource_snapshot", [this.handle]));
  }

  /**
   * Stops the runtime once (later calls resolve with the same result) and frees its handle.
   * Rejects with FabricStateError (`runtime_busy`) while a stream is open: read it to its
   * end, or await its `result()` or `close()` first.
   */
  stop(): Promise<RuntimeStopResult> {
    if (this.stopping === null) {
      const streams = [...this.streams];
      if (streams.some((stream) => !stream.finished)) {
        return Promise.reject(
          new FabricStateError("cannot stop while a streaming invocation is active; consume it or await its result() or close()", {
            stage: "stop",
            code: Code.RUNTIME_BUSY,
          }),
        );
      }
      const handle = this.handle;
      const settled = Promise.all(streams.map((stream) => stream.settled()));
      this.stopping = settled.then(() => {
        for (const stream of streams) stream.free();
        return this.library.stopRuntime(handle);
      }).then(async (text) => {
        this.stopResult = parse<RuntimeStopResult>(text);
        this.stateValue = "stopped";
        // Keep the core's final view (state `stopped`, invocations, ...) for status().
        this.finalStatus = await this.library.call("fabric_runtime_status", [handle]).then(
          (status) => parse<RuntimeStatusInfo>(status),
          () => null,
        );
        this.free();
        return this.stopResult;
      });
      // Keep the shared promise from reporting an unhandled rejection; callers see it.
      this.stopping.catch(() => undefined);
    }
    return this.stopping;
  }

  /** Releases the handle without stopping first (the core then terminates the host). */
  private free(): void {
    if (this.handle !== 0) {
      const handle = this.handle;
      this.handle = 0;
      backstop.unregister(this.token);
      this.library.runtimeFree(handle);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
