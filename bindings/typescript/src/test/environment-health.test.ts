import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Fabric, type FabricConfig } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

function config(root: string, health: Record<string, string> = {}): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "health" },
    harness: { adapter_id: "fabric.scripted", settings: { replies: ["echo: {input}"], health } as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
    environment: { provider: "subprocess", settings: { root } } as never,
  };
}

test("checks route through a subprocess environment's runtime server", async () => {
  const fabric = new Fabric();
  // unix socket paths are short (108 bytes): a short root under /tmp
  const root = fs.mkdtempSync("/tmp/fc-ts-");
  const environment = await fabric.prepareEnvironment(config(root));
  try {
    const server = await fabric.check({ environment, request: { scope: "server" } });
    assert.equal(server.outcome, "passed", JSON.stringify(server));
    assert.equal(server.level, null);
    assert.equal(server.checks[0].source_id, "fabric:runtime_server");

    const runtime = await environment.startRuntime(config(root));
    const request = { scope: "runtime" as const, runtime_id: runtime.runtimeId, level: "ready" as const };
    const report = await fabric.check({ environment, request });
    assert.equal(report.outcome, "passed", JSON.stringify(report));
    assert.deepEqual(report.checks.map((c) => c.level), ["live", "active", "ready"]);
    await runtime.stop();
    const stopped = await fabric.check({ environment, request });
    assert.deepEqual([stopped.outcome, stopped.reason], ["unknown", "runtime_unavailable"]);

    const failing = await environment.startRuntime(config(root, { fail: "active" }));
    const failed = await fabric.check({ environment, request: { ...request, runtime_id: failing.runtimeId } });
    assert.deepEqual([failed.outcome, failed.checks.length], ["failed", 2]);
    await failing.stop();

    const stalling = await environment.startRuntime(config(root, { stall: "ready" }));
    const started = Date.now();
    const late = await fabric.check({
      environment,
      request: { ...request, runtime_id: stalling.runtimeId, timeout_seconds: 0.5 },
    });
    assert.deepEqual([late.outcome, late.reason], ["unknown", "probe_timeout"]);
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
    await stalling.stop();
  } finally {
    await environment.release();
  }
  fs.rmdirSync(root);
});
