/**
 * NeMo Relay ATOF streaming through the Node binding (`startRuntime(config, {streaming})`,
 * `runtime.invokeStream`) with the test adapter of tests/fixtures/atof-adapter, which posts
 * ATOF records to the `nemo-fabric-stream` sink of its Relay config.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Fabric, FabricCapabilityError, FabricConfigError, InvokeStream, type AtofRecord, type FabricConfig } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const FIXTURE = path.join(repoRoot, "tests", "fixtures", "atof-adapter");

function atofConfig(relay: boolean): FabricConfig {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ts-atof-"));
  const descriptorPath = path.join(FIXTURE, "atof.fabric-adapter.json");
  const config: Record<string, unknown> = {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "ts-atof" },
    harness: { adapter_id: "test.fabric.atof" },
    discovery: { local_paths: [descriptorPath] },
    environment: { artifacts: path.join(dir, "artifacts") },
    runtime: { timeout_seconds: 60 },
  };
  if (relay) {
    config.telemetry = { providers: { relay: {} } };
    config.relay = { observability: { atof: { enabled: true } } };
  }
  return config as unknown as FabricConfig;
}

const fabric = new Fabric();

test("invokeStream yields the turn's ATOF records, then result(); the next turn gets its own", async () => {
  await using runtime = await fabric.startRuntime(atofConfig(true), { streaming: true });
  assert.equal(runtime.supportsStreaming, true);
  for (const marks of [3, 1]) {
    const stream = await runtime.invokeStream({ input: `records:${marks}` });
    assert.ok(stream instanceof InvokeStream);
    assert.equal(stream.info.kind, "relay.atof.record");
    const records: AtofRecord[] = [];
    for await (const record of stream) records.push(record);
    const result = await stream.result();
    assert.equal(result.status, "succeeded");
    assert.equal(records.length, marks + 2);
    assert.deepEqual((records[0]?.metadata as Record<string, unknown>).nemo_fabric_request_id, result.request_id);
    assert.deepEqual(
      records.slice(1, -1).map((r) => r.name),
      Array.from({ length: marks }, (_, i) => `step-${i}`),
    );
    assert.equal(records.at(-1)?.scope_category, "end");
  }
});

test("streaming needs Relay; invokeStream needs a streaming runtime", async () => {
  await assert.rejects(fabric.startRuntime(atofConfig(false), { streaming: true }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError);
    assert.equal(error.code, "streaming_requires_relay");
    return true;
  });
  await assert.rejects(fabric.startRuntime(atofConfig(true), { launchCollector: false }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError);
    assert.equal(error.code, "launch_collector_requires_streaming");
    return true;
  });
  await assert.rejects(
    fabric.startRuntime(atofConfig(true), { streaming: true, collectorMemoryBudgetBytes: 1024 }),
    (error: unknown) => {
      assert.ok(error instanceof FabricConfigError);
      assert.equal(error.code, "invalid_value");
      return true;
    },
  );
  await using runtime = await fabric.startRuntime(atofConfig(true));
  assert.equal(runtime.supportsStreaming, false);
  await assert.rejects(runtime.invokeStream({ input: "x" }), (error: unknown) => {
    assert.ok(error instanceof FabricCapabilityError);
    assert.equal(error.code, "streaming_unavailable");
    return true;
  });
});
