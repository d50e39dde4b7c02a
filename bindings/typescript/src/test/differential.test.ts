/**
 * Differential test: the same request lines through our serve() (probe-adapter.ts) and
 * through upstream 0.5.0's lifecycle.serve (fixtures/upstream_probe.py) give the same
 * responses: operation, status, error code/stage/retryable/metadata, outputs, and the
 * same exit points. Needs FABRIC_TEST_PYTHON (a failure without it, `dependencySkip`).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { HostProcess, OpenAIStreamSink, dependencySkip, invokeMessage, invokeStreamMessage, runtimeContext, startMessage, stopMessage } from "../testing";

const PYTHON = process.env.FABRIC_TEST_PYTHON;
const skip = dependencySkip(
  Boolean(PYTHON),
  "FABRIC_TEST_PYTHON (the upstream 0.5.0 venv)",
  "scripts/setup.sh, then FABRIC_TEST_PYTHON=.venv/bin/python",
);
const OURS = path.join(__dirname, "fixtures", "probe-adapter.js");
const UPSTREAM = path.resolve(__dirname, "..", "..", "src", "test", "fixtures", "upstream_probe.py");

type Step = ((sink: OpenAIStreamSink) => unknown) | string | object;
type Script = Step[];

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
  startContextEmptyList: [{ operation: "start", payload: { config: {}, runtime_context: [] } }, startMessage("runtime-a")],
  startContextList: [{ operation: "start", payload: { config: {}, runtime_context: [1] } }, startMessage("runtime-a")],
  stopWithoutId: [startMessage("runtime-a"), { operation: "stop", payload: { runtime_id: "" } }, stopMessage("runtime-a")],
  afterStop: [startMessage("runtime-a"), stopMessage("runtime-a"), invokeMessage("runtime-a", { input: 1 })],
  stream: [
    startMessage("runtime-a"),
    (sink) => invokeStreamMessage("runtime-a", { input: { chunks: 3 } }, sink.sinkFor("runtime-a")),
    (sink) => invokeStreamMessage("runtime-a", { input: { chunks: 0 } }, sink.sinkFor("runtime-a")),
    (sink) => invokeStreamMessage("runtime-a", { input: 1 }, { ...sink.sinkFor("runtime-a"), profile: "other" }),
    (sink) => invokeStreamMessage("runtime-a", { input: 1 }, sink.sinkFor("runtime-a", "invocation-x")),
    (sink) => invokeStreamMessage("runtime-a", { input: 1 }, { ...sink.sinkFor("runtime-a"), port: 0 }),
    (sink) => invokeStreamMessage("runtime-a", { input: 1 }, { ...sink.sinkFor("runtime-a"), port: true }),
    (sink) => invokeStreamMessage("runtime-a", { no_input: 1 }, sink.sinkFor("runtime-a")),
    (sink) => invokeStreamMessage("runtime-a", { input: { probe: "stream-big" } }, sink.sinkFor("runtime-a")),
    invokeMessage("runtime-a", { input: 2 }),
    stopMessage("runtime-a"),
  ],
  streamFailures: [
    startMessage("runtime-a"),
    (sink) => invokeStreamMessage("runtime-a", { input: { probe: "stream-throw", chunks: 2 } }, sink.sinkFor("runtime-a")),
    (sink) => invokeStreamMessage("runtime-a", { input: { chunks: 1 } }, sink.sinkFor("runtime-a")),
    invokeMessage("runtime-a", { input: 2 }),
  ],
  streamInvalidChunk: [
    startMessage("runtime-a"),
    (sink) => invokeStreamMessage("runtime-a", { input: { probe: "stream-invalid" } }, sink.sinkFor("runtime-a")),
    invokeMessage("runtime-a", { input: 2 }),
  ],
  streamUnsupported: [
    startMessage("runtime-a", { harness: { settings: { start: "nostream" } } }),
    (sink) => invokeStreamMessage("runtime-a", { input: 1 }, sink.sinkFor("runtime-a")),
  ],
  eof: [startMessage("runtime-a"), invokeMessage("runtime-a", { input: 1 })],
};

interface Observed {
  responses: unknown[];
  records: unknown[];
  connections: number;
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
  const sink = await OpenAIStreamSink.listen();
  const responses: unknown[] = [];
  let exitedAfter: number | null = null;
  try {
    for (const [index, entry] of script.entries()) {
      const message = typeof entry === "function" ? entry(sink) : entry;
      const response = await host.requestOrExit(message, 20_000);
      if (response === null) {
        exitedAfter = index - 1;
        break;
      }
      responses.push(normalize(response));
    }
    if (host.running) host.closeStdin();
    const status = await host.exit(20_000);
    if (sink.connectionCount > 0) await sink.closed();
    return {
      responses,
      records: sink.records,
      connections: sink.connectionCount,
      exitedAfter,
      status,
      stoppedAdapter: host.stderr.includes("probe: stop"),
    };
  } finally {
    sink.close();
    host.kill();
  }
}

for (const [name, script] of Object.entries(SCRIPTS)) {
  test(`serve() matches upstream lifecycle.serve: ${name}`, { skip }, async () => {
    assert.ok(PYTHON, "FABRIC_TEST_PYTHON must be set");
    assert.ok(fs.existsSync(UPSTREAM));
    const [ours, theirs] = await Promise.all([
      drive(process.execPath, [OURS], script),
      drive(PYTHON, [UPSTREAM], script),
    ]);
    assert.deepEqual(ours.responses, theirs.responses);
    assert.deepEqual(ours.records, theirs.records, "stream records");
    assert.equal(ours.connections, theirs.connections, "stream connections");
    if (name.startsWith("stream") && name !== "streamUnsupported") assert.ok(ours.records.length > 0, "records were compared");
    assert.equal(ours.exitedAfter, theirs.exitedAfter, "exit point");
    assert.equal(ours.status, theirs.status, "exit status");
    assert.equal(ours.stoppedAdapter, theirs.stoppedAdapter, "adapter stop() called");
  });
}
