/**
 * Native OpenAI streaming through the Node binding with the scripted adapter: chunks and
 * the separate result, early close, consumer cancellation (break, AbortSignal), one
 * active turn, a protocol error, and an adapter without the claim.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  Fabric,
  FabricCapabilityError,
  FabricRuntimeError,
  FabricStateError,
  OpenAIInvokeStream,
  type FabricConfig,
  type OpenAiChunk,
} from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");
const REPLY = "The quick brown fox jumps over the lazy dog.";

function streamingConfig(name: string, stream: Record<string, unknown>): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name },
    harness: { adapter_id: "fabric.scripted", settings: { replies: [REPLY], stream } as never },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
  };
}

function textOf(chunks: OpenAiChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
}

const fabric = new Fabric();

test("for await yields the chunks; result() is the separate RunResult; the runtime takes the next turn", async () => {
  await using runtime = await fabric.startRuntime(streamingConfig("ts-stream", { chunk_chars: 5 }));
  assert.equal(runtime.supportsOpenAIStreaming, true);
  const stream = await runtime.invokeOpenAIStream({ input: "hi" });
  assert.ok(stream instanceof OpenAIInvokeStream);
  assert.equal(stream.info.kind, "openai.chat_completions.chunk/v1");
  const chunks: OpenAiChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.every((chunk) => chunk.object === "chat.completion.chunk"));
  assert.equal(chunks[0]?.choices[0]?.delta.role, "assistant");
  assert.equal(textOf(chunks), REPLY);
  assert.equal(chunks.length, Math.ceil(REPLY.length / 5));
  assert.equal(stream.finished, true);
  const result = await stream.result();
  assert.equal(result.status, "succeeded");
  assert.equal(result.invocation_id, stream.invocationId);
  assert.equal((result.output as { response: string }).response, REPLY);
  assert.equal(await stream.result(), result, "result() is cached");
  assert.deepEqual(await stream.next(), { done: true, value: undefined });
  assert.equal((await runtime.invoke({ input: "next" })).status, "succeeded");
});

test("close() drops unread chunks without cancelling the turn; await using closes", async () => {
  await using runtime = await fabric.startRuntime(streamingConfig("ts-close", { chunk_chars: 1, delay_ms: 5 }));
  let kept: OpenAIInvokeStream;
  {
    await using stream = await runtime.invokeOpenAIStream({ input: "hi" });
    kept = stream;
    const first = await stream.next();
    assert.equal(first.done, false);
    assert.equal(first.value?.choices[0]?.delta.role, "assistant");
  }
  // Disposed: closed, no more chunks; the turn ran to its end.
  assert.equal(kept.finished, true);
  assert.deepEqual(await kept.next(), { done: true, value: undefined });
  assert.equal(((await kept.result()).output as { response: string }).response, REPLY);
  assert.equal(runtime.state, "active");
  assert.equal((await runtime.invoke({ input: "again" })).status, "succeeded");
});

test("breaking out of for await closes the stream; the turn is not cancelled", async () => {
  await using runtime = await fabric.startRuntime(streamingConfig("ts-break", { chunk_chars: 1, delay_ms: 10 }));
  const stream = await runtime.invokeOpenAIStream({ input: "hi" });
  let seen = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    seen += 1;
    if (seen === 3) break;
  }
  // return() waited for the turn: the runtime is free at once, the result intact.
  assert.equal(stream.finished, true);
  assert.equal((await runtime.status()).state, "idle");
  assert.equal(((await stream.result()).output as { response: string }).response, REPLY);
  assert.equal((await runtime.invoke({ input: "after" })).status, "succeeded");
});

test("an aborted signal wakes a waiting consumer and closes the stream without cancelling the turn", async () => {
  await using runtime = await fabric.startRuntime(streamingConfig("ts-abort", { chunk_chars: 1, delay_ms: 10 }));
  const controller = new AbortController();
  const stream = await runtime.invokeOpenAIStream({
    request: { input: "hi", context: { scripted: { sleep_ms: 2000 } } },
    signal: controller.signal,
  });
  const reason = new Error("consumer gone");
  setTimeout(() => controller.abort(reason), 100);
  await assert.rejects(
    (async () => {
      for await (const _chunk of stream) void _chunk;
    })(),
    (error: unknown) => error === reason,
  );
  // Woken by the abort, not by the adapter: the turn is still running (not cancelled).
  assert.equal((await runtime.status()).state, "busy");
  assert.equal(stream.finished, true);
  const result = await stream.result();
  assert.equal((result.output as { response: string }).response, REPLY);
  assert.equal((await runtime.invoke({ input: "after" })).status, "succeeded");
});

test("one active turn: a second stream, an invoke and stop are state errors while a stream is open", async () => {
  await using runtime = await fabric.startRuntime(streamingConfig("ts-busy", { delay_ms: 10 }));
  const stream = await runtime.invokeOpenAIStream({ input: "hi" });
  await assert.rejects(runtime.invokeOpenAIStream({ input: "again" }), (error: unknown) => {
    assert.ok(error instanceof FabricStateError, String(error));
    assert.equal(error.code, "runtime_busy");
    return true;
  });
  await assert.rejects(runtime.invoke({ input: "again" }), FabricStateError);
  await assert.rejects(runtime.stop(), (error: unknown) => error instanceof FabricStateError && error.code === "runtime_busy");
  assert.equal(runtime.state, "active");
  await stream.close();
  const second = await runtime.invokeOpenAIStream({ input: "second" });
  assert.equal((await second.result()).status, "succeeded");
});

test("a broken stream transport is openai_stream_protocol_error and fails the runtime", async () => {
  await using runtime = await fabric.startRuntime(streamingConfig("ts-gap", { fault: "gap", chunk_chars: 4 }));
  const stream = await runtime.invokeOpenAIStream({ input: "hi" });
  await assert.rejects(
    (async () => {
      for await (const _chunk of stream) void _chunk;
    })(),
    (error: unknown) => {
      assert.ok(error instanceof FabricRuntimeError, String(error));
      assert.ok(!(error instanceof FabricStateError));
      assert.equal(error.code, "openai_stream_protocol_error");
      assert.equal(error.stage, "invoke");
      assert.equal(error.details.http_status, 400);
      return true;
    },
  );
  assert.equal(runtime.state, "failed");
  await assert.rejects(stream.result(), (error: unknown) => error instanceof FabricRuntimeError && error.code === "openai_stream_protocol_error");
});

test("an adapter without the streaming claim is a capability error; the runtime stays usable", async () => {
  // The scripted descriptor with its streaming claim removed (same launcher).
  const descriptor = JSON.parse(fs.readFileSync(SCRIPTED, "utf8")) as Record<string, any>;
  descriptor.capabilities.streaming = false;
  descriptor.runner.script = path.join(path.dirname(SCRIPTED), descriptor.runner.script as string);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-no-claim-"));
  const file = path.join(dir, "scripted.fabric-adapter.json");
  fs.writeFileSync(file, JSON.stringify(descriptor));
  const config = streamingConfig("ts-no-claim", {});
  config.discovery = { local_paths: [file] };
  try {
    await using runtime = await fabric.startRuntime(config);
    assert.equal(runtime.supportsOpenAIStreaming, false);
    await assert.rejects(runtime.invokeOpenAIStream({ input: "hi" }), (error: unknown) => {
      assert.ok(error instanceof FabricCapabilityError, String(error));
      assert.equal(error.code, "openai_streaming_unavailable");
      return true;
    });
    assert.equal(runtime.state, "active");
    assert.equal((await runtime.invoke({ input: "plain" })).status, "succeeded");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
