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
 * - `crash: true` — exit the host process with status 3 without answering.
 */
import {
  LifecycleError,
  serve,
  type AdapterRuntime,
  type AgentRunRequest,
  type AgentRunResult,
  type JsonObject,
  type JsonValue,
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

export class EchoRuntime implements AdapterRuntime {
  private prefix = "";
  private turn = 0;
  private previousInput: JsonValue = null;

  start(payload: StartPayload): JsonObject {
    const settings = payload.config.harness?.settings ?? {};
    for (const key of Object.keys(settings)) {
      if (key !== "prefix") {
        throw new LifecycleError("echo_invalid_settings", `harness.settings.${key} is not a known setting`);
      }
    }
    if (settings.prefix !== undefined) {
      if (typeof settings.prefix !== "string") {
        throw new LifecycleError("echo_invalid_settings", "harness.settings.prefix must be a string");
      }
      this.prefix = settings.prefix;
    }
    console.log("echo adapter started"); // goes to stderr: stdout is the protocol's
    return { adapter: "fabric.typescript-echo" };
  }

  invoke(request: AgentRunRequest, context: RuntimeContext): AgentRunResult {
    const directives = isObject(request.context) ? request.context.scripted : undefined;
    if (directives !== undefined && !isObject(directives)) {
      throw new LifecycleError("echo_invalid_directive", "request.context.scripted must be an object");
    }
    if (directives?.crash === true) process.exit(3);
    if (directives?.raise !== undefined) {
      const raise = errorDirective(directives.raise, "request.context.scripted.raise");
      throw new LifecycleError(raise.code, raise.message, { retryable: raise.retryable ?? false });
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

  stop(): void {
    this.turn = 0;
    this.previousInput = null;
  }
}

if (require.main === module) {
  void serve(() => new EchoRuntime());
}
