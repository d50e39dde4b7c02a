/**
 * The echo adapter under our host: through the `fabric run` CLI and through the Node
 * binding. Both need the cargo-built core (`cargo build --workspace`); a missing build fails
 * these tests naming it (`FABRIC_ALLOW_SKIPS=1` skips them instead).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { Fabric, FabricRuntimeError, libraryPath, type FabricConfig, type RunResult } from "fabric-core";
import { dependencySkip } from "fabric-core/testing";

const ADAPTER_DIR = path.resolve(__dirname, "..", "..");
const REPO = path.resolve(ADAPTER_DIR, "..", "..");
const DESCRIPTOR = path.join(ADAPTER_DIR, "typescript-echo.fabric-adapter.json");
const CLI = path.join(REPO, "target", "debug", "fabric");

function config(name: string, settings: Record<string, string> = {}): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.typescript-echo", settings },
    discovery: { local_paths: [DESCRIPTOR] },
    runtime: { timeout_seconds: 30 },
  };
}

/** The rule for a missing build (fabric-core/testing's `dependencySkip`). */
function missing(file: string): string | false {
  return dependencySkip(fs.existsSync(file), file, "cargo build --workspace");
}

function output(result: RunResult): Record<string, unknown> {
  assert.equal(result.status, "succeeded", JSON.stringify(result.error));
  return result.output as Record<string, unknown>;
}

function tempFile(name: string, content: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-echo-"));
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(content));
  return file;
}

test("fabric run drives the echo adapter (CLI)", { skip: missing(CLI) }, () => {
  const file = tempFile("fabric.json", config("cli", { prefix: "> " }));
  const run = spawnSync(CLI, ["run", file, "--input", "hello"], { encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout) as RunResult;
  assert.equal(result.adapter_id, "fabric.typescript-echo");
  assert.equal(output(result).response, "> hello");
  assert.equal(output(result).turn, 1);
});

test("fabric run reports a failed echo turn with exit status 1 (CLI)", { skip: missing(CLI) }, () => {
  const file = tempFile("fabric.json", config("cli-failed"));
  const request = tempFile("request.json", {
    input: "x",
    context: { scripted: { fail: { code: "echo_refused", message: "refused" } } },
  });
  const run = spawnSync(CLI, ["run", file, "--request", request], { encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 1, run.stderr);
  const result = JSON.parse(run.stdout) as RunResult;
  assert.equal(result.status, "failed");
  assert.equal(result.error?.code, "echo_refused");
});

test("the Node binding drives the echo adapter: two turns, isolation, failures", { skip: missing(libraryPath()) }, async () => {
  const fabric = new Fabric();
  await using first = await fabric.startRuntime(config("binding-a"));
  await using second = await fabric.startRuntime(config("binding-b"));
  assert.equal(output(await first.invoke({ input: "a1" })).turn, 1);
  const a2 = output(await first.invoke({ input: "a2" }));
  assert.equal(a2.turn, 2);
  assert.equal(a2.previous_input, "a1");
  const b1 = output(await second.invoke({ input: "b1" }));
  assert.equal(b1.turn, 1);
  assert.equal(b1.runtime_id, second.runtimeId);

  const failed = await first.invoke({
    request: { input: "x", context: { scripted: { fail: { code: "echo_refused", message: "refused" } } } },
  });
  assert.equal(failed.status, "failed");
  assert.equal(failed.error?.code, "echo_refused");

  await assert.rejects(
    second.invoke({ request: { input: "x", context: { scripted: { raise: { code: "echo_boom", message: "boom" } } } } }),
    (error: unknown) => {
      assert.ok(error instanceof FabricRuntimeError, String(error));
      assert.equal(error.stage, "invoke");
      assert.equal(typeof error.code, "string");
      return true;
    },
  );
});

test("the core checks the echo adapter's health through the Node binding, also during a slow invoke", { skip: missing(libraryPath()) }, async () => {
  const fabric = new Fabric();
  const failing = config("health-fail", {});
  (failing.harness as { settings: Record<string, unknown> }).settings = { health: { fail: "ready" } };
  {
    await using runtime = await fabric.startRuntime(config("health"));
    const report = await fabric.check({ request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready" } });
    assert.equal(report.outcome, "passed", JSON.stringify(report));
    assert.deepEqual(
      report.checks.map((check) => check.source_id),
      ["echo:live", "echo:active", "echo:ready"],
    );
    const pending = runtime.invoke({ request: { input: "slow", context: { scripted: { sleep_ms: 1500 } } } });
    let finished = false;
    void pending.then(() => (finished = true));
    const deadline = Date.now() + 10_000;
    while ((await runtime.status()).state !== "busy") {
      assert.ok(Date.now() < deadline, "the invocation never became busy");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const during = await fabric.check({ request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready", timeout_seconds: 1 } });
    assert.equal(during.outcome, "passed", JSON.stringify(during));
    assert.equal(during.activity, "busy");
    assert.equal(finished, false, "the invoke is still pending");
    assert.equal(output(await pending).response, "slow");
  }
  {
    await using runtime = await fabric.startRuntime(failing);
    const report = await fabric.check({ request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready" } });
    assert.deepEqual([report.outcome, report.reason], ["failed", "echo_forced_failure"]);
  }
});

test("the echo adapter streams native OpenAI chunks through serve() (Node binding)", { skip: missing(libraryPath()) }, async () => {
  const fabric = new Fabric();
  await using runtime = await fabric.startRuntime(config("stream", { prefix: "> " }));
  assert.equal(runtime.supportsOpenAIStreaming, true);
  const stream = await runtime.invokeOpenAIStream({
    request: { input: "streamed reply", context: { scripted_stream: { chunk_chars: 4 } } },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
  assert.equal(text, "> streamed reply");
  assert.equal(chunks.length, Math.ceil(text.length / 4));
  assert.equal(chunks[0]?.choices[0]?.delta.role, "assistant");
  assert.ok(chunks.every((chunk) => chunk.model === "fabric.typescript-echo" && chunk.id === `chatcmpl-${stream.invocationId}`));
  const result = await stream.result();
  assert.equal(output(result).response, "> streamed reply");
  assert.equal(result.invocation_id, stream.invocationId);
  // The streamed turn counts like any other.
  assert.equal(output(await runtime.invoke({ input: "next" })).turn, 2);
  // A bad directive fails the streamed turn with the adapter's code.
  const bad = await runtime.invokeOpenAIStream({ request: { input: "x", context: { scripted_stream: { chunk_chars: 0 } } } });
  for await (const _chunk of bad) void _chunk;
  await assert.rejects(bad.result(), (error: unknown) => error instanceof FabricRuntimeError && error.code === "echo_invalid_directive");
});

test("the echo adapter's software evidence reaches RunResult.execution (Node binding)", { skip: missing(libraryPath()) }, async () => {
  const fabric = new Fabric();
  const result = await fabric.run(config("evidence"), { input: "hi" });
  output(result);
  const execution = result.execution;
  assert.ok(execution, "execution is present");
  const [core, executable, guest] = execution.inventories ?? [];
  assert.deepEqual(
    (core.entries ?? []).map((entry) => [entry.role, entry.name]),
    [
      ["core", "fabric-core"],
      ["sdk", "fabric-core"],
      ["interpreter", "node"],
    ],
  );
  assert.equal(core.entries?.[2].version.value, process.versions.node);
  // A process adapter: the core does not run the executable to ask for its version.
  assert.deepEqual(executable.entries?.[0].version, { status: "unavailable", reason: "version_command_not_declared" });
  assert.deepEqual(guest.participants, ["guest_sdk", "adapter"]);
  const library = (guest.entries ?? []).find((entry) => entry.name === "fabric-core");
  assert.equal(library?.version.value, "0.1.0");
  assert.equal(execution.coverage?.status, "complete", JSON.stringify(execution));

  const disabled = config("evidence-off") as FabricConfig & { provenance?: unknown };
  disabled.provenance = { enabled: false };
  const off = await fabric.run(disabled, { input: "hi" });
  output(off);
  assert.equal(off.execution, undefined);
});
