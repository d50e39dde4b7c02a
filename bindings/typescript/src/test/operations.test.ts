// Non-blocking calls: invoke and run are operations libuv watches (no worker thread waits);
// many at once on many runtimes, aborts before completion, and the descriptors' lifetime.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Fabric, type FabricConfig, type RunResult } from "../index";
import { nativeLibrary } from "../native";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

function echoConfig(name: string): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.scripted", settings: { when_exhausted: "echo" } as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
  };
}

function slow(input: string, ms: number) {
  return { request: { input, context: { scripted: { sleep_ms: ms } } } };
}

function response(result: RunResult): unknown {
  assert.equal(result.status, "succeeded", JSON.stringify(result.error));
  return (result.output as Record<string, unknown>).response;
}

/** Inodes of the sockets this process has open (Linux). */
function openSockets(): Set<string> {
  const found = new Set<string>();
  for (const name of fs.readdirSync("/proc/self/fd")) {
    try {
      const link = fs.readlinkSync(`/proc/self/fd/${name}`);
      if (link.startsWith("socket:")) found.add(link);
    } catch {
      // closed meanwhile
    }
  }
  return found;
}

const fabric = new Fabric();

test("invoke and run are non-blocking operations on this library", () => {
  const library = nativeLibrary();
  assert.ok(library.canOperate("fabric_runtime_invoke_begin"));
  assert.ok(library.canOperate("fabric_run_begin"));
});

test("many invocations on many runtimes complete through the event loop", async () => {
  const runtimes = await Promise.all(Array.from({ length: 12 }, () => fabric.startRuntime(echoConfig("ops-many"))));
  try {
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all(runtimes.map((runtime, index) => runtime.invoke(slow(`${round}-${index}`, 5))));
      assert.deepEqual(
        results.map(response),
        runtimes.map((_, index) => `${round}-${index}`),
      );
    }
  } finally {
    for (const runtime of runtimes) await runtime.stop();
  }
  const runs = await Promise.all([0, 1, 2].map((index) => fabric.run(echoConfig("ops-run"), { input: `run ${index}` })));
  assert.deepEqual(runs.map(response), ["run 0", "run 1", "run 2"]);
});

test("an aborted invocation finishes in the core; no descriptor is spent per call", async () => {
  await using runtime = await fabric.startRuntime(echoConfig("ops-abort"));
  await runtime.invoke({ input: "warm" }); // the process's completion queue exists now
  const before = [...openSockets()].sort();
  const controller = new AbortController();
  const pending = runtime.invoke({ ...slow("aborted", 300), signal: controller.signal });
  assert.deepEqual([...openSockets()].sort(), before, "the queue reports the operation: no socket per call");
  controller.abort();
  await assert.rejects(pending, { name: "AbortError" });
  // The next invoke waits for the aborted one, which the loop took and freed.
  assert.equal(response(await runtime.invoke({ input: "next" })), "next");
  for (let index = 0; index < 20; index++) await runtime.invoke({ input: `more ${index}` });
  assert.deepEqual([...openSockets()].sort(), before);
  const status = await runtime.status();
  assert.equal(status.state, "idle");
  assert.equal(status.invocations, 23);
});

test("start and stop are operations too: no worker-thread call", async () => {
  const library = nativeLibrary();
  assert.ok(library.canOperate("fabric_runtime_start_begin"));
  assert.ok(library.canOperate("fabric_runtime_stop_begin"));
  const used: string[] = [];
  const { call, callWithHandle } = library;
  library.call = function (name: string, args: unknown[]) {
    used.push(name);
    return call.call(this, name, args);
  };
  library.callWithHandle = function (name: string, args: unknown[]) {
    used.push(name);
    return callWithHandle.call(this, name, args);
  };
  try {
    const runtimes = await Promise.all([0, 1, 2, 3].map(() => fabric.startRuntime(echoConfig("ops-start"))));
    const results = await Promise.all(runtimes.map((runtime, index) => runtime.invoke({ input: `s${index}` })));
    assert.deepEqual(results.map(response), ["s0", "s1", "s2", "s3"]);
    const stops = await Promise.all(runtimes.map((runtime) => runtime.stop()));
    assert.equal(stops.length, 4);
  } finally {
    library.call = call;
    library.callWithHandle = callWithHandle;
  }
  assert.deepEqual(
    used.filter((name) => name === "fabric_runtime_start" || name === "fabric_runtime_stop"),
    [],
  );
});

test("a start aborted while its host starts stops the runtime it produced", async () => {
  const config = echoConfig("ops-start-abort");
  config.harness = { adapter_id: "fabric.scripted", settings: { when_exhausted: "echo", start_delay_ms: 300 } as never };
  const controller = new AbortController();
  const pending = fabric.startRuntime(config, { signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(pending, { name: "AbortError" });
  // The late runtime is stopped in the background: wait until no host of ours is left.
  const deadline = Date.now() + 10_000;
  while (childPids().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(childPids(), []);
});

/** Pids of this process's live child processes (adapter hosts are forked by the core). */
function childPids(): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === process.pid) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
