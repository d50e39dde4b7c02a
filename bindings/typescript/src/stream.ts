/**
 * {@link OpenAIInvokeStream}: the native OpenAI chunks of one invocation, pulled from the
 * core's stream (`fabric_stream_*`).
 *
 * Ready chunks are taken on the calling thread in one call (`fabric_stream_next_batch`
 * with a zero timeout never blocks); only an empty queue costs a koffi async call, which
 * waits on a worker thread. `close()` (also `break` out of `for await`, `await using`, or
 * an aborted `signal`) wakes that wait. Closing never cancels the invocation.
 */
import { FabricCapabilityError, FabricNativeUnavailableError, FabricRuntimeError, FabricStateError, Status } from "./errors";
import type { JsonValue, OpenAiChunk, RunResult, StreamInfo } from "./models";
import type { NativeLibrary, StreamPull } from "./native";
import { parse } from "./util";

/** @internal What a stream tells the runtime it belongs to. */
export interface StreamOwner {
  /** A runtime error ended the stream: the runtime is terminal. */
  streamFailed(): void;
  /** A close is in flight: the runtime's next turn waits for it. */
  streamClosing(closing: Promise<void>): void;
  /** The stream's handle was freed. */
  streamFreed(stream: OpenAIInvokeStream<unknown>): void;
}

/** GC backstop: frees handles of streams dropped without `result()` (off the main thread: a free closes first). */
const streamBackstop = new FinalizationRegistry<{ library: NativeLibrary; handle: number }>(({ library, handle }) => {
  library.callStatus("fabric_stream_free", handle).catch(() => undefined);
});

/** The end of the iteration. */
const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** A runtime error other than state, capability or native-unavailable ends the runtime. */
function isTerminal(error: unknown): boolean {
  return (
    error instanceof FabricRuntimeError &&
    !(error instanceof FabricStateError || error instanceof FabricCapabilityError || error instanceof FabricNativeUnavailableError)
  );
}

/**
 * The `chat.completion.chunk` objects of one streaming invocation, as an async iterator
 * (`for await`), with the separate, authoritative {@link RunResult} from `result()`.
 *
 * ```ts
 * await using stream = await runtime.invokeOpenAIStream({ input: "hello" });
 * for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? "");
 * const result = await stream.result();
 * ```
 *
 * The runtime takes no other turn until the stream is read to its end, its result was
 * taken, or it was closed. `close()` — and leaving a `for await` early, `await using`, or
 * aborting the `signal` given to `invokeOpenAIStream` — drops unread chunks and waits for
 * the invocation without cancelling it; `result()` stays available afterwards.
 */
export class OpenAIInvokeStream<T = OpenAiChunk> implements AsyncIterableIterator<T, undefined>, AsyncDisposable {
  /** What the core reported: `kind`, `runtime_id`, `invocation_id`, `request_id`. */
  readonly info: StreamInfo;
  private readonly library: NativeLibrary;
  private readonly owner: StreamOwner;
  private handle: number;
  private readonly token = {};
  private batch: T[] = [];
  private position = 0;
  private ended = false;
  private reading: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;
  private resulting: Promise<RunResult> | null = null;
  private aborted: { reason: unknown } | null = null;

  /** @internal Created by {@link Runtime.invokeOpenAIStream}. */
  constructor(library: NativeLibrary, owner: StreamOwner, handle: number, info: StreamInfo, signal?: AbortSignal) {
    this.library = library;
    this.owner = owner;
    this.handle = handle;
    this.info = info;
    streamBackstop.register(this, { library, handle }, this.token);
    signal?.addEventListener(
      "abort",
      () => {
        this.aborted = { reason: signal.reason };
        void this.close();
      },
      { once: true },
    );
  }

  /** The invocation this stream belongs to (its RunResult carries the same). */
  get invocationId(): string {
    return this.info.invocation_id;
  }

  get requestId(): string {
    return this.info.request_id;
  }

  /** Whether the stream was read to its end, its result was taken, or it was closed. */
  get finished(): boolean {
    return this.ended;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * The next chunk. Rejects with FabricRuntimeError when the stream failed
   * (`openai_stream_protocol_error`: the adapter broke the transport; the runtime is then
   * `failed`), and with the signal's reason once the signal aborted.
   */
  next(): Promise<IteratorResult<T, undefined>> {
    const run = this.reading.then(
      () => this.pull(),
      () => this.pull(),
    );
    this.reading = run.catch(() => undefined);
    return run;
  }

  private async pull(): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      if (this.aborted) throw this.aborted.reason;
      if (this.position < this.batch.length) {
        const value = this.batch[this.position] as T;
        this.position += 1;
        return { done: false, value };
      }
      if (this.ended) return DONE;
      let pulled: StreamPull;
      try {
        pulled = this.library.streamPoll(this.handle);
        if (pulled.status === Status.TIMEOUT) pulled = await this.library.streamWait(this.handle, -1);
      } catch (error) {
        this.ended = true;
        if (isTerminal(error)) this.owner.streamFailed();
        throw error;
      }
      if (this.ended) continue; // closed while waiting
      if (pulled.status === Status.OK) {
        this.batch = parse<T[]>(pulled.text);
        this.position = 0;
      } else if (pulled.status === Status.END) {
        this.ended = true;
      }
    }
  }

  /** Closes the stream (see {@link OpenAIInvokeStream.close}) and ends the iteration. */
  async return(): Promise<IteratorResult<T, undefined>> {
    await this.close();
    return DONE;
  }

  /**
   * Drops unread chunks and waits for the invocation without cancelling it; resolves when
   * the runtime takes turns again. Idempotent.
   */
  close(): Promise<void> {
    this.ended = true;
    this.batch = [];
    this.position = 0;
    if (this.closing === null) {
      this.closing =
        this.handle === 0
          ? Promise.resolve()
          : this.library.callStatus("fabric_stream_close", this.handle).then(() => undefined);
      this.closing.catch(() => undefined);
      this.owner.streamClosing(this.closing);
    }
    return this.closing;
  }

  /**
   * Drops unread chunks, waits for the invocation and resolves with its RunResult (the
   * same on every call). A failed harness turn resolves with `status: "failed"`; rejects
   * with FabricRuntimeError (`openai_stream_protocol_error`, or the invocation's own
   * error such as `lifecycle_openai_stream_unsupported`, `host_crashed`, `timeout`).
   */
  result(): Promise<RunResult> {
    if (this.resulting === null) {
      this.ended = true;
      this.batch = [];
      this.position = 0;
      const closing = this.closing;
      this.resulting = (async () => {
        if (closing) await closing.catch(() => undefined);
        try {
          return parse<RunResult>(await this.library.call("fabric_stream_result", [this.handle]));
        } catch (error) {
          if (isTerminal(error)) this.owner.streamFailed();
          throw error;
        } finally {
          this.free();
        }
      })();
      this.resulting.catch(() => undefined);
    }
    return this.resulting;
  }

  /** @internal Waits for a close in flight. */
  async settled(): Promise<void> {
    await this.closing?.catch(() => undefined);
    await this.resulting?.catch(() => undefined);
  }

  /** @internal Releases the handle (the core closes an open stream first, off this thread). */
  free(): void {
    if (this.handle !== 0) {
      const handle = this.handle;
      this.handle = 0;
      this.ended = true;
      streamBackstop.unregister(this.token);
      this.library.callStatus("fabric_stream_free", handle).catch(() => undefined);
      this.owner.streamFreed(this);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** One raw NeMo Relay ATOF record, as the adapter's Relay published it. */
export type AtofRecord = { [key: string]: JsonValue };

/**
 * The raw NeMo Relay ATOF records of one invocation ({@link Runtime.invokeStream}), as an
 * async iterator, with the separate, authoritative {@link RunResult} from `result()`. The
 * stream ends once the adapter host answered and the records routed to the invocation's
 * request id were delivered; closing it works as for {@link OpenAIInvokeStream}.
 *
 * ```ts
 * await using runtime = await fabric.startRuntime(config, { streaming: true });
 * await using stream = await runtime.invokeStream({ input: "hello" });
 * for await (const record of stream) console.log(record.kind, record.name);
 * const result = await stream.result();
 * ```
 */
export class InvokeStream extends OpenAIInvokeStream<AtofRecord> {}
