import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Fabric, FabricConfigError, FabricRuntimeError, Service, ServiceInUseError, type FabricConfig, type Runtime } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

function scriptedConfig(name: string): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.scripted" },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
  };
}

async function kv(runtime: Runtime, op: string, key: string, value?: unknown): Promise<unknown> {
  const scripted_kv: Record<string, unknown> = { op, key };
  if (value !== undefined) scripted_kv.value = value;
  const result = await runtime.invoke({ request: { input: "kv", context: { scripted_kv } as never } });
  assert.equal(result.status, "succeeded", JSON.stringify(result.error));
  return (result.output as Record<string, unknown>).response;
}

test("two runtimes share one prepared service; release follows the rules", async () => {
  const fabric = new Fabric();
  const config = scriptedConfig("kv");
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-service-"));
  const service = await fabric.prepareService(config, { baseDir });
  try {
    assert.ok(service instanceof Service);
    assert.equal(service.status, "active");
    assert.equal(service.serviceHandle.ownership, "fabric_owned");
    assert.match(service.serviceHandle.service_binding, /^fabric-service-binding-[0-9a-f]{16}$/);
    const first = await fabric.startRuntime(config, { baseDir, service });
    {
      await using second = await service.startRuntime(config, { baseDir });
      assert.equal(first.info.service_id, service.serviceId);
      assert.equal(await kv(first, "incr", "n"), 1);
      assert.equal(await kv(second, "incr", "n"), 2);
      await kv(second, "set", "who", "second");
    }
    // State outlives the stopped runtime.
    assert.equal(await kv(first, "get", "who"), "second");
    const report = await fabric.check({ request: { scope: "service", service_id: service.serviceId, level: "live" } });
    assert.equal(report.outcome, "passed");
    await assert.rejects(service.release(), (error: unknown) => {
      assert.ok(error instanceof ServiceInUseError);
      assert.ok(error instanceof FabricRuntimeError);
      assert.equal(error.code, "service_in_use");
      assert.equal(error.stage, "stop");
      return true;
    });
    assert.equal(service.status, "active");
    await assert.rejects(fabric.startRuntime(scriptedConfig("other"), { baseDir, service }), (error: unknown) => {
      assert.ok(error instanceof FabricConfigError);
      assert.equal(error.code, "service_binding_mismatch");
      assert.deepEqual(error.details.fields, ["metadata.name"]);
      return true;
    });
    await first.stop();
    const released = await service.release();
    assert.equal(released.status, "released");
    assert.equal(service.status, "released");
    const after = await fabric.check({ request: { scope: "service", service_id: service.serviceId } });
    assert.equal(after.outcome, "unknown");
    assert.equal(after.reason, "service_unavailable");
    await assert.rejects(service.startRuntime(config, { baseDir }), /service must be active/);
  } finally {
    await service[Symbol.asyncDispose]();
  }
});

test("attach detaches on release and the descriptor must claim the capability", async () => {
  const fabric = new Fabric();
  const config = scriptedConfig("kv");
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-service-"));
  await using owner = await fabric.prepareService(config, { baseDir });
  {
    await using attached = await fabric.attachService(
      config,
      { adapter_id: "fabric.scripted", service_type: "scripted_kv", connection: owner.serviceHandle.connection },
      { baseDir },
    );
    assert.equal(attached.serviceHandle.ownership, "caller_owned");
    await using writer = await attached.startRuntime(config, { baseDir });
    await kv(writer, "set", "k", 7);
  }
  await using reader = await owner.startRuntime(config, { baseDir });
  assert.equal(await kv(reader, "get", "k"), 7);
  const atof = path.join(repoRoot, "tests", "fixtures", "atof-adapter");
  await assert.rejects(
    fabric.prepareService({ metadata: { name: "plain" }, harness: { adapter_id: "test.fabric.atof" }, discovery: { local_paths: [atof] } }, { baseDir }),
    (error: unknown) => (error as { code?: string }).code === "service_unsupported",
  );
});
