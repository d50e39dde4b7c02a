import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Fabric, FabricConfigError, type FabricConfig, type RunResult } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

function config(workspace: string, provider = "local"): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "attach" },
    harness: { adapter_id: "fabric.scripted", settings: { replies: ["echo: {input}", "turn {turn}: {previous_input}"] } as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
    environment: { provider, workspace } as never,
  };
}

function response(result: RunResult): unknown {
  assert.equal(result.status, "succeeded", JSON.stringify(result.error));
  return (result.output as Record<string, unknown>).response;
}

test("a prepared environment's reference attaches; release only detaches", async () => {
  const fabric = new Fabric();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-attach-"));
  fs.writeFileSync(path.join(workspace, "keep.txt"), "caller data");
  const cfg = config(workspace);
  await using prepared = await fabric.prepareEnvironment(cfg);
  assert.deepEqual(prepared.info.reference, { provider: "local", resource: { workspace } });
  const attached = await fabric.attachEnvironment(cfg, prepared.info.reference!);
  assert.equal(attached.info.attached, true);
  assert.equal(attached.info.ownership, "caller_owned");
  assert.equal(attached.info.workspace, workspace);
  {
    await using runtime = await attached.startRuntime(cfg);
    assert.equal(response(await runtime.invoke({ input: "one" })), "echo: one");
    assert.equal(response(await runtime.invoke({ input: "two" })), "turn 2: one");
  }
  const released = await attached.release();
  assert.equal(released.released, true);
  assert.equal(fs.readFileSync(path.join(workspace, "keep.txt"), "utf8"), "caller data");
});

test("bad references name the field; a provider that cannot attach says so", async () => {
  const fabric = new Fabric();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-attach-"));
  const cases: [unknown, string, string | undefined][] = [
    [{ provider: "local", resource: { workspace: path.join(workspace, "missing") } }, "environment_not_found", "resource.workspace"],
    [{ provider: "local", resource: { workspace, extra: 1 } }, "invalid_environment_reference", "resource.extra"],
    [{ provider: "other", resource: {} }, "invalid_environment_reference", "provider"],
    [{ provider: "local", workspace }, "invalid_environment_reference", undefined],
  ];
  for (const [reference, code, field] of cases) {
    await assert.rejects(fabric.attachEnvironment(config(workspace), reference as never), (error: unknown) => {
      assert.ok(error instanceof FabricConfigError, String(error));
      assert.equal(error.code, code);
      if (field !== undefined) assert.equal(error.details.path, field);
      return true;
    });
  }
  await assert.rejects(fabric.attachEnvironment(config(workspace, "no-such-provider"), { provider: "no-such-provider" }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.equal(error.code, "environment_provider_not_found");
    assert.equal(error.details.path, "environment.provider");
    return true;
  });
});

test("the subprocess provider prepares, attaches (detach on release) and deletes what it prepared", async () => {
  const fabric = new Fabric();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-provider-"));
  const cfg = config("relative", "subprocess");
  (cfg.environment as Record<string, unknown>).settings = { root };
  const prepared = await fabric.prepareEnvironment(cfg);
  assert.equal(prepared.info.ownership, "fabric_owned");
  const directory = String(prepared.info.reference!.resource!.directory);
  assert.equal(path.dirname(directory), root);
  assert.equal(prepared.info.workspace, path.join(directory, "workspace"));
  const attached = await fabric.attachEnvironment(cfg, prepared.info.reference!);
  assert.equal(attached.info.attached, true);
  await attached.release();
  assert.ok(fs.existsSync(directory), "detach keeps the environment");
  {
    // A two-turn conversation through the runtime server inside the environment.
    await using runtime = await prepared.startRuntime(cfg);
    const first = await runtime.invoke({ input: "one" });
    assert.equal(response(first), "echo: one");
    assert.equal((first.metadata as Record<string, unknown>).environment_provider, "subprocess");
    assert.equal(response(await runtime.invoke({ input: "two" })), "turn 2: one");
  }
  await prepared.release();
  assert.ok(!fs.existsSync(directory), "release deletes what Fabric prepared");
});
