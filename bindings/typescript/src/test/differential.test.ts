/**
 * Differential test: the same request lines through our serve() (probe-adapter.ts) and
 * through upstream 0.5.0's lifecycle.serve (fixtures/upstream_probe.py) give the same
 * responses: operation, status, error code/stage/retryable/metadata, outputs, and the
 * same exit points. Needs FABRIC_TEST_PYTHON (skipped without it outside CI).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { HostProcess, invokeMessage, runtimeContext, startMessage, stopMessage } from "../testing";

const PYTHON = process.env.FABRIC_TEST_PYTHON;
const skip = PYTHON
  ? false
  : process.env.CI
    ? false
    : "FABRIC_TEST_PYTHON is not set (upstream 0.5.0 venv); skipped outside CI";
const OURS = path.join(__dirname, "fixtures", "probe-adapter.js");
const UPSTREAM = path.resolve(__dirname, "..", "..", "src", "test", "fixtures", "upstream_probe.py");

type Script = unknown[];

const SCRIPTS: Record<string, Script> = {
  happy: [
    startMessage("runtime-a"),
    invokeMessage("runtime-a", { input: "hi" }),
    invokeMessage("runtime-a", { input: { nested: ["é", 1.5, null] } }),
    invokeMessage("runtime-a", { input: { probe: "print" } }),
    stopMessage("runtime-a"),
  ],
  malformed: [
    "not json at all",
    "[1, 2]",
    "null",
    { operation: "dance", payload: {} },
    { operation: 7, payload: [] },
    { operation: "invoke", payload: [] },
    { operation: "invoke", payload: {} },
    { operation: "invoke", payload: { runtime_context: {} } },
    invokeMessage("runtime-a", { input: 1 }),
    startMessage("runtime-a"),
    invokeMessage("runtime-b", { input: 1 }),
    { operation: "invoke", payload: { runtime_context: runtimeContext("runtime-a") } },
    invokeMessage("runtime-a", { input: 1, surprise: true }),
    invokeMessage("runtime-a", { input: { probe: "invalid" } }),
    invokeMessage("runtime-a", { input: 2 }),
    { operation: "invoke_openai_stream", payload: { runtime_context: runtimeContext("runtime-a"), request: { input: 1 } } },
    invokeMessage("runtime-a", { input: { probe: "throw" } }),
    invokeMessage("runtime-a", { input: 3 }),
    { operation: "stop", payload: {} },
    stopMessage("runtime-a"),
  ],
  startThrows: [startMessage("runtime-a", { harness: { settings: { start: "throw" } } })],
  startRefused: [startMessage("runtime-a", { harness: { settings: { start: "lifecycle" } } })],
  badConfig: [startMessage("runtime-a", { surprise: 1 })],
  secondStart: [startMessage("runtime-a"), startMessage("runtime-b")],
  stopFirst: [stopMessage("runtime-a")],
  startWithoutId: [{ operation: "start", payload: { config: {}, runtime_context: {} } }, startMessage("runtime-a")],
  startContextNotObject: [{ operation: "start", payload: { config: {}, runtime_context: "x" } }, startMessage("runtime-a")],
  afterStop: [startMessage("runtime-a"), stopMessage("runtime-a"), invokeMessage("runtime-a", { input: 1 })],
  eof: [startMessage("runtime-a"), invokeMessage("runtime-a", { input: 1 })],
};

interface Observed {
  responses: unknown[];
  exitedAfter: number | null;
  status: number | null;
  stoppedAdapter: boolean;
}

/** What must agree: everything but free-text messages (ours name the failing path). */
function normalize(response: any): unknown {
  const copy = JSON.parse(JSON.stringify(response));
  if (copy?.outcome?.error) delete copy.outcome.error.message;
  return copy;
}

async function drive(command: string, args: string[], script: Script): Promise<Observed> {
  const host = new HostProcess(command, args, { PYTHONDONTWRITEBYTECODE: "1" });
  const responses: unknown[] = [];
  let exitedAfter: number | null = null;
  try {
    for (const [index, message] of script.entries()) {
      const response = await host.requestOrExit(message, 20_000);
      if (response === null) {
        exitedAfter = index - 1;
        break;
      }
      responses.push(normalize(response));
    }
    if (host.running) host.closeStdin();
    const status = await host.exit(20_000);
    return { responses, exitedAfter, status, stoppedAdapter: host.stderr.includes("probe: stop") };
  } finally {
    host.kill();
  }
}

for (const [name, script] of Object.entries(SCRIPTS)) {
  test(`serve() matches upstream lifecycle.serve: ${name}`, { skip }, async () => {
    assert.ok(PYTHON, "FABRIC_TEST_PYTHON must be set in CI");
    assert.ok(fs.existsSync(UPSTREAM));
    const [ours, theirs] = await Promise.all([
      drive(process.execPath, [OURS], script),
      drive(PYTHON, [UPSTREAM], script),
    ]);
    assert.deepEqual(ours.responses, theirs.responses);
    assert.equal(ours.exitedAfter, theirs.exitedAfter, "exit point");
    assert.equal(ours.status, theirs.status, "exit status");
    assert.equal(ours.stoppedAdapter, theirs.stoppedAdapter, "adapter stop() called");
  });
}
