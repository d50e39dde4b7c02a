// `fabric.batch` (issue 31) over the C ABI's batch engine with the scripted adapter: ids,
// concurrency, retries, per-item timeouts, input errors naming the line, resume.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Fabric, type FabricConfig } from "../index";
import type { BatchLine } from "../generated";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

const config: FabricConfig = {
  schema_version: "fabric.agent/v1alpha1",
  metadata: { name: "ts-batch" },
  harness: { adapter_id: "fabric.scripted", settings: { when_exhausted: "echo" } as never },
  discovery: { local_paths: [SCRIPTED] },
  runtime: { timeout_seconds: 30 },
};

async function collect(batch: AsyncIterable<BatchLine>): Promise<BatchLine[]> {
  const lines: BatchLine[] = [];
  for await (const done of batch) lines.push(done);
  return lines;
}

const sleepy = (count: number, ms: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `s${i}`, input: { scripted: { sleep_ms: ms } } }));

test("200 items at concurrency 8 succeed with their ids", async () => {
  const items = Array.from({ length: 200 }, (_, i) =>
    i % 3 === 0 ? { id: `item-${i}`, input: `hello ${i}` } : i % 3 === 1 ? { request_id: `item-${i}`, input: `hello ${i}` } : `hello ${i}`,
  );
  const batch = new Fabric().batch(config, items, { concurrency: 8 });
  const lines = await collect(batch);
  assert.equal(lines.length, 200);
  for (const line of lines) {
    const i = line.id.startsWith("item-") ? Number(line.id.slice(5)) : Number(line.id) - 1;
    assert.equal((line.result?.output as Record<string, unknown>).response, `hello ${i}`);
  }
  assert.equal(new Set(lines.map((l) => l.id)).size, 200);
  assert.equal(batch.summary?.succeeded, 200);
});

test("sleep_ms items run concurrently", async () => {
  const began = Date.now();
  const lines = await collect(new Fabric().batch(config, sleepy(64, 200), { concurrency: 16 }));
  assert.equal(lines.length, 64);
  assert.ok(Date.now() - began < 6400, `${Date.now() - began} ms`);
});

test("crashing items are retried and their attempts recorded; a timeout cancels one item", async () => {
  async function* items() {
    yield { id: "crash", input: { scripted: { crash: true } } };
    yield { id: "slow", input: { scripted: { sleep_ms: 20000 } } };
    yield { id: "ok", input: "x" };
  }
  const batch = new Fabric().batch(config, items(), { attempts: 3, timeout_seconds: 1.5, concurrency: 3 });
  const byId = new Map((await collect(batch)).map((l) => [l.id, l]));
  assert.equal(byId.get("crash")?.attempts, 3);
  assert.deepEqual(byId.get("crash")?.attempt_log.map((a) => a.code), ["host_crashed", "host_crashed", "host_crashed"]);
  assert.equal(byId.get("slow")?.error?.code, "batch_item_timeout");
  assert.equal(byId.get("ok")?.result?.status, "succeeded");
  assert.equal(batch.summary?.retries, 2);
});

test("a duplicate id is an error naming the line", async () => {
  const items = [{ id: "a", input: 1 }, "b", { request_id: "a", input: 2 }];
  await assert.rejects(collect(new Fabric().batch(config, items, { concurrency: 1 })), (error: Error & { code?: string }) => {
    assert.equal(error.code, "batch_item_duplicate");
    assert.match(error.message, /line 3/);
    return true;
  });
});

test("resume after a cancel completes the set without duplicates", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ts-batch-"));
  const output = path.join(dir, "results.jsonl");
  try {
    const first = new Fabric().batch(config, sleepy(30, 200), { concurrency: 3, output, grace_seconds: 5 });
    let count = 0;
    for await (const _ of first) {
      if (++count === 3) first.cancel();
    }
    assert.equal(first.summary?.interrupted, true);
    const written = fs.readFileSync(output, "utf8").trim().split("\n").length;
    assert.ok(written < 30);
    const second = new Fabric().batch(config, sleepy(30, 200), { concurrency: 8, output });
    await collect(second);
    const ids = fs.readFileSync(output, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as BatchLine).id);
    assert.deepEqual([...ids].sort(), Array.from({ length: 30 }, (_, i) => `s${i}`).sort());
    assert.equal(second.summary?.skipped, written);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
