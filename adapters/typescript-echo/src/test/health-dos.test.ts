/**
 * Health checks other local users cannot deny, through the Node binding (C ABI) against the
 * TypeScript listener of `serve()`: 500 idle attacker connections from another process on
 * TCP (`FABRIC_HEALTH_TRANSPORT=tcp`) and on the default unix socket (0600 inside the 0700
 * FABRIC_HOME, which only our uid can reach: checked here), and 40/40 checks pass. Needs the
 * cargo-built core; a missing build fails (`FABRIC_ALLOW_SKIPS=1` skips instead).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Fabric, libraryPath, type FabricConfig } from "fabric-core";
import { dependencySkip } from "fabric-core/testing";

const ADAPTER_DIR = path.resolve(__dirname, "..", "..");
const DESCRIPTOR = path.join(ADAPTER_DIR, "typescript-echo.fabric-adapter.json");

/** The rule for a missing build (fabric-core/testing's `dependencySkip`). */
function missing(file: string): string | false {
  return dependencySkip(fs.existsSync(file), file, "cargo build --workspace");
}

function config(name: string, artifacts: string): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.typescript-echo", settings: {} },
    discovery: { local_paths: [DESCRIPTOR] },
    runtime: { timeout_seconds: 30, artifacts },
  };
}

/** Another local process holding `n` idle connections, reopening each one that is closed. */
const ATTACKER = `
const net = require("node:net");
const fs = require("node:fs");
const target = JSON.parse(process.argv[1]);
const n = Number(process.argv[2]);
let connected = 0;
let announced = false;
const announce = () => {
  if (!announced && connected >= n) {
    announced = true;
    process.stdout.write("ready\\n");
  }
};
const open = () => {
  const s = target.socket ? net.connect({ path: target.socket }) : net.connect({ host: target.host, port: target.port });
  s.on("connect", () => { connected += 1; announce(); });
  s.on("error", () => undefined);
  s.on("close", () => setTimeout(open, 5));
};
for (let i = 0; i < n; i++) open();
`;

async function attack(target: Record<string, unknown>): Promise<ChildProcessWithoutNullStreams> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // a plain script, not a child of the test runner
  const child = spawn(process.execPath, ["-e", ATTACKER, JSON.stringify(target), "500"], { env });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the attacker did not open 500 connections")), 30_000);
    child.stdout.once("data", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return child;
}

async function underAttack(transport: "tcp" | "unix"): Promise<void> {
  const saved = process.env.FABRIC_HEALTH_TRANSPORT;
  if (transport === "tcp") process.env.FABRIC_HEALTH_TRANSPORT = "tcp";
  else delete process.env.FABRIC_HEALTH_TRANSPORT;
  const artifacts = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-echo-dos-"));
  const fabric = new Fabric();
  try {
    await using runtime = await fabric.startRuntime(config(`dos-${transport}`, artifacts));
    const home = path.join(artifacts, ".fabric", runtime.runtimeId);
    const endpoint = JSON.parse(fs.readFileSync(path.join(home, "health.endpoint.json"), "utf8")) as Record<string, unknown>;
    let target: Record<string, unknown>;
    if (transport === "tcp") {
      assert.equal(endpoint.schema_version, "fabric.health-endpoint/v1");
      target = { host: endpoint.host, port: endpoint.port };
    } else {
      assert.equal(endpoint.schema_version, "fabric.health-endpoint/v2");
      assert.equal(endpoint.transport, "unix");
      const socket = endpoint.socket as string;
      assert.equal(path.dirname(socket), fs.realpathSync(home));
      assert.ok(fs.lstatSync(socket).isSocket());
      assert.equal(fs.lstatSync(socket).mode & 0o777, 0o600);
      assert.equal(fs.statSync(home).mode & 0o777, 0o700);
      target = { socket };
    }
    const attacker = await attack(target);
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 40; i++) {
        const report = await fabric.check({ request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready" } });
        outcomes.push(`${report.outcome}/${report.reason}`);
      }
      assert.deepEqual(outcomes, Array(40).fill("passed/null"));
    } finally {
      attacker.kill("SIGKILL");
    }
  } finally {
    if (saved === undefined) delete process.env.FABRIC_HEALTH_TRANSPORT;
    else process.env.FABRIC_HEALTH_TRANSPORT = saved;
    fs.rmSync(artifacts, { recursive: true, force: true });
  }
}

test("500 idle attacker connections on TCP cannot deny checks of the echo adapter (40/40)", { skip: missing(libraryPath()) }, async () => {
  await underAttack("tcp");
});

test("the echo adapter's unix socket is private; idle connections on it cannot deny checks (40/40)", { skip: missing(libraryPath()) }, async () => {
  await underAttack("unix");
});
