/**
 * Health listener for TypeScript adapter hosts.
 *
 * The host answers Fabric health checks on an authenticated local listener, separate from
 * the lifecycle pipe, so checks are answered while an invocation is pending (as long as the
 * invocation awaits instead of blocking the event loop). By default the listener is a
 * unix-domain socket (0600) inside the private `FABRIC_HOME`, which other users cannot
 * reach; `FABRIC_HEALTH_TRANSPORT=tcp` (or a socket that cannot be bound) selects
 * `127.0.0.1:0`. It writes `health.endpoint.json` (mode 0600, atomically: a 0600 temporary
 * sibling, then `rename`) under `FABRIC_HOME` with its socket path (schema v2) or port
 * (schema v1), pid and a random 32-byte secret. At most `MAX_PENDING` connections wait for
 * their first line (the oldest is closed when another arrives), each for
 * `REQUEST_READ_TIMEOUT_MS`; only authenticated requests count against `MAX_CONNECTIONS`,
 * so idle connections cannot starve real checks. Requests and responses carry an HMAC-SHA256 over their canonical JSON;
 * a response repeats the request's nonce. Malformed, unauthenticated, stale (more than
 * 60 s from this clock) or replayed requests are dropped without a byte. The wire format
 * is documented in `docs/health.md` and `fabric-health/src/wire.rs`.
 *
 * {@link serve} starts the listener after the runtime's `start()` succeeds (when
 * `FABRIC_HOME` is set) and stops it, removing the file, before `stop()`. The runtime's
 * optional `check(level, {timeoutMs, signal})` method answers one level; see
 * {@link HealthCheckResult} for what it may return.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

export const ENDPOINT_FILE_NAME = "health.endpoint.json";
export const ENDPOINT_SCHEMA_VERSION = "fabric.health-endpoint/v1";
export const ENDPOINT_SCHEMA_VERSION_V2 = "fabric.health-endpoint/v2";
/** Environment variable choosing the transport: `tcp`, else a unix-domain socket. */
export const TRANSPORT_ENV = "FABRIC_HEALTH_TRANSPORT";
export const REQUEST_KIND = "fabric.health/request";
export const RESPONSE_KIND = "fabric.health/response";
export const PROTOCOL_VERSION = 1;
export const HEALTH_LEVELS = ["live", "active", "ready"] as const;
export const MAX_REQUEST_BYTES = 4096;
export const FRESHNESS_WINDOW_MS = 60_000;
export const MAX_BUDGET_MS = 86_400_000;
/** Authenticated requests served at once; unauthenticated connections never count. */
export const MAX_CONNECTIONS = 32;
/** Connections waiting for their first line; the oldest is closed when another arrives. */
export const MAX_PENDING = 128;
export const NONCE_MEMORY = 8192;
export const REQUEST_READ_TIMEOUT_MS = 1000;
/** Longer socket paths are bound through `/proc/self/fd/<dir fd>/<name>`. */
const MAX_DIRECT_SOCKET_PATH = 100;

/** How a listener is reached. */
export type HealthTransport = "unix" | "tcp";

/** `FABRIC_HEALTH_TRANSPORT`: `tcp`, else `unix`. */
export function transportFromEnv(): HealthTransport {
  return (process.env[TRANSPORT_ENV] ?? "").toLowerCase() === "tcp" ? "tcp" : "unix";
}
/** Evidence source id of observations the listener makes itself. */
export const LISTENER_SOURCE_ID = "fabric:health_listener";
/** Evidence source id used when `check()` names none. */
export const DEFAULT_SOURCE_ID = "adapter:check";

export type HealthLevel = (typeof HEALTH_LEVELS)[number];
export type HealthOutcome = "passed" | "failed" | "unknown" | "unsupported";

/** One level's observation as it crosses the wire. */
export interface HealthObservation {
  level: HealthLevel;
  outcome: HealthOutcome;
  reason: string | null;
  source_id: string;
  observed_at: string;
}

/**
 * What `check(level)` may return: `true` (passed), `false` (failed/probe_failed), an
 * outcome string, or `{outcome, reason?, source_id?}`. Anything else, `undefined`, or a
 * throw is `unknown/probe_error`: only an explicit answer passes.
 */
export type HealthCheckResult =
  | boolean
  | HealthOutcome
  | { outcome: HealthOutcome; reason?: string | null; source_id?: string };

/** Passed to `check`: the milliseconds left of the check's budget, and a signal aborted when they run out. */
export interface HealthCheckOptions {
  timeoutMs: number;
  signal: AbortSignal;
}

/** An object with the optional health method of an adapter runtime. */
export interface HealthCheckable {
  check?(level: HealthLevel, options: HealthCheckOptions): HealthCheckResult | Promise<HealthCheckResult>;
}

/** A probe answers one level: `{outcome, reason, source_id}`. */
export type HealthProbe = (
  level: HealthLevel,
  options: HealthCheckOptions,
) => Promise<{ outcome: HealthOutcome; reason: string | null; source_id: string }>;

const OUTCOMES: ReadonlySet<string> = new Set(["passed", "failed", "unknown", "unsupported"]);
const REASON = /^[a-z][a-z0-9_]{0,63}$/;
const SOURCE_ID = /^[A-Za-z0-9._:/-]{1,128}$/;
const HEX64 = /^[0-9a-f]{64}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function compareCodePoints(a: string, b: string): number {
  // Object keys sorted by code point (UTF-16 code-unit order differs above U+FFFF).
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] as string).codePointAt(0)! - (y[i] as string).codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * Canonical JSON: keys sorted by code point, no whitespace, strings escaped only where
 * JSON requires. Equals Python's `json.dumps(v, sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False)` for strings, integers, booleans, null, arrays and objects.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError("canonical JSON carries integers only");
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort(compareCodePoints);
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  throw new TypeError(`canonical JSON cannot carry ${typeof value}`);
}

function macHex(key: Buffer, body: Record<string, unknown>): string {
  return crypto.createHmac("sha256", key).update(canonicalJson(body), "utf8").digest("hex");
}

/** The line for `body` with its `mac` added (newline included). */
export function sealMessage(key: Buffer, body: Record<string, unknown>): string {
  const sealed: Record<string, unknown> = { ...body };
  delete sealed.mac;
  sealed.mac = macHex(key, sealed);
  return `${canonicalJson(sealed)}\n`;
}

/** The body without `mac` when `line` is a JSON object whose MAC verifies, else null. */
export function openMessage(key: Buffer, line: Buffer | string): Record<string, unknown> | null {
  let body: unknown;
  try {
    body = JSON.parse(typeof line === "string" ? line : line.toString("utf8"));
  } catch {
    return null;
  }
  if (!isObject(body)) return null;
  const mac = body.mac;
  delete body.mac;
  if (typeof mac !== "string" || !HEX64.test(mac)) return null;
  let expected: string;
  try {
    expected = macHex(key, body);
  } catch {
    return null; // floats or other values the canonical form does not carry
  }
  return crypto.timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex")) ? body : null;
}

/** RFC 3339 UTC with milliseconds. */
function nowRfc3339(): string {
  return new Date().toISOString();
}

/**
 * Authenticated nonces seen recently. When full, the oldest is forgotten and its issue
 * time becomes a floor: requests issued at or before it are refused, so a forgotten nonce
 * cannot be replayed.
 */
class NonceSet {
  private readonly seen = new Set<string>();
  private readonly order: Array<[string, number]> = [];
  private head = 0;
  private floorMs = 0;

  insert(nonce: string, issuedAtMs: number): boolean {
    if (issuedAtMs <= this.floorMs || this.seen.has(nonce)) return false;
    if (this.order.length - this.head >= NONCE_MEMORY) {
      const [old, at] = this.order[this.head] as [string, number];
      this.head += 1;
      this.seen.delete(old);
      this.floorMs = Math.max(this.floorMs, at);
      if (this.head > NONCE_MEMORY) {
        this.order.splice(0, this.head);
        this.head = 0;
      }
    }
    this.seen.add(nonce);
    this.order.push([nonce, issuedAtMs]);
    return true;
  }
}

interface AuthenticatedRequest {
  nonce: string;
  level: HealthLevel;
  budgetMs: number;
}

const isInteger = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value);

/**
 * A loopback health listener calling `probe(level, {timeoutMs, signal})` for each level in
 * order. Use {@link serveHealth} for a runtime with a `check` method.
 */
export class HealthListener {
  /** `FABRIC_HOME/health.endpoint.json`. */
  readonly endpointPath: string;
  /** The bound port (0 before `start()` and on a unix socket). */
  port = 0;
  /** The unix socket path (null before `start()` and on TCP). */
  socketPath: string | null = null;
  /** The transport in use (after `start()`: `tcp` when the socket could not be bound). */
  transport: HealthTransport;
  private readonly key = crypto.randomBytes(32);
  private readonly nonces = new NonceSet();
  private readonly home: string;
  private server: net.Server | null = null;
  private endpoint: Record<string, unknown> | null = null;
  private active = 0;
  /** Connections waiting for their first line, oldest first. */
  private readonly pending = new Set<net.Socket>();
  private trimScheduled = false;

  constructor(
    private readonly probe: HealthProbe,
    fabricHome: string,
    transport?: HealthTransport,
  ) {
    this.home = fabricHome;
    this.endpointPath = path.join(fabricHome, ENDPOINT_FILE_NAME);
    this.transport = transport ?? transportFromEnv();
  }

  /** Binds the socket and writes the endpoint file; resolves once both are done. */
  async start(): Promise<this> {
    if (this.server !== null) return this;
    let server: net.Server | null = null;
    if (this.transport === "unix") server = await this.listenUnix();
    if (server === null) {
      this.transport = "tcp";
      server = this.createServer();
      await listen(server, { host: "127.0.0.1", port: 0, backlog: 128 });
      this.port = (server.address() as net.AddressInfo).port;
      this.endpoint = {
        schema_version: ENDPOINT_SCHEMA_VERSION,
        host: "127.0.0.1",
        port: this.port,
        pid: process.pid,
        secret: this.key.toString("hex"),
      };
    } else {
      this.endpoint = {
        schema_version: ENDPOINT_SCHEMA_VERSION_V2,
        transport: "unix",
        socket: this.socketPath,
        pid: process.pid,
        secret: this.key.toString("hex"),
      };
    }
    server.on("error", () => undefined); // accept errors (EMFILE) must not crash the host
    this.server = server;
    try {
      writePrivateAtomic(this.endpointPath, JSON.stringify(this.endpoint));
    } catch (error) {
      await this.stop();
      throw error;
    }
    return this;
  }

  private createServer(): net.Server {
    const server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
    // A hard bound on descriptors. Generous: Node drops connections beyond it before
    // `accept` sees them, and shed connections count until their close is processed.
    server.maxConnections = 4096;
    return server;
  }

  /** Listens on `FABRIC_HOME/health-<random>.sock` (0600), or resolves null. */
  private async listenUnix(): Promise<net.Server | null> {
    let dirFd: number | null = null;
    let socketPath: string;
    try {
      socketPath = path.join(fs.realpathSync(this.home), `health-${crypto.randomBytes(8).toString("hex")}.sock`);
    } catch {
      return null;
    }
    const server = this.createServer();
    try {
      let listenPath = socketPath;
      if (Buffer.byteLength(socketPath) > MAX_DIRECT_SOCKET_PATH) {
        dirFd = fs.openSync(path.dirname(socketPath), "r");
        listenPath = `/proc/self/fd/${dirFd}/${path.basename(socketPath)}`;
      }
      await listen(server, { path: listenPath, backlog: 128 });
      fs.chmodSync(socketPath, 0o600);
    } catch {
      server.close();
      unlinkQuietly(socketPath);
      return null;
    } finally {
      if (dirFd !== null) fs.closeSync(dirFd);
    }
    this.socketPath = socketPath;
    return server;
  }

  /**
   * Stops accepting and removes the endpoint file and socket (idempotent). Probes already
   * running finish and their answers are still sent.
   */
  async stop(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    this.removeEndpoint();
    // Stop accepting now; connections already accepted finish on their own (their
    // probes are bounded by the request budget, request reads by REQUEST_READ_TIMEOUT_MS).
    server.close();
    for (const socket of this.pending) socket.destroy();
    this.pending.clear();
    if (this.socketPath !== null) unlinkQuietly(this.socketPath);
  }

  /** Whether the listener is accepting connections. */
  get running(): boolean {
    return this.server !== null;
  }

  private removeEndpoint(): void {
    try {
      const found: unknown = JSON.parse(fs.readFileSync(this.endpointPath, "utf8"));
      if (isObject(found) && this.endpoint !== null && canonicalJson(found) === canonicalJson(this.endpoint)) {
        fs.unlinkSync(this.endpointPath);
      }
    } catch {
      // Already gone or replaced by another listener: leave it.
    }
  }

  private accept(socket: net.Socket): void {
    if (this.server === null) {
      socket.destroy();
      return;
    }
    socket.on("error", () => undefined);
    this.pending.add(socket);
    socket.once("close", () => this.pending.delete(socket));
    void this.serveOne(socket).catch(() => socket.destroy());
    if (this.pending.size > MAX_PENDING && !this.trimScheduled) {
      // Shed the oldest connections still waiting for their first line: a real client
      // writes its request right after connecting, so idle connections are the ones that
      // age. Trimming waits one poll phase (two check phases) so lines that already
      // arrived on connections accepted in this burst are read before anything is shed.
      this.trimScheduled = true;
      setImmediate(() =>
        setImmediate(() => {
          this.trimScheduled = false;
          for (const oldest of this.pending) {
            if (this.pending.size <= MAX_PENDING) break;
            this.pending.delete(oldest);
            oldest.destroy();
          }
        }),
      );
    }
  }

  private async serveOne(socket: net.Socket): Promise<void> {
    const received = performance.now();
    const line = await readLine(socket, MAX_REQUEST_BYTES, REQUEST_READ_TIMEOUT_MS);
    this.pending.delete(socket);
    if (line === null) {
      socket.destroy();
      return;
    }
    const request = this.authenticate(line);
    if (request === null || this.active >= MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    this.active += 1;
    socket.once("close", () => {
      this.active -= 1;
    });
    const deadline = received + request.budgetMs;
    const observations = await this.evaluate(request.level, deadline);
    const body = {
      kind: RESPONSE_KIND,
      v: PROTOCOL_VERSION,
      nonce: request.nonce,
      pid: process.pid,
      observations,
    };
    const text = sealMessage(this.key, body);
    // The client stops listening at its deadline; a little grace covers clock granularity.
    const grace = Math.max(1, deadline + 100 - performance.now());
    const timer = setTimeout(() => socket.destroy(), grace);
    socket.end(text, () => clearTimeout(timer));
  }

  private authenticate(line: Buffer): AuthenticatedRequest | null {
    const body = openMessage(this.key, line);
    if (body === null) return null;
    const { nonce, level, budget_ms: budgetMs, issued_at_ms: issuedAtMs, v } = body;
    if (
      body.kind !== REQUEST_KIND ||
      v !== PROTOCOL_VERSION ||
      typeof nonce !== "string" ||
      !HEX64.test(nonce) ||
      typeof level !== "string" ||
      !(HEALTH_LEVELS as readonly string[]).includes(level) ||
      !isInteger(budgetMs) ||
      budgetMs <= 0 ||
      budgetMs > MAX_BUDGET_MS ||
      !isInteger(issuedAtMs) ||
      issuedAtMs < 0
    ) {
      return null;
    }
    if (Math.abs(Date.now() - issuedAtMs) > FRESHNESS_WINDOW_MS) return null;
    if (!this.nonces.insert(nonce, issuedAtMs)) return null;
    return { nonce, level: level as HealthLevel, budgetMs };
  }

  private async evaluate(level: HealthLevel, deadline: number): Promise<HealthObservation[]> {
    const out: HealthObservation[] = [];
    for (const each of HEALTH_LEVELS.slice(0, HEALTH_LEVELS.indexOf(level) + 1)) {
      const left = deadline - performance.now();
      if (left <= 0) {
        out.push(observation(each, "unknown", "probe_timeout", LISTENER_SOURCE_ID));
        break;
      }
      const found = await this.bounded(each, left);
      if (found === "timeout" || performance.now() > deadline) {
        out.push(observation(each, "unknown", "probe_timeout", LISTENER_SOURCE_ID));
        break;
      }
      out.push(observation(each, found.outcome, found.reason, found.source_id));
      if (found.outcome !== "passed") break;
    }
    return out;
  }

  /** Runs the probe for one level, racing it against the time left. */
  private async bounded(
    level: HealthLevel,
    leftMs: number,
  ): Promise<"timeout" | { outcome: HealthOutcome; reason: string | null; source_id: string }> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve("timeout");
      }, Math.ceil(leftMs));
    });
    const answered = (async () => {
      try {
        const found = await this.probe(level, { timeoutMs: leftMs, signal: controller.signal });
        if (
          !OUTCOMES.has(found.outcome) ||
          (found.reason !== null && !(typeof found.reason === "string" && REASON.test(found.reason))) ||
          !(typeof found.source_id === "string" && SOURCE_ID.test(found.source_id))
        ) {
          throw new TypeError("invalid probe observation");
        }
        return found;
      } catch {
        return { outcome: "unknown" as const, reason: "probe_error", source_id: LISTENER_SOURCE_ID };
      }
    })();
    try {
      return await Promise.race([answered, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function observation(level: HealthLevel, outcome: HealthOutcome, reason: string | null, sourceId: string): HealthObservation {
  return { level, outcome, reason, source_id: sourceId, observed_at: nowRfc3339() };
}

/** Reads one `\n`-terminated line of at most `limit` bytes (newline included) within `timeoutMs`. */
function readLine(socket: net.Socket, limit: number, timeoutMs: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: Buffer | null) => {
      clearTimeout(timer);
      socket.removeListener("data", onData);
      socket.removeListener("end", onEnd);
      socket.removeListener("close", onEnd);
      socket.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      const end = chunk.indexOf(0x0a);
      if (end >= 0) {
        if (size + end + 1 > limit) return finish(null);
        chunks.push(chunk.subarray(0, end));
        return finish(Buffer.concat(chunks));
      }
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) finish(null);
    };
    const onEnd = () => finish(null);
    const timer = setTimeout(() => finish(null), timeoutMs);
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("close", onEnd);
  });
}

function listen(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => {
      server.removeListener("error", reject);
      resolve();
    });
  });
}

function unlinkQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
}

/** Writes `text` to `file` through a 0600 temporary sibling and a rename. */
function writePrivateAtomic(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${ENDPOINT_FILE_NAME}.${crypto.randomBytes(8).toString("hex")}.tmp`);
  try {
    const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    try {
      fs.writeSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (error) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // never created, or already renamed
    }
    throw error;
  }
}

function normalize(result: unknown): { outcome: HealthOutcome; reason: string | null; source_id: string } {
  if (result === true) return { outcome: "passed", reason: null, source_id: DEFAULT_SOURCE_ID };
  if (result === false) return { outcome: "failed", reason: "probe_failed", source_id: DEFAULT_SOURCE_ID };
  if (typeof result === "string" && OUTCOMES.has(result)) {
    return { outcome: result as HealthOutcome, reason: null, source_id: DEFAULT_SOURCE_ID };
  }
  if (isObject(result) && typeof result.outcome === "string" && OUTCOMES.has(result.outcome)) {
    return {
      outcome: result.outcome as HealthOutcome,
      reason: (result.reason ?? null) as string | null,
      source_id: (result.source_id ?? DEFAULT_SOURCE_ID) as string,
    };
  }
  throw new TypeError("check() returned neither a boolean, an outcome nor {outcome}");
}

/**
 * The probe of a runtime: calls `runtime.check(level, options)`; a runtime without `check`
 * answers `unsupported/unsupported_adapter`.
 */
export function runtimeProbe(runtime: HealthCheckable): HealthProbe {
  return async (level, options) => {
    const check = runtime.check;
    if (typeof check !== "function") {
      return { outcome: "unsupported", reason: "unsupported_adapter", source_id: LISTENER_SOURCE_ID };
    }
    return normalize(await check.call(runtime, level, options));
  };
}

/**
 * Starts a health listener for `runtime` and resolves with it (call `stop()`).
 * `fabricHome` defaults to `process.env.FABRIC_HOME`; `transport` to
 * `FABRIC_HEALTH_TRANSPORT`, else `unix`.
 */
export async function serveHealth(
  runtime: HealthCheckable,
  fabricHome?: string,
  transport?: HealthTransport,
): Promise<HealthListener> {
  const home = fabricHome ?? process.env.FABRIC_HOME;
  if (home === undefined || home === "") throw new Error("serveHealth needs FABRIC_HOME or a fabricHome argument");
  return new HealthListener(runtimeProbe(runtime), home, transport).start();
}
