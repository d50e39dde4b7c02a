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

export function startMessage(runtimeId: string, config: Record<string, unknown> = {}): LifecycleMessage {
  return {
    operation: "start",
    payload: { agent_name: "probe", base_dir: "/tmp", config, runtime_context: { runtime_id: runtimeId } },
  };
}

export function invokeMessage(runtimeId: string, request: Record<string, unknown>, context: Record<string, unknown> = {}): LifecycleMessage {
  return { operation: "invoke", payload: { runtime_context: runtimeContext(runtimeId, context), request } };
}

/** A lifecycle request line as an object. */
export type LifecycleMessage = Record<string, unknown>;

export function stopMessage(runtimeId: string): LifecycleMessage {
  return { operation: "stop", payload: { runtime_id: runtimeId } };
}

/** One record the adapter sent to an {@link OpenAIStreamSink}. */
export interface StreamRecord {
  type: "chunk" | "end";
  sequence: number;
  runtime_id: string;
  invocation_id: string;
  request_id: string;
  chunk?: Record<string, unknown>;
}

/**
 * A stand-in for the core's OpenAI stream listener: accepts one connection on
 * 127.0.0.1, answers `100 Continue` (or `continueStatus`), decodes the chunked NDJSON
 * records and answers `finalStatus` (default 200) after the last chunk.
 */
export class OpenAIStreamSink {
  readonly records: StreamRecord[] = [];
  /** Request line and lower-cased headers of the adapter's request. */
  request: { line: string; headers: Record<string, string> } | null = null;
  /** Set when the body ended with the zero-length chunk. */
  completed = false;
  private connections = 0;
  private finishedFlag = false;
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: import("node:net").Server,
    readonly port: number,
    readonly token: string,
  ) {}

  static async listen(options: { continueStatus?: number; finalStatus?: number } = {}): Promise<OpenAIStreamSink> {
    const net = await import("node:net");
    const crypto = await import("node:crypto");
    const token = crypto.randomBytes(32).toString("base64url");
    let sink: OpenAIStreamSink | undefined;
    const server = net.createServer((socket) => sink!.accept(socket, options));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address() as import("node:net").AddressInfo;
    sink = new OpenAIStreamSink(server, address.port, token);
    return sink;
  }

  /** The `payload.stream` object for an invocation with these ids. */
  sinkFor(runtimeId: string, invocationId = "invocation-1", requestId = "request-1"): Record<string, unknown> {
    return {
      protocol_version: "fabric.openai_stream/v1alpha1",
      profile: "openai.chat_completions.chunk/v1",
      host: "127.0.0.1",
      port: this.port,
      token: this.token,
      runtime_id: runtimeId,
      invocation_id: invocationId,
      request_id: requestId,
    };
  }

  /** Number of connections accepted so far. */
  get connectionCount(): number {
    return this.connections;
  }

  private accept(socket: import("node:net").Socket, options: { continueStatus?: number; finalStatus?: number }): void {
    this.connections += 1;
    let buffer = Buffer.alloc(0);
    let phase: "head" | "size" | "data" | "trailer" | "done" = "head";
    let size = 0;
    const finish = () => {
      this.finishedFlag = true;
      const waiters = this.waiters;
      this.waiters = [];
      for (const waiter of waiters) waiter();
    };
    socket.on("close", finish);
    socket.on("error", () => undefined);
    socket.on("data", (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        if (phase === "head") {
          const end = buffer.indexOf("\r\n\r\n");
          if (end < 0) return;
          const [line, ...headerLines] = buffer.subarray(0, end).toString("latin1").split("\r\n");
          const headers: Record<string, string> = {};
          for (const header of headerLines) {
            const colon = header.indexOf(":");
            headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
          }
          this.request = { line: line as string, headers };
          buffer = buffer.subarray(end + 4);
          const status = options.continueStatus ?? 100;
          if (status !== 100 || headers.authorization !== `Bearer ${this.token}`) {
            socket.end(`HTTP/1.1 ${status === 100 ? 401 : status} Rejected\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
            phase = "done";
            return;
          }
          socket.write("HTTP/1.1 100 Continue\r\n\r\n");
          phase = "size";
        } else if (phase === "size") {
          const end = buffer.indexOf("\r\n");
          if (end < 0) return;
          size = parseInt(buffer.subarray(0, end).toString("latin1"), 16);
          buffer = buffer.subarray(end + 2);
          phase = size === 0 ? "trailer" : "data";
        } else if (phase === "data") {
          if (buffer.length < size + 2) return;
          const line = buffer.subarray(0, size).toString("utf8");
          this.records.push(JSON.parse(line) as StreamRecord);
          buffer = buffer.subarray(size + 2);
          phase = "size";
        } else if (phase === "trailer") {
          if (buffer.length < 2) return;
          this.completed = true;
          const status = options.finalStatus ?? 200;
          socket.end(`HTTP/1.1 ${status} ${status === 200 ? "OK" : "Rejected"}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
          phase = "done";
        } else {
          return;
        }
      }
    });
  }

  /** Resolves once the adapter's connection closed (within the deadline). */
  async closed(timeoutMs = 10_000): Promise<void> {
    if (this.finishedFlag) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for the stream connection to close")), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close(): void {
    this.server.close();
  }
}

/** An `invoke_openai_stream` request for `sink`. */
export function invokeStreamMessage(
  runtimeId: string,
  request: Record<string, unknown>,
  stream: Record<string, unknown>,
  context: Record<string, unknown> = {},
): LifecycleMessage {
  return {
    operation: "invoke_openai_stream",
    payload: { runtime_context: runtimeContext(runtimeId, context), request, stream },
  };
}

/** One observation of a health response. */
export interface HealthCheckObservation {
  level: string;
  outcome: string;
  reason: string | null;
  source_id: string;
  observed_at: string;
}

function canonicalForCheck(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalForCheck).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value as object).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalForCheck((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Asks the health listener whose endpoint file is `FABRIC_HOME/health.endpoint.json` for
 * `level` (a signed request with a fresh nonce, as the Fabric core sends it) and resolves
 * with the verified observations, or rejects when the listener does not answer within
 * `budgetMs` (+1 s) or the answer does not verify. For adapter tests; the Fabric SDK's
 * `fabric.check()` is the caller-side API.
 */
export async function healthCheck(
  fabricHome: string,
  options: { level?: "live" | "active" | "ready"; budgetMs?: number } = {},
): Promise<HealthCheckObservation[]> {
  const fs = await import("node:fs");
  const net = await import("node:net");
  const crypto = await import("node:crypto");
  const endpoint = JSON.parse(fs.readFileSync(`${fabricHome}/health.endpoint.json`, "utf8")) as {
    schema_version: string;
    transport?: string;
    socket?: string;
    port?: number;
    host?: string;
    secret: string;
    pid: number;
  };
  const key = Buffer.from(endpoint.secret, "hex");
  const mac = (body: object) => crypto.createHmac("sha256", key).update(canonicalForCheck(body)).digest("hex");
  const nonce = crypto.randomBytes(32).toString("hex");
  const budgetMs = options.budgetMs ?? 3000;
  const body = {
    kind: "fabric.health/request",
    v: 1,
    level: options.level ?? "ready",
    budget_ms: budgetMs,
    issued_at_ms: Date.now(),
    nonce,
  };
  const line = `${canonicalForCheck({ ...body, mac: mac(body) })}\n`;
  // A unix connect fails with EAGAIN while the listener's backlog is full: retry briefly.
  const started = Date.now();
  let text: string;
  for (;;) {
    try {
      text = await exchangeOnce(fs, net, endpoint, line, budgetMs);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() - started > budgetMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  if (text === "") throw new Error("health listener closed without answering");
  const response = JSON.parse(text) as Record<string, unknown>;
  const got = response.mac;
  delete response.mac;
  if (got !== mac(response) || response.nonce !== nonce || response.kind !== "fabric.health/response" || response.pid !== endpoint.pid) {
    throw new Error("health response failed verification");
  }
  return response.observations as HealthCheckObservation[];
}

/** One connection: sends `line`, resolves with everything read until the listener closes. */
function exchangeOnce(
  fs: typeof import("node:fs"),
  net: typeof import("node:net"),
  endpoint: { schema_version: string; transport?: string; socket?: string; host?: string; port?: number },
  line: string,
  budgetMs: number,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    // v2 names a unix socket (reached through its directory's fd when the path is too long
    // for a socket address); v1 a loopback TCP port.
    let dirFd: number | null = null;
    let target: { path: string } | { host: string; port: number };
    if (endpoint.schema_version === "fabric.health-endpoint/v2" && endpoint.transport === "unix") {
      const file = endpoint.socket as string;
      if (Buffer.byteLength(file) > 100) {
        dirFd = fs.openSync(file.slice(0, file.lastIndexOf("/")), "r");
        target = { path: `/proc/self/fd/${dirFd}/${file.slice(file.lastIndexOf("/") + 1)}` };
      } else {
        target = { path: file };
      }
    } else {
      target = { host: endpoint.host as string, port: endpoint.port as number };
    }
    const socket = net.connect(target);
    socket.once("connect", () => {
      if (dirFd !== null) fs.closeSync(dirFd);
      dirFd = null;
    });
    let data = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("health listener did not answer in time"));
    }, budgetMs + 1000);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (data += chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      if (dirFd !== null) fs.closeSync(dirFd);
      dirFd = null;
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.write(line);
  });
}

/**
 * The one rule for a test whose dependency is missing (the same rule as the repository's
 * Rust and pytest suites): the test FAILS, naming what to install, unless
 * `FABRIC_ALLOW_SKIPS=1` asks for a partial run. For node:test's `skip` option: returns
 * `false` when `present`; when not, throws (the test file fails with the message) or, with
 * `FABRIC_ALLOW_SKIPS=1`, returns the skip reason.
 *
 * ```ts
 * const skip = dependencySkip(fs.existsSync(CLI), CLI, "cargo build --workspace");
 * test("fabric run drives the adapter", { skip }, () => { ... });
 * ```
 */
export function dependencySkip(present: boolean, what: string, install: string): string | false {
  if (present) return false;
  const reason = `${what} is missing; install it: ${install}`;
  if ((process.env.FABRIC_ALLOW_SKIPS ?? "").trim() === "1") return `${reason} (FABRIC_ALLOW_SKIPS=1)`;
  throw new Error(`${reason} (or set FABRIC_ALLOW_SKIPS=1 for a partial run that skips these tests)`);
}
