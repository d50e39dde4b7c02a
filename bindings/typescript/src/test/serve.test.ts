import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { HostProcess, OpenAIStreamSink, invokeMessage, invokeStreamMessage, startMessage, stopMessage } from "../testing";

const PROBE = path.join(__dirname, "fixtures", "probe-adapter.js");

function probe(env: NodeJS.ProcessEnv = {}): HostProcess {
  return new HostProcess(process.execPath, [PROBE], env);
}

function errorCode(response: any): string {
  assert.equal(response.outcome.status, "failed", JSON.stringify(response));
  return response.outcome.error.code;
}

test("start, invoke, stop: one sorted-key line per request, exit 0 after stop", async () => {
  const host = probe();
  try {
    host.send(startMessage("runtime-a"));
    const startLine = await host.nextLine();
    assert.equal(startLine, '{"operation": "start", "outcome": {"output": null, "status": "succeeded"}}');
    host.send(invokeMessage("runtime-a", { input: "hi" }));
    const invokeLine = await host.nextLine();
    assert.equal(
      invokeLine,
      '{"operation": "invoke", "outcome": {"output": {"output": {"echo": "hi", "turns": 1}, "status": "succeeded"}, "status": "succeeded"}}',
    );
    const second = await host.request(invokeMessage("runtime-a", { input: "again" }));
    assert.equal(second.outcome.output.output.turns, 2);
    const stop = await host.request(stopMessage("runtime-a"));
    assert.deepEqual(stop, { operation: "stop", outcome: { status: "succeeded", output: null } });
    assert.equal(await host.exit(), 0);
    await host.waitStderr("probe: stop");
    assert.deepEqual(host.pending(), []);
  } finally {
    host.kill();
  }
});

test("malformed lines are answered and do not end the host", async () => {
  const host = probe();
  try {
    const garbage = await host.request("this is not json");
    assert.equal(errorCode(garbage), "lifecycle_invalid_request");
    assert.equal(garbage.operation, "start");
    assert.equal(garbage.outcome.error.stage, "start");
    assert.equal(errorCode(await host.request("[1, 2]")), "lifecycle_invalid_request");
    const unknown = await host.request({ operation: "dance", payload: {} });
    assert.equal(errorCode(unknown), "lifecycle_invalid_operation");
    assert.equal(unknown.operation, "dance");
    assert.equal(errorCode(await host.request(invokeMessage("runtime-a", { input: 1 }))), "lifecycle_not_started");
    assert.equal(errorCode(await host.request({ operation: "invoke", payload: [] })), "lifecycle_invalid_payload");
    assert.equal(errorCode(await host.request({ operation: "invoke", payload: {} })), "lifecycle_invalid_runtime");
    assert.ok(host.running);
    const start = await host.request(startMessage("runtime-a"));
    assert.equal(start.outcome.status, "succeeded");
    assert.equal(errorCode(await host.request(invokeMessage("runtime-b", { input: 1 }))), "lifecycle_runtime_mismatch");
    assert.equal((await host.request(invokeMessage("runtime-a", { input: 1 }))).outcome.status, "succeeded");
    await host.request(stopMessage("runtime-a"));
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
});

test("a start without a runtime id fails and exits", async () => {
  const host = probe();
  try {
    const response = await host.request({ operation: "start", payload: { config: {}, runtime_context: {} } });
    assert.equal(errorCode(response), "lifecycle_invalid_runtime");
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
});

test("a missing operation is treated as start", async () => {
  const host = probe();
  try {
    const response = await host.request({ payload: { config: {}, runtime_context: { runtime_id: "runtime-a" } } });
    assert.equal(response.operation, "start");
    assert.equal(response.outcome.status, "succeeded");
  } finally {
    host.kill();
  }
});

test("a second start fails with lifecycle_already_started and exits, stopping the runtime", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    assert.equal(errorCode(await host.request(startMessage("runtime-b"))), "lifecycle_already_started");
    assert.equal(await host.exit(), 0);
    await host.waitStderr("probe: stop");
  } finally {
    host.kill();
  }
});

test("config that does not match the contract gives lifecycle_invalid_config", async () => {
  const host = probe();
  try {
    const response = await host.request(startMessage("runtime-a", { surprise: { value: "SECRET-VALUE" } }));
    assert.equal(errorCode(response), "lifecycle_invalid_config");
    assert.match(response.outcome.error.message, /config\/surprise/);
    assert.doesNotMatch(JSON.stringify(response), /SECRET-VALUE/);
    assert.equal(await host.exit(), 0);
    assert.doesNotMatch(host.stderr, /probe: start/);
  } finally {
    host.kill();
  }
});

test("start failures: adapter exception and LifecycleError; stop runs, host exits", async () => {
  for (const [mode, code] of [
    ["throw", "lifecycle_adapter_start_failed"],
    ["lifecycle", "probe_start_refused"],
  ] as const) {
    const host = probe();
    try {
      const response = await host.request(startMessage("runtime-a", { harness: { settings: { start: mode } } }));
      assert.equal(errorCode(response), code);
      assert.equal(response.outcome.error.stage, "start");
      if (mode === "lifecycle") assert.deepEqual(response.outcome.error.metadata, { why: "test" });
      else assert.equal("metadata" in response.outcome.error, false);
      assert.equal(await host.exit(), 0);
      await host.waitStderr("probe: stop");
    } finally {
      host.kill();
    }
  }
});

test("an invalid request does not latch; an adapter exception does", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    const invalid = await host.request(invokeMessage("runtime-a", { no_input: true }));
    assert.equal(errorCode(invalid), "lifecycle_invalid_request");
    assert.match(invalid.outcome.error.message, /request/);
    assert.equal((await host.request(invokeMessage("runtime-a", { input: 1 }))).outcome.status, "succeeded");
    const thrown = await host.request(invokeMessage("runtime-a", { input: { probe: "throw" } }));
    assert.equal(errorCode(thrown), "lifecycle_adapter_invoke_failed");
    assert.equal(thrown.outcome.error.stage, "invoke");
    await host.waitStderr("invoke exploded");
    assert.equal(errorCode(await host.request(invokeMessage("runtime-a", { input: 1 }))), "lifecycle_runtime_failed");
    assert.equal((await host.request(stopMessage("runtime-a"))).outcome.status, "succeeded");
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
});

test("results are checked: invalid shapes fail without latching, non-JSON latches", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    for (const kind of ["invalid", "failed-without-error", "missing-output"]) {
      const response = await host.request(invokeMessage("runtime-a", { input: { probe: kind } }));
      assert.equal(errorCode(response), "lifecycle_invalid_response", kind);
    }
    assert.equal((await host.request(invokeMessage("runtime-a", { input: 1 }))).outcome.status, "succeeded");
    const bigint = await host.request(invokeMessage("runtime-a", { input: { probe: "bigint" } }));
    assert.equal(errorCode(bigint), "lifecycle_invalid_response");
    assert.equal(errorCode(await host.request(invokeMessage("runtime-a", { input: 1 }))), "lifecycle_runtime_failed");
  } finally {
    host.kill();
  }
});

test("stdout carries only protocol lines", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    const printed = await host.request(invokeMessage("runtime-a", { input: { probe: "print" } }));
    assert.equal(printed.outcome.output.output, "printed");
    await host.waitStderr("noise from process.stdout.write");
    await host.waitStderr("noise from console.log");
    await host.request(stopMessage("runtime-a"));
    assert.equal(await host.exit(), 0);
    assert.deepEqual(host.pending(), []);
  } finally {
    host.kill();
  }
});

test("telemetry env is applied during invoke and restored afterwards", async () => {
  const host = probe({ PROBE_VAR: "outer" });
  try {
    await host.request(startMessage("runtime-a"));
    const inside = await host.request(
      invokeMessage("runtime-a", { input: { probe: "env" } }, { telemetry: { relay_enabled: false, env: { PROBE_VAR: "inner" } } }),
    );
    assert.equal(inside.outcome.output.output.value, "inner");
    const after = await host.request(invokeMessage("runtime-a", { input: { probe: "env" } }));
    assert.equal(after.outcome.output.output.value, "outer");
  } finally {
    host.kill();
  }
});

test("stdin EOF stops the active runtime and exits 0", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    host.closeStdin();
    assert.equal(await host.exit(), 0);
    await host.waitStderr("probe: stop");
  } finally {
    host.kill();
  }
});

test("requests are answered in order, one at a time", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    host.send(invokeMessage("runtime-a", { input: { probe: "slow" } }));
    host.send(invokeMessage("runtime-a", { input: "fast" }));
    const first = JSON.parse(await host.nextLine());
    const second = JSON.parse(await host.nextLine());
    assert.equal(first.outcome.output.output, "slow");
    assert.equal(second.outcome.output.output.echo, "fast");
  } finally {
    host.kill();
  }
});

test("invoke_openai_stream without an adapter method is unsupported, with stage invoke", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a", { harness: { settings: { start: "nostream" } } }));
    const message = invokeMessage("runtime-a", { input: 1 }) as { operation: string };
    message.operation = "invoke_openai_stream";
    const response = await host.request(message);
    assert.equal(response.operation, "invoke_openai_stream");
    assert.equal(errorCode(response), "lifecycle_openai_stream_unsupported");
    assert.equal(response.outcome.error.stage, "invoke");
  } finally {
    host.kill();
  }
});

test("invoke_openai_stream sends correlated chunk records and an end record", async () => {
  const host = probe();
  const sink = await OpenAIStreamSink.listen();
  try {
    await host.request(startMessage("runtime-a"));
    const response = await host.request(invokeStreamMessage("runtime-a", { input: { chunks: 2 } }, sink.sinkFor("runtime-a")));
    assert.equal(response.operation, "invoke_openai_stream");
    assert.deepEqual(response.outcome, { status: "succeeded", output: { status: "succeeded", output: { chunks: 2 } } });
    await sink.closed();
    assert.equal(sink.completed, true);
    assert.equal(sink.request?.line, "POST /openai-stream HTTP/1.1");
    assert.equal(sink.request?.headers.authorization, `Bearer ${sink.token}`);
    assert.equal(sink.request?.headers["content-type"], "application/x-ndjson");
    assert.equal(sink.request?.headers["transfer-encoding"], "chunked");
    assert.equal(sink.request?.headers.expect, "100-continue");
    assert.deepEqual(
      sink.records.map((record) => [record.type, record.sequence, record.runtime_id, record.invocation_id, record.request_id]),
      [
        ["chunk", 0, "runtime-a", "invocation-1", "request-1"],
        ["chunk", 1, "runtime-a", "invocation-1", "request-1"],
        ["end", 2, "runtime-a", "invocation-1", "request-1"],
      ],
    );
    assert.equal((sink.records[1]?.chunk as any).choices[0].delta.content, "part 1 é");
    assert.doesNotMatch(host.stderr, new RegExp(sink.token), "the stream token is never logged");
  } finally {
    sink.close();
    host.kill();
  }
});

test("an empty stream is valid: only the end record", async () => {
  const host = probe();
  const sink = await OpenAIStreamSink.listen();
  try {
    await host.request(startMessage("runtime-a"));
    const response = await host.request(invokeStreamMessage("runtime-a", { input: { chunks: 0 } }, sink.sinkFor("runtime-a")));
    assert.equal(response.outcome.status, "succeeded");
    await sink.closed();
    assert.deepEqual(sink.records.map((record) => record.type), ["end"]);
  } finally {
    sink.close();
    host.kill();
  }
});

test("stream sink problems: bad protocol, identity mismatch, rejected connection", async () => {
  const host = probe();
  const sink = await OpenAIStreamSink.listen();
  const rejecting = await OpenAIStreamSink.listen({ continueStatus: 403 });
  try {
    await host.request(startMessage("runtime-a"));
    const badProtocol = { ...sink.sinkFor("runtime-a"), protocol_version: "other" };
    assert.equal(errorCode(await host.request(invokeStreamMessage("runtime-a", { input: 1 }, badProtocol))), "lifecycle_invalid_stream_sink");
    const mismatch = sink.sinkFor("runtime-a", "invocation-other");
    assert.equal(errorCode(await host.request(invokeStreamMessage("runtime-a", { input: 1 }, mismatch))), "lifecycle_invalid_stream_sink");
    const badToken = { ...sink.sinkFor("runtime-a"), token: "a\r\nb" };
    assert.equal(errorCode(await host.request(invokeStreamMessage("runtime-a", { input: 1 }, badToken))), "lifecycle_invalid_stream_sink");
    assert.equal(sink.connectionCount, 0, "an invalid sink is never contacted");
    const rejected = await host.request(invokeStreamMessage("runtime-a", { input: 1 }, rejecting.sinkFor("runtime-a")));
    assert.equal(errorCode(rejected), "lifecycle_stream_transport_failed");
    const ok = await host.request(invokeStreamMessage("runtime-a", { input: { chunks: 1 } }, sink.sinkFor("runtime-a")));
    assert.equal(ok.outcome.status, "succeeded", "transport problems do not latch");
  } finally {
    sink.close();
    rejecting.close();
    host.kill();
  }
});

test("an adapter failure mid-stream still ends the stream and latches the runtime", async () => {
  const host = probe();
  const sink = await OpenAIStreamSink.listen();
  try {
    await host.request(startMessage("runtime-a"));
    const response = await host.request(
      invokeStreamMessage("runtime-a", { input: { probe: "stream-throw", chunks: 1 } }, sink.sinkFor("runtime-a")),
    );
    assert.equal(errorCode(response), "lifecycle_adapter_invoke_openai_stream_failed");
    assert.equal(response.outcome.error.stage, "invoke");
    await sink.closed();
    assert.deepEqual(sink.records.map((record) => record.type), ["chunk", "end"]);
    assert.equal(errorCode(await host.request(invokeMessage("runtime-a", { input: 1 }))), "lifecycle_runtime_failed");
  } finally {
    sink.close();
    host.kill();
  }
});

test("invalid and oversized chunks are refused with their codes", async () => {
  for (const [kind, code] of [
    ["stream-invalid", "lifecycle_invalid_openai_stream_event"],
    ["stream-big", "lifecycle_openai_stream_event_too_large"],
  ] as const) {
    const host = probe();
    const sink = await OpenAIStreamSink.listen();
    try {
      await host.request(startMessage("runtime-a"));
      const response = await host.request(invokeStreamMessage("runtime-a", { input: { probe: kind } }, sink.sinkFor("runtime-a")));
      assert.equal(errorCode(response), code, kind);
      await sink.closed();
      assert.deepEqual(sink.records.map((record) => record.type), ["end"], kind);
    } finally {
      sink.close();
      host.kill();
    }
  }
});

test("stop before start fails and exits", async () => {
  const host = probe();
  try {
    assert.equal(errorCode(await host.request(stopMessage("runtime-a"))), "lifecycle_not_started");
    assert.equal(await host.exit(), 0);
  } finally {
    host.kill();
  }
});

test("SIGINT stops the active runtime and exits 130", async () => {
  const host = probe();
  try {
    await host.request(startMessage("runtime-a"));
    host.child.kill("SIGINT");
    assert.equal(await host.exit(), 130);
    await host.waitStderr("probe: stop");
  } finally {
    host.kill();
  }
});

test("missing schemas end the host at once with status 1 and a reason on stderr", async () => {
  const host = probe({ FABRIC_ADAPTER_CONTRACT_SCHEMAS: "/nonexistent/schemas" });
  try {
    assert.equal(await host.exit(), 1);
    await host.waitStderr("adapter-contract JSON Schemas not found");
    assert.deepEqual(host.pending(), []);
  } finally {
    host.kill();
  }
});
