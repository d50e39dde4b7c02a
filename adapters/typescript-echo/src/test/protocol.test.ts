import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { HostProcess, invokeMessage, startMessage, stopMessage } from "fabric-core/testing";

const MAIN = path.join(__dirname, "..", "main.js");

function echoHost(): HostProcess {
  return new HostProcess(process.execPath, [MAIN]);
}

test("echo: two turns with per-runtime state, prefix from harness.settings", async () => {
  const host = echoHost();
  try {
    const start = await host.request(startMessage("runtime-1", { harness: { settings: { prefix: "> " } } }));
    assert.deepEqual(start, { operation: "start", outcome: { status: "succeeded", output: { adapter: "fabric.typescript-echo" } } });
    const first = await host.request(invokeMessage("runtime-1", { input: "one" }));
    assert.deepEqual(first.outcome.output, {
      status: "succeeded",
      output: { response: "> one", turn: 1, previous_input: null, runtime_id: "runtime-1" },
    });
    const second = await host.request(invokeMessage("runtime-1", { input: { structured: [1, 2] } }));
    assert.deepEqual(second.outcome.output.output, {
      response: { structured: [1, 2] },
      turn: 2,
      previous_input: "one",
      runtime_id: "runtime-1",
    });
    assert.equal((await host.request(stopMessage("runtime-1"))).outcome.status, "succeeded");
    assert.equal(await host.exit(), 0);
    assert.match(host.stderr, /echo adapter started/, "console.log output goes to stderr");
    assert.deepEqual(host.pending(), []);
  } finally {
    host.kill();
  }
});

test("echo: two hosts never share turns", async () => {
  const a = echoHost();
  const b = echoHost();
  try {
    await a.request(startMessage("runtime-a"));
    await b.request(startMessage("runtime-b"));
    await a.request(invokeMessage("runtime-a", { input: "a1" }));
    await a.request(invokeMessage("runtime-a", { input: "a2" }));
    const b1 = await b.request(invokeMessage("runtime-b", { input: "b1" }));
    assert.equal(b1.outcome.output.output.turn, 1);
    assert.equal(b1.outcome.output.output.previous_input, null);
  } finally {
    a.kill();
    b.kill();
  }
});

test("echo: fail directive returns a failed AgentRunResult", async () => {
  const host = echoHost();
  try {
    await host.request(startMessage("runtime-1"));
    const failed = await host.request(
      invokeMessage("runtime-1", { input: "x", context: { scripted: { fail: { code: "echo_refused", message: "refused", retryable: true } } } }),
    );
    assert.equal(failed.outcome.status, "succeeded");
    assert.deepEqual(failed.outcome.output.error, { code: "echo_refused", message: "refused", retryable: true });
    assert.equal(failed.outcome.output.status, "failed");
    const next = await host.request(invokeMessage("runtime-1", { input: "y" }));
    assert.equal(next.outcome.output.status, "succeeded");
  } finally {
    host.kill();
  }
});

test("echo: raise directive fails the invocation at the host and latches the runtime", async () => {
  const host = echoHost();
  try {
    await host.request(startMessage("runtime-1"));
    const raised = await host.request(
      invokeMessage("runtime-1", { input: "x", context: { scripted: { raise: { code: "echo_boom", message: "boom" } } } }),
    );
    assert.equal(raised.outcome.status, "failed");
    assert.equal(raised.outcome.error.code, "echo_boom");
    assert.equal(raised.outcome.error.stage, "invoke");
    const after = await host.request(invokeMessage("runtime-1", { input: "y" }));
    assert.equal(after.outcome.error.code, "lifecycle_runtime_failed");
  } finally {
    host.kill();
  }
});

test("echo: unknown settings fail start and end the host", async () => {
  const host = echoHost();
  try {
    const response = await host.request(startMessage("runtime-1", { harness: { settings: { colour: "red" } } }));
    assert.equal(response.outcome.error.code, "echo_invalid_settings");
    assert.match(response.outcome.error.message, /harness\.settings\.colour/);
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
});

test("echo: stdin EOF ends the host with status 0", async () => {
  const host = echoHost();
  try {
    await host.request(startMessage("runtime-1"));
    host.closeStdin();
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
});
