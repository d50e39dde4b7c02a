/**
 * Resource snapshots, invocation system stats and health checks through the C ABI. (The
 * result types are generated from the Rust types; request models are checked against
 * `schemas/sdk/` by types.test.ts.)
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";
import {
  Fabric,
  FabricConfigError,
  FabricRuntimeError,
  FabricStateError,
  ResourceObservationUnavailableError,
  ResourceObservationUnsupportedError,
  errorFromStatus,
  type FabricConfig,
} from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");
const MIB = 1024 * 1024;

function scriptedConfig(name: string, extra: Partial<FabricConfig> = {}, settings: Record<string, unknown> = {}): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.scripted", settings: settings as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
    ...extra,
  };
}

test("resource statuses map to the resource error classes", () => {
  const unavailable = errorFromStatus(5, JSON.stringify({ code: "resource_observation_unavailable", message: "gone" }));
  assert.ok(unavailable instanceof ResourceObservationUnavailableError);
  assert.ok(unavailable instanceof FabricRuntimeError);
  assert.equal(unavailable.code, "resource_observation_unavailable");
  assert.ok(errorFromStatus(6, JSON.stringify({ code: "resource_observation_unsupported", message: "no" })) instanceof ResourceObservationUnsupportedError);
});

// ---- through the native library -----------------------------------------------------

const fabric = new Fabric();

test("resourceSnapshot of a live runtime; after stop it is unavailable", async () => {
  const runtime = await fabric.startRuntime(scriptedConfig("snapshot"));
  try {
    const snapshot = await runtime.resourceSnapshot();
    assert.equal(snapshot.runtime_id, runtime.runtimeId);
    assert.ok(snapshot.process_count >= 1);
    assert.ok(snapshot.resident_memory_bytes > 0);
    assert.ok(snapshot.cpu_time_seconds >= 0);
    assert.match(snapshot.observed_at, /Z$/);
  } finally {
    await runtime.stop();
  }
  await assert.rejects(runtime.resourceSnapshot(), ResourceObservationUnavailableError);
});

test("RunResult carries system_stats by default, none with system_stats: null; sampled peak", async () => {
  {
    await using runtime = await fabric.startRuntime(scriptedConfig("stats"));
    const result = await runtime.invoke({ input: "hi" });
    const stats = result.system_stats;
    assert.ok(stats, "system_stats present by default");
    assert.equal(stats.before.status, "available");
    assert.equal(stats.after.snapshot?.runtime_id, result.runtime_id);
    assert.ok(stats.elapsed_seconds >= 0);
    assert.equal(result.resource_snapshot?.runtime_id, result.runtime_id);
  }
  {
    await using runtime = await fabric.startRuntime(scriptedConfig("no-stats", { system_stats: null }));
    const result = await runtime.invoke({ input: "hi" });
    assert.ok(result.system_stats === null || result.system_stats === undefined);
  }
  {
    const config = scriptedConfig("sampled", { system_stats: { sampling: { interval_ms: 10, max_samples: 10000 } } });
    await using runtime = await fabric.startRuntime(config);
    const result = await runtime.invoke({
      request: { input: "spike", context: { scripted: { memory_mib: [80, 400, 80], step_ms: 300, burn_cpu_ms: 300 } } },
    });
    assert.equal(result.status, "succeeded", JSON.stringify(result.error));
    const peak = result.system_stats?.sampled?.resident_memory_bytes?.sampled_peak ?? 0;
    assert.ok(peak >= 350 * MIB, `sampled peak ${peak}`);
    assert.ok((result.system_stats?.cpu_time_seconds_estimate ?? 0) > 0.1);
  }
});

test("check: ready passes, frozen report; unknown after stop; server scope unsupported; bad request rejects", async () => {
  const runtime = await fabric.startRuntime(scriptedConfig("check"));
  const runtimeId = runtime.runtimeId;
  try {
    const report = await fabric.check({ request: { scope: "runtime", runtime_id: runtimeId, level: "ready" } });
    assert.equal(report.outcome, "passed", JSON.stringify(report));
    assert.equal(report.reason, null);
    assert.deepEqual(
      report.checks.map((c) => c.level),
      ["live", "active", "ready"],
    );
    assert.equal(report.schema_version, "fabric.check/v1alpha1");
    assert.ok(Object.isFrozen(report) && Object.isFrozen(report.checks) && Object.isFrozen(report.target));
  } finally {
    await runtime.stop();
  }
  const after = await fabric.check({ request: { scope: "runtime", runtime_id: runtimeId, level: "ready" } });
  assert.deepEqual([after.outcome, after.reason], ["unknown", "runtime_unavailable"]);
  const server = await fabric.check({ request: { scope: "server" } });
  assert.deepEqual([server.outcome, server.reason], ["unsupported", "unsupported_scope"]);
  await assert.rejects(fabric.check({ request: { scope: "runtime" } }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.equal(error.code, "invalid_check_request");
    return true;
  });
});

test("check in an environment passes while an invocation is pending", async () => {
  const config = scriptedConfig("check-env");
  await using environment = await fabric.prepareEnvironment(config);
  await using runtime = await environment.startRuntime(config);
  const pending = runtime.invoke({ request: { input: "slow", context: { scripted: { sleep_ms: 2000 } } } });
  let finished = false;
  void pending.then(() => (finished = true));
  const deadline = Date.now() + 10_000;
  while ((await runtime.status()).state !== "busy") {
    assert.ok(Date.now() < deadline, "the invocation never became busy");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const report = await fabric.check({
    environment,
    request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready", timeout_seconds: 1 },
  });
  assert.equal(report.outcome, "passed", JSON.stringify(report));
  assert.equal(report.activity, "busy");
  assert.equal(finished, false, "the invoke is still pending");
  assert.equal((await pending).status, "succeeded");
  await runtime.stop();
  await environment.release();
  await assert.rejects(
    fabric.check({ environment, request: { scope: "runtime", runtime_id: runtime.runtimeId } }),
    (error: unknown) => error instanceof FabricStateError && error.code === "environment_released",
  );
});
