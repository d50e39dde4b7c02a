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
