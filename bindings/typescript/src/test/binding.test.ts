import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import {
  Fabric,
  FabricCapabilityError,
  FabricConfigError,
  FabricError,
  FabricRuntimeError,
  FabricStateError,
  type FabricConfig,
  type RunResult,
} from "../index";
import { nativeLibrary } from "../native";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

function scriptedConfig(name: string, settings: Record<string, unknown> = {}): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.scripted", settings: settings as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
  };
}

function output(result: RunResult): Record<string, unknown> {
  assert.equal(result.status, "succeeded", JSON.stringify(result.error));
  return result.output as Record<string, unknown>;
}

const fabric = new Fabric();

test("plan resolves the scripted adapter", async () => {
  const plan = await fabric.plan(scriptedConfig("plan"));
  assert.equal(plan.agent_name, "plan");
  assert.equal(plan.adapter_descriptor?.descriptor.adapter_id, "fabric.scripted");
});

test("plan rejects an invalid config with a structured FabricConfigError", async () => {
  const config = { ...scriptedConfig("bad"), surprise: true } as unknown as FabricConfig;
  await assert.rejects(fabric.plan(config), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.ok(error instanceof FabricError);
    assert.equal(typeof error.code, "string");
    assert.ok(error.code && error.code.length > 0);
    assert.ok(error.stage === "config" || error.stage === "plan", String(error.stage));
    return true;
  });
  await assert.rejects(fabric.plan("{not json"), FabricConfigError);
  await assert.rejects(fabric.plan("{}\u0000"), (error: unknown) => error instanceof FabricConfigError && error.code === "invalid_argument");
});

test("a config for an unknown adapter is not planned", async () => {
  const config = scriptedConfig("missing");
  config.harness = { adapter_id: "fabric.no-such-adapter" };
  await assert.rejects(fabric.plan(config), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError || error instanceof FabricCapabilityError, String(error));
    return true;
  });
});

test("inspectAdapter returns the capability profile from descriptor metadata", async () => {
  const descriptor = JSON.parse(fs.readFileSync(SCRIPTED, "utf8")) as Record<string, unknown>;
  const config = scriptedConfig("inspect");
  const profile = await fabric.inspectAdapter(config, descriptor);
  assert.equal(profile.adapter_id, "fabric.scripted");
  assert.equal(profile.skills, true);
  assert.equal(profile.mcp, false);
  assert.equal(profile.atif, false);
  assert.equal(profile.descriptor_sha256, (await fabric.plan(config)).descriptor_sha256);

  const without = await fabric.inspectAdapter(config, null);
  assert.equal(without.skills, false);
  assert.equal(without.descriptor_sha256 ?? null, null);
  // A descriptor given as JSON text is sent as is.
  assert.deepEqual(await fabric.inspectAdapter(JSON.stringify(config), JSON.stringify(descriptor)), profile);
});

test("inspectAdapter rejects what the adapter cannot implement, naming the field", async () => {
  const descriptor = JSON.parse(fs.readFileSync(SCRIPTED, "utf8")) as Record<string, unknown>;
  const unknown = { ...scriptedConfig("inspect-unknown"), harness: { adapter_id: "no.such.adapter" } };
  await assert.rejects(fabric.inspectAdapter(unknown, descriptor), (error: unknown) => {
    assert.ok(error instanceof FabricCapabilityError, String(error));
    assert.equal(error.code, "config_incompatible");
    assert.equal(error.details.path, "harness.adapter_id");
    return true;
  });
  const skills = { ...scriptedConfig("inspect-skills"), skills: { paths: ["skills/a"] } } as FabricConfig;
  await assert.rejects(fabric.inspectAdapter(skills, null), (error: unknown) => {
    assert.ok(error instanceof FabricCapabilityError, String(error));
    assert.equal(error.details.path, "skills");
    return true;
  });
  await assert.rejects(fabric.inspectAdapter(scriptedConfig("inspect-bad"), { bogus: 1 }), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.equal(error.code, "descriptor_unsupported_contract");
    return true;
  });
});

test("doctor collects findings instead of throwing", async () => {
  const good = await fabric.doctor(scriptedConfig("doctor"));
  assert.equal(good.agent_name, "doctor");
  assert.notEqual(good.status, "fail");
  assert.ok(good.checks.some((check) => check.name === "adapter_descriptor" && check.status === "pass"));
  const config = scriptedConfig("doctor-missing");
  config.harness = { adapter_id: "fabric.no-such-adapter" };
  const bad = await fabric.doctor(config);
  assert.equal(bad.status, "fail");
  const finding = bad.checks.find((check) => check.code === "adapter_not_found");
  assert.ok(finding, JSON.stringify(bad.checks));
  assert.equal(finding.path, "harness.adapter_id");
});

test("validate returns the canonical config", async () => {
  const canonical = await fabric.validate({ metadata: { name: "canon" }, harness: { adapter_id: "fabric.scripted" } });
  assert.equal(canonical.schema_version, "fabric.agent/v1alpha1");
  assert.equal(canonical.metadata.name, "canon");
  await assert.rejects(fabric.validate({ metadata: { name: "x" }, nope: 1 } as unknown as FabricConfig), FabricConfigError);
});

test("expectedDescriptorSha256 is enforced by the core in the same call", async () => {
  const config = scriptedConfig("pinned");
  const good = (await fabric.plan(config)).descriptor_sha256 as string;
  assert.equal(good.length, 64);
  const pinned = await fabric.plan(config, { expectedDescriptorSha256: good });
  assert.equal(pinned.descriptor_sha256, good);
  const other = "0".repeat(64);
  const mismatch = (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.equal(error.code, "descriptor_mismatch");
    assert.equal(error.stage, "plan");
    assert.equal(error.details.expected_sha256, other);
    assert.equal(error.details.actual_sha256, good);
    return true;
  };
  await assert.rejects(fabric.run(config, { input: "x", expectedDescriptorSha256: other }), mismatch);
  await assert.rejects(fabric.startRuntime(config, { expectedDescriptorSha256: other }), mismatch);
});

test("an unknown key of the options object is a FabricConfigError naming it", async () => {
  const text = JSON.stringify(scriptedConfig("options"));
  await assert.rejects(nativeLibrary().call("fabric_plan", [text, '{"bogus": 1}']), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError, String(error));
    assert.equal(error.code, "unknown_field");
    assert.equal(error.details.path, "options.bogus");
    return true;
  });
});

test("run: start, invoke once, stop", async () => {
  const result = await fabric.run(scriptedConfig("run"), { input: "hello" });
  assert.equal(output(result).response, "hello");
  assert.equal(result.agent_name, "run");
  assert.match(result.runtime_id, /^runtime-/);
  assert.match(result.invocation_id, /^invocation-/);
});

test("two-turn runtime keeps conversation state", async () => {
  const runtime = await fabric.startRuntime(
    scriptedConfig("two-turn", { replies: ["first: {input}", "second: {input} after {previous_input}"] }),
  );
  try {
    assert.match(runtime.runtimeId, /^runtime-/);
    const first = await runtime.invoke({ input: "alpha" });
    assert.equal(output(first).response, "first: alpha");
    const second = await runtime.invoke({ request: { input: "beta", context: { trace: "t" } } });
    assert.equal(output(second).response, "second: beta after alpha");
    assert.equal(output(second).turn, 2);
    assert.equal(first.runtime_id, second.runtime_id);
    assert.notEqual(first.invocation_id, second.invocation_id);
    const status = await runtime.status();
    assert.equal(status.invocations, 2);
  } finally {
    const stopped = await runtime.stop();
    assert.ok(Array.isArray(stopped.events));
  }
  assert.equal(runtime.state, "stopped");
  const final = await runtime.status();
  assert.deepEqual([final.runtime_id, final.state, final.invocations], [runtime.runtimeId, "stopped", 2]);
  assert.equal(final.host_pid, runtime.info.host_pid);
  assert.deepEqual(await runtime.stop(), runtime.stopped, "stop is idempotent");
  await assert.rejects(runtime.invoke({ input: "late" }), FabricStateError);
});

test("a failed harness turn is a result, not an exception", async () => {
  await using runtime = await fabric.startRuntime(scriptedConfig("failed"));
  const result = await runtime.invoke({
    request: { input: "x", context: { scripted: { fail: { code: "target_refused", message: "no" } } } },
  });
  assert.equal(result.status, "failed");
  assert.equal(result.error?.code, "target_refused");
  assert.equal(result.error?.stage, "invoke");
  assert.equal(output(await runtime.invoke({ input: "still alive" })).response, "still alive");
});

test("a crashed host is a FabricRuntimeError with code and stage; the runtime is failed", async () => {
  await using runtime = await fabric.startRuntime(scriptedConfig("crash"));
  await assert.rejects(runtime.invoke({ request: { input: "x", context: { scripted: { crash: true } } } }), (error: unknown) => {
    assert.ok(error instanceof FabricRuntimeError, String(error));
    assert.ok(!(error instanceof FabricStateError));
    assert.equal(error.stage, "invoke");
    assert.equal(typeof error.code, "string");
    return true;
  });
  assert.equal(runtime.state, "failed");
  await assert.rejects(runtime.invoke({ input: "again" }), FabricStateError);
});

test("request overrides reach the adapter as request.extensions, checked against its schema", async () => {
  const config = scriptedConfig("overrides", { replies: ["zero", "one"] });
  const result = await fabric.run(config, { request: { input: "x", overrides: { temperature: 0.5, reply_index: 1 } } });
  const output = result.output as { response: string; metadata: Record<string, unknown> };
  assert.equal(output.response, "one");
  assert.equal(output.metadata.temperature, 0.5);
  await assert.rejects(fabric.run(config, { request: { input: "x", overrides: { temperature: "s3cret" } } }), (error: unknown) => {
    assert.ok(error instanceof FabricRuntimeError, String(error));
    assert.equal(error.code, "request_extension_invalid");
    assert.equal(error.stage, "invoke");
    assert.equal(error.details.path, "request.extensions.temperature");
    assert.ok(!String(error.message).includes("s3cret"));
    return true;
  });
});

test("input and request are mutually exclusive", async () => {
  await assert.rejects(fabric.run(scriptedConfig("exclusive"), { input: 1, request: { input: 2 } }), FabricConfigError);
});

test("overlapping invocations on one runtime: exactly one FabricStateError", async () => {
  await using runtime = await fabric.startRuntime(scriptedConfig("overlap"));
  const slow = { request: { input: "slow", context: { scripted: { sleep_ms: 500 } } } };
  const outcomes = await Promise.allSettled([runtime.invoke(slow), runtime.invoke({ input: "fast" })]);
  const rejected = outcomes.filter((outcome) => outcome.status === "rejected") as PromiseRejectedResult[];
  const fulfilled = outcomes.filter((outcome) => outcome.status === "fulfilled");
  assert.equal(rejected.length, 1, JSON.stringify(outcomes));
  assert.equal(fulfilled.length, 1);
  assert.ok(rejected[0]!.reason instanceof FabricStateError, String(rejected[0]!.reason));
  assert.equal((rejected[0]!.reason as FabricStateError).code, "runtime_busy");
  assert.equal(runtime.state, "active");
  assert.equal(output(await runtime.invoke({ input: "after" })).response, "after");
});

test("runtimes run concurrently, stay isolated, and the event loop keeps turning", async () => {
  const count = 6; // more than libuv's default pool of 4 threads
  const sleepMs = 600;
  const runtimes = await Promise.all(
    Array.from({ length: count }, (_, index) => fabric.startRuntime(scriptedConfig(`parallel-${index}`))),
  );
  try {
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 10);
    const started = performance.now();
    const results = await Promise.all(
      runtimes.map((runtime, index) =>
        runtime.invoke({ request: { input: `r${index}`, context: { scripted: { sleep_ms: sleepMs } } } }),
      ),
    );
    const elapsed = performance.now() - started;
    clearInterval(ticker);
    results.forEach((result, index) => {
      assert.equal(output(result).response, `r${index}`);
      assert.equal(output(result).turn, 1);
    });
    assert.equal(new Set(results.map((result) => result.runtime_id)).size, count);
    assert.ok(elapsed < sleepMs * 1.8, `invocations did not all run at once: ${elapsed.toFixed(0)} ms`);
    assert.ok(ticks >= 10, `event loop was blocked (${ticks} ticks in ${elapsed.toFixed(0)} ms)`);
    const second = await Promise.all(runtimes.map((runtime) => runtime.invoke({ input: "again" })));
    for (const result of second) assert.equal(output(result).turn, 2);
  } finally {
    await Promise.all(runtimes.map((runtime) => runtime.stop()));
  }
});

test("a missing library is FabricNativeUnavailableError", () => {
  const script = `
    const { Fabric, FabricNativeUnavailableError } = require(${JSON.stringify(path.join(__dirname, "..", "index.js"))});
    try { new Fabric(); console.log("loaded"); }
    catch (error) { console.log(error instanceof FabricNativeUnavailableError ? "unavailable:" + error.code : "other:" + error); }
  `;
  const child = spawnSync(process.execPath, ["-e", script], {
    env: { ...process.env, FABRIC_CORE_LIB: "/nonexistent/libfabric_ffi.so" },
    encoding: "utf8",
  });
  assert.equal(child.stdout.trim(), "unavailable:native_library_missing", child.stderr);
});

test("a dropped runtime is freed by the GC backstop (its host ends)", () => {
  const script = `
    const { Fabric } = require(${JSON.stringify(path.join(__dirname, "..", "index.js"))});
    const config = ${JSON.stringify(scriptedConfig("dropped"))};
    (async () => {
      let pid;
      await (async () => {
        const runtime = await new Fabric().startRuntime(config);
        pid = runtime.info.host_pid;
      })();
      const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
      if (!alive()) { console.log("host not running"); return; }
      const deadline = Date.now() + 10000;
      while (alive() && Date.now() < deadline) {
        global.gc();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      console.log(alive() ? "still alive" : "freed");
    })();
  `;
  const child = spawnSync(process.execPath, ["--expose-gc", "-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(child.stdout.trim(), "freed", child.stderr);
});

test("an aborted invoke rejects promptly and leaves the runtime usable", async () => {
  await using runtime = await fabric.startRuntime(scriptedConfig("abort"));
  const started = performance.now();
  await assert.rejects(
    runtime.invoke({
      request: { input: "slow", context: { scripted: { sleep_ms: 1500 } } },
      signal: AbortSignal.timeout(100),
    }),
    (error: unknown) => (error as Error).name === "TimeoutError",
  );
  assert.ok(performance.now() - started < 1000, "abort was not prompt");
  const next = await runtime.invoke({ input: "after" });
  assert.equal(output(next).response, "after");
  assert.equal(output(next).turn, 2, "the abandoned invocation completed first");

  const controller = new AbortController();
  controller.abort();
  await assert.rejects(runtime.invoke({ input: "never", signal: controller.signal }), { name: "AbortError" });
  assert.equal(output(await runtime.invoke({ input: "last" })).turn, 3, "an already-aborted call never reached the core");
  await assert.rejects(fabric.run(scriptedConfig("abort-run"), { input: 1, signal: controller.signal }), { name: "AbortError" });
});

test("a prepared environment hosts several runtimes until it is released", async () => {
  const config = scriptedConfig("environment");
  await using environment = await fabric.prepareEnvironment(config);
  assert.match(environment.environmentId, /^environment-/);
  assert.equal(environment.info.released, false);
  await using first = await environment.startRuntime(config);
  await using second = await fabric.startRuntimeIn(environment, config);
  for (const runtime of [first, second]) {
    assert.equal(runtime.info.environment.environment_id, environment.environmentId);
    assert.equal(output(await runtime.invoke({ input: "in env" })).response, "in env");
  }
  const released = await fabric.releaseEnvironment(environment);
  assert.equal(released.released, true);
  assert.deepEqual(await environment.release(), released, "release is idempotent");
  await assert.rejects(environment.startRuntime(config), (error: unknown) => {
    assert.ok(error instanceof FabricStateError, String(error));
    assert.equal(error.code, "environment_released");
    return true;
  });
  assert.equal(output(await first.invoke({ input: "still running" })).response, "still running");
});

test("what the binding returns satisfies the schemas/sdk documents its generated types come from", async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Ajv2020 = (require("ajv/dist/2020") as { default: typeof import("ajv/dist/2020").default }).default;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const check = (file: string, value: unknown) => {
    const schema = JSON.parse(fs.readFileSync(path.join(repoRoot, "schemas", "sdk", file), "utf8"));
    const validate = ajv.compile(schema);
    assert.ok(validate(value), `${file}: ${JSON.stringify(validate.errors)}`);
  };
  const config = scriptedConfig("documents");
  check("run-plan.schema.json", await fabric.plan(config));
  check("doctor-report.schema.json", await fabric.doctor(config));
  await using environment = await fabric.prepareEnvironment(config);
  check("environment-info.schema.json", environment.info);
  const runtime = await environment.startRuntime(config);
  check("runtime-info.schema.json", runtime.info);
  check("run-result.schema.json", await runtime.invoke({ input: "x" }));
  check("runtime-status.schema.json", await runtime.status());
  check("runtime-resource-snapshot.schema.json", await runtime.resourceSnapshot());
  check("check-report.schema.json", await fabric.check({ environment, request: { scope: "runtime", runtime_id: runtime.runtimeId } }));
  check("runtime-stop-result.schema.json", await runtime.stop());
  check("runtime-status.schema.json", await runtime.status());
  check("environment-info.schema.json", await environment.release());
});
