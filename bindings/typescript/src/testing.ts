/**
 * Test helpers for adapter authors: drive a lifecycle host process over its stdin/stdout
 * with a deadline on every wait, and build well-formed lifecycle messages.
 *
 * ```ts
 * import { HostProcess, startMessage, invokeMessage, stopMessage } from "fabric-core/testing";
 * const host = new HostProcess("node", ["dist/main.js"]);
 * const started = await host.request(startMessage("runtime-1"));
 * ```
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** A spawned lifecycle host driven line by line, with a deadline on every wait. */
export class HostProcess {
  readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private waiters: (() => void)[] = [];
  private buffered = "";
  stderr = "";
  private exitStatus: number | null | undefined = undefined;
  private readonly exited: Promise<number | null>;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      this.buffered += chunk;
      let newline = this.buffered.indexOf("\n");
      while (newline >= 0) {
        this.lines.push(this.buffered.slice(0, newline));
        this.buffered = this.buffered.slice(newline + 1);
        newline = this.buffered.indexOf("\n");
      }
      this.wake();
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderr += chunk;
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code) => {
        this.exitStatus = code;
        this.wake();
        resolve(code);
      });
    });
    this.child.stdin.on("error", () => undefined);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  private async until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  send(message: unknown): void {
    this.child.stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
  }

  /** The next raw stdout line. */
  async nextLine(timeoutMs = 10_000): Promise<string> {
    return this.until("a response line", () => this.lines.shift(), timeoutMs);
  }

  /** Sends one request and parses its response. */
  async request(message: unknown, timeoutMs = 10_000): Promise<any> {
    this.send(message);
    return JSON.parse(await this.nextLine(timeoutMs));
  }

  /**
   * Sends one request and parses its response, or resolves `null` when the host exits
   * without answering (a host that ended after the previous response).
   */
  async requestOrExit(message: unknown, timeoutMs = 10_000): Promise<any | null> {
    if (this.running) this.send(message);
    const line = await this.until(
      "a response line or the host's exit",
      () => (this.lines.length > 0 ? this.lines.shift() : this.running ? undefined : null),
      timeoutMs,
    );
    return line === null ? null : JSON.parse(line as string);
  }

  async waitStderr(text: string, timeoutMs = 10_000): Promise<void> {
    await this.until(`stderr to contain ${JSON.stringify(text)}`, () => (this.stderr.includes(text) ? true : undefined), timeoutMs);
  }

  closeStdin(): void {
    this.child.stdin.end();
  }

  /** Exit status (signal deaths give null) within the deadline. */
  async exit(timeoutMs = 10_000): Promise<number | null> {
    return this.until("the host to exit", () => (this.exitStatus === undefined ? undefined : this.exitStatus), timeoutMs).then(
      () => this.exited,
    );
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  kill(): void {
    if (this.running) this.child.kill("SIGKILL");
  }

  /** stdout lines received but not yet read. */
  pending(): string[] {
    return [...this.lines];
  }
}


export function runtimeContext(runtimeId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    runtime_id: runtimeId,
    invocation_id: "invocation-1",
    request_id: "request-1",
    environment: {
      environment_id: "environment-1",
      provider: "local",
      control_location: "external_control",
      ownership: "fabric_owned",
    },
    artifacts: {},
    ...extra,
  };
}

export function startMessage(runtimeId: string, config: Record<string, unknown> = {}): unknown {
  return {
    operation: "start",
    payload: { agent_name: "probe", base_dir: "/tmp", config, runtime_context: { runtime_id: runtimeId } },
  };
}

export function invokeMessage(runtimeId: string, request: Record<string, unknown>, context: Record<string, unknown> = {}): unknown {
  return { operation: "invoke", payload: { runtime_context: runtimeContext(runtimeId, context), request } };
}

export function stopMessage(runtimeId: string): unknown {
  return { operation: "stop", payload: { runtime_id: runtimeId } };
}
