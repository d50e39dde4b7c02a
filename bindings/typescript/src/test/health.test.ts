/**
 * The adapter-side health listener, checked by a client written here from the wire
 * description in docs/health.md (its own canonical JSON and HMAC code, not the listener's).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { PassThrough } from "node:stream";
import {
  HealthListener,
  canonicalJson,
  serve,
  serveHealth,
  type AdapterRuntime,
  type HealthCheckOptions,
  type HealthLevel,
} from "../adapter";
import { healthCheck, invokeMessage, startMessage, stopMessage } from "../testing";

// ---- an independent client -------------------------------------------------

function canon(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return "{" + entries.map(([k, x]) => JSON.stringify(k) + ":" + canon(x)).join(",") + "}";
  }
  return JSON.stringify(v);
}

function hmac(secretHex: string, body: object): string {
  return crypto.createHmac("sha256", Buffer.from(secretHex, "hex")).update(canon(body)).digest("hex");
}

interface Endpoint {
  schema_version: string;
  transport?: string;
  socket?: string;
  host?: string;
  port?: number;
  pid: number;
  secret: string;
}

/** Connects to the listener an endpoint names: a v2 unix socket or a v1 TCP port. */
function connect(endpoint: Endpoint): net.Socket {
  if (endpoint.schema_version === "fabric.health-endpoint/v2") {
    assert.equal(endpoint.transport, "unix");
    return net.connect({ path: endpoint.socket as string });
  }
  return net.connect({ host: endpoint.host as string, port: endpoint.port as number });
}

function readEndpoint(home: string): Endpoint {
  return JSON.parse(fs.readFileSync(path.join(home, "health.endpoint.json"), "utf8")) as Endpoint;
}

interface RequestFields {
  level?: string;
  budget_ms?: number;
  issued_at_ms?: number;
  nonce?: string;
  secret?: string;
}

function requestLine(endpoint: Endpoint, fields: RequestFields = {}): { line: string; nonce: string } {
  const nonce = fields.nonce ?? crypto.randomBytes(32).toString("hex");
  const body = {
    kind: "fabric.health/request",
    v: 1,
    level: fields.level ?? "ready",
    budget_ms: fields.budget_ms ?? 3000,
    issued_at_ms: fields.issued_at_ms ?? Date.now(),
    nonce,
  };
  return { line: canon({ ...body, mac: hmac(fields.secret ?? endpoint.secret, body) }) + "\n", nonce };
}

/** Sends one line; resolves with everything the listener wrote before closing (within `timeoutMs`). */
function exchange(endpoint: Endpoint, line: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(endpoint);
    let data = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (data += chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.write(line);
  });
}

interface Response {
  kind: string;
  v: number;
  nonce: string;
  pid: number;
  observations: { level: string; outcome: string; reason: string | null; source_id: string; observed_at: string }[];
}

async function check(endpoint: Endpoint, fields: RequestFields = {}): Promise<Response> {
  const { line, nonce } = requestLine(endpoint, fields);
  const text = await exchange(endpoint, line);
  assert.ok(text.endsWith("\n"), `one response line, got ${JSON.stringify(text)}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  const mac = body.mac as string;
  delete body.mac;
  assert.equal(mac, hmac(endpoint.secret, body), "response MAC verifies");
  assert.equal(text, canon({ ...body, mac }) + "\n", "response is canonical JSON");
  const response = body as unknown as Response;
  assert.equal(response.kind, "fabric.health/response");
  assert.equal(response.nonce, nonce);
  assert.equal(response.pid, process.pid);
  assert.equal(response.v, 1);
  for (const o of response.observations) assert.match(o.observed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  return response;
}

function tempHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-health-"));
}

type Mode = "pass" | "fail" | "stall" | "throw" | "undefined";

class Probed {
  calls: { level: HealthLevel; timeoutMs: number }[] = [];
  constructor(private readonly modes: Partial<Record<HealthLevel, Mode>> = {}) {}
  async check(level: HealthLevel, options: HealthCheckOptions) {
    this.calls.push({ level, timeoutMs: options.timeoutMs });
    const mode = this.modes[level] ?? "pass";
    if (mode === "stall") {
      await new Promise((resolve) => options.signal.addEventListener("abort", resolve));
      return true;
    }
    if (mode === "throw") throw new Error("probe bug");
    if (mode === "undefined") return undefined as unknown as boolean;
    if (mode === "fail") return { outcome: "failed" as const, reason: "not_ready", source_id: `ts:${level}` };
    return { outcome: "passed" as const, source_id: `ts:${level}` };
  }
}

// ---- tests -------------------------------------------------------------------

test("canonical JSON matches the Rust/Python form and the known MAC vector", () => {
  assert.equal(canonicalJson({ b: [1, { z: null, a: true }], a: 'x"\\\n\u0001é', c: -3 }), '{"a":"x\\"\\\\\\n\\u0001é","b":[1,{"a":true,"z":null}],"c":-3}');
  const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  assert.equal(
    crypto.createHmac("sha256", key).update(canonicalJson({ a: 1 })).digest("hex"),
    "b4cebde30982443ec36c18fa99ad10a70e705bba779f57c37e84decb64ae50fb",
  );
  // Code-point order, not UTF-16 order: U+FFFD sorts before U+1F600.
  assert.equal(canonicalJson({ "\u{1F600}": 1, "\uFFFD": 2 }), '{"\uFFFD":2,"\u{1F600}":1}');
  assert.throws(() => canonicalJson({ a: 1.5 }));
});

test("all levels pass in order; endpoint file is 0600 and removed at stop", async () => {
  const home = tempHome();
  const runtime = new Probed();
  const listener = await serveHealth(runtime, home);
  try {
    const file = path.join(home, "health.endpoint.json");
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const endpoint = readEndpoint(home);
    // Default transport: a 0600 unix socket inside the (0700) home, endpoint schema v2.
    assert.equal(endpoint.schema_version, "fabric.health-endpoint/v2");
    assert.equal(endpoint.transport, "unix");
    assert.equal(endpoint.port, undefined);
    assert.equal(endpoint.socket, listener.socketPath);
    const socketPath = endpoint.socket as string;
    assert.equal(path.dirname(socketPath), fs.realpathSync(home));
    assert.ok(fs.lstatSync(socketPath).isSocket());
    assert.equal(fs.lstatSync(socketPath).mode & 0o777, 0o600);
    assert.equal(fs.statSync(home).mode & 0o777, 0o700);
    assert.match(endpoint.secret, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      fs.readdirSync(home).sort(),
      ["health.endpoint.json", path.basename(socketPath)].sort(),
      "no temporary file left behind",
    );
    const response = await check(endpoint, { budget_ms: 2500 });
    assert.deepEqual(
      response.observations.map((o) => [o.level, o.outcome, o.reason, o.source_id]),
      [
        ["live", "passed", null, "ts:live"],
        ["active", "passed", null, "ts:active"],
        ["ready", "passed", null, "ts:ready"],
      ],
    );
    // The probe receives the remaining budget.
    assert.ok(runtime.calls.every((c) => c.timeoutMs > 0 && c.timeoutMs <= 2500), JSON.stringify(runtime.calls));
    const live = await check(endpoint, { level: "live" });
    assert.deepEqual(live.observations.map((o) => o.level), ["live"]);
  } finally {
    await listener.stop();
  }
  assert.equal(fs.existsSync(path.join(home, "health.endpoint.json")), false);
  assert.deepEqual(fs.readdirSync(home), [], "socket removed at stop");
  await listener.stop(); // idempotent
});

test("tcp transport writes a v1 endpoint (FABRIC_HEALTH_TRANSPORT=tcp or explicit)", async () => {
  const home = tempHome();
  const saved = process.env.FABRIC_HEALTH_TRANSPORT;
  process.env.FABRIC_HEALTH_TRANSPORT = "tcp";
  let listener: HealthListener;
  try {
    listener = await serveHealth(new Probed(), home);
  } finally {
    if (saved === undefined) delete process.env.FABRIC_HEALTH_TRANSPORT;
    else process.env.FABRIC_HEALTH_TRANSPORT = saved;
  }
  try {
    const endpoint = readEndpoint(home);
    assert.equal(listener.transport, "tcp");
    assert.deepEqual(Object.keys(endpoint).sort(), ["host", "pid", "port", "schema_version", "secret"]);
    assert.equal(endpoint.schema_version, "fabric.health-endpoint/v1");
    assert.equal(endpoint.port, listener.port);
    assert.equal((await check(endpoint)).observations.length, 3);
  } finally {
    await listener.stop();
  }
  // A home too deep for a socket address still gets a unix socket.
  const deep = path.join(tempHome(), "d".repeat(60), "e".repeat(60));
  fs.mkdirSync(deep, { recursive: true });
  const unix = await serveHealth(new Probed(), deep, "unix");
  try {
    assert.equal(unix.transport, "unix");
    assert.ok((unix.socketPath as string).length > 108);
    const observations = await healthCheck(deep, { level: "live" });
    assert.deepEqual(observations.map((o) => o.outcome), ["passed"]);
  } finally {
    await unix.stop();
  }
});

/** Holds `n` idle connections to a TCP listener, reopening each one the listener closes. */
class Attacker {
  private stopped = false;
  private readonly sockets = new Set<net.Socket>();
  opened = 0;
  constructor(
    private readonly endpoint: Endpoint,
    n: number,
  ) {
    for (let i = 0; i < n; i++) this.open();
  }
  get held(): number {
    return this.sockets.size;
  }
  private open(): void {
    if (this.stopped) return;
    const socket = connect(this.endpoint);
    this.opened += 1;
    this.sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.sockets.delete(socket);
      setTimeout(() => this.open(), 5);
    });
  }
  stop(): void {
    this.stopped = true;
    for (const socket of this.sockets) socket.destroy();
  }
}

test("500 idle attacker connections on TCP cannot deny checks: 40/40 pass", async () => {
  // The attacker runs in a child process so it competes with the listener like another
  // local user's process would (not on the same event loop).
  const home = tempHome();
  const listener = await serveHealth(new Probed(), home, "tcp");
  const endpoint = readEndpoint(home);
  const child = await import("node:child_process");
  const script = `
    const net = require("node:net");
    const [port] = process.argv.slice(1).map(Number);
    let held = 0;
    const open = () => {
      const s = net.connect({ host: "127.0.0.1", port });
      s.on("connect", () => { held += 1; if (held === 500) process.stdout.write("ready\\n"); });
      s.on("error", () => undefined);
      s.on("close", () => setTimeout(open, 5));
    };
    for (let i = 0; i < 500; i++) open();
  `;
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // a plain script, not a child of the test runner
  const attacker = child.spawn(process.execPath, ["-e", script, String(endpoint.port)], {
    stdio: ["ignore", "pipe", "inherit"],
    env,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("attacker did not open 500 connections")), 30_000);
      attacker.stdout.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    let passed = 0;
    for (let i = 0; i < 40; i++) {
      const observations = await healthCheck(home, { level: "ready" });
      if (observations.length === 3 && observations.every((o) => o.outcome === "passed")) passed += 1;
    }
    assert.equal(passed, 40);
  } finally {
    attacker.kill("SIGKILL");
    await listener.stop();
  }
});

test("idle connections on the unix socket cannot deny checks", async () => {
  const home = tempHome();
  const listener = await serveHealth(new Probed(), home, "unix");
  const attacker = new Attacker(readEndpoint(home), 500);
  try {
    await new Promise((resolve) => setTimeout(resolve, 200));
    let passed = 0;
    for (let i = 0; i < 40; i++) {
      const observations = await healthCheck(home, { level: "ready" });
      if (observations.every((o) => o.outcome === "passed")) passed += 1;
    }
    assert.equal(passed, 40);
    assert.ok(attacker.opened >= 500);
  } finally {
    attacker.stop();
    await listener.stop();
  }
});

test("a failing level stops the evaluation; throws and non-answers are probe_error", async () => {
  const home = tempHome();
  const listener = await serveHealth(new Probed({ active: "fail" }), home);
  try {
    const response = await check(readEndpoint(home));
    assert.deepEqual(
      response.observations.map((o) => [o.level, o.outcome, o.reason]),
      [
        ["live", "passed", null],
        ["active", "failed", "not_ready"],
      ],
    );
  } finally {
    await listener.stop();
  }
  for (const mode of ["throw", "undefined"] as const) {
    const other = await serveHealth(new Probed({ live: mode }), tempHome());
    try {
      const endpoint = JSON.parse(fs.readFileSync(other.endpointPath, "utf8")) as Endpoint;
      const response = await check(endpoint);
      assert.deepEqual(
        response.observations.map((o) => [o.outcome, o.reason, o.source_id]),
        [["unknown", "probe_error", "fabric:health_listener"]],
      );
    } finally {
      await other.stop();
    }
  }
});

test("a runtime without check() answers unsupported/unsupported_adapter", async () => {
  const home = tempHome();
  const listener = await serveHealth({}, home);
  try {
    const response = await check(readEndpoint(home), { level: "live" });
    assert.deepEqual(response.observations.map((o) => [o.outcome, o.reason]), [["unsupported", "unsupported_adapter"]]);
  } finally {
    await listener.stop();
  }
});

test("a stalled probe becomes probe_timeout within the budget", async () => {
  const home = tempHome();
  const listener = await serveHealth(new Probed({ ready: "stall" }), home);
  try {
    const started = performance.now();
    const response = await check(readEndpoint(home), { budget_ms: 300 });
    const took = performance.now() - started;
    assert.deepEqual(
      response.observations.map((o) => [o.level, o.outcome, o.reason]),
      [
        ["live", "passed", null],
        ["active", "passed", null],
        ["ready", "unknown", "probe_timeout"],
      ],
    );
    assert.ok(took >= 250 && took < 300 + 250, `took ${took} ms`);
  } finally {
    await listener.stop();
  }
});

test("forged, malformed, stale and replayed requests get no byte", async () => {
  const home = tempHome();
  const listener = await serveHealth(new Probed(), home);
  try {
    const endpoint = readEndpoint(home);
    const wrongSecret = requestLine(endpoint, { secret: "00".repeat(32) });
    assert.equal(await exchange(endpoint, wrongSecret.line), "");
    assert.equal(await exchange(endpoint, "not json\n"), "");
    assert.equal(await exchange(endpoint, requestLine(endpoint, { level: "dead" }).line), "");
    assert.equal(await exchange(endpoint, requestLine(endpoint, { budget_ms: 0 }).line), "");
    assert.equal(await exchange(endpoint, requestLine(endpoint, { budget_ms: 86_400_001 }).line), "");
    assert.equal(await exchange(endpoint, requestLine(endpoint, { issued_at_ms: Date.now() - 61_000 }).line), "");
    assert.equal(await exchange(endpoint, "x".repeat(5000) + "\n"), "");
    // A tampered field breaks the MAC.
    const good = requestLine(endpoint);
    assert.equal(await exchange(endpoint, good.line.replace('"ready"', '"live"')), "");
    // The same request twice: the second is a replay.
    const once = requestLine(endpoint);
    assert.notEqual(await exchange(endpoint, once.line), "");
    assert.equal(await exchange(endpoint, once.line), "");
    // Still serving well-formed requests afterwards.
    assert.equal((await check(endpoint)).observations.length, 3);
  } finally {
    await listener.stop();
  }
});

test("serve(): listener from a successful start to stop; checks answered during a pending invoke", async () => {
  const home = tempHome();
  const file = path.join(home, "health.endpoint.json");
  let release: () => void = () => undefined;
  let fileAtStop: boolean | undefined;
  let invoking = false;
  class Slow implements AdapterRuntime {
    start() {
      return null;
    }
    async invoke() {
      invoking = true;
      await new Promise<void>((resolve) => (release = resolve));
      return { status: "succeeded" as const, output: "done" };
    }
    stop() {
      fileAtStop = fs.existsSync(file);
    }
    check(level: HealthLevel) {
      return { outcome: "passed" as const, source_id: `slow:${level}` };
    }
  }
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: string[] = [];
  let buffered = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => {
    buffered += chunk;
    let at = buffered.indexOf("\n");
    while (at >= 0) {
      lines.push(buffered.slice(0, at));
      buffered = buffered.slice(at + 1);
      at = buffered.indexOf("\n");
    }
  });
  const until = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const served = serve(() => new Slow(), { input, output, exit: false, fabricHome: home, validate: false });
  assert.equal(fs.existsSync(file), false, "no listener before start");
  input.write(JSON.stringify(startMessage("runtime-h")) + "\n");
  await until("start answer", () => lines.length === 1);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  input.write(JSON.stringify(invokeMessage("runtime-h", { input: "x" })) + "\n");
  await until("invoke to begin", () => invoking);
  const response = await check(readEndpoint(home));
  assert.deepEqual(response.observations.map((o) => o.source_id), ["slow:live", "slow:active", "slow:ready"]);
  assert.equal(lines.length, 1, "the invoke is still pending");
  release();
  await until("invoke answer", () => lines.length === 2);
  input.write(JSON.stringify(stopMessage("runtime-h")) + "\n");
  assert.equal(await served, 0);
  assert.equal(fileAtStop, false, "endpoint file removed before the runtime's stop()");
  assert.equal(fs.existsSync(file), false);
});

test("serve(): a failed start runs no listener", async () => {
  const home = tempHome();
  const input = new PassThrough();
  const output = new PassThrough();
  output.resume();
  const served = serve(
    () => ({
      start() {
        throw new Error("boom");
      },
      invoke() {
        return { status: "succeeded" as const, output: null };
      },
      stop() {},
    }),
    { input, output, exit: false, fabricHome: home, validate: false, diagnostics: new PassThrough() },
  );
  input.write(JSON.stringify(startMessage("runtime-f")) + "\n");
  assert.equal(await served, 0);
  assert.deepEqual(fs.readdirSync(home), []);
});

test("an older listener stopping leaves a newer listener's endpoint file in place", async () => {
  const home = tempHome();
  const first = await new HealthListener(async () => ({ outcome: "passed", reason: null, source_id: "a:x" }), home).start();
  const second = await new HealthListener(async () => ({ outcome: "passed", reason: null, source_id: "b:x" }), home).start();
  // The newer file wins; stopping the older listener leaves it in place.
  await first.stop();
  assert.equal(readEndpoint(home).socket, second.socketPath);
  await second.stop();
  assert.equal(fs.existsSync(path.join(home, "health.endpoint.json")), false);
});
