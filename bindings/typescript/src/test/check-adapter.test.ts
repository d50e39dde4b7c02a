import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { Fabric, FabricConfigError } from "../index";

const repo = path.resolve(__dirname, "..", "..", "..", "..");
const fixtures = path.join(repo, "tests", "fixtures", "conformance");

test("checkAdapter passes a well-behaved adapter and names the check a broken one fails", async () => {
  const fabric = new Fabric();
  const good = await fabric.checkAdapter({ descriptor: path.join(fixtures, "good.fabric-adapter.json") });
  assert.deepEqual(good.checks.filter((c) => c.status === "failed").map((c) => c.id), []);
  assert.equal(good.summary.required_profile_passed, true);
  const broken = await fabric.checkAdapter({
    descriptor: path.join(fixtures, "exit_second_invoke.fabric-adapter.json"),
    only: ["lifecycle"],
  });
  const failed = broken.checks.filter((c) => c.status === "failed");
  assert.deepEqual(failed.map((c) => c.id), ["lifecycle.repeat"]);
  assert.match(JSON.stringify(failed[0]?.evidence), /host_crashed/);
});

test("checkAdapter rejects bad input with FabricConfigError", async () => {
  await assert.rejects(new Fabric().checkAdapter({ adapter_id: "no.such.adapter" }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError);
    assert.equal(error.code, "adapter_not_found");
    return true;
  });
});

test("checkAdapter serves a model-calling adapter from the stub model server (model_stub)", async () => {
  // The model's base_url is unreachable: only the stub model servers answer it.
  const config = {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "model-stub-check" },
    harness: { adapter_id: "test.conformance.model-caller" },
    discovery: { local_paths: [fixtures] },
    models: { default: { provider: "openai", model: "m", base_url: "http://127.0.0.1:9/v1" } },
  };
  const report = await new Fabric().checkAdapter({
    descriptor: path.join(fixtures, "model_caller.fabric-adapter.json"),
    config,
    only: ["lifecycle"],
    model_stub: { replies: [{ text: "answered by the stub" }] },
    stop_deadline_seconds: 5,
  });
  const status = new Map(report.checks.map((c) => [c.id, c.status]));
  for (const id of ["lifecycle.invoke", "lifecycle.target_failure", "lifecycle.malformed_target_output"]) {
    assert.equal(status.get(id), "passed", `${id}: ${JSON.stringify(report.checks)}`);
  }
});
