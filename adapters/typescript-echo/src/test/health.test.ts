/**
 * Health of the echo adapter through fabric-core's serve(): the listener runs from a
 * successful start to stop, answers all three levels, while an invocation is pending, and
 * honours the `health` fail/stall settings.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { HostProcess, healthCheck, invokeMessage, startMessage, stopMessage } from "fabric-core/testing";

const MAIN = path.join(__dirname, "..", "main.js");

function home(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-echo-health-"));
}

const outcomes = (observations: { level: string; outcome: string; reason: string | null }[]) =>
  observations.map((o) => [o.level, o.outcome, o.reason]);

test("echo health: ready passes, also during a pending invoke; file 0600, removed at stop", async () => {
  const fabricHome = home();
  const file = path.join(fabricHome, "health.endpoint.json");
  const host = new HostProcess(process.execPath, [MAIN], { FABRIC_HOME: fabricHome });
  try {
    assert.equal((await host.request(startMessage("runtime-1"))).outcome.status, "succeeded");
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const observations = await healthCheck(fabricHome);
    assert.deepEqual(outcomes(observations), [
      ["live", "passed", null],
      ["active", "passed", null],
      ["ready", "passed", null],
    ]);
    assert.deepEqual(observations.map((o) => o.source_id), ["echo:live", "echo:active", "echo:ready"]);
    host.send(invokeMessage("runtime-1", { input: "slow", context: { scripted: { sleep_ms: 1500 } } }));
    const during = await healthCheck(fabricHome, { level: "ready" });
    assert.equal(during.length, 3);
    assert.deepEqual(host.pending(), [], "the invoke is still pending while the check is answered");
    const answered = JSON.parse(await host.nextLine());
    assert.equal(answered.outcome.output.output.response, "slow");
    assert.equal((await host.request(stopMessage("runtime-1"))).outcome.status, "succeeded");
    assert.equal(await host.exit(), 0);
    assert.equal(fs.existsSync(file), false);
  } finally {
    host.kill();
  }
});

test("echo health: forced failure and stall inside the budget", async () => {
  const fabricHome = home();
  const host = new HostProcess(process.execPath, [MAIN], { FABRIC_HOME: fabricHome });
  try {
    const start = await host.request(startMessage("runtime-2", { harness: { settings: { health: { fail: "ready", stall: "active" } } } }));
    assert.equal(start.outcome.status, "succeeded", JSON.stringify(start));
    assert.deepEqual(outcomes(await healthCheck(fabricHome, { level: "live" })), [["live", "passed", null]]);
    const started = performance.now();
    const stalled = await healthCheck(fabricHome, { level: "ready", budgetMs: 300 });
    assert.ok(performance.now() - started < 300 + 500);
    assert.deepEqual(outcomes(stalled), [
      ["live", "passed", null],
      ["active", "unknown", "probe_timeout"],
    ]);
    await host.request(stopMessage("runtime-2"));
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
  const failing = home();
  const other = new HostProcess(process.execPath, [MAIN], { FABRIC_HOME: failing });
  try {
    await other.request(startMessage("runtime-3", { harness: { settings: { health: { fail: "ready" } } } }));
    assert.deepEqual(outcomes(await healthCheck(failing)).at(-1), ["ready", "failed", "echo_forced_failure"]);
    const bad = await other.request(invokeMessage("runtime-3", { input: 1, context: { scripted: { sleep_ms: -1 } } }));
    assert.equal(bad.outcome.error.code, "echo_invalid_directive");
    await other.request(stopMessage("runtime-3"));
  } finally {
    other.kill();
  }
});
