/**
 * Adapter side of native OpenAI streaming (`invoke_openai_stream`): validates the sink
 * the core put in the payload, then writes correlated chunk records to the core's
 * loopback listener as chunked NDJSON over one HTTP/1.1 request, as upstream's common
 * host does (CONTRACT-FACTS §a, "OpenAI stream sink").
 */
import * as net from "node:net";
import { JsonEncodeError, toPlainJson } from "./pyjson";
import { LifecycleError } from "./errors";
import { Code } from "../generated";

export const OPENAI_STREAM_PROTOCOL = "fabric.openai_stream/v1alpha1";
export const OPENAI_STREAM_PROFILE = "openai.chat_completions.chunk/v1";
export const OPENAI_STREAM_HOST = "127.0.0.1";
export const OPENAI_STREAM_PATH = "/openai-stream";
/** Largest encoded record, newline included. */
export const OPENAI_STREAM_RECORD_LIMIT = 1024 * 1024;
const TIMEOUT_MS = 10_000;
const UINT32_MAX = 2 ** 32 - 1;
const UINT64_MAX = 2 ** 64 - 1;

/** One `chat.completion.chunk` object (extra keys are allowed and forwarded). */
export interface OpenAIChatCompletionChunk {
  object: "chat.completion.chunk";
  id: string;
  model: string;
  created: number;
  choices: {
    index: number;
    delta: {
      content?: string | null;
      refusal?: string | null;
      role?: string | null;
      function_call?: Record<string, unknown> | null;
      tool_calls?: Record<string, unknown>[] | null;
      [key: string]: unknown;
    };
    finish_reason?: string | null;
    logprobs?: Record<string, unknown> | null;
    [key: string]: unknown;
  }[];
  usage?: Record<string, unknown> | null;
  [key: string]: unknown;
}

/** Sends one chunk to the consumer; rejects with a LifecycleError for a bad chunk or transport. */
export type OpenAIChunkEmitter = (chunk: OpenAIChatCompletionChunk) => Promise<void>;

interface Sink {
  port: number;
  token: string;
  runtime_id: string;
  invocation_id: string;
  request_id: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isBlank(value: unknown): boolean {
  return typeof value !== "string" || value.trim().length === 0;
}

/** Checks `payload.stream`; returns the sink and the payload without it. */
export function validatedSink(payload: Record<string, unknown>): { sink: Sink; adapterPayload: Record<string, unknown> } {
  const sink = payload.stream;
  const context = payload.runtime_context;
  const invalid = (message: string) => new LifecycleError(Code.LIFECYCLE_INVALID_STREAM_SINK, message);
  if (!isObject(sink) || !isObject(context)) throw invalid("OpenAI stream invocation is missing its transport");
  if (
    sink.protocol_version !== OPENAI_STREAM_PROTOCOL ||
    sink.profile !== OPENAI_STREAM_PROFILE ||
    sink.host !== OPENAI_STREAM_HOST
  ) {
    throw invalid("OpenAI stream transport uses an unsupported protocol or endpoint");
  }
  const { port, token } = sink;
  if (
    typeof port !== "number" ||
    !Number.isInteger(port) ||
    port <= 0 ||
    port > 65535 ||
    typeof token !== "string" ||
    token.length === 0 ||
    token.includes("\r") ||
    token.includes("\n")
  ) {
    throw invalid("OpenAI stream transport credentials are invalid");
  }
  for (const name of ["runtime_id", "invocation_id", "request_id"]) {
    if (typeof sink[name] !== "string" || sink[name] !== context[name]) {
      throw invalid("OpenAI stream transport identity does not match the invocation");
    }
  }
  const { stream: _removed, ...adapterPayload } = payload;
  return {
    sink: {
      port,
      token,
      runtime_id: sink.runtime_id as string,
      invocation_id: sink.invocation_id as string,
      request_id: sink.request_id as string,
    },
    adapterPayload,
  };
}

/** Checks one chunk the way upstream's host does; returns it unchanged. */
export function validatedChunk(value: Record<string, unknown>): Record<string, unknown> {
  const invalid = (message: string) => new LifecycleError(Code.LIFECYCLE_INVALID_OPENAI_STREAM_EVENT, message);
  if (value.object !== "chat.completion.chunk") {
    throw invalid("OpenAI stream events must use object 'chat.completion.chunk'");
  }
  if (isBlank(value.id)) {
    throw invalid("OpenAI stream event id must be a non-empty string containing a non-whitespace character");
  }
  if (isBlank(value.model)) {
    throw invalid("OpenAI stream event model must be a non-empty string containing a non-whitespace character");
  }
  const created = value.created;
  if (typeof created !== "number" || !Number.isInteger(created) || created < 0 || created > UINT64_MAX) {
    throw invalid("OpenAI stream event created must be an unsigned 64-bit integer");
  }
  if (!Array.isArray(value.choices)) throw invalid("OpenAI stream event choices must be a list");
  for (const choice of value.choices as unknown[]) {
    if (!isObject(choice)) throw invalid("OpenAI stream choices must be mappings");
    const index = choice.index;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index > UINT32_MAX) {
      throw invalid("OpenAI stream choice index must be an unsigned 32-bit integer");
    }
    const delta = choice.delta;
    if (!isObject(delta)) throw invalid("OpenAI stream choice delta must be a mapping");
    for (const name of ["content", "refusal", "role"]) {
      if (name in delta && delta[name] !== null && typeof delta[name] !== "string") {
        throw invalid(`OpenAI stream choice delta ${name} must be a string or null`);
      }
    }
    if ("function_call" in delta && delta.function_call !== null && !isObject(delta.function_call)) {
      throw invalid("OpenAI stream choice delta function_call must be a mapping or null");
    }
    if ("tool_calls" in delta && delta.tool_calls !== null) {
      const calls = delta.tool_calls;
      if (!Array.isArray(calls) || !calls.every(isObject)) {
        throw invalid("OpenAI stream choice delta tool_calls must be a list of mappings or null");
      }
    }
    if ("finish_reason" in choice && choice.finish_reason !== null && typeof choice.finish_reason !== "string") {
      throw invalid("OpenAI stream choice finish_reason must be a string or null");
    }
    if ("logprobs" in choice && choice.logprobs !== null && !isObject(choice.logprobs)) {
      throw invalid("OpenAI stream choice logprobs must be a mapping or null");
    }
  }
  if ("usage" in value && value.usage !== null && !isObject(value.usage)) {
    throw invalid("OpenAI stream event usage must be a mapping or null");
  }
  return value;
}

function transportFailed(message: string): LifecycleError {
  return new LifecycleError(Code.LIFECYCLE_STREAM_TRANSPORT_FAILED, message);
}

/** A connection to the core's stream listener. */
export class OpenAIStreamWriter {
  private sequence = 0;
  private finished = false;
  private buffered = Buffer.alloc(0);
  private readers: (() => void)[] = [];
  private closed = false;
  private socketError = false;
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    private readonly socket: net.Socket,
    private readonly sink: Sink,
  ) {
    socket.on("data", (data: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, data]);
      this.wake();
    });
    socket.on("error", () => {
      this.socketError = true;
      this.wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    const readers = this.readers;
    this.readers = [];
    for (const reader of readers) reader();
  }

  /** Connects, sends the request head and waits for the interim `100 Continue`. */
  static async connect(sink: Sink): Promise<OpenAIStreamWriter> {
    let socket: net.Socket;
    try {
      socket = await new Promise<net.Socket>((resolve, reject) => {
        const candidate = net.connect({ host: OPENAI_STREAM_HOST, port: sink.port });
        const timer = setTimeout(() => {
          candidate.destroy();
          reject(new Error("connect timed out"));
        }, TIMEOUT_MS);
        candidate.once("connect", () => {
          clearTimeout(timer);
          resolve(candidate);
        });
        candidate.once("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
    } catch {
      throw transportFailed("Adapter could not connect to the OpenAI stream listener");
    }
    socket.setNoDelay(true);
    const writer = new OpenAIStreamWriter(socket, sink);
    try {
      await writer.write(
        `POST ${OPENAI_STREAM_PATH} HTTP/1.1\r\n` +
          `Host: ${OPENAI_STREAM_HOST}:${sink.port}\r\n` +
          `Authorization: Bearer ${sink.token}\r\n` +
          "Content-Type: application/x-ndjson\r\n" +
          "Transfer-Encoding: chunked\r\n" +
          "Expect: 100-continue\r\n" +
          "Connection: close\r\n\r\n",
      );
      const status = await writer.readResponse();
      if (status !== 100) throw transportFailed("OpenAI stream listener rejected the adapter connection");
    } catch (error) {
      socket.destroy();
      if (error instanceof LifecycleError) throw error;
      throw transportFailed("Adapter could not connect to the OpenAI stream listener");
    }
    return writer;
  }

  private write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed || this.socketError) {
        reject(new Error("connection closed"));
        return;
      }
      this.socket.write(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  private async readLine(deadline: number): Promise<Buffer | null> {
    for (;;) {
      const newline = this.buffered.indexOf(0x0a);
      if (newline >= 0) {
        const line = this.buffered.subarray(0, newline + 1);
        this.buffered = this.buffered.subarray(newline + 1);
        return line;
      }
      if (this.closed || this.socketError) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("timed out");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.readers.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Reads one response head and returns its status code. */
  private async readResponse(): Promise<number> {
    const deadline = Date.now() + TIMEOUT_MS;
    const statusLine = await this.readLine(deadline);
    const match = statusLine === null ? null : /^\S+ (\d+) ?.*\r?\n$/.exec(statusLine.toString("latin1"));
    if (!match || /[^\x00-\x7f]/.test(statusLine!.toString("latin1"))) {
      throw transportFailed("OpenAI stream listener returned an invalid HTTP response");
    }
    for (;;) {
      const line = await this.readLine(deadline);
      if (line === null) throw transportFailed("OpenAI stream listener closed an incomplete HTTP response");
      const text = line.toString("latin1");
      if (text === "\r\n" || text === "\n") return Number(match[1]);
    }
  }

  /** Serializes writes like upstream's write lock. */
  private locked<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The emitter handed to the adapter. */
  readonly emit: OpenAIChunkEmitter = async (chunk) => {
    if (!isObject(chunk)) {
      throw new LifecycleError(Code.LIFECYCLE_INVALID_OPENAI_STREAM_EVENT, "OpenAI stream events must be mappings");
    }
    const event = validatedChunk({ ...chunk });
    await this.locked(async () => {
      if (this.finished) throw transportFailed("Adapter cannot emit after finishing the OpenAI event stream");
      await this.writeRecord("chunk", event);
    });
  };

  private async writeRecord(type: "chunk" | "end", chunk?: Record<string, unknown>): Promise<void> {
    const record: Record<string, unknown> = {
      type,
      sequence: this.sequence,
      runtime_id: this.sink.runtime_id,
      invocation_id: this.sink.invocation_id,
      request_id: this.sink.request_id,
    };
    if (chunk !== undefined) record.chunk = chunk;
    let encoded: Buffer;
    try {
      encoded = Buffer.from(`${JSON.stringify(toPlainJson(record))}\n`, "utf8");
    } catch (error) {
      if (!(error instanceof JsonEncodeError)) throw error;
      throw new LifecycleError(
        Code.LIFECYCLE_INVALID_OPENAI_STREAM_EVENT,
        "OpenAI stream events must contain JSON-compatible values",
      );
    }
    if (encoded.length > OPENAI_STREAM_RECORD_LIMIT) {
      throw new LifecycleError(
        Code.LIFECYCLE_OPENAI_STREAM_EVENT_TOO_LARGE,
        "OpenAI stream event exceeds the 1 MiB record limit",
      );
    }
    try {
      await this.write(Buffer.concat([Buffer.from(`${encoded.length.toString(16).toUpperCase()}\r\n`), encoded, Buffer.from("\r\n")]));
    } catch {
      throw transportFailed("Adapter lost the OpenAI stream listener connection");
    }
    this.sequence += 1;
  }

  /** Sends the end record and the last chunk; the listener must answer 200. Idempotent. */
  finish(): Promise<void> {
    return this.locked(async () => {
      if (this.finished) return;
      this.finished = true;
      try {
        await this.writeRecord("end");
        await this.write("0\r\n\r\n");
        const status = await this.readResponse();
        if (status !== 200) throw transportFailed("OpenAI stream listener rejected the event stream");
      } catch (error) {
        if (error instanceof LifecycleError) throw error;
        throw transportFailed("Adapter could not finish the OpenAI event stream");
      } finally {
        this.socket.destroy();
      }
    });
  }

  /** Drops the connection without finishing (used when the invocation never started). */
  abort(): void {
    this.finished = true;
    this.socket.destroy();
  }
}
