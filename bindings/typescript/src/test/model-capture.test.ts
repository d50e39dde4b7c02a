import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { Fabric, FabricConfigError, type FabricConfig } from "../index";

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
