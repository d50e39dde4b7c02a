/**
 * `fabric.typescript-echo`: a reference adapter written with fabric-core's `serve`.
 *
 * Each invocation answers `{"response", "turn", "previous_input"}`: the input (string
 * inputs get `harness.settings.prefix` in front), the 1-based turn number of this runtime
 * and the previous turn's input (null on the first turn). State lives on the runtime, so
 * two runtimes never see each other's turns.
 *
 * Directives in `request.context.scripted` (for tests):
 * - `fail: {code, message, retryable?}` — return a failed AgentRunResult;
 * - `raise: {code, message}` — throw a LifecycleError (the invocation fails at the host);
 * - `crash: true` — exit the host process with status 3 without answering;
 * - `sleep_ms: n` — wait n milliseconds (without blocking the event loop) before answering.
 *
 * Native OpenAI streaming (`invoke_openai_stream`, through `serve()`): the turn runs exactly
 * as `invoke`, then a string response is emitted as `chat.completion.chunk`s of
 * `request.context.scripted_stream.chunk_chars` characters (default 16; the first chunk
 * carries `role: "assistant"`) before the result is returned.
 *
 * Health (`check`): all three levels; `live` passes while the host runs, `active` and
 * `ready` once `start()` succeeded and until `stop()`. `harness.settings.health` can make
 * one level fail (`{"fail": "ready"}` → `failed/echo_forced_failure`) or stall until the
 * check's budget runs out (`{"stall": "active"}`).
 */
import {
  LifecycleError,
  type HealthCheckOptions,
  type HealthCheckResult,
  type HealthLevel,
  serve,
  type AdapterRuntime,
  type AgentRunRequest,
  type AgentRunResult,
  type JsonObject,
  type JsonValue,
  type OpenAIChunkEmitter,
  type RuntimeContext,
  type StartPayload,
} from "fabric-core/adapter";

interface ErrorDirective {
  code: string;
  message: string;
  retryable?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorDirective(value: unknown, path: string): ErrorDirective {
  if (!isObject(value) || typeof value.code !== "string" || typeof value.message !== "string") {
    throw new LifecycleError("echo_invalid_directive", `${path} must be an object with string code and message`);
  }
  if (value.retryable !== undefined && typeof value.retryable !== "boolean") {
    throw new LifecycleError("echo_invalid_directive", `${path}.retryable must be a boolean`);
  }
  return { code: value.code, message: value.message, retryable: value.retryable as boolean | undefined };
}

const DEFAULT_CHUNK_CHARS = 16;
const MAX_CHUNK_CHARS = 1_000_000;

/** `request.context.scripted_stream.chunk_chars`, checked. */
function chunkChars(context: unknown): number {
  const options = isObject(context) ? context.scripted_stream : undefined;
  if (options === undefined) return DEFAULT_CHUNK_CHARS;
  const value = isObject(options) ? (options.chunk_chars ?? DEFAULT_CHUNK_CHARS) : null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_CHUNK_CHARS) {
    throw new LifecycleError(
      "echo_invalid_directive",
      `request.context.scripted_stream.chunk_chars must be an integer in 1..${MAX_CHUNK_CHARS}`,
    );
  }
  return value;
}

const LEVELS: readonly string[] = ["live", "active", "ready"];

function healthSettings(value: unknown): { fail?: HealthLevel; stall?: HealthLevel } {
  if (!isObject(value)) throw new LifecycleError("echo_invalid_settings", "harness.settings.health must be an object");
  const out: { fail?: HealthLevel; stall?: HealthLevel } = {};
  for (const [key, level] of Object.entries(value)) {
    if ((key !== "fail" && key !== "stall") || typeof level !== "string" || !LEVELS.includes(level)) {
      throw new LifecycleError("echo_invalid_settings", `harness.settings.health.${key} must be fail or stall with live, active or ready`);
    }
    out[key] = level as HealthLevel;
  }
  return out;
}

export class EchoRuntime implements AdapterRuntime {
  private prefix = "";
  private started = false;
  private health: { fail?: HealthLevel; stall?: HealthLevel } = {};
  private turn = 0;
  private previousInput: JsonValue = null;

  start(payload: StartPayload): JsonObject {
    const settings = payload.config.harness?.settings ?? {};
    for (const key of Object.keys(settings)) {
      if (key !== "prefix" && key !== "health") {
        throw new LifecycleError("echo_invalid_settings", `harness.settings.${key} is not a known setting`);
      }
    }
    if (settings.prefix !== undefined) {
      if (typeof settings.prefix !== "string") {
        throw new LifecycleError("echo_invalid_settings", "harness.settings.prefix must be a string");
      }
      this.prefix = settings.prefix;
    }
    if (settings.health !== undefined) this.health = healthSettings(settings.health);
    this.started = true;
    console.log("echo adapter started"); // goes to stderr: stdout is the protocol's
    return { adapter: "fabric.typescript-echo" };
  }

  async invoke(request: AgentRunRequest, context: RuntimeContext): Promise<AgentRunResult> {
    const directives = isObject(request.context) ? request.context.scripted : undefined;
    if (directives !== undefined && !isObject(directives)) {
      throw new LifecycleError("echo_invalid_directive", "request.context.scripted must be an object");
    }
    if (directives?.crash === true) process.exit(3);
    if (directives?.raise !== undefined) {
      const raise = errorDirective(directives.raise, "request.context.scripted.raise");
      throw new LifecycleError(raise.code, raise.message, { retryable: raise.retryable ?? false });
    }
    if (directives?.sleep_ms !== undefined) {
      const ms = directives.sleep_ms;
      if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 0 || ms > 600_000) {
        throw new LifecycleError("echo_invalid_directive", "request.context.scripted.sleep_ms must be an integer in 0..600000");
      }
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
    this.turn += 1;
    if (directives?.fail !== undefined) {
      const fail = errorDirective(directives.fail, "request.context.scripted.fail");
      return {
        status: "failed",
        output: { turn: this.turn },
        error: { code: fail.code, message: fail.message, retryable: fail.retryable ?? false },
      };
    }
    const input = request.input;
    const response = typeof input === "string" ? `${this.prefix}${input}` : input;
    const output: JsonObject = {
      response,
      turn: this.turn,
      previous_input: this.previousInput,
      runtime_id: context.runtime_id,
    };
    this.previousInput = input;
    return { status: "succeeded", output };
  }

  async invokeOpenAIStream(request: AgentRunRequest, context: RuntimeContext, emit: OpenAIChunkEmitter): Promise<AgentRunResult> {
    const size = chunkChars(request.context);
    const result = await this.invoke(request, context);
    const response = isObject(result.output) ? result.output.response : undefined;
    const text = typeof response === "string" ? response : "";
    const created = Math.floor(Date.now() / 1000);
    // Code points, so a chunk never splits a surrogate pair.
    const characters = Array.from(text);
    for (let start = 0; start < characters.length; start += size) {
      const delta: { content: string; role?: string } = { content: characters.slice(start, start + size).join("") };
      if (start === 0) delta.role = "assistant";
      await emit({
        id: `chatcmpl-${context.invocation_id}`,
        object: "chat.completion.chunk",
        created,
        model: "fabric.typescript-echo",
        choices: [{ index: 0, delta, finish_reason: null }],
      });
    }
    return result;
  }

  async check(level: HealthLevel, options: HealthCheckOptions): Promise<HealthCheckResult> {
    const source = `echo:${level}`;
    if (this.health.stall === level) {
      await new Promise((resolve) => options.signal.addEventListener("abort", resolve, { once: true }));
      return { outcome: "unknown", reason: "probe_timeout", source_id: source };
    }
    if (this.health.fail === level) return { outcome: "failed", reason: "echo_forced_failure", source_id: source };
    if (level !== "live" && !this.started) return { outcome: "failed", reason: "not_started", source_id: source };
    return { outcome: "passed", source_id: source };
  }

  stop(): void {
    this.started = false;
    this.turn = 0;
    this.previousInput = null;
  }
}

if (require.main === module) {
  void serve(() => new EchoRuntime());
}
