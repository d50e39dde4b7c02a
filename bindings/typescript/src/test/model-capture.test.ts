import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Fabric, FabricConfigError, modelCallRecords, type FabricConfig, type RunResult } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const fabric = new Fabric();

function captureConfig(name: string): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.scripted" },
    discovery: { local_paths: [path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json")] },
  };
}

test("the model-call capture options reach the core", async () => {
  const config = captureConfig("capture");
  await assert.rejects(fabric.run(config, { input: "x", maxModelCalls: 1 }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.equal(error.code, "invalid_value");
    assert.equal(error.details.path, "options.max_model_calls");
    return true;
  });
  // The scripted adapter's config has no model base_url: nothing is captured.
  const result = await fabric.run(config, { input: "x", captureModelCalls: true, maxModelCalls: 1, maxTotalTokens: 10 });
  assert.equal(result.status, "succeeded");
  assert.equal(result.model_calls, undefined);
});

test("modelCallRecords reads model-calls.jsonl, one record a line", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-records-"));
  try {
    const file = path.join(dir, "model-calls.jsonl");
    const record = (index: number) => ({
      model_call_id: `model-call-${index}`, call_index: index, runtime_id: "r", invocation_id: "i",
      client_session_id: "i", model_role: "default", model: "m", dialect: "chat", method: "POST",
      path: "/chat/completions", model_ref: { type: "responses_api_models", name: "default" },
      base_url: "http://127.0.0.1:9/v1", started_at: 1700000000.25, completed_at: 1700000000.5,
      request: { messages: [] }, status_code: 200, response: { id: "c" }, streamed: false, chunks: 1,
      latency_total_ms: 250, tokens_total: 3 + index,
    });
    fs.writeFileSync(file, `${JSON.stringify(record(0))}\n\n${JSON.stringify(record(1))}\n`);
    const result = { model_calls: { count: 2, path: file } } as RunResult;
    const records = modelCallRecords(result);
    assert.deepEqual(records, [record(0), record(1)]);
    assert.equal(records[1].call_index, 1);
    assert.deepEqual(modelCallRecords({} as RunResult), []);
    fs.writeFileSync(file, "{not json\n");
    assert.throws(() => modelCallRecords(result), /line 1 is not a record/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
