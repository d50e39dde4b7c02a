import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Fabric, FabricConfigError, Prewarm, type FabricConfig, type RunResult } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

function config(reply: string): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "ts-prewarm" },
    harness: { adapter_id: "fabric.scripted", settings: { replies: [reply] } as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
  };
}

function hostPid(result: RunResult): number {
  assert.equal(result.status, "succeeded", JSON.stringify(result.error));
  const start = (result.events ?? []).find((event) => event.kind === "runtime_start");
  return Number((start?.metadata as Record<string, unknown>).host_pid);
}

function alive(pid: number): boolean {
  return fs.existsSync(`/proc/${pid}`);
}

async function eventually(what: string, done: () => Promise<boolean> | boolean, boundMs = 10_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `${what} within ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("a matching run takes a prewarmed host, a replacement is launched, close ends the rest", async () => {
  const fabric = new Fabric();
  const cfg = config("echo: {input}");
  const pool = await fabric.prewarm(cfg, { hosts: 2 });
  assert.ok(pool instanceof Prewarm);
  const ready = (await pool.status()).ready_pids;
  assert.equal(ready.length, 2);
  assert.ok(ready.every(alive));
  const used = hostPid(await fabric.run(cfg, { input: "hi" }));
  assert.ok(ready.includes(used), `${used} in ${ready}`);
  assert.equal((await pool.status()).claimed, 1);
  await eventually("a replacement", async () => (await pool.status()).ready_pids.length === 2);
  // Another config launches another host: it starts cold.
  const waiting = (await pool.status()).ready_pids;
  const other = hostPid(await fabric.run(config("other: {input}"), { input: "hi" }));
  assert.ok(!waiting.includes(other));
  assert.equal((await pool.status()).claimed, 1);
  const final = await pool.close();
  assert.equal(final.closed, true);
  assert.deepEqual(final.ready_pids, []);
  assert.equal(await pool.close(), final);
  await eventually("the waiting hosts end", () => waiting.every((pid) => !alive(pid)), 5_000);
});

test("prewarm refuses a host count out of range, naming the field", async () => {
  const fabric = new Fabric();
  for (const hosts of [0, 65]) {
    await assert.rejects(fabric.prewarm(config("x"), { hosts }), (error: unknown) => {
      assert.ok(error instanceof FabricConfigError, String(error));
      assert.equal(error.details?.path, "hosts");
      return true;
    });
  }
});
